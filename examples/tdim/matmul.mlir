// Matrix product and a linear layer as contractions: the sum runs over the
// dimension the operands share and the output lacks (`k`). The weight is
// stored [j, k] (PyTorch's layout for nn.Linear); names, not positions, say
// which dimension is contracted.

tdim.kernel @matmul(%a: !tdim.tensor<[i: ?, k: ?], f32>, %b: !tdim.tensor<[k: ?, j: ?], f32>)
    -> (%c: !tdim.tensor<[i: ?, j: ?], f32>) {
  tdim.contract ins(%a, %b : !tdim.tensor<[i: ?, k: ?], f32>, !tdim.tensor<[k: ?, j: ?], f32>)
      outs(%c : !tdim.tensor<[i: ?, j: ?], f32>)
  tdim.return
}

tdim.kernel @linear(%x: !tdim.tensor<[b: ?, k: ?], f32>, %w: !tdim.tensor<[j: ?, k: ?], f32>,
                    %bias: !tdim.tensor<[j: ?], f32>) -> (%y: !tdim.tensor<[b: ?, j: ?], f32>) {
  tdim.broadcast ins(%bias : !tdim.tensor<[j: ?], f32>) outs(%y : !tdim.tensor<[b: ?, j: ?], f32>)
  tdim.contract ins(%x, %w : !tdim.tensor<[b: ?, k: ?], f32>, !tdim.tensor<[j: ?, k: ?], f32>)
      outs(%y : !tdim.tensor<[b: ?, j: ?], f32>) accumulate
  tdim.return
}
