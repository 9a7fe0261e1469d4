// The largest element of a 3-D tensor: a whole-tensor reduction whose
// threads step through three digits of position (their carries).
!t = !tdim.tensor<[a: ?, b: ?, c: ?], f32>
tdim.kernel @whole_max(%x: !t) -> (%m: !tdim.tensor<[], f32>) {
  tdim.reduce ins(%x : !t) outs(%m : !tdim.tensor<[], f32>) over [a, b, c] init [0xFF800000 : f32]
    combine {
    ^bb0(%p: f32, %q: f32):
      %r = arith.maximumf %p, %q : f32
      tdim.yield %r : f32
    }
  tdim.return
}
