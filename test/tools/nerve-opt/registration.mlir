// nerve-opt knows nerve's dialects and the upstream ones its pipelines use.
// RUN: nerve-opt --show-dialects | FileCheck %s
// CHECK-DAG: affine
// CHECK-DAG: arith
// CHECK-DAG: func
// CHECK-DAG: gpu
// CHECK-DAG: llvm
// CHECK-DAG: math
// CHECK-DAG: memref
// CHECK-DAG: neuron
// CHECK-DAG: nvvm
// CHECK-DAG: scf
// CHECK-DAG: tdim
