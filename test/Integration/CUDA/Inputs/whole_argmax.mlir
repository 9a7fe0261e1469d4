// The position of the first maximum of a whole matrix, flattened row-major
// (whole-reductions.test): a nest of folds that states its merge.

!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @argmax(%x: !m) -> (%index: !tdim.tensor<[], i32>) {
  tdim.reduce ins(%x : !m) outs(%index : !tdim.tensor<[], i32>) over [r, c]
      init [0xFF800000 : f32, -1 : i32]
    map {
    ^bb0(%v: f32, %i: index, %j: index):
      %ncd = tdim.size %x[c] : !m
      %nc = tdim.to_index %ncd : !tdim.index<c>
      %flat = arith.muli %i, %nc : index
      %k = arith.addi %flat, %j : index
      %c = arith.index_cast %k : index to i32
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
