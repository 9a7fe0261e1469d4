// The sum of a matrix weighted by a vector of columns (whole-reductions.test):
// the map fuses into the reduction, whose body then loads the weights by
// column, so it goes by rows at large sizes.

!m = !tdim.tensor<[r: ?, c: ?], f32>
!v = !tdim.tensor<[c: ?], f32>

tdim.kernel @weighted_sum(%x: !m, %w: !v) -> (%s: !tdim.tensor<[], f32>) {
  %nr = tdim.size %x[r] : !m
  %nc = tdim.size %x[c] : !m
  %p = tdim.alloc(%nr, %nc) : !m
  tdim.map ins(%x, %w : !m, !v) outs(%p : !m) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    tdim.yield %m : f32
  }
  tdim.reduce ins(%p : !m) outs(%s : !tdim.tensor<[], f32>) over [r, c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      tdim.yield %r : f32
    }
  tdim.return
}
