// A kernel whose data is all 16-bit computes in f32 with approximate
// division and exp by default (nerve-half-storage-math); with exact-math
// its f32 math keeps IEEE semantics: 1 / x is rcp.rn, not rcp.approx.
// RUN: nerve-opt %s --nerve-to-ptx='libdevice=none' | FileCheck %s --check-prefix=DEFAULT
// RUN: nerve-opt %s --nerve-to-ptx='libdevice=none exact-math=true' | FileCheck %s --check-prefix=EXACT

// DEFAULT: rcp.approx
// EXACT-NOT: rcp.approx
// EXACT: rcp.rn.f32
// EXACT-NOT: rcp.approx

!h = !tdim.tensor<[n: ?], f16>
tdim.kernel @sigmoid(%a: !h) -> (%y: !h) {
  tdim.map ins(%a : !h) outs(%y : !h) {
  ^bb0(%x: f16):
    %xf = arith.extf %x : f16 to f32
    %nx = arith.negf %xf : f32
    %e = math.exp %nx : f32
    %one = arith.constant 1.0 : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    %r = arith.truncf %s : f32 to f16
    tdim.yield %r : f16
  }
  tdim.return
}
