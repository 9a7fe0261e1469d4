// nerve-to-nvvm stops nerve-to-ptx short of PTX, with each kernel in a
// gpu.module in the NVVM dialect with its target, the host code still in
// func and gpu ops launching it. nerve's compile serializes these modules
// on one thread while it lowers the host code on another.
// RUN: nerve-opt %s --nerve-to-nvvm='chip=sm_80 libdevice=none' | FileCheck %s
// CHECK: func.func @scale(
// CHECK: gpu.launch_func {{.*}}@scale_kernel::@scale_kernel
// CHECK: gpu.module @scale_kernel [#nvvm.target<O = 3, chip = "sm_80">]
// CHECK: llvm.func @scale_kernel(
// CHECK-SAME: gpu.kernel
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK-NOT: gpu.binary
// RUN: nerve-opt %s --nerve-to-nvvm='libdevice=none' --nerve-serialize-gpu-modules | FileCheck %s --check-prefix=SERIALIZED
// SERIALIZED: gpu.binary @scale_kernel
// SERIALIZED-SAME: .visible .entry scale_kernel(
!v = !tdim.tensor<[n: ?], f32>
tdim.kernel @scale(%x: !v) -> (%y: !v) {
  tdim.map ins(%x : !v) outs(%y : !v) {
  ^bb0(%a: f32):
    %two = arith.constant 2.0 : f32
    %r = arith.mulf %a, %two : f32
    tdim.yield %r : f32
  }
  tdim.return
}
