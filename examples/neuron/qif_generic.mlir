// A neuron nerve has no name for: quadratic integrate-and-fire, written as
// its charge function h = v + (x + a0 (v - v_rest)(v - v_c)) / tau. Fire,
// reset and the whole backward pass (through the derivative of this
// region, which nerve derives itself) come for free.

!seq = !tdim.tensor<[n: ?, t: ?], f32>
!state = !tdim.tensor<[n: ?], f32>

tdim.kernel @qif_train(%x: !seq, %grad_spike: !seq) -> (%spike: !seq, %h_seq: !seq,
                                                        %grad_x: !seq, %grad_v_init: !state) {
  neuron.generic ins(%x : !seq) outs(%spike : !seq) h_seq(%h_seq : !seq)
      time t {v_threshold = 1.0, v_reset = -0.1} charge {
  ^bb0(%v: f32, %in: f32):
    %v_rest = arith.constant -0.1 : f32
    %v_c = arith.constant 0.8 : f32
    %a0 = arith.constant 1.0 : f32
    %tau = arith.constant 2.0 : f32
    %d0 = arith.subf %v, %v_rest : f32
    %d1 = arith.subf %v, %v_c : f32
    %q = arith.mulf %d0, %d1 : f32
    %aq = arith.mulf %a0, %q : f32
    %drive = arith.addf %in, %aq : f32
    %step = arith.divf %drive, %tau : f32
    %h = arith.addf %v, %step : f32
    neuron.yield %h : f32
  }
  neuron.generic_grad ins(%h_seq : !seq) x(%x : !seq) grad_spike(%grad_spike : !seq)
      outs(%grad_x : !seq) grad_v_init(%grad_v_init : !state)
      time t {v_threshold = 1.0, v_reset = -0.1,
              surrogate = #neuron.surrogate<atan, alpha = 2.0>} charge {
  ^bb0(%v: f32, %in: f32):
    %v_rest = arith.constant -0.1 : f32
    %v_c = arith.constant 0.8 : f32
    %a0 = arith.constant 1.0 : f32
    %tau = arith.constant 2.0 : f32
    %d0 = arith.subf %v, %v_rest : f32
    %d1 = arith.subf %v, %v_c : f32
    %q = arith.mulf %d0, %d1 : f32
    %aq = arith.mulf %a0, %q : f32
    %drive = arith.addf %in, %aq : f32
    %step = arith.divf %drive, %tau : f32
    %h = arith.addf %v, %step : f32
    neuron.yield %h : f32
  }
  tdim.return
}
