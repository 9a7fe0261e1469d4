// Reductions of a whole vector: they fold 16-byte chunks (docs/compiler.md,
// "Whole-tensor reductions").

!v = !tdim.tensor<[n: ?], f32>
!h = !tdim.tensor<[n: ?], f16>

tdim.kernel @mean_square(%x: !v) -> (%ms: !tdim.tensor<[], f32>) {
  tdim.reduce ins(%x : !v) outs(%ms : !tdim.tensor<[], f32>) over [n] init [0.0 : f32]
    map {
    ^bb0(%v: f32):
      %sq = arith.mulf %v, %v : f32
      tdim.yield %sq : f32
    }
    combine {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tdim.yield %s : f32
    }
    post {
    ^bb0(%acc: f32, %count: index):
      %i = arith.index_cast %count : index to i64
      %n = arith.sitofp %i : i64 to f32
      %mean = arith.divf %acc, %n : f32
      tdim.yield %mean : f32
    }
  tdim.return
}

// f16 elements, an f32 sum.
tdim.kernel @half_sum(%x: !h) -> (%s: !tdim.tensor<[], f32>) {
  tdim.reduce ins(%x : !h) outs(%s : !tdim.tensor<[], f32>) over [n] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      tdim.yield %r : f32
    }
  tdim.return
}
