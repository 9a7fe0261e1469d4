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

def ConvertNeuronToTdim : Pass<"convert-neuron-to-tdim"> {
  let summary = "Lowers neurons to tdim loops: time sequential, every other dimension parallel";
  let description = [{
    Named neuron ops are first generalized (see `neuron-generalize`). Each
    `neuron.generic` becomes parallel `tdim.for` loops over the dimensions
    of `x` other than time (outermost first, in `x`'s layout order) around a
    sequential loop over time that keeps the potential in a register: per
    step it loads the input, applies the charge region, fires, resets and
    stores what was asked for.

    Each `neuron.generic_grad` becomes the same parallel loops around a
    reverse loop over time carrying `kappa * G_H`. The charge region's
    derivatives (with respect to the potential, the input and each
    parameter) are derived by forward-mode differentiation, and only the
    tensors they read are loaded. Parameter gradients are summed per neuron
    over time, then over neurons by a `tdim.reduce` (a fixed order: the same
    bits on every run).
  }];
  let dependentDialects = ["::nerve::tdim::TdimDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif // NERVE_CONVERSION_PASSES
