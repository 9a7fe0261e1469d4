// RUN: nerve-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{tensor lists dimension `i` twice (as `i` and `i/4`)}}
func.func private @f(!tdim.tensor<[i: 8, i/4: 2], f32>)

// -----

// expected-error @+1 {{tensor element type 'i16' is not one of f32, f16, bf16, f64, i1, i8, i32, i64}}
func.func private @f(!tdim.tensor<[i: 8], i16>)

// -----

// expected-error @+1 {{dimension `i` is folded by 0; a fold factor must be a positive integer}}
func.func private @f(!tdim.tensor<[i/0: 8], f32>)

// -----

// expected-error @+1 {{tensor has 2 dimensions but 1 strides}}
func.func private @f(!tdim.tensor<[i: 8, j: 4], f32, strides = [4]>)

// -----

// expected-error @+1 {{strides overlap: dimension `i` has stride 2 but the dimensions inside it already span 4 elements}}
func.func private @f(!tdim.tensor<[i: 8, j: 4], f32, strides = [2, 1]>)

// -----

// expected-error @+1 {{dimension `j` has stride 0, so its elements overlap; broadcast with tdim.map instead}}
func.func private @f(!tdim.tensor<[i: 8, j: 4], f32, strides = [4, 0]>)

// -----

// expected-error @+1 {{dimension `i` has negative stride -4}}
func.func private @f(!tdim.tensor<[i: 8, j: 4], f32, strides = [-4, 1]>)

// -----

// expected-error @+1 {{layout spans more than 2^63 elements}}
func.func private @f(!tdim.tensor<[i: 1099511627776, j: 1099511627776], f32, strides = [1099511627776, 1]>)

// -----

// expected-error @+1 {{expected a non-negative integer or `?`}}
func.func private @f(!tdim.tensor<[i: -3], f32>)

// -----

// expected-error @+1 {{expected `strides` or `offset`}}
func.func private @f(!tdim.tensor<[i: 3], f32, stride = [1]>)
