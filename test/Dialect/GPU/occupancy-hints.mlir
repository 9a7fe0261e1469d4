// RUN: nerve-opt --pass-pipeline='builtin.module(gpu.module(nerve-occupancy-hints))' %s | FileCheck %s

// A blocks-per-SM hint that the loop mapping left in a kernel
// (gpumap.occupancy_hint) becomes the kernel's `nvvm.minctasm` (PTX
// `.minnctapersm`) and goes; of several, the largest. A kernel without one
// gets none, and a function that is not a kernel only loses its hints.
// CHECK-LABEL: gpu.func @cluster_rows
// CHECK-SAME:    kernel attributes {nvvm.minctasm = 5 : i32}
// CHECK:         nvvm.cluster.arrive {aligned}
// CHECK-NEXT:    nvvm.cluster.wait {aligned}
// CHECK-LABEL: gpu.func @two_hints
// CHECK-SAME:    kernel attributes {nvvm.minctasm = 4 : i32}
// CHECK-NOT:     occupancy_hint
// CHECK-LABEL: gpu.func @plain
// CHECK-NOT:     minctasm
// CHECK:         gpu.return
// CHECK-LABEL: gpu.func @helper
// CHECK-NOT:     minctasm
// CHECK:         nvvm.cluster.arrive {aligned}
// CHECK-NEXT:    gpu.return
gpu.module @kernels {
  gpu.func @cluster_rows(%x: memref<4xf32>) kernel {
    nvvm.cluster.arrive {aligned}
    gpumap.occupancy_hint blocks_per_sm = 5
    nvvm.cluster.wait {aligned}
    gpu.return
  }
  gpu.func @two_hints(%x: memref<4xf32>) kernel {
    gpumap.occupancy_hint blocks_per_sm = 2
    nvvm.cluster.arrive {aligned}
    gpumap.occupancy_hint blocks_per_sm = 4
    nvvm.cluster.wait {aligned}
    gpu.return
  }
  gpu.func @plain(%x: memref<4xf32>) kernel {
    gpu.return
  }
  gpu.func @helper(%x: memref<4xf32>) {
    nvvm.cluster.arrive {aligned}
    gpumap.occupancy_hint blocks_per_sm = 3
    gpu.return
  }
}
