// RUN: nerve-opt %s --convert-neuron-to-tdim --split-input-file -verify-diagnostics

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%h: !seq, %gs: !seq) -> (%gx: !seq) {
  neuron.generic_grad ins(%h : !seq) grad_spike(%gs : !seq) outs(%gx : !seq)
      time t {v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>} charge {
  ^bb0(%v: f32, %in: f32):
    // expected-error @+1 {{'math.sin' op cannot be differentiated in a neuron's charge function}}
    %s = math.sin %v : f32
    %h1 = arith.addf %s, %in : f32
    neuron.yield %h1 : f32
  }
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%h: !seq, %gs: !seq) -> (%gx: !seq) {
  // expected-error @+1 {{the derivatives of its charge function read the input; pass the input sequence as x(...)}}
  neuron.generic_grad ins(%h : !seq) grad_spike(%gs : !seq) outs(%gx : !seq)
      time t {v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>} charge {
  ^bb0(%v: f32, %in: f32):
    %m = arith.mulf %v, %in : f32
    neuron.yield %m : f32
  }
  tdim.return
}
