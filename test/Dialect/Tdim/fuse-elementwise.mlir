// RUN: nerve-opt %s --tdim-fuse-elementwise --split-input-file | FileCheck %s

!m = !tdim.tensor<[r: ?, c: ?], f32>

// A map of a map: the producer's body moves into the consumer and the
// intermediate tensor disappears.
// CHECK-LABEL: tdim.kernel @map_of_map
// CHECK-NOT: tdim.alloc
// CHECK: tdim.map ins(%x, %b : {{.*}}) outs(%y : {{.*}}) {
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[B]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[S]] : f32
// CHECK-NEXT: tdim.yield %[[E]] : f32
// CHECK-NOT: tdim.map
tdim.kernel @map_of_map(%x: !m, %b: !tdim.tensor<[c: ?], f32>) -> (%y: !m) {
  %nr = tdim.size %x[r] : !m
  %nc = tdim.size %x[c] : !m
  %t = tdim.alloc(%nr, %nc) : !m
  tdim.map ins(%x, %b : !m, !tdim.tensor<[c: ?], f32>) outs(%t : !m) {
  ^bb0(%v: f32, %w: f32):
    %s = arith.addf %v, %w : f32
    tdim.yield %s : f32
  }
  tdim.map ins(%t : !m) outs(%y : !m) {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    tdim.yield %e : f32
  }
  tdim.return
}

// -----

// An f16 intermediate keeps its rounding when fused away.
// CHECK-LABEL: tdim.kernel @keeps_rounding
// CHECK: %[[S:.*]] = arith.mulf
// CHECK-NEXT: %[[H:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT: %[[F:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK-NEXT: tdim.yield %[[F]] : f32
tdim.kernel @keeps_rounding(%x: !tdim.tensor<[n: 8], f32>) -> (%y: !tdim.tensor<[n: 8], f32>) {
  %t = tdim.alloc() : !tdim.tensor<[n: 8], f16>
  tdim.map ins(%x : !tdim.tensor<[n: 8], f32>) outs(%t : !tdim.tensor<[n: 8], f16>) {
  ^bb0(%v: f32):
    %s = arith.mulf %v, %v : f32
    tdim.yield %s : f32
  }
  tdim.map ins(%t : !tdim.tensor<[n: 8], f16>) outs(%y : !tdim.tensor<[n: 8], f32>) {
  ^bb0(%v: f32):
    tdim.yield %v : f32
  }
  tdim.return
}

// -----

// A map into a reduce: one pass, the producer becomes the reduce's map.
// CHECK-LABEL: tdim.kernel @map_into_reduce
// CHECK-NOT: tdim.alloc
// CHECK: tdim.reduce ins(%x : {{.*}}) outs(%s : {{.*}}) over [c] init [0.000000e+00 : f32] map {
// CHECK: arith.mulf
// CHECK: } combine {
tdim.kernel @map_into_reduce(%x: !tdim.tensor<[r: 4, c: 8], f32>) -> (%s: !tdim.tensor<[r: 4], f32>) {
  %t = tdim.alloc() : !tdim.tensor<[r: 4, c: 8], f32>
  tdim.map ins(%x : !tdim.tensor<[r: 4, c: 8], f32>) outs(%t : !tdim.tensor<[r: 4, c: 8], f32>) {
  ^bb0(%v: f32):
    %sq = arith.mulf %v, %v : f32
    tdim.yield %sq : f32
  }
  tdim.reduce ins(%t : !tdim.tensor<[r: 4, c: 8], f32>) outs(%s : !tdim.tensor<[r: 4], f32>) over [c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %sum = arith.addf %a, %b : f32
      tdim.yield %sum : f32
    }
  tdim.return
}

// -----

// A broadcast intermediate is not fused: the producer would run once per
// broadcast copy.
// CHECK-LABEL: tdim.kernel @no_fusion_across_broadcast
// CHECK: tdim.alloc
// CHECK: tdim.map
// CHECK: tdim.map
tdim.kernel @no_fusion_across_broadcast(%b: !tdim.tensor<[c: 8], f32>) -> (%y: !tdim.tensor<[r: 4, c: 8], f32>) {
  %t = tdim.alloc() : !tdim.tensor<[c: 8], f32>
  tdim.map ins(%b : !tdim.tensor<[c: 8], f32>) outs(%t : !tdim.tensor<[c: 8], f32>) {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    tdim.yield %e : f32
  }
  tdim.map ins(%t : !tdim.tensor<[c: 8], f32>) outs(%y : !tdim.tensor<[r: 4, c: 8], f32>) {
  ^bb0(%v: f32):
    tdim.yield %v : f32
  }
  tdim.return
}

// -----

// A producer with a scalar input stays apart from a reduce (whose inputs
// are tensors over its iteration space), and the pass ends.
// CHECK-LABEL: tdim.kernel @scalar_producer_into_reduce
// CHECK: tdim.alloc
// CHECK: tdim.map ins(%x, %k
// CHECK: tdim.reduce ins(%
tdim.kernel @scalar_producer_into_reduce(%x: !tdim.tensor<[r: 4, c: 8], f32>, %k: f32) -> (%s: !tdim.tensor<[r: 4], f32>) {
  %t = tdim.alloc() : !tdim.tensor<[r: 4, c: 8], f32>
  tdim.map ins(%x, %k : !tdim.tensor<[r: 4, c: 8], f32>, f32) outs(%t : !tdim.tensor<[r: 4, c: 8], f32>) {
  ^bb0(%v: f32, %w: f32):
    %p = arith.mulf %v, %w : f32
    tdim.yield %p : f32
  }
  tdim.reduce ins(%t : !tdim.tensor<[r: 4, c: 8], f32>) outs(%s : !tdim.tensor<[r: 4], f32>) over [c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %sum = arith.addf %a, %b : f32
      tdim.yield %sum : f32
    }
  tdim.return
}
