// Reductions by dimension name: a row sum (over the contiguous dimension),
// a column max (over the outer one), a mean (a post-map divides by the
// count), an arg-max (two accumulators: the value and its position) and a
// mean of squares over the whole tensor.

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @row_sum(%x: !m) -> (%sum: !tdim.tensor<[r: ?], f32>) {
  tdim.reduce ins(%x : !m) outs(%sum : !tdim.tensor<[r: ?], f32>) over [c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tdim.yield %s : f32
    }
  tdim.return
}

tdim.kernel @column_max(%x: !m) -> (%max: !tdim.tensor<[c: ?], f32>) {
  tdim.reduce ins(%x : !m) outs(%max : !tdim.tensor<[c: ?], f32>) over [r] init [0xFF800000 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %m = arith.maximumf %a, %b : f32
      tdim.yield %m : f32
    }
  tdim.return
}

tdim.kernel @row_mean(%x: !m) -> (%mean: !tdim.tensor<[r: ?], f32>) {
  tdim.reduce ins(%x : !m) outs(%mean : !tdim.tensor<[r: ?], f32>) over [c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tdim.yield %s : f32
    }
    post {
    ^bb0(%sum: f32, %count: index):
      %n = arith.index_cast %count : index to i64
      %nf = arith.uitofp %n : i64 to f32
      %m = arith.divf %sum, %nf : f32
      tdim.yield %m : f32
    }
  tdim.return
}

tdim.kernel @row_argmax(%x: !m) -> (%index: !tdim.tensor<[r: ?], i32>) {
  tdim.reduce ins(%x : !m) outs(%index : !tdim.tensor<[r: ?], i32>) over [c]
      init [0xFF800000 : f32, -1 : i32]
    map {
    ^bb0(%v: f32, %c: index):
      %i = arith.index_cast %c : index to i32
      tdim.yield %v, %i : f32, i32
    }
    combine {
    ^bb0(%best: f32, %at: i32, %v: f32, %i: i32):
      // Strictly greater keeps the first maximum; ties go to the lower index.
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

// Everything to one value: the sum of squares of a whole matrix, divided by
// the count (post). On the GPU this is a fixed tree over threads and blocks:
// the same bits on every run.
tdim.kernel @mean_square(%x: !m) -> (%ms: !tdim.tensor<[], f32>) {
  tdim.reduce ins(%x : !m) outs(%ms : !tdim.tensor<[], f32>) over [r, c] init [0.0 : f32]
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
