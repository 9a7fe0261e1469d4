// RUN: nerve-opt %s --nerve-attach-nvvm-targets=chip=sm_80 --verify-diagnostics
// RUN: not nerve-opt %s --nerve-attach-nvvm-targets=chip=sm_91 2>&1 | FileCheck %s --check-prefix=BAD_CHIP

// A chip nerve does not compile for is an error, not a crash.
// BAD_CHIP: error: unknown chip 'sm_91'; nerve compiles for sm_80, sm_89, sm_90 and sm_100

// wgmma exists on sm_90a alone.
module attributes {gpu.container_module} {
  // expected-error @below {{kernel uses wgmma, which sm_80 lacks}}
  gpu.module @warpgroups {
    gpu.func @k() kernel {
      nvvm.wgmma.fence.aligned
      gpu.return
    }
  }
}
