// RUN: nerve-opt %s --split-input-file --nerve-attach-nvvm-targets='chip=sm_90 O=3 fast=true l=/lib/libdevice.bc' | FileCheck %s

// Every module gets the chip's target; one whose kernels use wgmma gets the
// architecture-specific one.
// CHECK: gpu.module @portable [#nvvm.target<O = 3, chip = "sm_90", flags = {fast}, link = ["/lib/libdevice.bc"]>]
// CHECK: gpu.module @warpgroups [#nvvm.target<O = 3, chip = "sm_90a", flags = {fast}, link = ["/lib/libdevice.bc"]>]
module attributes {gpu.container_module} {
  gpu.module @portable {
    gpu.func @k() kernel {
      gpu.return
    }
  }
  gpu.module @warpgroups {
    gpu.func @k() kernel {
      nvvm.wgmma.fence.aligned
      gpu.return
    }
  }
}
