// LIF training over a time-minor layout: every neuron's steps are one
// contiguous row.
!seq = !tdim.tensor<[n: ?, t: ?], f32>
!state = !tdim.tensor<[n: ?], f32>

tdim.kernel @lif_train(%x: !seq, %v_init: !state, %grad_spike: !seq, %grad_v_seq: !seq)
    -> (%spike: !seq, %v_seq: !seq, %h_seq: !seq, %grad_x: !seq, %grad_v_init: !state) {
  neuron.lif ins(%x : !seq) init(%v_init : !state)
      outs(%spike : !seq) v_seq(%v_seq : !seq) h_seq(%h_seq : !seq)
      time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0}
  neuron.lif_grad ins(%h_seq : !seq) grad_spike(%grad_spike : !seq) grad_v_seq(%grad_v_seq : !seq)
      outs(%grad_x : !seq) grad_v_init(%grad_v_init : !state)
      time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0,
              surrogate = #neuron.surrogate<sigmoid, alpha = 4.0>}
  tdim.return
}
