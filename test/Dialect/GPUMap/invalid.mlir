// RUN: nerve-opt %s --split-input-file --verify-diagnostics

func.func @block_not_warps(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{block must be a whole number of warps from 32 to 1024 threads, not 100}}
  } {gpumap.strategy = #gpumap.strategy<threads, block = 100>}
  return
}

// -----

func.func @block_missing(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{block must be a whole number of warps from 32 to 1024 threads, not 0}}
  } {gpumap.strategy = #gpumap.strategy<row_reductions>}
  return
}

// -----

func.func @split_with_block(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{a split_reduction sizes its launches itself: it takes no block}}
  } {gpumap.strategy = #gpumap.strategy<split_reduction, block = 256>}
  return
}

// -----

func.func @loops_not_row_program(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{only a row_program maps several loops (loops = 2)}}
  } {gpumap.strategy = #gpumap.strategy<threads, block = 256, loops = 2>}
  return
}

// -----

func.func @no_loops(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{loops must be at least 1, not 0}}
  } {gpumap.strategy = #gpumap.strategy<row_program, block = 256, loops = 0>}
  return
}

// -----

func.func @staging_elsewhere(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{only a row_program takes staging and cluster}}
  } {gpumap.strategy = #gpumap.strategy<threads, block = 256, staging = 232448>}
  return
}

// -----

func.func @staging_too_small(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{staging must be from 49152 to 262144 bytes, not 1024}}
  } {gpumap.strategy = #gpumap.strategy<row_program, block = 256, staging = 1024>}
  return
}

// -----

func.func @cluster_not_a_power_of_two(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{cluster must be 0 (none) or a power of two from 2 to 8, not 3}}
  } {gpumap.strategy = #gpumap.strategy<row_program, block = 256, staging = 232448, cluster = 3>}
  return
}

// -----

func.func @whole_reduction_without_results(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'whole_reduction' does not fit this op: a whole_reduction maps an scf.parallel with results}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>}
  return
}

// -----

func.func @threads_with_results(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{'threads' does not fit this op: an scf.parallel with results maps as a whole_reduction only}}
  %s = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    scf.reduce(%zero : f32) {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      scf.reduce.return %c : f32
    }
  } {gpumap.strategy = #gpumap.strategy<threads, block = 256>}
  return %s : f32
}

// -----

func.func @whole_fold_on_parallel(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'whole_fold' does not fit this op: a whole_fold maps a fold.for (a fold that states its merge)}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {gpumap.strategy = #gpumap.strategy<whole_fold, block = 256>}
  return
}

// -----

// expected-error @below {{'row_reductions' does not fit this op: this strategy maps an scf.parallel}}
func.func @on_a_function() attributes {gpumap.strategy = #gpumap.strategy<row_reductions, block = 256>} {
  return
}

// -----

// expected-error @below {{'gpumap.strategy' must be a #gpumap.strategy}}
func.func @not_a_strategy() attributes {gpumap.strategy = 3 : i64} {
  return
}

// -----

// expected-error @below {{unknown gpumap attribute 'gpumap.mapping'}}
func.func @unknown_attribute() attributes {gpumap.mapping = 3 : i64} {
  return
}

// -----

func.func @unknown_kind(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{to be one of: whole_fold, whole_reduction}}
  // expected-error @below {{failed to parse GPUMap_StrategyAttr parameter 'kind'}}
  } {gpumap.strategy = #gpumap.strategy<warps, block = 256>}
  return
}

// -----

func.func @hint_outside_a_kernel() {
  // expected-error @below {{'gpumap.occupancy_hint' op must be in a gpu.launch or a gpu.func: it is a fact about a kernel}}
  gpumap.occupancy_hint blocks_per_sm = 2
  return
}

// -----

gpu.module @kernels {
  gpu.func @no_blocks() kernel {
    // expected-error @below {{'gpumap.occupancy_hint' op attribute 'blocks_per_sm' failed to satisfy constraint: 32-bit signless integer attribute whose value is positive}}
    gpumap.occupancy_hint blocks_per_sm = 0
    gpu.return
  }
}

// -----

func.func @lanes_elsewhere(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{only a threads mapping takes lanes}}
  } {gpumap.strategy = #gpumap.strategy<row_reductions, block = 256, lanes = 4>}
  return
}

// -----

func.func @lanes_not_a_vector(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  // expected-error @below {{lanes must be 0 (elements) or 2, 4 or 8, not 3}}
  } {gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 3>}
  return
}
