// PLIF training over [t, b, n] (time-major, two neuron dimensions), with
// the gradient of its weight; backward is given x and reads it (the
// time-minor input and the golden tests leave it out: recovered from h).
!seq = !tdim.tensor<[t: ?, b: ?, n: ?], f32>
!scalar = !tdim.tensor<[], f32>

tdim.kernel @plif_train(%x: !seq, %w: !scalar, %grad_spike: !seq, %grad_v_seq: !seq)
    -> (%spike: !seq, %v_seq: !seq, %h_seq: !seq, %grad_x: !seq, %grad_w: !scalar) {
  neuron.plif ins(%x : !seq) w(%w : !scalar) outs(%spike : !seq) v_seq(%v_seq : !seq)
      h_seq(%h_seq : !seq) time t {v_threshold = 1.0, v_reset = 0.0}
  neuron.plif_grad ins(%h_seq : !seq) x(%x : !seq) w(%w : !scalar) grad_spike(%grad_spike : !seq)
      grad_v_seq(%grad_v_seq : !seq) outs(%grad_x : !seq) grad_w(%grad_w : !scalar)
      time t {v_threshold = 1.0, v_reset = 0.0,
              surrogate = #neuron.surrogate<sigmoid, alpha = 4.0>}
  tdim.return
}
