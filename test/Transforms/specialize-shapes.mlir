// RUN: nerve-opt %s --split-input-file --nerve-specialize-shapes="shapes=scale:x=64x100,scale:y=64x?" | FileCheck %s
// RUN: nerve-opt %s --split-input-file --nerve-specialize-shapes="shapes=scale:x=64x100" --canonicalize | FileCheck %s --check-prefix=FOLDED

// The named arguments take the sizes (`?` keeps one dynamic; strides and
// offset stay), their uses a cast back to the type they had.
// CHECK-LABEL: func.func @scale
// CHECK-SAME:    (%[[X:.*]]: memref<64x100xf32, strided<[?, 1], offset: ?>>, %[[Y:.*]]: memref<64x?xf32>)
// CHECK-DAG:   %[[XD:.*]] = memref.cast %[[X]] : memref<64x100xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-DAG:   %[[YD:.*]] = memref.cast %[[Y]] : memref<64x?xf32> to memref<?x?xf32>
// CHECK:       memref.dim %[[XD]], %c0
// CHECK:       memref.load %[[XD]]
// CHECK:       memref.store %{{.*}}, %[[YD]]

// Canonicalization folds the casts into their users: static trip counts.
// FOLDED-LABEL: func.func @scale
// FOLDED-DAG:   %[[R:.*]] = arith.constant 64 : index
// FOLDED-DAG:   %[[C:.*]] = arith.constant 100 : index
// FOLDED:       scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%[[R]], %[[C]])
// FOLDED:       memref.load %{{.*}} : memref<64x100xf32, strided<[?, 1], offset: ?>>
// FOLDED-NOT:   memref.dim
func.func @scale(%x: memref<?x?xf32, strided<[?, 1], offset: ?>>, %y: memref<?x?xf32>)
    attributes {nerve.kernel, nerve.arg_names = ["x", "y"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %r = memref.dim %x, %c0 : memref<?x?xf32, strided<[?, 1], offset: ?>>
  %c = memref.dim %x, %c1 : memref<?x?xf32, strided<[?, 1], offset: ?>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%r, %c) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}
