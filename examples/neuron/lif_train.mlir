// One LIF training step: forward keeping h_seq (what backward needs), then
// backward through time from the gradients on the spikes and on v_seq, with
// the sigmoid(4) surrogate. grad_v_init is the gradient of the initial
// potential.
//
//   nerve-run examples/neuron/lif_train.mlir --random 0 --dim t=64 --dim n=65536

!seq = !tdim.tensor<[t: ?, n: ?], f32>
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
