// RUN: nerve-opt %s --pass-pipeline='builtin.module(gpu.module(nerve-lower-gpu-math{libdevice=true}))' | FileCheck %s --check-prefix=LIB
// RUN: nerve-opt %s --pass-pipeline='builtin.module(gpu.module(nerve-lower-gpu-math))' | FileCheck %s --check-prefix=NOLIB

// Single-instruction functions become LLVM intrinsics either way.
// LIB-LABEL: gpu.func @f32
// LIB: llvm.call_intrinsic "llvm.sqrt.f32"
// LIB: llvm.call_intrinsic "llvm.fabs.f32"
// With libdevice, the rest waits for convert-gpu-to-nvvm (__nv_expf).
// LIB: math.exp
// LIB: math.rsqrt
// Without it, they become polynomial approximations: no math op is left.
// NOLIB-LABEL: gpu.func @f32
// NOLIB-NOT: math.
// NOLIB: gpu.return

// An approximate exp (afn) is 2^(x log2 e) on the special-function unit,
// flushing subnormal results, with or without libdevice.
// LIB-LABEL: gpu.func @approximate_exp
// LIB: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// LIB: %[[POWER:.*]] = arith.mulf %{{.*}}, %[[LOG2E]] : f32
// LIB: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[POWER]]) : (f32) -> f32
// LIB-NOT: math.exp
// LIB: gpu.return
// NOLIB-LABEL: gpu.func @approximate_exp
// NOLIB: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// NOLIB-NOT: math.
// NOLIB: gpu.return
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @f32(%x: f32, %p: memref<f32>) kernel {
      %s = math.sqrt %x : f32
      %a = math.absf %s : f32
      %e = math.exp %a : f32
      %r = math.rsqrt %e : f32
      %l = math.log %r : f32
      %t = math.tanh %l : f32
      %q = math.powf %t, %x : f32
      memref.store %q, %p[] : memref<f32>
      gpu.return
    }
    gpu.func @approximate_exp(%x: f32, %p: memref<f32>) kernel {
      %e = math.exp %x fastmath<afn> : f32
      memref.store %e, %p[] : memref<f32>
      gpu.return
    }
  }
}
