// Loads a dimension the tensor does not have.
!v = !tdim.tensor<[n: ?], f32>
tdim.kernel @k(%x: !v) -> (%y: !v) {
  %i = tdim.const 0 : !tdim.index<m>
  %a = tdim.load %x[m = %i] : !v
  tdim.return
}
