// RUN: nerve-opt %s --split-input-file --verify-diagnostics

func.func @threads_with_chunk(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{'threads' takes no chunk}}
  } {cpumap.strategy = #cpumap.strategy<threads, chunk = 64>}
  return
}

// -----

func.func @time_chunk_not_multiple_of_8(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{a time_chunks chunk must be a multiple of 8 from 8 to 65536, not 100}}
  } {cpumap.strategy = #cpumap.strategy<time_chunks, chunk = 100>}
  return
}

// -----

func.func @reduction_chunk_zero(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    scf.reduce(%zero : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  // expected-error @below {{a whole_reduction chunk must be at least 1, not 0}}
  } {cpumap.strategy = #cpumap.strategy<whole_reduction>}
  return %r : f32
}

// -----

func.func @time_chunks_without_recurrence(%n: index, %m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{'time_chunks' does not fit this op: a time_chunks loop's body is one scf.for carrying values}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %m[%i] : memref<?xf32>
    scf.reduce
  } {cpumap.strategy = #cpumap.strategy<time_chunks, chunk = 64>}
  return
}

// -----

func.func @time_loop_bounds_vary(%n: index, %m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{'time_chunks' does not fit this op}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %r = scf.for %t = %c0 to %i step %c1 iter_args(%v = %zero) -> (f32) {
      scf.yield %v : f32
    }
    memref.store %r, %m[%i] : memref<?xf32>
    scf.reduce
  } {cpumap.strategy = #cpumap.strategy<time_chunks, chunk = 64>}
  return
}

// -----

func.func @threads_with_results(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{'threads' does not fit this op: a loop with results maps as a whole_reduction}}
  %r = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    scf.reduce(%zero : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  } {cpumap.strategy = #cpumap.strategy<threads>}
  return %r : f32
}

// -----

func.func @reduction_from_a_variable(%n: index, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'whole_reduction' does not fit this op: a whole_reduction's initial values are constants (the identities)}}
  %r = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%init) -> f32 {
    scf.reduce(%init : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  } {cpumap.strategy = #cpumap.strategy<whole_reduction, chunk = 16>}
  return %r : f32
}

// -----

func.func @inner_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    // expected-error @below {{'threads' does not fit this op: only an outermost scf.parallel takes a strategy}}
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      scf.reduce
    } {cpumap.strategy = #cpumap.strategy<threads>}
    scf.reduce
  }
  return
}

// -----

func.func @not_a_loop() {
  // expected-error @below {{'sequential' does not fit this op: a cpumap strategy maps an scf.parallel}}
  %c0 = arith.constant {cpumap.strategy = #cpumap.strategy<sequential>} 0 : index
  return
}

// -----

func.func @unknown_attribute(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{unknown cpumap attribute 'cpumap.plan'}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {cpumap.plan = 1}
  return
}

// -----

func.func @lanes_not_a_power_of_two(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{lanes must be 0 (folds as written) or a power of two from 2 to 64, not 3}}
  } {cpumap.strategy = #cpumap.strategy<threads, lanes = 3>}
  return
}

// -----

func.func @loops_on_time_chunks(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{only threads runs several loops in the same tasks (loops = 2)}}
  } {cpumap.strategy = #cpumap.strategy<sequential, loops = 2>}
  return
}
