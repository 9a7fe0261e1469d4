// Izhikevich's neuron (SpikingJelly's izhikevich_step) written once: forward and the whole
// backward pass through v, w and the parameters come from this definition.
neuron.model @izhikevich states(v = 0.0, w = 0.0) inputs(x)
    params(tau = 2.0, a0 = 1.0, v_rest = -0.1, v_c = 0.8, tau_w = 2.0, a = 0.5, b = 0.1)
    threshold(1.0) reset(v = hard 0.0 value_grad, w = add b) charge {
^bb0(%v: f32, %w: f32, %x: f32, %tau: f32, %a0: f32, %v_rest: f32, %v_c: f32, %tau_w: f32, %a: f32, %b: f32):
  %dr = arith.subf %v, %v_rest : f32     // h = v + (x + a0 (v - v_rest)(v - v_c) - w) / tau
  %dc = arith.subf %v, %v_c : f32
  %q = arith.mulf %dr, %dc : f32
  %aq = arith.mulf %a0, %q : f32
  %in = arith.addf %x, %aq : f32
  %drive = arith.subf %in, %w : f32
  %step = arith.divf %drive, %tau : f32
  %h = arith.addf %v, %step : f32
  %hr = arith.subf %h, %v_rest : f32     // w' = w + (a (h - v_rest) - w) / tau_w
  %ah = arith.mulf %a, %hr : f32
  %dw = arith.subf %ah, %w : f32
  %ws = arith.divf %dw, %tau_w : f32
  %w1 = arith.addf %w, %ws : f32
  neuron.yield %h, %w1 : f32, f32
}
!seq = !tdim.tensor<[t: ?, n: ?], f32>
tdim.kernel @izhikevich_train(%x: !seq, %grad_spike: !seq) -> (%spike: !seq, %h_seq: !seq, %grad_x: !seq) {
  neuron.forward @izhikevich ins(x = %x : !seq) outs(%spike : !seq) h_seq(v = %h_seq : !seq) time t
  neuron.backward @izhikevich h_seq(v = %h_seq : !seq) grad_spike(%grad_spike : !seq)
      grad_ins(x = %grad_x : !seq) time t {surrogate = #neuron.surrogate<atan>}
  tdim.return
}
