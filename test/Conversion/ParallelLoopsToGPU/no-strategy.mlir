// RUN: nerve-opt %s --nerve-parallel-loops-to-gpu --verify-diagnostics

// nerve-parallel-loops-to-gpu applies strategies; it chooses none.
func.func @unmapped(%x: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  // expected-error @below {{has no #gpumap.strategy (nerve-gpu-select-strategy chooses one)}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %one, %x[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
