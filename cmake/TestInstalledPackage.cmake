# A CTest test (package.embed-example): installs nerve into a fresh prefix,
# builds examples/embed against it with find_package(nerve) as an outside
# project would (its own CMake run, the default compiler), and runs it.
#
# Inputs: NERVE_BINARY_DIR, NERVE_SOURCE_DIR, WORK_DIR.

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  message(STATUS "${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step("installing nerve" ${CMAKE_COMMAND} --install ${NERVE_BINARY_DIR} --prefix ${prefix})
step("configuring the example" ${CMAKE_COMMAND} -S ${NERVE_SOURCE_DIR}/examples/embed
     -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
step("building the example" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step("running the example" ${CMAKE_COMMAND} -E env NERVE_CACHE_DIR=${WORK_DIR}/cache
     ${WORK_DIR}/build/nerve-embed)
message(STATUS "${step_output}")
