// Numerically stable softmax over the last dimension of a [r, c] matrix:
// y = exp(x - max(x)) / sum(exp(x - max(x))), the max and the sum taken
// along `c`.

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @softmax(%x: !m) -> (%y: !m) {
  tdim.softmax ins(%x : !m) outs(%y : !m) over c
  tdim.return
}
