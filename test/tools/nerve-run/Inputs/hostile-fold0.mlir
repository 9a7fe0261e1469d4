!v = !tdim.tensor<[i/0: ?], f32>
tdim.kernel @k(%x: !v) -> (%y: !v) {
  tdim.return
}
