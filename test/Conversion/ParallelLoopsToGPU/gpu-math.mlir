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
  }
}
