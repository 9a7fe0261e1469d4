// log_softmax over the last dimension, stored in f16 (f32 arithmetic).
!m = !tdim.tensor<[r: ?, c: ?], f16>
tdim.kernel @log_softmax(%x: !m) -> (%y: !m) {
  tdim.log_softmax ins(%x : !m) outs(%y : !m) over c
  tdim.return
}
