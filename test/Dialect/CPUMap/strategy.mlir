// RUN: nerve-opt %s | nerve-opt | FileCheck %s

// The strategy prints as written, defaults left out.
// CHECK-LABEL: func.func @kinds
// CHECK: } {cpumap.strategy = #cpumap.strategy<threads>}
// CHECK: } {cpumap.strategy = #cpumap.strategy<threads, lanes = 16>}
// CHECK: } {cpumap.strategy = #cpumap.strategy<time_chunks, chunk = 512>}
// CHECK: } {cpumap.strategy = #cpumap.strategy<sequential>}
func.func @kinds(%n: index, %m: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {cpumap.strategy = #cpumap.strategy<threads>}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {cpumap.strategy = #cpumap.strategy<threads, lanes = 16>}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %r = scf.for %t = %c0 to %n step %c1 iter_args(%v = %zero) -> (f32) {
      %a = memref.load %m[%t, %i] : memref<?x?xf32>
      %b = arith.addf %v, %a : f32
      scf.yield %b : f32
    }
    memref.store %r, %m[%c0, %i] : memref<?x?xf32>
    scf.reduce
  } {cpumap.strategy = #cpumap.strategy<time_chunks, chunk = 512>}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {cpumap.strategy = #cpumap.strategy<sequential, chunk = 0>}
  return
}
