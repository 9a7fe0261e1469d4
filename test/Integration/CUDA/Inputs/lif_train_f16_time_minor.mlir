// LIF training in f16 storage, time-minor.
!seq = !tdim.tensor<[n: ?, t: ?], f16>

tdim.kernel @lif_train(%x: !seq, %grad_spike: !seq, %grad_v_seq: !seq)
    -> (%spike: !seq, %v_seq: !seq, %h_seq: !seq, %grad_x: !seq) {
  neuron.lif ins(%x : !seq) outs(%spike : !seq) v_seq(%v_seq : !seq) h_seq(%h_seq : !seq)
      time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0}
  neuron.lif_grad ins(%h_seq : !seq) grad_spike(%grad_spike : !seq) grad_v_seq(%grad_v_seq : !seq)
      outs(%grad_x : !seq)
      time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0,
              surrogate = #neuron.surrogate<sigmoid, alpha = 4.0>}
  tdim.return
}
