// RUN: nerve-opt %s --split-input-file --nerve-apply-cpu-strategy --verify-diagnostics

func.func @unmapped(%y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %y, %c0 : memref<?xf32>
  // expected-error @below {{an outermost scf.parallel without a #cpumap.strategy: run nerve-cpu-select-strategy first}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %y[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

func.func @group_that_does_not_hold(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  // expected-error @below {{the strategy runs 2 loops in the same tasks, but only 1 from this one may share them}}
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %a = memref.load %x[%i, %c0] : memref<?x?xf32>
    memref.store %a, %y[%c0, %i] : memref<?x?xf32>
    scf.reduce
  } {cpumap.strategy = #cpumap.strategy<threads, loops = 2>}
  // The second reads what the first wrote, at another row.
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %a = memref.load %y[%c0, %i] : memref<?x?xf32>
    memref.store %a, %x[%i, %c1] : memref<?x?xf32>
    scf.reduce
  }
  return
}
