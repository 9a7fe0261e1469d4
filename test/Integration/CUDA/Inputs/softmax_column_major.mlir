// softmax over `c` of a column-major view (`r` contiguous), no copy.
!x = !tdim.tensor<[r: ?, c: ?], f32, strides = [1, ?]>
!y = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @softmax_view(%x: !x) -> (%y: !y) {
  tdim.softmax ins(%x : !x) outs(%y : !y) over c
  tdim.return
}
