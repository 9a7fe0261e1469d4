// RUN: nerve-opt %s -split-input-file -verify-diagnostics

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) {
  // expected-error @+1 {{index value -1 is negative; indices count from 0}}
  %c = tdim.const -1 : !tdim.index<c>
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) {
  // expected-error @+1 {{tensor has no dimension `k` (it has `r`, `c`)}}
  %n = tdim.size %x[k] : !m
  tdim.return
}

// -----

tdim.kernel @k() {
  %i = tdim.const 1 : !tdim.index<i>
  %j = tdim.const 2 : !tdim.index<j>
  // expected-error @+1 {{adds an index of `i` and an index of `j`; convert one first with tdim.cast, tdim.fold or tdim.unfold}}
  %s = tdim.add %i, %j : !tdim.index<i>, !tdim.index<j>
  tdim.return
}

// -----

tdim.kernel @k() {
  %i = tdim.const 1 : !tdim.index<i>
  %b = tdim.const 2 : !tdim.index<i/64>
  // expected-error @+1 {{subtracts an index of `i` and an index of `i/64`}}
  %s = tdim.sub %i, %b : !tdim.index<i>, !tdim.index<i/64>
  tdim.return
}

// -----

tdim.kernel @k() {
  %i = tdim.const 1 : !tdim.index<i>
  %j = tdim.const 2 : !tdim.index<j>
  // expected-error @+1 {{compares an index of `i` and an index of `j`}}
  %s = tdim.cmp lt, %i, %j : !tdim.index<i>, !tdim.index<j>
  tdim.return
}

// -----

tdim.kernel @k() {
  %i = tdim.const 1 : !tdim.index<i>
  // expected-error @+1 {{unknown comparison `less`; expected eq, ne, lt, le, gt or ge}}
  %s = tdim.cmp less, %i, %i : !tdim.index<i>
  tdim.return
}

// -----

tdim.kernel @k() {
  %i = tdim.const 1 : !tdim.index<i>
  // expected-error @+1 {{folds `i` into `j/4`, which is not a fold of it; use tdim.cast to change dimension}}
  %f = tdim.fold %i : !tdim.index<i> to !tdim.index<j/4>
  tdim.return
}

// -----

tdim.kernel @k() {
  %i = tdim.const 1 : !tdim.index<i/8>
  // expected-error @+1 {{`i/4` is not a coarser fold of `i/8`}}
  %f = tdim.fold %i : !tdim.index<i/8> to !tdim.index<i/4>
  tdim.return
}

// -----

tdim.kernel @k() {
  %i = tdim.const 1 : !tdim.index<i/4>
  // expected-error @+1 {{unfolds `i/4` into `j`, which it is not a fold of; use tdim.cast to change dimension}}
  %f = tdim.unfold %i : !tdim.index<i/4> to !tdim.index<j>
  tdim.return
}

// -----

tdim.kernel @k() {
  %i = tdim.const 1 : !tdim.index<i/4>
  // expected-error @+1 {{`i/4` is not a coarser fold of `i/8`}}
  %f = tdim.unfold %i : !tdim.index<i/4> to !tdim.index<i/8>
  tdim.return
}

// -----

tdim.kernel @k() {
  %lo = tdim.const 0 : !tdim.index<i>
  %hi = tdim.const 8 : !tdim.index<i>
  // expected-error @+1 {{step 0 is not positive}}
  tdim.for %i over i from %lo to %hi step 0 {
  }
  tdim.return
}

// -----

tdim.kernel @k() {
  %lo = tdim.const 0 : !tdim.index<i>
  %hi = tdim.const 8 : !tdim.index<i>
  // expected-error @+1 {{cannot be both parallel and reverse}}
  tdim.for %i over i from %lo to %hi parallel reverse {
  }
  tdim.return
}

// -----

tdim.kernel @k() {
  %lo = tdim.const 0 : !tdim.index<i>
  %hi = tdim.const 8 : !tdim.index<i>
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{is parallel but carries values from one iteration to the next; parallel loops carry none}}
  %r = tdim.for %i over i from %lo to %hi parallel iter_args(%a = %z) -> (f32) {
    tdim.yield %a : f32
  }
  tdim.return
}

// -----

tdim.kernel @k() {
  %lo = tdim.const 0 : !tdim.index<i>
  %hi = tdim.const 8 : !tdim.index<i>
  %z = arith.constant 0.0 : f32
  %r = tdim.for %i over i from %lo to %hi iter_args(%a = %z) -> (f32) {
    %d = arith.extf %a : f32 to f64
    // expected-error @+1 {{yields 1 values of types ('f64') but the loop carries ('f32')}}
    tdim.yield %d : f64
  }
  tdim.return
}

// -----

"tdim.kernel"() <{sym_name = "k", function_type = () -> (), arg_names = [], num_outputs = 0 : i64}> ({
  %lo = tdim.const 0 : !tdim.index<i>
  %hi = tdim.const 8 : !tdim.index<j>
  // expected-error @+1 {{bounds index different dimensions ('!tdim.index<i>' and '!tdim.index<j>')}}
  "tdim.for"(%lo, %hi) <{step = 1 : i64}> ({
  ^bb0(%i: !tdim.index<i>):
    tdim.yield
  }) : (!tdim.index<i>, !tdim.index<j>) -> ()
  "tdim.return"() : () -> ()
}) : () -> ()
