// RUN: nerve-opt --pass-pipeline='builtin.module(gpu.module(nerve-pair-truncations))' %s | FileCheck %s

// Two consecutive roundings of f32 to bf16 that are only extended again
// (fused intermediates of two lanes) become one cvt.rn.bf16x2.f32 (the
// intrinsic takes the second value first: the high half), and their
// extensions bit moves of the pair: the first lane's the pair shifted up by
// 16, the second's the pair with its low half cleared. A third rounding
// has no partner. Roundings that are stored, that a use separates,
// extended to f64, or to f16 stay scalar.
// CHECK-LABEL: gpu.func @lanes
// CHECK:         %[[PAIR:.*]] = llvm.call_intrinsic "llvm.nvvm.ff2bf16x2.rn"(%arg1, %arg0) : (f32, f32) -> vector<2xbf16>
// CHECK-NEXT:    %[[BITS:.*]] = llvm.bitcast %[[PAIR]] : vector<2xbf16> to i32
// CHECK-NEXT:    %[[C16:.*]] = arith.constant 16 : i32
// CHECK-NEXT:    %[[UP:.*]] = arith.shli %[[BITS]], %[[C16]] : i32
// CHECK-NEXT:    %[[LO:.*]] = arith.bitcast %[[UP]] : i32 to f32
// CHECK-NEXT:    %[[MASK:.*]] = arith.constant -65536 : i32
// CHECK-NEXT:    %[[CLEARED:.*]] = arith.andi %[[BITS]], %[[MASK]] : i32
// CHECK-NEXT:    %[[HI:.*]] = arith.bitcast %[[CLEARED]] : i32 to f32
// CHECK-NEXT:    %[[THIRD:.*]] = arith.truncf %arg2 : f32 to bf16
// CHECK-NEXT:    %[[THIRDX:.*]] = arith.extf %[[THIRD]] : bf16 to f32
// CHECK:         memref.store %[[LO]], %arg3[%{{.*}}]
// CHECK-NEXT:    memref.store %[[HI]], %arg3[%{{.*}}]
// CHECK-NEXT:    memref.store %[[THIRDX]], %arg3[%{{.*}}]
// CHECK-LABEL: gpu.func @not_paired
// CHECK-NOT:     llvm.call_intrinsic
// CHECK-COUNT-9: arith.truncf
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         gpu.return
// Before sm_80 there is no pair form.
// CHECK-LABEL: gpu.module @old
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         gpu.return
gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
  gpu.func @lanes(%a: f32, %b: f32, %c: f32, %out: memref<3xf32>) kernel {
    %ta = arith.truncf %a : f32 to bf16
    %tb = arith.truncf %b : f32 to bf16
    %tc = arith.truncf %c : f32 to bf16
    %ea = arith.extf %ta : bf16 to f32
    %eb = arith.extf %tb : bf16 to f32
    %ec = arith.extf %tc : bf16 to f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    memref.store %ea, %out[%c0] : memref<3xf32>
    memref.store %eb, %out[%c1] : memref<3xf32>
    memref.store %ec, %out[%c2] : memref<3xf32>
    gpu.return
  }
  gpu.func @not_paired(%a: f32, %b: f32, %out: memref<2xbf16>, %f: memref<2xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // Stored: LLVM packs what feeds a vector store itself.
    %sa = arith.truncf %a : f32 to bf16
    %sb = arith.truncf %b : f32 to bf16
    memref.store %sa, %out[%c0] : memref<2xbf16>
    memref.store %sb, %out[%c1] : memref<2xbf16>
    // The first is used before the second is made.
    %ua = arith.truncf %a : f32 to bf16
    %ue = arith.extf %ua : bf16 to f32
    %ub = arith.truncf %ue : f32 to bf16
    %uf = arith.extf %ub : bf16 to f32
    memref.store %uf, %f[%c0] : memref<2xf32>
    // Extended to f64: not a bit move of an f32.
    %da = arith.truncf %a : f32 to bf16
    %db = arith.truncf %b : f32 to bf16
    %dea = arith.extf %da : bf16 to f64
    %deb = arith.extf %db : bf16 to f64
    %dsum = arith.addf %dea, %deb : f64
    %dres = arith.truncf %dsum : f64 to f32
    memref.store %dres, %f[%c0] : memref<2xf32>
    // f16: ptxas packs a scalar rounding with zero already.
    %ha = arith.truncf %a : f32 to f16
    %hb = arith.truncf %b : f32 to f16
    %hea = arith.extf %ha : f16 to f32
    %heb = arith.extf %hb : f16 to f32
    %sum = arith.addf %hea, %heb : f32
    memref.store %sum, %f[%c1] : memref<2xf32>
    gpu.return
  }
}
gpu.module @old [#nvvm.target<chip = "sm_75">] {
  gpu.func @lanes(%a: f32, %b: f32, %out: memref<2xf32>) kernel {
    %ta = arith.truncf %a : f32 to bf16
    %tb = arith.truncf %b : f32 to bf16
    %ea = arith.extf %ta : bf16 to f32
    %eb = arith.extf %tb : bf16 to f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    memref.store %ea, %out[%c0] : memref<2xf32>
    memref.store %eb, %out[%c1] : memref<2xf32>
    gpu.return
  }
}
