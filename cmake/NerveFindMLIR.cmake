# Finds Debian's MLIR 22 and sets up LLVM's and MLIR's CMake helpers.
#
# nerve links MLIR one way only: the shared libMLIR.so (and libLLVM.so), never
# MLIR's static libraries as well, which would register every command-line
# option twice. MLIR_LINK_MLIR_DYLIB makes mlir_target_link_libraries() link
# the dylib.

set(MLIR_DIR "/usr/lib/llvm-22/lib/cmake/mlir" CACHE PATH "Directory holding MLIRConfig.cmake")
find_package(MLIR CONFIG QUIET)
if(NOT MLIR_FOUND)
  message(FATAL_ERROR "nerve: MLIR 22 not found at MLIR_DIR=${MLIR_DIR}; "
                      "run scripts/install-deps.sh (Debian packages libmlir-22-dev, llvm-22-dev) "
                      "or pass -DMLIR_DIR=<prefix>/lib/cmake/mlir")
endif()
if(NOT LLVM_VERSION_MAJOR EQUAL 22)
  message(FATAL_ERROR "nerve: needs LLVM/MLIR 22, found ${LLVM_PACKAGE_VERSION} at ${MLIR_DIR}; "
                      "install Debian's libmlir-22-dev or point -DMLIR_DIR at an MLIR 22 install")
endif()
message(STATUS "nerve: using MLIR ${LLVM_PACKAGE_VERSION} from ${MLIR_DIR}")

set(LLVM_RUNTIME_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/bin)
set(LLVM_LIBRARY_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/lib)
set(MLIR_BINARY_DIR ${CMAKE_BINARY_DIR})
set(MLIR_LINK_MLIR_DYLIB ON)

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)
include(HandleLLVMOptions)

# The tablegen executables come with Debian's mlir-22-tools and llvm-22-tools.
foreach(tool mlir-tblgen lit FileCheck not)
  find_program(NERVE_${tool}_PATH ${tool} HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
  if(NOT NERVE_${tool}_PATH)
    message(FATAL_ERROR "nerve: ${tool} not found in ${LLVM_TOOLS_BINARY_DIR}; "
                        "run scripts/install-deps.sh (Debian packages mlir-22-tools, llvm-22-tools)")
  endif()
endforeach()
set(MLIR_TABLEGEN_EXE ${NERVE_mlir-tblgen_PATH})
# add_lit_testsuite runs this lit (Debian ships `lit`, not `llvm-lit`).
set(LLVM_EXTERNAL_LIT ${NERVE_lit_PATH} CACHE FILEPATH "lit used by check targets" FORCE)
