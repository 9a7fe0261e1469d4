// RUN: nerve-opt %s --tdim-decompose --split-input-file | FileCheck %s

!m = !tdim.tensor<[r: ?, c: ?], f16>

// softmax: the row max and the row sum of exp(x - max) in f32, its
// reciprocal taken once per row (post), then one map that multiplies.
// CHECK-LABEL: tdim.kernel @softmax
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[MAX:.*]] = tdim.alloc(%{{.*}}) : !tdim.tensor<[r: ?], f32>
// CHECK: tdim.reduce ins(%x : {{.*}}) outs(%[[MAX]] : {{.*}}) over [c] init [0xFF800000 : f32]
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = tdim.alloc(%{{.*}}) : !tdim.tensor<[r: ?], f32>
// CHECK: tdim.reduce ins(%x, %[[MAX]] : {{.*}}) outs(%[[SUM]] : {{.*}}) over [c] init [0.000000e+00 : f32] map {
// CHECK: ^bb0(%[[V:.*]]: f32, %[[M:.*]]: f32):
// CHECK: %[[D:.*]] = arith.subf %[[V]], %[[M]] : f32
// CHECK: math.exp %[[D]] : f32
// CHECK: } post {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index):
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[ONE]], %[[S]] : f32
// CHECK-NEXT: tdim.yield %[[R]] : f32
// CHECK: tdim.map ins(%x, %[[MAX]], %[[SUM]] : {{.*}}) outs(%y : {{.*}})
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[XM:.*]]: f32, %[[XR:.*]]: f32):
// CHECK-NEXT: %[[XD:.*]] = arith.subf %[[X]], %[[XM]]
// CHECK-NEXT: %[[E:.*]] = math.exp %[[XD]]
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[E]], %[[XR]]
// CHECK-NEXT: tdim.yield %[[Y]]
// CHECK-NOT: tdim.softmax
tdim.kernel @softmax(%x: !m) -> (%y: !m) {
  tdim.softmax ins(%x : !m) outs(%y : !m) over c
  tdim.return
}

// -----

// log_softmax subtracts log(sum), taken once per row, instead.
// CHECK-LABEL: tdim.kernel @log_softmax
// CHECK: } post {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index):
// CHECK-NEXT: %[[L:.*]] = math.log %[[S]] : f32
// CHECK-NEXT: tdim.yield %[[L]] : f32
// CHECK: tdim.map ins(%x, %{{.*}}, %{{.*}} : {{.*}}) outs(%y : {{.*}})
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[XM:.*]]: f32, %[[XL:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[X]], %[[XM]]
// CHECK-NEXT: %[[Y:.*]] = arith.subf %[[D]], %[[XL]]
// CHECK-NEXT: tdim.yield %[[Y]]
tdim.kernel @log_softmax(%x: !tdim.tensor<[r: ?, c: ?], f32>) -> (%y: !tdim.tensor<[r: ?, c: ?], f32>) {
  tdim.log_softmax ins(%x : !tdim.tensor<[r: ?, c: ?], f32>) outs(%y : !tdim.tensor<[r: ?, c: ?], f32>) over c
  tdim.return
}

// -----

// Over a dimension that is not contiguous (r of a row-major [r, c]): the max
// and the sum in one reduction of two accumulators, an element folding in
// as (x, 1), two partials merging by the larger max with the other side's
// sum scaled by exp(smaller - larger), by 1 when the maxima are equal. The
// reduce states it (max_sum_exp), so that a lowering may fold
// several values at once.
// CHECK-LABEL: tdim.kernel @softmax_columns
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[MAX:.*]] = tdim.alloc(%{{.*}}) : !tdim.tensor<[c: ?], f32>
// CHECK-DAG: %[[SUM:.*]] = tdim.alloc(%{{.*}}) : !tdim.tensor<[c: ?], f32>
// CHECK: tdim.reduce ins(%x : {{.*}}) outs(%[[MAX]], %[[SUM]] : {{.*}}) over [r] init [0xFF800000 : f32, 0.000000e+00 : f32] max_sum_exp map {
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32):
// CHECK-NEXT: tdim.yield %[[X]], %[[ONE]] : f32, f32
// CHECK: } combine {
// CHECK-NEXT: ^bb0(%[[M1:.*]]: f32, %[[S1:.*]]: f32, %[[M2:.*]]: f32, %[[S2:.*]]: f32):
// CHECK-DAG: %[[M:.*]] = arith.maximumf %[[M1]], %[[M2]]
// CHECK-DAG: %[[LO:.*]] = arith.minimumf %[[M1]], %[[M2]]
// CHECK-DAG: %[[SAME:.*]] = arith.cmpf oeq, %[[M1]], %[[M2]]
// CHECK-DAG: %[[D:.*]] = arith.subf %[[LO]], %[[M]]
// CHECK-DAG: %[[E:.*]] = math.exp %[[D]]
// CHECK-DAG: %[[SCALE:.*]] = arith.select %[[SAME]], %[[ONE]], %[[E]]
// CHECK-DAG: %[[FIRST:.*]] = arith.cmpf oge, %[[M1]], %[[M2]]
// CHECK-DAG: %[[LARGER:.*]] = arith.select %[[FIRST]], %[[S1]], %[[S2]]
// CHECK-DAG: %[[SMALLER:.*]] = arith.select %[[FIRST]], %[[S2]], %[[S1]]
// CHECK-DAG: %[[SCALED:.*]] = arith.mulf %[[SMALLER]], %[[SCALE]]
// CHECK-DAG: %[[S:.*]] = arith.addf %[[SCALED]], %[[LARGER]]
// CHECK: tdim.yield %[[M]], %[[S]] : f32, f32
// CHECK: } post {
// CHECK-NEXT: ^bb0(%[[PM:.*]]: f32, %[[PS:.*]]: f32, %{{.*}}: index):
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[ONE]], %[[PS]] : f32
// CHECK-NEXT: tdim.yield %[[PM]], %[[R]] : f32, f32
// CHECK: tdim.map ins(%x, %[[MAX]], %[[SUM]] : {{.*}}) outs(%y : {{.*}})
// CHECK: arith.mulf
// CHECK-NOT: tdim.reduce
tdim.kernel @softmax_columns(%x: !tdim.tensor<[r: ?, c: ?], f32>) -> (%y: !tdim.tensor<[r: ?, c: ?], f32>) {
  tdim.softmax ins(%x : !tdim.tensor<[r: ?, c: ?], f32>) outs(%y : !tdim.tensor<[r: ?, c: ?], f32>) over r
  tdim.return
}

// -----

// The layout decides, not the position: over c of a column-major [r, c],
// the online form; over r of it (contiguous), two reductions.
// CHECK-LABEL: tdim.kernel @column_major
// CHECK: tdim.reduce ins(%x : {{.*}}) outs(%{{.*}}, %{{.*}} : {{.*}}) over [c] {{.*}} max_sum_exp
// CHECK: tdim.map
// CHECK: tdim.reduce ins(%x : {{.*}}) outs(%{{[^,]*}} : {{.*}}) over [r]
// CHECK-NOT: max_sum_exp
// CHECK: tdim.reduce ins(%x, %{{.*}} : {{.*}}) outs(%{{[^,]*}} : {{.*}}) over [r]
// CHECK-NOT: max_sum_exp
// CHECK: tdim.map
!cm = !tdim.tensor<[r: ?, c: ?], f32, strides = [1, ?]>
tdim.kernel @column_major(%x: !cm) -> (%y: !cm, %z: !cm) {
  tdim.log_softmax ins(%x : !cm) outs(%y : !cm) over c
  tdim.softmax ins(%x : !cm) outs(%z : !cm) over r
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
