// tanh and log1p of f16 data (approximate f32 math, nerve-half-storage-math),
// each on arguments that reach both of its forms: the series near 0 and the
// special-function form elsewhere.
!h = !tdim.tensor<[n: ?], f16>
tdim.kernel @half_math(%a: !h) -> (%tanh_wide: !h, %tanh_small: !h, %log1p_wide: !h,
                                   %log1p_small: !h, %log1p_large: !h) {
  tdim.map ins(%a : !h) outs(%tanh_wide : !h) {
  ^bb0(%x: f16):
    %w = arith.extf %x : f16 to f32
    %k = arith.constant 4.0 : f32
    %s = arith.mulf %w, %k : f32
    %t = math.tanh %s : f32
    %r = arith.truncf %t : f32 to f16
    tdim.yield %r : f16
  }
  tdim.map ins(%a : !h) outs(%tanh_small : !h) {
  ^bb0(%x: f16):
    %w = arith.extf %x : f16 to f32
    %k = arith.constant 0.125 : f32
    %s = arith.mulf %w, %k : f32
    %t = math.tanh %s : f32
    %r = arith.truncf %t : f32 to f16
    tdim.yield %r : f16
  }
  tdim.map ins(%a : !h) outs(%log1p_wide : !h) {
  ^bb0(%x: f16):
    %w = arith.extf %x : f16 to f32
    %l = math.log1p %w : f32
    %r = arith.truncf %l : f32 to f16
    tdim.yield %r : f16
  }
  tdim.map ins(%a : !h) outs(%log1p_small : !h) {
  ^bb0(%x: f16):
    %w = arith.extf %x : f16 to f32
    %k = arith.constant 0.03125 : f32
    %s = arith.mulf %w, %k : f32
    %l = math.log1p %s : f32
    %r = arith.truncf %l : f32 to f16
    tdim.yield %r : f16
  }
  tdim.map ins(%a : !h) outs(%log1p_large : !h) {
  ^bb0(%x: f16):
    %w = arith.extf %x : f16 to f32
    %k = arith.constant 64.0 : f32
    %sq = arith.mulf %w, %w : f32
    %s = arith.mulf %sq, %k : f32
    %l = math.log1p %s : f32
    %r = arith.truncf %l : f32 to f16
    tdim.yield %r : f16
  }
  tdim.return
}
