// A PLIF training step over channels-last video frames [t, b, h, w, c] in
// half precision storage (arithmetic in f32). The decay sigmoid(w) is
// learned: w is a 0-d tensor read on the device, and grad_w is summed over
// every neuron and step in a fixed order (the same bits on every run).
// Backward needs no x: it takes x - v as (h - v) / sigmoid(w) from h_seq,
// as SpikingJelly does.
// Soft reset, with the reset path detached from the gradient.

!seq = !tdim.tensor<[t: ?, b: ?, h: ?, w: ?, c: ?], f16>
!state = !tdim.tensor<[b: ?, h: ?, w: ?, c: ?], f16>
!scalar = !tdim.tensor<[], f32>

tdim.kernel @plif_train(%x: !seq, %w: !scalar, %grad_spike: !seq)
    -> (%spike: !seq, %h_seq: !seq, %grad_x: !seq, %grad_w: !scalar) {
  neuron.plif ins(%x : !seq) w(%w : !scalar) outs(%spike : !seq) h_seq(%h_seq : !seq)
      time t {v_threshold = 1.0}
  neuron.plif_grad ins(%h_seq : !seq) w(%w : !scalar) grad_spike(%grad_spike : !seq)
      outs(%grad_x : !seq) grad_w(%grad_w : !scalar)
      time t {v_threshold = 1.0, detach_reset,
              surrogate = #neuron.surrogate<atan, alpha = 2.0>}
  tdim.return
}
