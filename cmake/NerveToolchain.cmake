# Build-speed defaults for small machines: ccache in front of the compiler and
# LLVM's lld as the linker, each used only when it is installed.

option(NERVE_USE_CCACHE "Use ccache when it is installed" ON)
if(NERVE_USE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(NERVE_CCACHE_PROGRAM ccache)
  if(NERVE_CCACHE_PROGRAM)
    set(CMAKE_C_COMPILER_LAUNCHER ${NERVE_CCACHE_PROGRAM})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${NERVE_CCACHE_PROGRAM})
  endif()
endif()

option(NERVE_USE_LLD "Link with lld when the compiler can use it" ON)
if(NERVE_USE_LLD AND NOT LLVM_USE_LINKER)
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_LINK_OPTIONS -fuse-ld=lld)
  check_cxx_source_compiles("int main() { return 0; }" NERVE_HAVE_LLD)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NERVE_HAVE_LLD)
    # HandleLLVMOptions turns this into -fuse-ld=lld for every link.
    set(LLVM_USE_LINKER lld)
  endif()
endif()
