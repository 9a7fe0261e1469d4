# nerve's version string: the project version plus the git revision of the
# source tree when there is one. Written to a generated header so that only
# the one file that includes it rebuilds when the revision changes.

set(NERVE_GIT_REVISION "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${NERVE_SOURCE_DIR}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${NERVE_SOURCE_DIR} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE _nerve_rev OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _nerve_rev_rc ERROR_QUIET)
  if(_nerve_rev_rc EQUAL 0 AND _nerve_rev)
    set(NERVE_GIT_REVISION "${_nerve_rev}")
  endif()
endif()
configure_file(${NERVE_SOURCE_DIR}/cmake/NerveVersion.inc.in
               ${NERVE_BINARY_DIR}/include/nerve/NerveVersion.inc @ONLY)
