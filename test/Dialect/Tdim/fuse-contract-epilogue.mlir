// RUN: nerve-opt %s --tdim-fuse-contract-epilogue --split-input-file | FileCheck %s

!x = !tdim.tensor<[b: ?, k: ?], f16>
!w = !tdim.tensor<[j: ?, k: ?], f16>
!y = !tdim.tensor<[b: ?, j: ?], f16>
!v = !tdim.tensor<[j: ?], f16>

// A linear layer: the bias map (a broadcast, as tdim-decompose writes it)
// that the product accumulates onto becomes an addition in the epilogue,
// rounded as the output held it; the relu reading the alloc'ed product
// follows it there, the product rounded as the intermediate held it. One
// op remains, writing %y.
// CHECK-LABEL: tdim.kernel @linear_relu
// CHECK-NOT: tdim.map
// CHECK-NOT: tdim.alloc
// CHECK: tdim.contract ins(%x, %w : {{.*}}) with(%bias : !tdim.tensor<[j: ?], f16>) outs(%y : {{.*}}) epilogue {
// CHECK-NEXT: ^bb0(%[[SUM:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[BR:.*]] = arith.truncf %[[B]] : f32 to f16
// CHECK-NEXT: %[[BW:.*]] = arith.extf %[[BR]] : f16 to f32
// CHECK-NEXT: %[[H:.*]] = arith.addf %[[SUM]], %[[BW]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[H]] : f32 to f16
// CHECK-NEXT: %[[RW:.*]] = arith.extf %[[R]] : f16 to f32
// CHECK-NEXT: %[[MAX:.*]] = arith.maximumf %[[RW]], %{{.*}} : f32
// CHECK-NEXT: tdim.yield %[[MAX]] : f32
// CHECK-NOT: tdim.map
tdim.kernel @linear_relu(%x: !x, %w: !w, %bias: !v) -> (%y: !y) {
  %nb = tdim.size %x[b] : !x
  %nj = tdim.size %w[j] : !w
  %h = tdim.alloc(%nb, %nj) : !y
  tdim.map ins(%bias : !v) outs(%h : !y) {
  ^bb0(%c: f32):
    tdim.yield %c : f32
  }
  tdim.contract ins(%x, %w : !x, !w) outs(%h : !y) accumulate
  tdim.map ins(%h : !y) outs(%y : !y) {
  ^bb0(%v: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %zero : f32
    tdim.yield %r : f32
  }
  tdim.return
}

// -----

!x = !tdim.tensor<[b: ?, k: ?], f32>
!w = !tdim.tensor<[j: ?, k: ?], f32>
!y = !tdim.tensor<[b: ?, j: ?], f32>

// The consumer's other inputs (a tensor, a scalar) become `with` inputs,
// in its order; f32 storage rounds nothing.
// CHECK-LABEL: tdim.kernel @residual
// CHECK: tdim.contract ins(%x, %w : {{.*}}) with(%r, %s : !tdim.tensor<[b: ?, j: ?], f32>, f32) outs(%y : {{.*}}) epilogue {
// CHECK-NEXT: ^bb0(%[[SUM:.*]]: f32, %[[R:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[SUM]], %[[S]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[M]], %[[R]] : f32
// CHECK-NEXT: tdim.yield %[[A]] : f32
tdim.kernel @residual(%x: !x, %w: !w, %r: !y, %s: f32) -> (%y: !y) {
  %nb = tdim.size %x[b] : !x
  %nj = tdim.size %w[j] : !w
  %h = tdim.alloc(%nb, %nj) : !y
  tdim.contract ins(%x, %w : !x, !w) outs(%h : !y)
  tdim.map ins(%r, %h, %s : !y, !y, f32) outs(%y : !y) {
  ^bb0(%rv: f32, %hv: f32, %sv: f32):
    %m = arith.mulf %hv, %sv : f32
    %a = arith.addf %m, %rv : f32
    tdim.yield %a : f32
  }
  tdim.return
}

// -----

!x = !tdim.tensor<[b: ?, k: ?], f16>
!w = !tdim.tensor<[j: ?, k: ?], f16>
!y = !tdim.tensor<[b: ?, j: ?], f16>
!y32 = !tdim.tensor<[b: ?, j: ?], f32>

// Left alone: a consumer writing another element type than the operands'
// (tdim.contract holds one), a product read twice, a write between the
// product and its consumer, an initial map reading the output, and a
// consumer writing an operand.
// CHECK-LABEL: tdim.kernel @unfused
// CHECK-NOT: epilogue
// CHECK-COUNT-4: tdim.contract
// CHECK-NOT: epilogue
tdim.kernel @unfused(%x: !x, %w: !w, %o: !y) -> (%y32: !y32, %y: !y, %z: !y) {
  %nb = tdim.size %x[b] : !x
  %nj = tdim.size %w[j] : !w
  %h = tdim.alloc(%nb, %nj) : !y
  tdim.contract ins(%x, %w : !x, !w) outs(%h : !y)
  tdim.map ins(%h : !y) outs(%y32 : !y32) {
  ^bb0(%v: f32):
    tdim.yield %v : f32
  }
  %h2 = tdim.alloc(%nb, %nj) : !y
  tdim.contract ins(%x, %w : !x, !w) outs(%h2 : !y)
  tdim.map ins(%h2, %h2 : !y, !y) outs(%y : !y) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tdim.yield %s : f32
  }
  %h3 = tdim.alloc(%nb, %nj) : !y
  tdim.contract ins(%x, %w : !x, !w) outs(%h3 : !y)
  tdim.map ins(%o : !y) outs(%z : !y) {
  ^bb0(%a: f32):
    tdim.yield %a : f32
  }
  tdim.map ins(%h3 : !y) outs(%y : !y) {
  ^bb0(%a: f32):
    tdim.yield %a : f32
  }
  tdim.map ins(%z : !y) outs(%z : !y) {
  ^bb0(%a: f32):
    tdim.yield %a : f32
  }
  tdim.contract ins(%x, %w : !x, !w) outs(%z : !y) accumulate
  tdim.return
}

// -----

!x = !tdim.tensor<[b: ?, k: ?], f16>
!w = !tdim.tensor<[j: ?, k: ?], f16>
!y = !tdim.tensor<[b: ?, j: ?], f16>

// A consumer writing what the contraction's epilogue reads stays apart.
// CHECK-LABEL: tdim.kernel @consumer_writes_an_input
// CHECK: tdim.contract ins(%x, %w : {{.*}}) with(%r : {{.*}}) outs(%{{.*}} : {{.*}}) epilogue
// CHECK: tdim.map
tdim.kernel @consumer_writes_an_input(%x: !x, %w: !w) -> (%r: !y) {
  %nb = tdim.size %x[b] : !x
  %nj = tdim.size %w[j] : !w
  %h = tdim.alloc(%nb, %nj) : !y
  tdim.contract ins(%x, %w : !x, !w) with(%r : !y) outs(%h : !y) epilogue {
  ^bb0(%s: f32, %rv: f32):
    %a = arith.addf %s, %rv : f32
    tdim.yield %a : f32
  }
  tdim.map ins(%h : !y) outs(%r : !y) {
  ^bb0(%v: f32):
    tdim.yield %v : f32
  }
  tdim.return
}
