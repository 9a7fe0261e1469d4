// RUN: nerve-opt %s -split-input-file -verify-diagnostics

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%x: !tdim.tensor<[n: ?], f32>) -> (%s: !tdim.tensor<[n: ?], f32>) {
  // expected-error @+1 {{`x` has no time dimension `t` (it has `n`)}}
  neuron.if ins(%x : !tdim.tensor<[n: ?], f32>) outs(%s : !tdim.tensor<[n: ?], f32>) time t {v_reset = 0.0}
  tdim.return
}

// -----

tdim.kernel @k(%x: !tdim.tensor<[t: ?, n: ?], i32>) -> (%s: !tdim.tensor<[t: ?, n: ?], i32>) {
  // expected-error @+1 {{`x` holds 'i32'; neurons need f32, f64, f16 or bf16}}
  neuron.if ins(%x : !tdim.tensor<[t: ?, n: ?], i32>) outs(%s : !tdim.tensor<[t: ?, n: ?], i32>) time t {v_reset = 0.0}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%x: !seq, %v0: !seq) -> (%s: !seq) {
  // expected-error @+1 {{`v_init` must have the dimensions of `x` without `t` (`n`), not `t`, `n`}}
  neuron.lif ins(%x : !seq) init(%v0 : !seq) outs(%s : !seq) time t {v_reset = 0.0}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%x: !seq) -> (%s: !seq, %v: !tdim.tensor<[n: ?], f32>) {
  // expected-error @+1 {{`v_seq` must have the dimensions of `x` (`t`, `n`), not `n`}}
  neuron.lif ins(%x : !seq) outs(%s : !seq) v_seq(%v : !tdim.tensor<[n: ?], f32>) time t {v_reset = 0.0}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%x: !seq) -> (%s: !tdim.tensor<[t: ?, n: ?], i32>) {
  // expected-error @+1 {{`spike` holds 'i32'; expected a float type (or i1/i8 for spikes)}}
  neuron.lif ins(%x : !seq) outs(%s : !tdim.tensor<[t: ?, n: ?], i32>) time t {v_reset = 0.0}
  tdim.return
}

// -----

tdim.kernel @k() {
  %x = tdim.alloc() : !tdim.tensor<[t: 4, n: 4], f32>
  %v = tdim.alloc() : !tdim.tensor<[t: 4, n: 8], f32>
  // expected-error @+1 {{`v_seq` has dimension `n` of size 8 but `x` has it with size 4}}
  neuron.if ins(%x : !tdim.tensor<[t: 4, n: 4], f32>) outs(%x : !tdim.tensor<[t: 4, n: 4], f32>) v_seq(%v : !tdim.tensor<[t: 4, n: 8], f32>) time t {v_reset = 0.0}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%x: !seq, %w: !tdim.tensor<[n: ?], f32>) -> (%s: !seq) {
  // expected-error @+1 {{`w` must be a 0-d tensor (`!tdim.tensor<[], f32>`), not one over `n`}}
  neuron.plif ins(%x : !seq) w(%w : !tdim.tensor<[n: ?], f32>) outs(%s : !seq) time t {v_reset = 0.0}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%x: !seq) -> (%s: !seq) {
  // expected-error @+1 {{tau = 1 is not allowed; LIF needs a finite tau > 1 (as SpikingJelly does): 1/tau is the fraction of the gap to v_reset closed per step}}
  neuron.lif ins(%x : !seq) outs(%s : !seq) time t {tau = 1.0, v_reset = 0.0}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%x: !seq) -> (%s: !seq) {
  // expected-error @+1 {{tau = inf is not allowed}}
  neuron.lif ins(%x : !seq) outs(%s : !seq) time t {tau = 0x7FF0000000000000 : f64, v_reset = 0.0}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%x: !seq) -> (%s: !seq) {
  // expected-error @+1 {{`v_threshold` is nan; it must be finite}}
  neuron.if ins(%x : !seq) outs(%s : !seq) time t {v_threshold = 0x7FF8000000000000 : f64, v_reset = 0.0}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%x: !seq) -> (%s: !seq) {
  // expected-error @+1 {{`v_reset` is -inf; it must be finite}}
  neuron.if ins(%x : !seq) outs(%s : !seq) time t {v_reset = 0xFFF0000000000000 : f64}
  tdim.return
}

// -----

// expected-error @+1 {{unknown surrogate `relu`; expected one of sigmoid, atan, piecewise_leaky_relu, s2nn, q_pseudo_spike, leaky_k_relu, fake_numerical_gradient, log_tailed_relu, piecewise_quadratic, piecewise_exp, soft_sign, super_spike, erf}}
func.func private @f() attributes {s = #neuron.surrogate<relu>}

// -----

// expected-error @+1 {{surrogate `sigmoid` takes no parameter `beta` (it takes `alpha`)}}
func.func private @f() attributes {s = #neuron.surrogate<sigmoid, beta = 1.0>}

// -----

// expected-error @+1 {{surrogate `q_pseudo_spike` needs `alpha` > 1, not 1}}
func.func private @f() attributes {s = #neuron.surrogate<q_pseudo_spike, alpha = 1.0>}

// -----

// expected-error @+1 {{surrogate `atan` needs `alpha` > 0, not -2}}
func.func private @f() attributes {s = #neuron.surrogate<atan, alpha = -2.0>}

// -----

// expected-error @+1 {{surrogate parameter `alpha` is inf; it must be finite}}
func.func private @f() attributes {s = #neuron.surrogate<erf, alpha = 0x7FF0000000000000>}

// -----

// expected-error @+1 {{surrogate parameter `alpha` given twice}}
func.func private @f() attributes {s = #neuron.surrogate<erf, alpha = 1.0, alpha = 2.0>}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%x: !seq) -> (%s: !seq, %h: !seq, %gx: !seq) {
  // expected-note @+1 {{the forward op is here}}
  neuron.lif ins(%x : !seq) outs(%s : !seq) h_seq(%h : !seq) time t {tau = 2.0, v_reset = 0.0}
  // expected-error @+1 {{`tau` is 3 but the neuron.lif that wrote `h_seq` has 2}}
  neuron.lif_grad ins(%h : !seq) outs(%gx : !seq) time t {tau = 3.0, v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%x: !seq) -> (%s: !seq, %h: !seq, %gx: !seq) {
  // expected-note @+1 {{the forward op is here}}
  neuron.if ins(%x : !seq) outs(%s : !seq) h_seq(%h : !seq) time t {v_reset = 0.0}
  // expected-error @+1 {{`v_reset` is soft reset but the neuron.if that wrote `h_seq` has 0}}
  neuron.if_grad ins(%h : !seq) outs(%gx : !seq) time t {surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%x: !seq) -> (%s: !seq) {
  // expected-error @+1 {{charge region takes 1 arguments; expected the previous potential, the input and 0 parameters}}
  neuron.generic ins(%x : !seq) outs(%s : !seq) time t {v_reset = 0.0} charge {
  ^bb0(%v: f32):
    neuron.yield %v : f32
  }
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%x: !seq) -> (%s: !seq) {
  // expected-error @+1 {{charge region arguments must all have type 'f32'; argument #1 has 'f64'}}
  neuron.generic ins(%x : !seq) outs(%s : !seq) time t {v_reset = 0.0} charge {
  ^bb0(%v: f32, %in: f64):
    neuron.yield %v : f32
  }
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%h: !seq, %w: !tdim.tensor<[], f32>) -> (%gx: !seq, %g1: !tdim.tensor<[], f32>, %g2: !tdim.tensor<[], f32>) {
  // expected-error @+1 {{has 1 parameters but 2 parameter gradients}}
  neuron.generic_grad ins(%h : !seq) params(%w : !tdim.tensor<[], f32>) outs(%gx : !seq) grad_params(%g1, %g2 : !tdim.tensor<[], f32>, !tdim.tensor<[], f32>) time t {surrogate = #neuron.surrogate<sigmoid>} charge {
  ^bb0(%v: f32, %in: f32, %p: f32):
    neuron.yield %v : f32
  }
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%h: !seq, %gl: !seq) -> (%gx: !seq) {
  // expected-error @+1 {{`grad_v_last` must have the dimensions of `h_seq` without `t` (`n`), not `t`, `n`}}
  neuron.if_grad ins(%h : !seq) grad_v_last(%gl : !seq) outs(%gx : !seq) time t {surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}
