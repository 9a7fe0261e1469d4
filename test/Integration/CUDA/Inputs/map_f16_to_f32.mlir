// a*2 + sigmoid(a) read from f16 storage, written as f32: eight lanes per
// thread (16 bytes of f16), the f32 stores two 16-byte vectors.
!h = !tdim.tensor<[r: ?, c: ?], f16>
!f = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @map_f16_to_f32(%a: !h) -> (%y: !f) {
  tdim.map ins(%a : !h) outs(%y : !f) {
  ^bb0(%x: f16):
    %w = arith.extf %x : f16 to f32
    %two = arith.constant 2.0 : f32
    %one = arith.constant 1.0 : f32
    %scaled = arith.mulf %w, %two : f32
    %neg = arith.negf %w : f32
    %e = math.exp %neg : f32
    %den = arith.addf %one, %e : f32
    %sig = arith.divf %one, %den : f32
    %r = arith.addf %scaled, %sig : f32
    tdim.yield %r : f32
  }
  tdim.return
}
