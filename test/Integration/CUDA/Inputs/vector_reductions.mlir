// Reductions of a whole vector to one value (whole-reductions.test), by
// 16-byte chunks: parallel loops with a reduction, and a fold that carries
// its combine (argmax).

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

// Two accumulators merged together (the first maximum and its position):
// a fold that states its merge (fold.for), mapped as the same tree, its own step
// folding each lane.
tdim.kernel @argmax(%x: !v) -> (%index: !tdim.tensor<[], i32>) {
  tdim.reduce ins(%x : !v) outs(%index : !tdim.tensor<[], i32>) over [n]
      init [0xFF800000 : f32, -1 : i32]
    map {
    ^bb0(%v: f32, %i: index):
      %c = arith.index_cast %i : index to i32
      tdim.yield %v, %c : f32, i32
    }
    combine {
    ^bb0(%best: f32, %at: i32, %v: f32, %i: i32):
      %gt = arith.cmpf ogt, %v, %best : f32
      %eq = arith.cmpf oeq, %v, %best : f32
      %lower = arith.cmpi slt, %i, %at : i32
      %tie = arith.andi %eq, %lower : i1
      %take = arith.ori %gt, %tie : i1
      %nb = arith.select %take, %v, %best : f32
      %na = arith.select %take, %i, %at : i32
      tdim.yield %nb, %na : f32, i32
    }
    post {
    ^bb0(%best: f32, %at: i32, %count: index):
      tdim.yield %at : i32
    }
  tdim.return
}
