// RUN: nerve-opt %s --convert-fold-to-scf | FileCheck %s

// A fold.for runs as the scf.for of its bounds, accumulators and body; its
// merge region goes. Nested folds and folds inside other loops convert too.

// CHECK-LABEL: func.func @argmax
// CHECK-NOT:     fold.
// CHECK:         %[[R:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[B:.*]] = %{{.*}}, %[[A:.*]] = %{{.*}}) -> (f32, i32) {
// CHECK-NEXT:      %[[V:.*]] = memref.load %{{.*}}[%[[I]]]
// CHECK-NEXT:      %[[II:.*]] = arith.index_cast %[[I]]
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[B]] : f32
// CHECK-NEXT:      %[[NB:.*]] = arith.select %[[GT]], %[[V]], %[[B]] : f32
// CHECK-NEXT:      %[[NA:.*]] = arith.select %[[GT]], %[[II]], %[[A]] : i32
// CHECK-NEXT:      scf.yield %[[NB]], %[[NA]] : f32, i32
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]#1
func.func @argmax(%x: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %none = arith.constant -1 : i32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %r:2 = fold.for %i = %c0 to %n step %c1 iter_args(%best = %ninf, %at = %none) -> (f32, i32) {
    %v = memref.load %x[%i] : memref<?xf32>
    %ii = arith.index_cast %i : index to i32
    %gt = arith.cmpf ogt, %v, %best : f32
    %nb = arith.select %gt, %v, %best : f32
    %na = arith.select %gt, %ii, %at : i32
    fold.yield %nb, %na : f32, i32
  } merge {
  ^bb0(%b0: f32, %a0: i32, %b1: f32, %a1: i32):
    %gt = arith.cmpf ogt, %b1, %b0 : f32
    %nb = arith.select %gt, %b1, %b0 : f32
    %na = arith.select %gt, %a1, %a0 : i32
    fold.yield %nb, %na : f32, i32
  }
  return %r#1 : i32
}

// CHECK-LABEL: func.func @in_parallel
// CHECK:         scf.parallel
// CHECK:           scf.for {{.*}} -> (f32, f32) {
// CHECK:             scf.for {{.*}} -> (f32, f32) {
// CHECK-NOT:     fold.
func.func @in_parallel(%x: memref<?x?x?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?x?xf32>
  %k = memref.dim %x, %c2 : memref<?x?x?xf32>
  scf.parallel (%p) = (%c0) to (%n) step (%c1) {
    %r:2 = fold.for %i = %c0 to %m step %c1 iter_args(%s = %z, %q = %z) -> (f32, f32) {
      %t:2 = fold.for %j = %c0 to %k step %c1 iter_args(%s2 = %s, %q2 = %q) -> (f32, f32) {
        %v = memref.load %x[%p, %i, %j] : memref<?x?x?xf32>
        %sq = arith.mulf %v, %v : f32
        %ns = arith.addf %s2, %v : f32
        %nq = arith.addf %q2, %sq : f32
        fold.yield %ns, %nq : f32, f32
      } merge {
      ^bb0(%a: f32, %b: f32, %c: f32, %d: f32):
        %e = arith.addf %a, %c : f32
        %f = arith.addf %b, %d : f32
        fold.yield %e, %f : f32, f32
      }
      fold.yield %t#0, %t#1 : f32, f32
    } merge {
    ^bb0(%a: f32, %b: f32, %c: f32, %d: f32):
      %e = arith.addf %a, %c : f32
      %f = arith.addf %b, %d : f32
      fold.yield %e, %f : f32, f32
    }
    %o = arith.addf %r#0, %r#1 : f32
    memref.store %o, %y[%p] : memref<?xf32>
    scf.reduce
  }
  return
}
