// RUN: nerve-opt %s --convert-tdim-to-scf --split-input-file | FileCheck %s

// A kernel becomes a function over memrefs (inputs, then outputs) with the C
// interface; row-major tensors are identity-layout memrefs in list order,
// others strided memrefs. Typed indices become `index`.
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %{{.*}}: memref<?x64xf32>, %{{.*}}: f32, %{{.*}}: memref<8x64xbf16, strided<[80, 1]>>, %{{.*}}: memref<?x?xf16, strided<[1, ?], offset: ?>>)
// CHECK-SAME: attributes {llvm.emit_c_interface, nerve.arg_names = ["x", "s", "y", "z"], nerve.kernel, nerve.num_outputs = 2 : i64}
tdim.kernel @k(%x: !tdim.tensor<[t: ?, n: 64], f32>, %s: f32)
    -> (%y: !tdim.tensor<[t: 8, n: 64], bf16, strides = [80, 1]>, %z: !tdim.tensor<[a: ?, b: ?], f16, strides = [1, ?], offset = ?>) {
  // CHECK: %[[D:.*]] = memref.dim %{{.*}}, %c0 : memref<?x64xf32>
  %n = tdim.size %x[t] : !tdim.tensor<[t: ?, n: 64], f32>
  // CHECK: %[[C64:.*]] = arith.constant 64 : index
  %m = tdim.size %x[n] : !tdim.tensor<[t: ?, n: 64], f32>
  // CHECK: %[[C3:.*]] = arith.constant 3 : index
  %c = tdim.const 3 : !tdim.index<t>
  // CHECK: %[[A:.*]] = arith.addi %[[D]], %[[C3]] : index
  %a = tdim.add %n, %c : !tdim.index<t>
  // CHECK: %[[S:.*]] = arith.subi %[[A]], %[[C3]] : index
  %b = tdim.sub %a, %c : !tdim.index<t>
  // CHECK: %[[F:.*]] = arith.divui %[[S]], %{{.*}} : index
  %f = tdim.fold %b : !tdim.index<t> to !tdim.index<t/4>
  // CHECK: %[[U:.*]] = arith.muli %[[F]], %{{.*}} : index
  %u = tdim.unfold %f : !tdim.index<t/4> to !tdim.index<t>
  // CHECK: arith.cmpi ult, %[[U]], %[[D]] : index
  %lt = tdim.cmp lt, %u, %n : !tdim.index<t>
  // CHECK: return
  tdim.return
}
