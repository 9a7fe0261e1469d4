!seq = !tdim.tensor<[t: ?, n: ?], f32>
tdim.kernel @k(%x: !seq) -> (%spike: !seq) {
  neuron.lif ins(%x : !seq) outs(%spike : !seq) time t {tau = 0x7FF8000000000000 : f64, v_threshold = 1.0, v_reset = 0.0}
  tdim.return
}
