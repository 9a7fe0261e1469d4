// RUN: nerve-opt %s --nerve-attach-nvvm-targets=chip=sm_80 --verify-diagnostics

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
