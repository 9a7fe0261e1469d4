// RUN: nerve-opt %s --split-input-file --verify-diagnostics

func.func @no_accumulator(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'fold.for' op must carry at least one accumulator}}
  fold.for %i = %c0 to %n step %c1 iter_args() -> () {
    fold.yield
  } merge {
    fold.yield
  }
  return
}

// -----

func.func @merge_arity(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  // expected-error @below {{'fold.for' op merge region must take two tuples of the accumulators' types (2 arguments)}}
  %r = fold.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f32) {
    fold.yield %a : f32
  } merge {
  ^bb0(%l: f32):
    fold.yield %l : f32
  }
  return %r : f32
}

// -----

func.func @merge_yield(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  // expected-error @below {{'fold.for' op merge region must yield one tuple of the accumulators' types}}
  %r = fold.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f32) {
    fold.yield %a : f32
  } merge {
  ^bb0(%l: f32, %r: f32):
    fold.yield %l, %r : f32, f32
  }
  return %r : f32
}

// -----

func.func @merge_reads(%n: index, %x: memref<f32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %r = fold.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f32) {
    fold.yield %a : f32
  } merge {
  ^bb0(%l: f32, %r: f32):
    // expected-error @below {{'memref.load' op may not be in a fold.for's merge region: it only computes (no memory effects, no regions)}}
    %v = memref.load %x[] : memref<f32>
    fold.yield %v : f32
  }
  return %r : f32
}

// -----

func.func @merge_outside(%n: index, %k: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  // expected-error @below {{'fold.for' op merge region may use only its arguments and constants from outside it}}
  %r = fold.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f32) {
    fold.yield %a : f32
  } merge {
  ^bb0(%l: f32, %r: f32):
    %s = arith.addf %l, %k : f32
    fold.yield %s : f32
  }
  return %r : f32
}

// -----

func.func @body_arguments(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  // expected-error @below {{'fold.for' op body must yield the accumulators' next values}}
  %r = fold.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f32) {
    fold.yield %i : index
  } merge {
  ^bb0(%l: f32, %r: f32):
    fold.yield %l : f32
  }
  return %r : f32
}

// -----

func.func @max_sum_exp_types(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  // expected-error @below {{'fold.for' op max_sum_exp needs two f32 accumulators (the maximum and the sum)}}
  %r = fold.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f32) {
    fold.yield %a : f32
  } merge max_sum_exp {
  ^bb0(%l: f32, %r: f32):
    fold.yield %l : f32
  }
  return %r : f32
}

// -----

func.func @iter_args_count(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  // expected-error @below {{expected as many result types as iter_args}}
  %r = fold.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f32, f32) {
    fold.yield %a : f32
  } merge {
  ^bb0(%l: f32, %r: f32):
    fold.yield %l : f32
  }
  return %r : f32
}

// -----

func.func @yield_outside() {
  // expected-error @below {{'fold.yield' op expects parent op 'fold.for'}}
  fold.yield
}
