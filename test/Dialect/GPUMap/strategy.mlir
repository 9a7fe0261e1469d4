// RUN: nerve-opt %s --split-input-file | nerve-opt --split-input-file | FileCheck %s

// #gpumap.strategy prints and parses back; `block`, `loops`, `staging`,
// `cluster` and `lanes` print only when they are not their defaults (0, 1,
// 49152, 0, 0).

// CHECK-LABEL: func.func @strategies
// CHECK: scf.parallel
// CHECK: gpumap.strategy = #gpumap.strategy<row_program, block = 128, loops = 3>
// CHECK: scf.parallel
// CHECK: gpumap.strategy = #gpumap.strategy<row_program, block = 256, loops = 2, staging = 232448, cluster = 8>
// CHECK: scf.parallel
// CHECK: gpumap.strategy = #gpumap.strategy<row_program, block = 256, loops = 2>
// CHECK: scf.parallel
// CHECK: gpumap.strategy = #gpumap.strategy<split_reduction>
// CHECK: scf.parallel
// CHECK: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 8>
// CHECK: scf.parallel
// CHECK: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// CHECK: fold.for
// CHECK: gpumap.strategy = #gpumap.strategy<whole_fold, block = 1024>
func.func @strategies(%n: index, %x: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {gpumap.strategy = #gpumap.strategy<row_program, block = 128, loops = 3>}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {gpumap.strategy = #gpumap.strategy<row_program, block = 256, loops = 2, staging = 232448, cluster = 8>}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {gpumap.strategy = #gpumap.strategy<row_program, block = 256, loops = 2, staging = 49152, cluster = 0>}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {gpumap.strategy = #gpumap.strategy<split_reduction>}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 8>}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 0>}
  %s = fold.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %x[%i] : memref<?xf32>
    %a = arith.addf %acc, %v : f32
    fold.yield %a : f32
  } merge {
  ^bb0(%l: f32, %r: f32):
    %m = arith.addf %l, %r : f32
    fold.yield %m : f32
  } attributes {gpumap.strategy = #gpumap.strategy<whole_fold, block = 1024>}
  return %s : f32
}
