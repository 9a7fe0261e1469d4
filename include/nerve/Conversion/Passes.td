//===- Passes.td - nerve's conversions ---------------------*- tablegen -*-===//

#ifndef NERVE_CONVERSION_PASSES
#define NERVE_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTdimToSCF : Pass<"convert-tdim-to-scf", "::mlir::ModuleOp"> {
  let summary = "Lowers tdim kernels to loops over strided memrefs";
  let description = [{
    Each `tdim.kernel` becomes a `func.func` over memrefs (inputs, then
    outputs; with `llvm.emit_c_interface`). A `!tdim.tensor` becomes a memref
    with its dimensions in list order and its strides; `!tdim.index` becomes
    `index`. Whole-tensor ops become loop nests: the dimensions that are
    independent (all of a map's, the kept ones of a reduce or contract) are
    one `scf.parallel`, innermost dimension contiguous, so the GPU mapping
    can distribute them; reductions are `scf.for` nests inside, combined in a
    fixed order. Composite ops are decomposed first (see `tdim-decompose`).
    `tdim.alloc` becomes `memref.alloc`, freed when the kernel returns.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

#endif // NERVE_CONVERSION_PASSES
