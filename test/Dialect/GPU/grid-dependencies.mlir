// RUN: nerve-opt --pass-pipeline='builtin.module(gpu.module(nerve-grid-dependencies))' %s | FileCheck %s

// Every kernel begins by waiting for the kernel ahead of it on the stream:
// nothing it reads or writes comes before that one's end. It signals no
// early launch of the next one. A function that is not a kernel is left
// alone.
// CHECK-LABEL: gpu.func @scale
// CHECK-NOT:     launch_dependents
// CHECK-NEXT:    nvvm.griddepcontrol wait
// CHECK-NOT:     launch_dependents
// CHECK:         memref.load
// CHECK-LABEL: gpu.func @helper
// CHECK-NOT:     nvvm.griddepcontrol
// CHECK:         gpu.return
gpu.module @kernels {
  gpu.func @scale(%x: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0] : memref<4xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%c0] : memref<4xf32>
    gpu.return
  }
  gpu.func @helper(%x: memref<4xf32>) {
    gpu.return
  }
}
