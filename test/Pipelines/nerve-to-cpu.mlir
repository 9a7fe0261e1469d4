// The CPU pipeline takes a spec to the LLVM dialect, with the C interface
// wrapper nerve's runtime calls.
// RUN: nerve-opt %s --nerve-to-cpu | FileCheck %s
// CHECK: llvm.func @softmax(
// CHECK: llvm.func @_mlir_ciface_softmax(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT: tdim.
// CHECK-NOT: memref.
// CHECK-NOT: scf.
// CHECK: llvm.call @softmax(
!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @softmax(%x: !m) -> (%y: !m) {
  tdim.softmax ins(%x : !m) outs(%y : !m) over c
  tdim.return
}
