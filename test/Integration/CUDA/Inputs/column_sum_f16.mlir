// Sums over the outer dimension of an f16 [r, c] into f32 (split into
// chunks of rows; eight columns a thread by 16-byte vectors when aligned).
!x = !tdim.tensor<[r: ?, c: ?], f16>
!s = !tdim.tensor<[c: ?], f32>
tdim.kernel @column_sum_f16(%x: !x) -> (%s: !s) {
  tdim.reduce ins(%x : !x) outs(%s : !s) over [r] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tdim.yield %t : f32
    }
  tdim.return
}
