// log_softmax down the columns of a [r, c] matrix: over `r`, the first
// dimension. Columns are not contiguous in memory, so nerve takes their max
// and sum in one pass (an online softmax: the running sum is rescaled
// whenever the running max grows) and reads x twice in all, not three
// times.

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @log_softmax_columns(%x: !m) -> (%y: !m) {
  tdim.log_softmax ins(%x : !m) outs(%y : !m) over r
  tdim.return
}
