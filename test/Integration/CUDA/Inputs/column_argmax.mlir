// argmax over `r`, the outer dimension: a fold of two accumulators (the
// best value and its row) whose combine breaks ties towards the lower row.
!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @column_argmax(%x: !m) -> (%index: !tdim.tensor<[c: ?], i32>) {
  tdim.reduce ins(%x : !m) outs(%index : !tdim.tensor<[c: ?], i32>) over [r]
      init [0xFF800000 : f32, -1 : i32]
    map {
    ^bb0(%v: f32, %r: index):
      %i = arith.index_cast %r : index to i32
      tdim.yield %v, %i : f32, i32
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
