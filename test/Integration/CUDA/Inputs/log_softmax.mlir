// log_softmax over the last dimension, f32.
!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @log_softmax(%x: !m) -> (%y: !m) {
  tdim.log_softmax ins(%x : !m) outs(%y : !m) over c
  tdim.return
}
