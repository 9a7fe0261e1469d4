// softmax over `r`, the outer (non-contiguous) dimension of a row-major [r, c].
!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @softmax_rows(%x: !m) -> (%y: !m) {
  tdim.softmax ins(%x : !m) outs(%y : !m) over r
  tdim.return
}
