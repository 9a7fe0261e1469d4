// RUN: nerve-opt %s | nerve-opt | FileCheck %s

// fold.for prints and parses back: its bounds, accumulators, body, merge
// region (which may use constants from outside it) and max_sum_exp.

// CHECK-LABEL: func.func @argmax
// CHECK:         %[[R:.*]]:2 = fold.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[B:.*]] = %{{.*}}, %[[A:.*]] = %{{.*}}) -> (f32, i32) {
// CHECK:           memref.load %{{.*}}[%[[I]]]
// CHECK:           fold.yield %{{.*}}, %{{.*}} : f32, i32
// CHECK-NEXT:    } merge {
// CHECK-NEXT:    ^bb0(%{{.*}}: f32, %{{.*}}: i32, %{{.*}}: f32, %{{.*}}: i32):
// CHECK:           fold.yield %{{.*}}, %{{.*}} : f32, i32
// CHECK-NEXT:    }
// CHECK:         return %[[R]]#1
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

// CHECK-LABEL: func.func @statistics
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         fold.for
// CHECK:         } merge max_sum_exp {
// CHECK:           arith.select %{{.*}}, %[[ONE]], %{{.*}} : f32
// CHECK:         } attributes {note = "kept"}
func.func @statistics(%x: memref<?xf32>) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %r:2 = fold.for %i = %c0 to %n step %c1 iter_args(%m = %ninf, %s = %zero) -> (f32, f32) {
    %v = memref.load %x[%i] : memref<?xf32>
    %nm = arith.maximumf %m, %v : f32
    %d = arith.subf %m, %nm : f32
    %e = math.exp %d : f32
    %t = arith.mulf %s, %e : f32
    %dv = arith.subf %v, %nm : f32
    %ev = math.exp %dv : f32
    %ns = arith.addf %t, %ev : f32
    fold.yield %nm, %ns : f32, f32
  } merge max_sum_exp {
  ^bb0(%m1: f32, %s1: f32, %m2: f32, %s2: f32):
    %mx = arith.maximumf %m1, %m2 : f32
    %lo = arith.minimumf %m1, %m2 : f32
    %same = arith.cmpf oeq, %m1, %m2 : f32
    %dd = arith.subf %lo, %mx : f32
    %ee = math.exp %dd : f32
    %scale = arith.select %same, %one, %ee : f32
    %first = arith.cmpf oge, %m1, %m2 : f32
    %larger = arith.select %first, %s1, %s2 : f32
    %smaller = arith.select %first, %s2, %s1 : f32
    %scaled = arith.mulf %smaller, %scale : f32
    %sum = arith.addf %scaled, %larger : f32
    fold.yield %mx, %sum : f32, f32
  } attributes {note = "kept"}
  return %r#0, %r#1 : f32, f32
}
