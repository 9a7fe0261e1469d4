// A first spec: nerve-opt parses, verifies and canonicalizes it.
func.func @scale(%x: f32) -> f32 {
  %c2 = arith.constant 2.0 : f32
  %y = arith.mulf %x, %c2 : f32
  return %y : f32
}
