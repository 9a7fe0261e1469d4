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

// An approximate division by what is at least 1 by construction (1 plus an
// exp, a square, an |x|) flushes subnormals: the reciprocal when the
// numerator is 1, the division otherwise. A divisor that may be subnormal,
// or a constant one (LLVM multiplies by its reciprocal), keeps arith.divf.
// LIB-LABEL: gpu.func @approximate_division
// LIB: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// LIB: %[[DEN:.*]] = arith.addf %[[E]], %{{.*}} : f32
// LIB: llvm.call_intrinsic "llvm.nvvm.rcp.approx.ftz.f"(%[[DEN]]) : (f32) -> f32
// LIB: %[[SQ:.*]] = arith.mulf %[[X:.*]], %[[X]] : f32
// LIB: %[[ABS:.*]] = llvm.call_intrinsic "llvm.fabs.f32"
// LIB: %[[SUM:.*]] = arith.addf %[[SQ]], %[[ABS]] : f32
// LIB: %[[DEN2:.*]] = arith.addf %[[SUM]], %{{.*}} : f32
// LIB: llvm.call_intrinsic "llvm.nvvm.div.approx.ftz.f"(%{{.*}}, %[[DEN2]]) : (f32, f32) -> f32
// LIB: arith.divf %{{.*}}, %{{.*}} fastmath<afn> : f32
// LIB: arith.divf %{{.*}}, %{{.*}} fastmath<afn> : f32
// LIB: arith.divf %{{.*}}, %{{.*}} : f32
// LIB-NOT: llvm.nvvm
// LIB: gpu.return
// An approximate log1p: the series where |x| < 1/32, else the
// special-function log2 of 1 + x times ln 2; libdevice or not.
// LIB-LABEL: gpu.func @approximate_log1p
// LIB-DAG: %[[X:.*]] = llvm.load
// LIB-DAG: %[[QUARTER:.*]] = arith.constant -2.500000e-01 : f32
// LIB-DAG: %[[THIRD:.*]] = arith.constant 0.333333343 : f32
// LIB-DAG: %[[HALF:.*]] = arith.constant -5.000000e-01 : f32
// LIB-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// LIB-DAG: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// LIB-DAG: %[[LIMIT:.*]] = arith.constant 3.125000e-02 : f32
// LIB: %[[S1:.*]] = llvm.call_intrinsic "llvm.fma.f32"(%[[X]], %[[QUARTER]], %[[THIRD]])
// LIB: %[[S2:.*]] = llvm.call_intrinsic "llvm.fma.f32"(%[[S1]], %[[X]], %[[HALF]])
// LIB: %[[S3:.*]] = llvm.call_intrinsic "llvm.fma.f32"(%[[S2]], %[[X]], %[[ONE]])
// LIB: %[[SERIES:.*]] = arith.mulf %[[S3]], %[[X]] : f32
// LIB: %[[U:.*]] = arith.addf %[[X]], %[[ONE]] : f32
// LIB: %[[LOG2:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"(%[[U]])
// LIB: %[[LOG:.*]] = arith.mulf %[[LOG2]], %[[LN2]] : f32
// LIB: %[[ABS:.*]] = llvm.call_intrinsic "llvm.fabs.f32"(%[[X]])
// LIB: %[[SMALL:.*]] = arith.cmpf olt, %[[ABS]], %[[LIMIT]] : f32
// LIB: arith.select %[[SMALL]], %[[SERIES]], %[[LOG]] : f32
// LIB-NOT: math.
// LIB: gpu.return
// NOLIB-LABEL: gpu.func @approximate_log1p
// NOLIB: llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"
// NOLIB-NOT: math.
// NOLIB: gpu.return

// An approximate tanh: the odd series where |x| < 1/4, else
// 1 - 2 / (2^(2|x| log2 e) + 1) with the sign of x; libdevice or not.
// LIB-LABEL: gpu.func @approximate_tanh
// LIB-DAG: %[[X:.*]] = llvm.load
// LIB-DAG: %[[C7:.*]] = arith.constant -0.0539682545 : f32
// LIB-DAG: %[[C5:.*]] = arith.constant 0.13333334 : f32
// LIB-DAG: %[[C3:.*]] = arith.constant -0.333333343 : f32
// LIB-DAG: %[[TWOLOG2E:.*]] = arith.constant 2.885390e+00 : f32
// LIB-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// LIB-DAG: %[[MTWO:.*]] = arith.constant -2.000000e+00 : f32
// LIB-DAG: %[[LIMIT:.*]] = arith.constant 2.500000e-01 : f32
// LIB: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// LIB: %[[S1:.*]] = llvm.call_intrinsic "llvm.fma.f32"(%[[SQ]], %[[C7]], %[[C5]])
// LIB: %[[S2:.*]] = llvm.call_intrinsic "llvm.fma.f32"(%[[S1]], %[[SQ]], %[[C3]])
// LIB: %[[S3:.*]] = arith.mulf %[[S2]], %[[SQ]] : f32
// LIB: %[[SERIES:.*]] = llvm.call_intrinsic "llvm.fma.f32"(%[[S3]], %[[X]], %[[X]])
// LIB: %[[ABS:.*]] = llvm.call_intrinsic "llvm.fabs.f32"(%[[X]])
// LIB: %[[POWER:.*]] = arith.mulf %[[ABS]], %[[TWOLOG2E]] : f32
// LIB: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[POWER]])
// LIB: %[[DEN:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// LIB: %[[R:.*]] = llvm.call_intrinsic "llvm.nvvm.rcp.approx.ftz.f"(%[[DEN]])
// LIB: %[[LARGE:.*]] = llvm.call_intrinsic "llvm.fma.f32"(%[[R]], %[[MTWO]], %[[ONE]])
// LIB: %[[SIGNED:.*]] = llvm.call_intrinsic "llvm.copysign.f32"(%[[LARGE]], %[[X]])
// LIB: %[[SMALL:.*]] = arith.cmpf olt, %[[ABS]], %[[LIMIT]] : f32
// LIB: arith.select %[[SMALL]], %[[SERIES]], %[[SIGNED]] : f32
// LIB-NOT: math.
// LIB: gpu.return
// NOLIB-LABEL: gpu.func @approximate_tanh
// NOLIB: llvm.call_intrinsic "llvm.nvvm.rcp.approx.ftz.f"
// NOLIB-NOT: math.
// NOLIB: gpu.return

// An operand known to be at least 0 (or NaN) by how it is computed is its
// own magnitude: log1p(exp(-|x|)) compares the exp itself, and the tanh
// of a softplus rounded to f16 and halved takes neither |x| nor the sign
// of x; its maximum with -0.9 is the tanh itself (not its maxnumf, which
// is -0.9 for NaN). An operand that may be negative keeps |x|, the sign
// and the maximum.
// LIB-LABEL: gpu.func @non_negative_operands
// LIB-DAG: %[[SCALE:.*]] = arith.constant 2.885390e+00 : f32
// LIB-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// LIB: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// LIB-NOT: llvm.fabs
// LIB: arith.cmpf olt, %[[E]], %{{.*}} : f32
// LIB: %[[T:.*]] = arith.mulf %{{.*}}, %[[HALF]] : f32
// LIB-NOT: llvm.fabs
// LIB: %[[P:.*]] = arith.mulf %[[T]], %[[SCALE]] : f32
// LIB: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[P]])
// LIB-NOT: llvm.copysign
// LIB: arith.cmpf olt, %[[T]], %{{.*}} : f32
// LIB-NOT: arith.maximumf
// LIB: llvm.store %[[TANH:.*]], %{{.*}}
// LIB: arith.maxnumf %[[TANH]], %{{.*}} : f32
// LIB: %[[ABS:.*]] = llvm.call_intrinsic "llvm.fabs.f32"
// LIB: llvm.call_intrinsic "llvm.copysign.f32"
// LIB: arith.cmpf olt, %[[ABS]], %{{.*}} : f32
// LIB: %[[U:.*]] = arith.select
// LIB: arith.maximumf %[[U]], %{{.*}} : f32
// LIB: gpu.return

// Exact (no afn) log1p and tanh of an operand known to be non-negative
// take nerve's forms, libdevice or not: log1p scales 1 + x (rounded toward
// zero) by a power of two and selects zeros, infinity and NaN themselves;
// tanh has the series below 0.6 and the exponential form above, neither
// |x| nor a sign to copy. The log1p of an exp of a non-positive value
// selects only NaN (an ordered compare).
// LIB-LABEL: gpu.func @exact_of_non_negative
// LIB: %[[M:.*]] = llvm.call_intrinsic "llvm.fabs.f32"
// LIB: llvm.call_intrinsic "llvm.nvvm.add.rz.f"(%[[M]], %{{.*}})
// LIB: %[[REGULAR:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : i32
// LIB: arith.select %[[REGULAR]], %{{.*}}, %[[M]] : f32
// LIB: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// LIB: llvm.call_intrinsic "llvm.nvvm.rcp.approx.ftz.f"
// LIB-NOT: llvm.copysign
// LIB: arith.cmpf olt, %[[M]], %{{.*}} : f32
// LIB: %[[E:.*]] = math.exp
// LIB: llvm.call_intrinsic "llvm.nvvm.add.rz.f"(%[[E]], %{{.*}})
// LIB: %[[NUMBER:.*]] = arith.cmpf ord, %[[E]], %[[E]] : f32
// LIB: arith.select %[[NUMBER]], %{{.*}}, %[[E]] : f32
// LIB-NOT: math.log1p
// LIB: gpu.return
// NOLIB-LABEL: gpu.func @exact_of_non_negative
// NOLIB: llvm.call_intrinsic "llvm.nvvm.add.rz.f"
// NOLIB-NOT: math.
// NOLIB: gpu.return

// Without afn, log1p and tanh stay library functions.
// LIB-LABEL: gpu.func @exact_log1p_tanh
// LIB: math.log1p
// LIB: math.tanh
// LIB-NOT: llvm.nvvm
// LIB: gpu.return
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
    gpu.func @approximate_division(%x: f32, %y: f32, %p: memref<5xf32>) kernel {
      %one = arith.constant 1.0 : f32
      %two = arith.constant 2.0 : f32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %e = math.exp %x fastmath<afn> : f32
      %den = arith.addf %e, %one : f32
      %sigmoid = arith.divf %one, %den fastmath<afn> : f32
      memref.store %sigmoid, %p[%c0] : memref<5xf32>
      %sq = arith.mulf %x, %x : f32
      %abs = math.absf %y : f32
      %sum = arith.addf %sq, %abs : f32
      %den2 = arith.addf %two, %sum : f32
      %q = arith.divf %y, %den2 fastmath<afn> : f32
      memref.store %q, %p[%c1] : memref<5xf32>
      %maybe = arith.addf %one, %y : f32
      %r = arith.divf %x, %maybe fastmath<afn> : f32
      memref.store %r, %p[%c2] : memref<5xf32>
      %half = arith.divf %x, %two fastmath<afn> : f32
      memref.store %half, %p[%c3] : memref<5xf32>
      %exact = arith.divf %x, %den : f32
      memref.store %exact, %p[%c4] : memref<5xf32>
      gpu.return
    }
    gpu.func @approximate_log1p(%p: !llvm.ptr) kernel {
      %x = llvm.load %p : !llvm.ptr -> f32
      %l = math.log1p %x fastmath<afn> : f32
      llvm.store %l, %p : f32, !llvm.ptr
      gpu.return
    }
    gpu.func @approximate_tanh(%p: !llvm.ptr) kernel {
      %x = llvm.load %p : !llvm.ptr -> f32
      %t = math.tanh %x fastmath<afn> : f32
      llvm.store %t, %p : f32, !llvm.ptr
      gpu.return
    }
    gpu.func @non_negative_operands(%p: !llvm.ptr) kernel {
      %x = llvm.load %p : !llvm.ptr -> f32
      %zero = arith.constant 0.0 : f32
      %half = arith.constant 0.5 : f32
      %one = arith.constant 1.0 : f32
      %pos = arith.maximumf %x, %zero : f32
      %abs = math.absf %x : f32
      %nabs = arith.negf %abs : f32
      %e = math.exp %nabs fastmath<afn> : f32
      %l = math.log1p %e fastmath<afn> : f32
      %sp = arith.addf %pos, %l : f32
      %r = arith.truncf %sp : f32 to f16
      %w = arith.extf %r : f16 to f32
      %h = arith.mulf %w, %half : f32
      %t = math.tanh %h fastmath<afn> : f32
      %lo = arith.constant -0.9 : f32
      %ct = arith.maximumf %t, %lo : f32
      llvm.store %ct, %p : f32, !llvm.ptr
      %cn = arith.maxnumf %t, %lo : f32
      llvm.store %cn, %p : f32, !llvm.ptr
      %m = arith.subf %pos, %one : f32
      %u = math.tanh %m fastmath<afn> : f32
      %cu = arith.maximumf %u, %lo : f32
      llvm.store %cu, %p : f32, !llvm.ptr
      gpu.return
    }
    gpu.func @exact_of_non_negative(%p: !llvm.ptr) kernel {
      %x = llvm.load %p : !llvm.ptr -> f32
      %m = math.absf %x : f32
      %l = math.log1p %m : f32
      llvm.store %l, %p : f32, !llvm.ptr
      %t = math.tanh %m : f32
      llvm.store %t, %p : f32, !llvm.ptr
      %n = arith.negf %m : f32
      %e = math.exp %n : f32
      %softplus = math.log1p %e : f32
      llvm.store %softplus, %p : f32, !llvm.ptr
      gpu.return
    }
    gpu.func @exact_log1p_tanh(%p: !llvm.ptr) kernel {
      %x = llvm.load %p : !llvm.ptr -> f32
      %l = math.log1p %x : f32
      %t = math.tanh %l : f32
      llvm.store %t, %p : f32, !llvm.ptr
      gpu.return
    }
  }
}
