// RUN: nerve-opt %s --convert-neuron-to-tdim --split-input-file -verify-diagnostics

// An adaptive threshold reads the states before the step; backward cannot
// rebuild them from h_seq alone.
neuron.model @alif states(v = 0.0, a = 0.0) inputs(x) params(beta = 1.8) threshold {
^bb0(%v: f32, %a: f32, %beta: f32):
  %one = arith.constant 1.0 : f32
  %ba = arith.mulf %beta, %a : f32
  %th = arith.addf %one, %ba : f32
  neuron.yield %th : f32
} reset(v = soft, a = add 1.0) charge {
^bb0(%v: f32, %a: f32, %x: f32, %beta: f32):
  %h = arith.addf %v, %x : f32
  neuron.yield %h, %a : f32, f32
}

!seq = !tdim.tensor<[t: ?, n: ?], f32>
tdim.kernel @k(%h: !seq, %gs: !seq) -> (%gx: !seq) {
  // expected-error @+1 {{needs state `a` before each step: pass forward's `seq(a = ...)` to backward}}
  neuron.backward @alif h_seq(v = %h : !seq) grad_spike(%gs : !seq) grad_ins(x = %gx : !seq)
      time t {surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}

// -----

// The gradient of tau reads x - v: without x, backward cannot have it.
neuron.model @lif states(v = 0.0) inputs(x) params(tau = 2.0) threshold(1.0) reset(v = soft) charge {
^bb0(%v: f32, %x: f32, %tau: f32):
  %d = arith.subf %x, %v : f32
  %s = arith.divf %d, %tau : f32
  %h = arith.addf %v, %s : f32
  neuron.yield %h : f32
}

!seq = !tdim.tensor<[t: ?, n: ?], f32>
!p = !tdim.tensor<[], f32>
tdim.kernel @k(%h: !seq, %gs: !seq, %tau: !p) -> (%gtau: !p) {
  // expected-error @+1 {{the derivatives of @lif read input `x`: pass it as `ins(x = ...)`}}
  neuron.backward @lif h_seq(v = %h : !seq) params(tau = %tau : !p) grad_spike(%gs : !seq)
      grad_params(tau = %gtau : !p) time t {surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}
