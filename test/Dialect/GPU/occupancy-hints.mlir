// RUN: nerve-opt --pass-pipeline='builtin.module(gpu.module(nerve-occupancy-hints))' %s | FileCheck %s

// A blocks-per-SM hint that the loop mapping left on an op of a kernel
// becomes the kernel's `nvvm.minctasm` (PTX `.minnctapersm`), the op loses
// it; of several, the largest. A kernel without one gets none, and a
// function that is not a kernel only loses its ops' hints.
// CHECK-LABEL: gpu.func @cluster_rows
// CHECK-SAME:    kernel attributes {nvvm.minctasm = 5 : i32}
// CHECK:         nvvm.cluster.arrive {aligned}
// CHECK:         nvvm.cluster.wait {aligned}
// CHECK-LABEL: gpu.func @two_hints
// CHECK-SAME:    kernel attributes {nvvm.minctasm = 4 : i32}
// CHECK-NOT:     blocks_per_sm
// CHECK-LABEL: gpu.func @plain
// CHECK-NOT:     minctasm
// CHECK:         gpu.return
// CHECK-LABEL: gpu.func @helper
// CHECK-NOT:     minctasm
// CHECK:         nvvm.cluster.arrive {aligned}
// CHECK-NEXT:    gpu.return
gpu.module @kernels {
  gpu.func @cluster_rows(%x: memref<4xf32>) kernel {
    nvvm.cluster.arrive {aligned, nerve.blocks_per_sm = 5 : i32}
    nvvm.cluster.wait {aligned}
    gpu.return
  }
  gpu.func @two_hints(%x: memref<4xf32>) kernel {
    nvvm.cluster.arrive {aligned, nerve.blocks_per_sm = 2 : i32}
    nvvm.cluster.wait {aligned, nerve.blocks_per_sm = 4 : i32}
    gpu.return
  }
  gpu.func @plain(%x: memref<4xf32>) kernel {
    gpu.return
  }
  gpu.func @helper(%x: memref<4xf32>) {
    nvvm.cluster.arrive {aligned, nerve.blocks_per_sm = 3 : i32}
    gpu.return
  }
}
