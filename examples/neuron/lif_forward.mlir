// Multi-step LIF inference: spikes and the membrane potential after reset
// for every step, over a time-major [t, n] input. SpikingJelly's defaults:
// tau 2, decay_input, v_threshold 1, hard reset to 0.
//
//   nerve-run examples/neuron/lif_forward.mlir --random 0 --dim t=64 --dim n=65536

!seq = !tdim.tensor<[t: ?, n: ?], f32>

tdim.kernel @lif_forward(%x: !seq) -> (%spike: !seq, %v_seq: !seq) {
  neuron.lif ins(%x : !seq) outs(%spike : !seq) v_seq(%v_seq : !seq)
      time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0}
  tdim.return
}
