// RUN: nerve-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{output %y has type 'f32'; outputs are tdim tensors}}
tdim.kernel @k(%x: f32) -> (%y: f32) {
  tdim.return
}

// -----

// expected-error @+1 {{argument %a has type 'vector<4xf32>'; inputs are tdim tensors or scalars}}
tdim.kernel @k(%a: vector<4xf32>) {
  tdim.return
}

// -----

// expected-error @+1 {{argument %y has dimension `n` of size 1024 but argument %x has it with size 4096}}
tdim.kernel @k(%x: !tdim.tensor<[t: 8, n: 4096], f32>) -> (%y: !tdim.tensor<[t: 8, n: 1024], f32>) {
  tdim.return
}

// -----

// expected-error @+1 {{fold `i/64` does not divide `i` of size 100 (100 is not a multiple of 64)}}
tdim.kernel @k(%x: !tdim.tensor<[i: 100], f32>, %p: !tdim.tensor<[i/64: 2], f32>) {
  tdim.return
}

// -----

// expected-error @+1 {{dimensions `i/48` and `i/64` fold one axis by factors that do not nest}}
tdim.kernel @k(%x: !tdim.tensor<[i/48: 4], f32>, %p: !tdim.tensor<[i/64: 3], f32>) {
  tdim.return
}

// -----

// expected-error @+1 {{argument %p has `i/64` of size 3 but `i` of size 256 in argument %x makes it 4}}
tdim.kernel @k(%x: !tdim.tensor<[i: 256], f32>, %p: !tdim.tensor<[i/64: 3], f32>) {
  tdim.return
}

// -----

// A fold factor larger than the dimension cannot divide it.
// expected-error @+1 {{fold `i/64` does not divide `i` of size 10 (10 is not a multiple of 64)}}
tdim.kernel @k(%x: !tdim.tensor<[i: 10], f32>, %p: !tdim.tensor<[i/64: 1], f32>) {
  tdim.return
}

// -----

// expected-error @+1 {{returns values; a kernel writes its outputs instead}}
"tdim.kernel"() <{sym_name = "k", function_type = () -> f32, arg_names = [], num_outputs = 0 : i64}> ({
  "tdim.return"() : () -> ()
}) : () -> ()

// -----

// expected-error @+1 {{has two arguments named `x`}}
"tdim.kernel"() <{sym_name = "k", function_type = (f32, f32) -> (), arg_names = ["x", "x"], num_outputs = 0 : i64}> ({
^bb0(%a: f32, %b: f32):
  "tdim.return"() : () -> ()
}) : () -> ()
