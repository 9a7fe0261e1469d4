// RUN: nerve-opt %s --tdim-decompose --split-input-file | FileCheck %s

!m = !tdim.tensor<[r: ?, c: ?], f16>

// softmax: the row max and the row sum of exp(x - max) in f32, then one map.
// CHECK-LABEL: tdim.kernel @softmax
// CHECK: %[[MAX:.*]] = tdim.alloc(%{{.*}}) : !tdim.tensor<[r: ?], f32>
// CHECK: tdim.reduce ins(%x : {{.*}}) outs(%[[MAX]] : {{.*}}) over [c] init [0xFF800000 : f32]
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = tdim.alloc(%{{.*}}) : !tdim.tensor<[r: ?], f32>
// CHECK: tdim.reduce ins(%x, %[[MAX]] : {{.*}}) outs(%[[SUM]] : {{.*}}) over [c] init [0.000000e+00 : f32] map {
// CHECK: ^bb0(%[[V:.*]]: f32, %[[M:.*]]: f32):
// CHECK: %[[D:.*]] = arith.subf %[[V]], %[[M]] : f32
// CHECK: math.exp %[[D]] : f32
// CHECK: tdim.map ins(%x, %[[MAX]], %[[SUM]] : {{.*}}) outs(%y : {{.*}})
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-NOT: tdim.softmax
tdim.kernel @softmax(%x: !m) -> (%y: !m) {
  tdim.softmax ins(%x : !m) outs(%y : !m) over c
  tdim.return
}

// -----

// log_softmax subtracts log(sum) instead of dividing.
// CHECK-LABEL: tdim.kernel @log_softmax
// CHECK: tdim.map ins(%x, %{{.*}}, %{{.*}} : {{.*}}) outs(%y : {{.*}})
// CHECK: %[[D:.*]] = arith.subf
// CHECK: %[[L:.*]] = math.log
// CHECK: arith.subf %[[D]], %[[L]]
tdim.kernel @log_softmax(%x: !tdim.tensor<[r: ?, c: ?], f32>) -> (%y: !tdim.tensor<[r: ?, c: ?], f32>) {
  tdim.log_softmax ins(%x : !tdim.tensor<[r: ?, c: ?], f32>) outs(%y : !tdim.tensor<[r: ?, c: ?], f32>) over c
  tdim.return
}

// -----

// layer_norm: two sums, each a plain reduction: the mean (post: / count),
// then the squared deviations from it (post: rsqrt(/ count + eps)); then
// one map.
// CHECK-LABEL: tdim.kernel @layer_norm
// CHECK: %[[MEAN:.*]] = tdim.alloc
// CHECK: %[[RSTD:.*]] = tdim.alloc
// CHECK: tdim.reduce ins(%x : {{.*}}) outs(%[[MEAN]] : {{.*}}) over [c] init [0.000000e+00 : f32] map {
// CHECK: } combine {
// CHECK: arith.addf
// CHECK: } post {
// CHECK: arith.uitofp
// CHECK: arith.divf
// CHECK: tdim.reduce ins(%x, %[[MEAN]] : {{.*}}) outs(%[[RSTD]] : {{.*}}) over [c] init [0.000000e+00 : f32] map {
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: } combine {
// CHECK: } post {
// CHECK: math.rsqrt
// CHECK: tdim.map ins(%x, %[[MEAN]], %[[RSTD]], %w, %b : {{.*}}) outs(%y : {{.*}})
tdim.kernel @layer_norm(%x: !tdim.tensor<[r: ?, c: ?], f32>, %w: !tdim.tensor<[c: ?], f32>, %b: !tdim.tensor<[c: ?], f32>) -> (%y: !tdim.tensor<[r: ?, c: ?], f32>) {
  tdim.layer_norm ins(%x : !tdim.tensor<[r: ?, c: ?], f32>) weight(%w : !tdim.tensor<[c: ?], f32>) bias(%b : !tdim.tensor<[c: ?], f32>)
      outs(%y : !tdim.tensor<[r: ?, c: ?], f32>) over [c] eps 1.0e-05
  tdim.return
}

// -----

// broadcast and relayout are copies: identity maps.
// CHECK-LABEL: tdim.kernel @copies
// CHECK: tdim.map ins(%b : !tdim.tensor<[c: ?], f32>) outs(%y : !tdim.tensor<[r: ?, c: ?], f32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT: tdim.yield %[[A]] : f32
// CHECK: tdim.map ins(%x : !tdim.tensor<[r: ?, c: ?], f32>) outs(%z : !tdim.tensor<[c: ?, r: ?], f32>)
tdim.kernel @copies(%x: !tdim.tensor<[r: ?, c: ?], f32>, %b: !tdim.tensor<[c: ?], f32>) -> (%y: !tdim.tensor<[r: ?, c: ?], f32>, %z: !tdim.tensor<[c: ?, r: ?], f32>) {
  tdim.broadcast ins(%b : !tdim.tensor<[c: ?], f32>) outs(%y : !tdim.tensor<[r: ?, c: ?], f32>)
  tdim.relayout ins(%x : !tdim.tensor<[r: ?, c: ?], f32>) outs(%z : !tdim.tensor<[c: ?, r: ?], f32>)
  tdim.return
}

// -----

// concat: an identity map into a slice of the output per input, at offsets
// that add up the inputs' sizes.
// CHECK-LABEL: tdim.kernel @concat
// CHECK-SAME: attributes {variable_dims = [#tdim.dim<c>]}
// CHECK-DAG: %[[O0:.*]] = tdim.const 0 : !tdim.index<c>
// CHECK-DAG: %[[O1:.*]] = tdim.const 3 : !tdim.index<c>
// CHECK: %[[S0:.*]] = tdim.slice %y along c from %[[O0]] length 3
// CHECK: tdim.map ins(%a : {{.*}}) outs(%[[S0]] : {{.*}})
// CHECK: %[[S1:.*]] = tdim.slice %y along c from %[[O1]] length 4
// CHECK: tdim.map ins(%b : {{.*}}) outs(%[[S1]] : {{.*}})
tdim.kernel @concat(%a: !tdim.tensor<[r: 2, c: 3], f32>, %b: !tdim.tensor<[r: 2, c: 4], f32>) -> (%y: !tdim.tensor<[r: 2, c: 7], f32>) {
  tdim.concat ins(%a, %b : !tdim.tensor<[r: 2, c: 3], f32>, !tdim.tensor<[r: 2, c: 4], f32>) outs(%y : !tdim.tensor<[r: 2, c: 7], f32>) along c
  tdim.return
}
