// A hand-written kernel in the style of spio's README: typed indices and a
// fold instead of index arithmetic. Rows `i` are processed in blocks of 64:
// the outer parallel loop runs over `i/64` (a fold of `i`), the inner one
// over the row `r` within a block; `unfold` turns a block into its first
// row and `cast` turns a local row into an offset along `i`. Adding an
// index of `r` to one of `i` without the cast is a verifier error, as is
// loading `x` with an index of a dimension it does not have. The last block
// may be partial: the block count rounds up and rows past the end are
// skipped.

!x = !tdim.tensor<[i: ?, j: ?], f32>
!s = !tdim.tensor<[i: ?], f32>

tdim.kernel @blocked_row_sum(%x: !x) -> (%s: !s) {
  %rows = tdim.size %x[i] : !x
  %c63 = tdim.const 63 : !tdim.index<i>
  %padded = tdim.add %rows, %c63 : !tdim.index<i>
  %blocks = tdim.fold %padded : !tdim.index<i> to !tdim.index<i/64>
  %b0 = tdim.const 0 : !tdim.index<i/64>
  %r0 = tdim.const 0 : !tdim.index<r>
  %r64 = tdim.const 64 : !tdim.index<r>
  %j0 = tdim.const 0 : !tdim.index<j>
  %cols = tdim.size %x[j] : !x
  tdim.for %b over i/64 from %b0 to %blocks parallel {
    tdim.for %r over r from %r0 to %r64 parallel {
      %first = tdim.unfold %b : !tdim.index<i/64> to !tdim.index<i>
      %offset = tdim.cast %r : !tdim.index<r> to !tdim.index<i>
      %row = tdim.add %first, %offset : !tdim.index<i>
      %inside = tdim.cmp lt, %row, %rows : !tdim.index<i>
      scf.if %inside {
        %zero = arith.constant 0.0 : f32
        %sum = tdim.for %j over j from %j0 to %cols iter_args(%acc = %zero) -> (f32) {
          %v = tdim.load %x[i = %row, j = %j] : !x
          %a = arith.addf %acc, %v : f32
          tdim.yield %a : f32
        }
        tdim.store %sum, %s[i = %row] : !s
      }
    }
  }
  tdim.return
}
