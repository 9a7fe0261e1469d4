//===- TdimPasses.td - tdim transformations ----------------*- tablegen -*-===//

#ifndef NERVE_DIALECTS_TDIM_PASSES
#define NERVE_DIALECTS_TDIM_PASSES

include "mlir/Pass/PassBase.td"

def TdimDecompose : Pass<"tdim-decompose"> {
  let summary = "Expresses composite tdim ops with tdim.map and tdim.reduce";
  let description = [{
    Rewrites `tdim.softmax`, `tdim.log_softmax`, `tdim.layer_norm`,
    `tdim.broadcast`, `tdim.relayout` and `tdim.concat` into `tdim.map` and
    `tdim.reduce` over the same named dimensions, with `tdim.alloc`ed
    row statistics where a second pass over the data needs them.

    With `store-exponentials`, a softmax over its input's contiguous
    dimension in f32 or f64 writes exp(x - max) into its output, sums the
    output and scales it in place: one exponential per element instead of
    two, for targets whose rows stay in cache between the passes (the CPU's
    row tasks). Without it the output pass computes exp again, which costs
    a GPU's row programs less than a second read of the output.
  }];
  let options = [
    Option<"storeExponentials", "store-exponentials", "bool", /*default=*/"false",
           "softmax stores its exponentials in the output and scales them in place">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def TdimFuseElementwise : Pass<"tdim-fuse-elementwise"> {
  let summary = "Fuses tdim.map producers into their tdim.map and tdim.reduce consumers";
  let description = [{
    When a `tdim.map` writes a `tdim.alloc`ed tensor that exactly one later
    `tdim.map` or `tdim.reduce` reads (and nothing else touches), the
    producer's region is inlined into the consumer and the intermediate
    tensor disappears, so a chain of elementwise ops makes one pass over
    memory.
  }];
}

def TdimFuseContractEpilogue : Pass<"tdim-fuse-contract-epilogue"> {
  let summary = "Moves a contraction's bias and its elementwise consumer into its epilogue";
  let description = [{
    A `tdim.map` writing the tensor that a `tdim.contract ... accumulate`
    then sums onto (a bias `tdim.broadcast`, as `tdim-decompose` writes it)
    becomes an addition in the contraction's epilogue, its inputs `with`
    inputs, and a
    `tdim.map` that alone reads a contraction's `tdim.alloc`ed product (over
    its whole iteration space, writing the operands' element type) becomes
    the epilogue, its other inputs `with` inputs: the product is written
    once, finished, instead of written, read and written again. The
    rounding of the intermediate tensors is kept.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // NERVE_DIALECTS_TDIM_PASSES
