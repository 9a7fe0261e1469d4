// The 8-op chain with a broadcast bias (elementwise.mlir's @chain) over bf16
// storage: vector maps in tiles of 8 rows (VectorLanes.cpp), the two fused
// intermediates of two lanes rounded to bf16 by one cvt.rn.bf16x2.f32 and
// extended by bit moves (PairTruncations.cpp).
!m = !tdim.tensor<[r: ?, c: ?], bf16>
!v = !tdim.tensor<[c: ?], bf16>
tdim.kernel @chain(%a: !m, %bias: !v) -> (%y: !m) {
  %nr = tdim.size %a[r] : !m
  %nc = tdim.size %a[c] : !m
  %t0 = tdim.alloc(%nr, %nc) : !m
  tdim.map ins(%a, %bias : !m, !v) outs(%t0 : !m) {
  ^bb0(%x: f32, %b: f32):
    // softplus, the stable form: max(x, 0) + log1p(exp(-|x|))
    %s = arith.addf %x, %b : f32
    %zero = arith.constant 0.0 : f32
    %pos = arith.maximumf %s, %zero : f32
    %abs = math.absf %s : f32
    %nabs = arith.negf %abs : f32
    %e = math.exp %nabs : f32
    %l = math.log1p %e : f32
    %sp = arith.addf %pos, %l : f32
    tdim.yield %sp : f32
  }
  %t1 = tdim.alloc(%nr, %nc) : !m
  tdim.map ins(%t0 : !m) outs(%t1 : !m) {
  ^bb0(%x: f32):
    %half = arith.constant 0.5 : f32
    %h = arith.mulf %x, %half : f32
    %t = math.tanh %h : f32
    %lo = arith.constant -0.9 : f32
    %hi = arith.constant 0.9 : f32
    %c0 = arith.maximumf %t, %lo : f32
    %c1 = arith.minimumf %c0, %hi : f32
    tdim.yield %c1 : f32
  }
  tdim.map ins(%t1, %a : !m, !m) outs(%y : !m) {
  ^bb0(%t: f32, %x: f32):
    %zero = arith.constant 0.0 : f32
    %relu = arith.maximumf %x, %zero : f32
    %r = arith.subf %t, %relu : f32
    tdim.yield %r : f32
  }
  tdim.return
}
