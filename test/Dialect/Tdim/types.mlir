// RUN: nerve-opt %s | FileCheck %s
// RUN: nerve-opt %s | nerve-opt | FileCheck %s
// RUN: nerve-opt %s --mlir-print-op-generic | nerve-opt | FileCheck %s

// The list order is the memory order; without strides the layout is
// row-major in it.
// CHECK-LABEL: tdim.kernel @row_major
// CHECK-SAME: !tdim.tensor<[t: 8, n: ?], f32>
// CHECK-SAME: !tdim.tensor<[n: ?, t: 8], f16>
tdim.kernel @row_major(%a: !tdim.tensor<[t: 8, n: ?], f32>, %b: !tdim.tensor<[n: ?, t: 8], f16>) {
  tdim.return
}

// Explicit strides and offsets, static or bound at launch.
// CHECK-LABEL: tdim.kernel @strided
// CHECK-SAME: !tdim.tensor<[t: 8, n: 64], bf16, strides = [80, 1]>
// CHECK-SAME: !tdim.tensor<[r: ?, c: ?], f64, strides = [?, 1], offset = ?>
// CHECK-SAME: !tdim.tensor<[b: 2, h: 4, w: 4, c: 3], f32, offset = 5>
tdim.kernel @strided(%a: !tdim.tensor<[t: 8, n: 64], bf16, strides = [80, 1]>,
                     %b: !tdim.tensor<[r: ?, c: ?], f64, strides = [?, 1], offset = ?>,
                     %c: !tdim.tensor<[b: 2, h: 4, w: 4, c: 3], f32, strides = [48, 12, 3, 1], offset = 5>) {
  tdim.return
}

// Row-major strides spelled out are the default layout.
// CHECK-LABEL: tdim.kernel @canonical
// CHECK-SAME: %a: !tdim.tensor<[t: 8, n: 64], f32>)
tdim.kernel @canonical(%a: !tdim.tensor<[t: 8, n: 64], f32, strides = [64, 1]>) {
  tdim.return
}

// Folds, 0-d tensors, the integer element types, typed indices.
// CHECK-LABEL: tdim.kernel @misc
// CHECK-SAME: !tdim.tensor<[i/64: 4, j: 3], i32>
// CHECK-SAME: !tdim.tensor<[], f32>
// CHECK-SAME: !tdim.tensor<[m: 5], i1>
// CHECK-SAME: !tdim.tensor<[m: 5], i8>
// CHECK-SAME: !tdim.tensor<[m: 5], i64>
tdim.kernel @misc(%a: !tdim.tensor<[i/64: 4, j: 3], i32>, %b: !tdim.tensor<[], f32>,
                  %c: !tdim.tensor<[m: 5], i1>, %d: !tdim.tensor<[m: 5], i8>,
                  %e: !tdim.tensor<[m: 5], i64>) {
  // CHECK: tdim.const 2 : !tdim.index<i/256>
  %0 = tdim.const 2 : !tdim.index<i/64/4>
  tdim.return
}

// Names written in the source become the argument names.
// CHECK-LABEL: tdim.kernel @names(%input: f32, %weight: !tdim.tensor<[n: 4], f32>) -> (%out: !tdim.tensor<[n: 4], f32>)
tdim.kernel @names(%input: f32, %weight: !tdim.tensor<[n: 4], f32>) -> (%out: !tdim.tensor<[n: 4], f32>) {
  tdim.return
}
