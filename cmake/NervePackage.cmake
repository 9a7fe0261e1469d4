# The installed CMake package: libnerve.so, the public headers and
# lib/cmake/nerve/, so that a program outside the tree (or outside this
# machine, from the portable bundle) does
#
#   find_package(nerve 0.1 CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE nerve::nerve)
#
# with CMAKE_PREFIX_PATH (or nerve_DIR) pointing at the install tree.

include(CMakePackageConfigHelpers)

install(FILES
  ${NERVE_SOURCE_DIR}/include/nerve/nerve.h
  ${NERVE_SOURCE_DIR}/include/nerve/Builders.h
  ${NERVE_SOURCE_DIR}/include/nerve/Status.h
  DESTINATION include/nerve)
install(FILES ${NERVE_SOURCE_DIR}/include/nerve-c/nerve.h DESTINATION include/nerve-c)

install(EXPORT nerveTargets NAMESPACE nerve:: DESTINATION lib/cmake/nerve)
configure_package_config_file(${NERVE_SOURCE_DIR}/cmake/nerveConfig.cmake.in
  ${NERVE_BINARY_DIR}/package/nerveConfig.cmake
  INSTALL_DESTINATION lib/cmake/nerve)
write_basic_package_version_file(${NERVE_BINARY_DIR}/package/nerveConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${NERVE_BINARY_DIR}/package/nerveConfig.cmake
  ${NERVE_BINARY_DIR}/package/nerveConfigVersion.cmake
  DESTINATION lib/cmake/nerve)
