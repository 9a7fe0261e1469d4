// softmax over `r`, the outer dimension of a row-major f16 [r, c].
!m = !tdim.tensor<[r: ?, c: ?], f16>
tdim.kernel @softmax_rows_f16(%x: !m) -> (%y: !m) {
  tdim.softmax ins(%x : !m) outs(%y : !m) over r
  tdim.return
}
