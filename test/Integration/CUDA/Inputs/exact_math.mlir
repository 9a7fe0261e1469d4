// tanh and log1p of f32 data whose arguments are non-negative by how they
// are computed (|a| scaled by powers of two): nerve-lower-gpu-math gives
// them forms of its own without the sign handling of libdevice's, which
// must stay as exact. The scales reach both forms of tanh (below and above
// 0.6) and log1p from tiny to large arguments, and softplus's
// log1p(exp(-|x|)), whose argument is at most 1.
!v = !tdim.tensor<[n: ?], f32>
tdim.kernel @exact_math(%a: !v) -> (%tanh_wide: !v, %tanh_small: !v, %log1p_wide: !v,
                                    %log1p_small: !v, %log1p_large: !v,
                                    %log1p_exp: !v) {
  tdim.map ins(%a : !v) outs(%tanh_wide : !v) {
  ^bb0(%x: f32):
    %m = math.absf %x : f32
    %k = arith.constant 4.0 : f32
    %s = arith.mulf %m, %k : f32
    %t = math.tanh %s : f32
    tdim.yield %t : f32
  }
  tdim.map ins(%a : !v) outs(%tanh_small : !v) {
  ^bb0(%x: f32):
    %m = math.absf %x : f32
    %k = arith.constant 0.25 : f32
    %s = arith.mulf %m, %k : f32
    %t = math.tanh %s : f32
    tdim.yield %t : f32
  }
  tdim.map ins(%a : !v) outs(%log1p_wide : !v) {
  ^bb0(%x: f32):
    %m = math.absf %x : f32
    %l = math.log1p %m : f32
    tdim.yield %l : f32
  }
  tdim.map ins(%a : !v) outs(%log1p_small : !v) {
  ^bb0(%x: f32):
    %m = math.absf %x : f32
    %k = arith.constant 0x35800000 : f32
    %s = arith.mulf %m, %k : f32
    %l = math.log1p %s : f32
    tdim.yield %l : f32
  }
  tdim.map ins(%a : !v) outs(%log1p_large : !v) {
  ^bb0(%x: f32):
    %m = math.absf %x : f32
    %k = arith.constant 0x53800000 : f32
    %s = arith.mulf %m, %k : f32
    %l = math.log1p %s : f32
    tdim.yield %l : f32
  }
  tdim.map ins(%a : !v) outs(%log1p_exp : !v) {
  ^bb0(%x: f32):
    %m = math.absf %x : f32
    %k = arith.constant 8.0 : f32
    %s = arith.mulf %m, %k : f32
    %n = arith.negf %s : f32
    %e = math.exp %n : f32
    %l = math.log1p %e : f32
    tdim.yield %l : f32
  }
  tdim.return
}
