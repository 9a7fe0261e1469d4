// layer_norm of a matrix whose sizes are static (rows wide enough for a
// cluster on sm_90): nerve-fold-launch-choices keeps only the launches
// these sizes can take.
!m = !tdim.tensor<[r: 64, c: 65536], f32>
!v = !tdim.tensor<[c: 65536], f32>

tdim.kernel @layer_norm(%x: !m, %w: !v, %b: !v) -> (%y: !m) {
  tdim.layer_norm ins(%x : !m) weight(%w : !v) bias(%b : !v) outs(%y : !m)
      over [c] eps 1.0e-05
  tdim.return
}
