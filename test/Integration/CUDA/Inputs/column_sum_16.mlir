// Sums over a statically short outer dimension (16 rows): a thread per
// column, or per four neighbouring columns loaded as vectors (the fold over
// rows jammed: one loop carrying four sums).
!x = !tdim.tensor<[r: 16, c: ?], f32>
!s = !tdim.tensor<[c: ?], f32>
tdim.kernel @column_sum_16(%x: !x) -> (%s: !s) {
  tdim.reduce ins(%x : !x) outs(%s : !s) over [r] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tdim.yield %t : f32
    }
  tdim.return
}
