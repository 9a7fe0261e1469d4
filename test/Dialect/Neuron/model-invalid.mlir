// RUN: nerve-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{state `w` has no initial value; write it as `w = 0.0`}}
neuron.model @m states(v = 0.0, w) inputs(x) threshold(1.0) charge {
^bb0(%v: f32, %w: f32, %x: f32):
  neuron.yield %v, %w : f32, f32
}

// -----

// expected-error @+1 {{resets `u`, which is not one of its states}}
neuron.model @m states(v = 0.0) inputs(x) threshold(1.0) reset(u = soft) charge {
^bb0(%v: f32, %x: f32):
  neuron.yield %v : f32
}

// -----

// expected-error @+1 {{resets state `v` twice}}
neuron.model @m states(v = 0.0) inputs(x) threshold(1.0) reset(v = soft, v = hard 0.0) charge {
^bb0(%v: f32, %x: f32):
  neuron.yield %v : f32
}

// -----

// expected-error @+1 {{the reset of `v` adds parameter `b`, which it does not have}}
neuron.model @m states(v = 0.0) inputs(x) threshold(1.0) reset(v = add b) charge {
^bb0(%v: f32, %x: f32):
  neuron.yield %v : f32
}

// -----

// expected-error @+1 {{names `x` twice (as input and as parameter)}}
neuron.model @m states(v = 0.0) inputs(x) params(x = 1.0) threshold(1.0) charge {
^bb0(%v: f32, %x: f32, %p: f32):
  neuron.yield %v : f32
}

// -----

// expected-error @+1 {{charge region takes 2 arguments; expected 3 (the states, inputs and parameters)}}
neuron.model @m states(v = 0.0) inputs(x) params(tau = 2.0) threshold(1.0) charge {
^bb0(%v: f32, %x: f32):
  neuron.yield %v : f32
}

// -----

// expected-error @+1 {{charge region arguments must all have type 'f32'; argument #1 has 'f64'}}
neuron.model @m states(v = 0.0) inputs(x) threshold(1.0) charge {
^bb0(%v: f32, %x: f64):
  neuron.yield %v : f32
}

// -----

// expected-error @+1 {{charge region must yield 2 values of type 'f32'}}
neuron.model @m states(v = 0.0, w = 0.0) inputs(x) threshold(1.0) charge {
^bb0(%v: f32, %w: f32, %x: f32):
  neuron.yield %v : f32
}

// -----

neuron.model @m states(v = 0.0) inputs(x) threshold(1.0) charge {
^bb0(%v: f32, %x: f32):
  // expected-error @+1 {{'math.sin' op cannot be differentiated in a neuron model's charge region}}
  %s = math.sin %x : f32
  neuron.yield %s : f32
}

// -----

// expected-error @+1 {{threshold region takes 1 arguments; expected 2 (the states and parameters)}}
neuron.model @m states(v = 0.0) inputs(x) params(b = 1.0) threshold {
^bb0(%v: f32):
  neuron.yield %v : f32
} charge {
^bb0(%v: f32, %x: f32, %b: f32):
  neuron.yield %v : f32
}

// -----

// expected-error @+1 {{has no states; a neuron needs at least its potential}}
neuron.model @m states() inputs(x) threshold(1.0) charge {
^bb0(%x: f32):
  "neuron.yield"() : () -> ()
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>
tdim.kernel @k(%x: !seq) -> (%s: !seq) {
  // expected-error @+1 {{`@nowhere` does not name a neuron.model}}
  neuron.forward @nowhere ins(x = %x : !seq) outs(%s : !seq) time t
  tdim.return
}

// -----

neuron.model @m states(v = 0.0, w = 0.0) inputs(x) params(b = 1.0) threshold(1.0) charge {
^bb0(%v: f32, %w: f32, %x: f32, %b: f32):
  neuron.yield %v, %w : f32, f32
}
!seq = !tdim.tensor<[t: ?, n: ?], f32>
tdim.kernel @k(%x: !seq) -> (%s: !seq, %u: !seq) {
  // expected-error @+1 {{`seq(u)`: @m has no state `u` (its states: v, w)}}
  neuron.forward @m ins(x = %x : !seq) outs(%s : !seq) seq(u = %u : !seq) time t
  tdim.return
}

// -----

neuron.model @m states(v = 0.0) inputs(x) threshold(1.0) charge {
^bb0(%v: f32, %x: f32):
  neuron.yield %v : f32
}
!seq = !tdim.tensor<[t: ?, n: ?], f32>
tdim.kernel @k(%x: !seq) -> (%s: !seq) {
  // expected-error @+1 {{has no operand group `grad_spike` (it takes ins, init, params, outs, seq, h_seq, last)}}
  neuron.forward @m ins(x = %x : !seq) outs(%s : !seq) grad_spike(%x : !seq) time t
  tdim.return
}

// -----

neuron.model @m states(v = 0.0) inputs(x, y) threshold(1.0) charge {
^bb0(%v: f32, %x: f32, %y: f32):
  neuron.yield %v : f32
}
!seq = !tdim.tensor<[t: ?, n: ?], f32>
tdim.kernel @k(%x: !seq) -> (%s: !seq) {
  // expected-error @+1 {{lacks input `y` of @m: pass it as `ins(y = %t : type)`}}
  neuron.forward @m ins(x = %x : !seq) outs(%s : !seq) time t
  tdim.return
}

// -----

neuron.model @m states(v = 0.0) inputs(x) threshold(1.0) charge {
^bb0(%v: f32, %x: f32):
  neuron.yield %v : f32
}
!seq = !tdim.tensor<[t: ?, n: ?], f32>
tdim.kernel @k(%x: !seq) -> (%s: !seq) {
  // expected-error @+1 {{needs the spikes' tensor: `outs(%spikes : type)`}}
  neuron.forward @m ins(x = %x : !seq) time t
  tdim.return
}

// -----

neuron.model @m states(v = 0.0) inputs(x) threshold(1.0) charge {
^bb0(%v: f32, %x: f32):
  neuron.yield %v : f32
}
!seq = !tdim.tensor<[t: ?, n: ?], f64>
tdim.kernel @k(%x: !seq) -> (%s: !seq) {
  // expected-error @+1 {{`ins(x)` holds 'f64' but @m computes in 'f32' (f64 tensors need a model in f64)}}
  neuron.forward @m ins(x = %x : !seq) outs(%s : !seq) time t
  tdim.return
}

// -----

neuron.model @m states(v = 0.0) inputs(x) params(b = 1.0) threshold(1.0) charge {
^bb0(%v: f32, %x: f32, %b: f32):
  neuron.yield %v : f32
}
!seq = !tdim.tensor<[t: ?, n: ?], f32>
tdim.kernel @k(%x: !seq, %b: !seq) -> (%s: !seq) {
  // expected-error @+1 {{`params(b)` must be 0-d or over some of the neurons' dimensions (`n`), not over `t`}}
  neuron.forward @m ins(x = %x : !seq) params(b = %b : !seq) outs(%s : !seq) time t
  tdim.return
}

// -----

neuron.model @m states(v = 0.0) inputs(x) params(b = 1.0) threshold(1.0) charge {
^bb0(%v: f32, %x: f32, %b: f32):
  neuron.yield %v : f32
}
!seq = !tdim.tensor<[t: ?, n: ?], f32>
!p = !tdim.tensor<[], f32>
tdim.kernel @k(%h: !seq, %gs: !seq) -> (%gx: !seq, %gb: !p) {
  // expected-error @+1 {{`grad_params(b)`: parameter `b` is not bound to a tensor in `params(...)`, so it has no gradient}}
  neuron.backward @m h_seq(v = %h : !seq) grad_spike(%gs : !seq) grad_ins(x = %gx : !seq) grad_params(b = %gb : !p) time t {surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}

// -----

neuron.model @m states(v = 0.0) inputs(x) threshold(1.0) charge {
^bb0(%v: f32, %x: f32):
  neuron.yield %v : f32
}
!seq = !tdim.tensor<[t: ?, n: ?], f32>
!other = !tdim.tensor<[t: ?, k: ?], f32>
tdim.kernel @k(%x: !seq) -> (%s: !other) {
  // expected-error @+1 {{`outs` must have the dimensions of `ins(x)` (`t`, `n`), not `t`, `k`}}
  neuron.forward @m ins(x = %x : !seq) outs(%s : !other) time t
  tdim.return
}

// -----

neuron.model @m states(v = 0.0) inputs(x) threshold(1.0) charge {
^bb0(%v: f32, %x: f32):
  neuron.yield %v : f32
}
!seq = !tdim.tensor<[t: ?, n: ?], f32>
tdim.kernel @k(%x: !seq) -> (%s: !seq) {
  // expected-error @+1 {{`ins` names each tensor by its input: `ins(name = %t : type)`}}
  neuron.forward @m ins(%x : !seq) outs(%s : !seq) time t
  tdim.return
}

// -----

// expected-error @+1 {{unknown reset `jump`; expected hard, soft or add}}
neuron.model @m states(v = 0.0) inputs(x) threshold(1.0) reset(v = jump) charge {
^bb0(%v: f32, %x: f32):
  neuron.yield %v : f32
}

// -----

// expected-error @+2 {{a hard reset needs the value it resets to}}
// expected-error @+1 {{expected floating point literal}}
neuron.model @m states(v = 0.0) inputs(x) threshold(1.0) reset(v = hard) charge {
^bb0(%v: f32, %x: f32):
  neuron.yield %v : f32
}

// -----

// expected-error @+1 {{expected `= value` after `tau`}}
neuron.model @m states(v = 0.0) inputs(x) params(tau) threshold(1.0) charge {
^bb0(%v: f32, %x: f32, %tau: f32):
  neuron.yield %v : f32
}

// -----

neuron.model @m states(v = 0.0) inputs(x) threshold(1.0) charge {
^bb0(%v: f32, %x: f32):
  neuron.yield %v : f32
}
!seq = !tdim.tensor<[t: ?, n: ?], f32>
tdim.kernel @k(%h: !seq, %gs: !seq, %gl: !seq) -> (%gx: !seq) {
  // expected-error @+1 {{`grad_last(v)` must have the dimensions of `h_seq(v)` without `t` (`n`), not `t`, `n`}}
  neuron.backward @m h_seq(v = %h : !seq) grad_spike(%gs : !seq) grad_last(v = %gl : !seq) grad_ins(x = %gx : !seq) time t {surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}
