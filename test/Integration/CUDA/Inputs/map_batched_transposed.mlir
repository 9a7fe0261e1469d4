// a*2 + 1 over a batch of column-major matrices ([b, r, c], r contiguous)
// written row-major: tiles per matrix.
!x = !tdim.tensor<[b: ?, r: ?, c: ?], f32, strides = [?, 1, ?]>
!y = !tdim.tensor<[b: ?, r: ?, c: ?], f32>
tdim.kernel @map_batched_transposed(%a: !x) -> (%y: !y) {
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
