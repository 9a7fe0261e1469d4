// RUN: nerve-opt %s --pass-pipeline='builtin.module(gpu.module(nerve-extern-dynamic-shared))' | FileCheck %s

// The zero-sized shared global gpu.dynamic_shared_memory lowers to becomes
// external (PTX: .extern .shared ... []); static shared arrays and
// zero-sized globals elsewhere stay as they are.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @scratch() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<32 x f32>
// CHECK: llvm.mlir.global internal @empty_global() {addr_space = 1 : i32} : !llvm.array<0 x i8>
gpu.module @kernels {
  llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal @scratch() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<32 x f32>
  llvm.mlir.global internal @empty_global() {addr_space = 1 : i32} : !llvm.array<0 x i8>
}
