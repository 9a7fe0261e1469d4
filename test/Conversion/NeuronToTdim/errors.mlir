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
  // h = v * x: the slope dh/dx is v, which starts at zero, so x cannot be
  // recovered from h.
  // expected-error @+1 {{the derivatives of its charge function read the input, and the charge is not of the form A(v, params) + B(params) * x that would let backward recover it from h_seq; pass the input sequence as x(...)}}
  neuron.generic_grad ins(%h : !seq) grad_spike(%gs : !seq) outs(%gx : !seq)
      time t {v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>} charge {
  ^bb0(%v: f32, %in: f32):
    %m = arith.mulf %v, %in : f32
    neuron.yield %m : f32
  }
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @k(%h: !seq, %gs: !seq) -> (%gx: !seq) {
  // h = v + exp(x) is not affine in x: its slope reads x.
  // expected-error @+1 {{the derivatives of its charge function read the input, and the charge is not of the form A(v, params) + B(params) * x}}
  neuron.generic_grad ins(%h : !seq) grad_spike(%gs : !seq) outs(%gx : !seq)
      time t {v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>} charge {
  ^bb0(%v: f32, %in: f32):
    %e = math.exp %in : f32
    %h1 = arith.addf %v, %e : f32
    neuron.yield %h1 : f32
  }
  tdim.return
}
