// softmax over `c` of a column-major f16 view (`r` contiguous), no copy.
!x = !tdim.tensor<[r: ?, c: ?], f16, strides = [1, ?]>
!y = !tdim.tensor<[r: ?, c: ?], f16>
tdim.kernel @softmax_view(%x: !x) -> (%y: !y) {
  tdim.softmax ins(%x : !x) outs(%y : !y) over c
  tdim.return
}
