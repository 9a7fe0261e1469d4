// RUN: nerve-opt %s --canonicalize --split-input-file | FileCheck %s

// Fusion is a pass of its own (fuse-elementwise.mlir), not a
// canonicalization: a map of a map stays two maps.
// CHECK-LABEL: tdim.kernel @map_of_map_unfused
// CHECK: tdim.alloc
// CHECK: tdim.map
// CHECK: tdim.map
tdim.kernel @map_of_map_unfused(%x: !tdim.tensor<[n: 8], f32>) -> (%y: !tdim.tensor<[n: 8], f32>) {
  %t = tdim.alloc() : !tdim.tensor<[n: 8], f32>
  tdim.map ins(%x : !tdim.tensor<[n: 8], f32>) outs(%t : !tdim.tensor<[n: 8], f32>) {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    tdim.yield %e : f32
  }
  tdim.map ins(%t : !tdim.tensor<[n: 8], f32>) outs(%y : !tdim.tensor<[n: 8], f32>) {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    tdim.yield %n : f32
  }
  tdim.return
}

// -----

// A relayout of a relayout is one relayout.
// CHECK-LABEL: tdim.kernel @relayout_of_relayout
// CHECK-NOT: tdim.alloc
// CHECK: tdim.relayout ins(%x : !tdim.tensor<[t: 4, n: 8], f32>) outs(%y : !tdim.tensor<[n: 8, t: 4], f32>)
// CHECK-NOT: tdim.relayout
tdim.kernel @relayout_of_relayout(%x: !tdim.tensor<[t: 4, n: 8], f32>) -> (%y: !tdim.tensor<[n: 8, t: 4], f32>) {
  %t = tdim.alloc() : !tdim.tensor<[t: 4, n: 8], f32, strides = [8, 1]>
  %u = tdim.alloc() : !tdim.tensor<[n: 8, t: 4], f32>
  tdim.relayout ins(%x : !tdim.tensor<[t: 4, n: 8], f32>) outs(%u : !tdim.tensor<[n: 8, t: 4], f32>)
  tdim.relayout ins(%u : !tdim.tensor<[n: 8, t: 4], f32>) outs(%y : !tdim.tensor<[n: 8, t: 4], f32>)
  tdim.return
}

// -----

// Writes to a tensor nothing reads go away with it.
// CHECK-LABEL: tdim.kernel @write_only
// CHECK-NEXT: tdim.return
tdim.kernel @write_only(%x: !tdim.tensor<[n: 8], f32>) {
  %t = tdim.alloc() : !tdim.tensor<[n: 8], f32>
  tdim.map ins(%x : !tdim.tensor<[n: 8], f32>) outs(%t : !tdim.tensor<[n: 8], f32>) {
  ^bb0(%v: f32):
    tdim.yield %v : f32
  }
  tdim.return
}

// -----

// Index arithmetic folds.
// CHECK-LABEL: tdim.kernel @index_folds
// CHECK-DAG: %[[C12:.*]] = tdim.const 12 : !tdim.index<i>
// CHECK-DAG: %[[C3:.*]] = tdim.const 3 : !tdim.index<i/4>
// CHECK-DAG: %[[C8:.*]] = tdim.const 8 : !tdim.index<n>
// CHECK: tdim.store %{{.*}}, %y[i = %[[C12]]]
// CHECK: tdim.store %{{.*}}, %p[i/4 = %[[C3]]]
// CHECK: tdim.store %{{.*}}, %q[n = %[[C8]]]
tdim.kernel @index_folds(%x: !tdim.tensor<[n: 8], f32>) -> (%y: !tdim.tensor<[i: 16], f32>, %p: !tdim.tensor<[i/4: 4], f32>, %q: !tdim.tensor<[n: 8], f32>) {
  %a = tdim.const 5 : !tdim.index<i>
  %b = tdim.const 7 : !tdim.index<i>
  %z = tdim.const 0 : !tdim.index<i>
  %s = tdim.add %a, %b : !tdim.index<i>
  %s0 = tdim.add %s, %z : !tdim.index<i>
  %f = tdim.fold %s0 : !tdim.index<i> to !tdim.index<i/4>
  %n = tdim.size %x[n] : !tdim.tensor<[n: 8], f32>
  %v = arith.constant 1.0 : f32
  tdim.store %v, %y[i = %s0] : !tdim.tensor<[i: 16], f32>
  tdim.store %v, %p[i/4 = %f] : !tdim.tensor<[i/4: 4], f32>
  tdim.store %v, %q[n = %n] : !tdim.tensor<[n: 8], f32>
  tdim.return
}
