!m = !tdim.tensor<[r: ?, c: 4], f32>
tdim.kernel @double(%x: !m) -> (%y: !m) {
  tdim.map ins(%x : !m) outs(%y : !m) {
  ^bb0(%v: f32):
    %d = arith.addf %v, %v : f32
    tdim.yield %d : f32
  }
  tdim.return
}
