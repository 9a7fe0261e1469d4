// RUN: nerve-opt %s --tdim-decompose=store-exponentials --split-input-file | FileCheck %s

// With store-exponentials, an f32 softmax over its contiguous dimension
// writes exp(x - max) into y, sums y (reciprocal once per row) and scales y
// in place: one exponential per element.
// CHECK-LABEL: tdim.kernel @softmax
// CHECK: %[[MAX:.*]] = tdim.alloc(%{{.*}}) : !tdim.tensor<[r: ?], f32>
// CHECK: tdim.reduce ins(%x : {{.*}}) outs(%[[MAX]] : {{.*}}) over [c]
// CHECK: arith.maximumf
// CHECK: tdim.map ins(%x, %[[MAX]] : {{.*}}) outs(%y : {{.*}})
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[M:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[X]], %[[M]]
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]]
// CHECK-NEXT: tdim.yield %[[E]]
// CHECK: %[[INV:.*]] = tdim.alloc(%{{.*}}) : !tdim.tensor<[r: ?], f32>
// CHECK: tdim.reduce ins(%y : {{.*}}) outs(%[[INV]] : {{.*}}) over [c] init [0.000000e+00 : f32]
// CHECK-NOT: math.exp
// CHECK: } post {
// CHECK: arith.divf
// CHECK: tdim.map ins(%y, %[[INV]] : {{.*}}) outs(%y : {{.*}})
// CHECK-NEXT: ^bb0(%[[EY:.*]]: f32, %[[R:.*]]: f32):
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[EY]], %[[R]]
// CHECK-NEXT: tdim.yield %[[Y]]
// CHECK-NOT: math.exp
// CHECK: tdim.return
!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @softmax(%x: !m) -> (%y: !m) {
  tdim.softmax ins(%x : !m) outs(%y : !m) over c
  tdim.return
}

// -----

// f16 storage keeps the exponentials in f32: the output pass computes them
// again rather than round them to f16 before the sum.
// CHECK-LABEL: tdim.kernel @softmax_f16
// CHECK: tdim.reduce ins(%x, %{{.*}} : {{.*}}) outs(%{{.*}} : {{.*}}) over [c]
// CHECK: math.exp
// CHECK: tdim.map ins(%x, %{{.*}}, %{{.*}} : {{.*}}) outs(%y : {{.*}})
// CHECK: math.exp
!h = !tdim.tensor<[r: ?, c: ?], f16>
tdim.kernel @softmax_f16(%x: !h) -> (%y: !h) {
  tdim.softmax ins(%x : !h) outs(%y : !h) over c
  tdim.return
}

// -----

// Over a non-contiguous dimension the online max-and-sum stays (one read
// of the column, not two).
// CHECK-LABEL: tdim.kernel @softmax_columns
// CHECK: tdim.reduce ins(%x : {{.*}}) outs(%{{.*}}, %{{.*}} : {{.*}}) over [r]
// CHECK: tdim.map ins(%x, %{{.*}}, %{{.*}} : {{.*}}) outs(%y : {{.*}})
// CHECK: math.exp
!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @softmax_columns(%x: !m) -> (%y: !m) {
  tdim.softmax ins(%x : !m) outs(%y : !m) over r
  tdim.return
}

// -----

// log_softmax is unchanged: its output pass has no exponential.
// CHECK-LABEL: tdim.kernel @log_softmax
// CHECK: } post {
// CHECK: math.log
// CHECK: tdim.map ins(%x, %{{.*}}, %{{.*}} : {{.*}}) outs(%y : {{.*}})
// CHECK-NOT: math.exp
// CHECK: tdim.return
!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @log_softmax(%x: !m) -> (%y: !m) {
  tdim.log_softmax ins(%x : !m) outs(%y : !m) over c
  tdim.return
}
