// a*2 + 1 in f16 over a column-major input written row-major (the tiled
// transpose: 64 x 64 tiles).
!x = !tdim.tensor<[r: ?, c: ?], f16, strides = [1, ?]>
!y = !tdim.tensor<[r: ?, c: ?], f16>
tdim.kernel @map_column_major_f16(%a: !x) -> (%y: !y) {
  tdim.map ins(%a : !x) outs(%y : !y) {
  ^bb0(%x: f32):
    %two = arith.constant 2.0 : f32
    %one = arith.constant 1.0 : f32
    %s = arith.mulf %x, %two : f32
    %r = arith.addf %s, %one : f32
    tdim.yield %r : f32
  }
  tdim.return
}
