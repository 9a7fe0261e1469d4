// Layer normalisation of each row of a [r, c] matrix, with a weight and a
// bias over `c`: y = (x - mean) / sqrt(var + eps) * w + b.

!m = !tdim.tensor<[r: ?, c: ?], f32>
!v = !tdim.tensor<[c: ?], f32>

tdim.kernel @layer_norm(%x: !m, %w: !v, %b: !v) -> (%y: !m) {
  tdim.layer_norm ins(%x : !m) weight(%w : !v) bias(%b : !v) outs(%y : !m)
      over [c] eps 1.0e-05
  tdim.return
}
