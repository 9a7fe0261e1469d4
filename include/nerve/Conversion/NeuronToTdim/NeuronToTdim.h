//===- NeuronToTdim.h - generic neurons to tdim loops ------------*- C++ -*-===//

#ifndef NERVE_CONVERSION_NEURONTOTDIM_NEURONTOTDIM_H
#define NERVE_CONVERSION_NEURONTOTDIM_NEURONTOTDIM_H

#include "nerve/Dialect/Neuron/IR/NeuronAttrs.h"
#include "nerve/Dialect/Neuron/IR/NeuronOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

#include <memory>

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace nerve {

/// g'(u) of `surrogate` at `u` (a float of the compute type).
mlir::Value buildSurrogateDerivative(mlir::OpBuilder &b, mlir::Location loc,
                                     neuron::SurrogateAttr surrogate, mlir::Value u);

/// The derivatives of a charge function, built by forward-mode
/// differentiation of its region.
struct ChargeDerivatives {
  /// A detached block taking the charge region's arguments (v, x,
  /// params...) and computing the derivatives; unused ops removed.
  std::unique_ptr<mlir::Block> block;
  /// d h / d argument, for each argument of the region, in order; for a
  /// parameter, without its `factors`.
  llvm::SmallVector<mlir::Value> derivatives;
  /// Per argument, the product of the factors peeled off the top of its
  /// derivative that read only the parameters (null: none): d h / d p is
  /// derivatives[i] * factors[i]. Backward sums g * derivatives[i] over
  /// time and multiplies by the factor once. Only parameters have them.
  llvm::SmallVector<mlir::Value> factors;
  /// Whether the derivatives read the argument (v, x, params...).
  llvm::SmallVector<bool> uses;
  /// Whether h = A(v, params) + beta(params) * x: x enters only through
  /// sums, products with and quotients by values free of x, and selects on
  /// conditions free of x, and the slope beta does not depend on v (which
  /// starts at zero). Backward can then recover x from h as (h - A) / beta
  /// instead of reading it.
  bool affineInInput = false;
  /// Whether the block takes h as one more argument, after the params, and
  /// computes from it every value on x's path to h (x included), so that it
  /// reads x no more: see differentiateCharge's `throughOutput`.
  bool takesOutput = false;
};

/// Removes the ops of `block` that none of the values in `live` needs (null
/// entries are skipped): what is left of a derivative block is what its
/// results read.
void pruneTo(mlir::Block &block, llvm::ArrayRef<mlir::Value> live);

/// Differentiates the single-block `charge` region with respect to every
/// argument. Fails, with a diagnostic naming it, on an operation it cannot
/// differentiate.
///
/// With `throughOutput`, when x reaches h through a chain of steps that can
/// each be undone (every value on the path used once; adds, subtractions,
/// negations, products with and quotients by values free of x, fma), the
/// derivatives read the values on that path from h instead, undoing the
/// steps from h down: for PLIF's h = v + (x - v) * d, dh/dd reads
/// x - v = (h - v) * (1 / d), as SpikingJelly computes it. A product's
/// factor must not read v (which starts at zero), or the chain is kept.
mlir::FailureOr<ChargeDerivatives> differentiateCharge(mlir::Region &charge,
                                                       bool throughOutput = false);

/// How backward treats the spike.
struct ModelGradOptions {
  neuron::SurrogateAttr surrogate;
  bool detachReset = false;
  bool detachThreshold = false;
};

/// A model's backward: what forward saved (per state: its charged values,
/// `h_seq`, and its sequence, `seq`; per input: whether backward is given
/// it) and which gradients it asks for (per input and parameter; whether
/// the spikes have one).
struct ModelBackwardQuery {
  llvm::SmallVector<bool> hSaved, seqSaved, inputsGiven, gradInputs, gradParams;
  bool gradSpike = true;
  ModelGradOptions options;
};

/// What a model's backward reads each step, per state (`hSeq`, `seq`) and
/// input, and where each state before the step comes from.
struct ModelBackwardReads {
  enum class Pre { Unused, Seq, Reset };
  llvm::SmallVector<bool> hSeq, seq, inputs;
  llvm::SmallVector<Pre> pre;
};

/// Derives `model`'s backward for `query` and plans its reads (the fewest
/// streams that what forward saved allows); an error through `emitError`
/// names what is missing.
mlir::FailureOr<ModelBackwardReads>
planModelBackward(neuron::ModelOp model, const ModelBackwardQuery &query,
                  llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Lowers one neuron.forward or neuron.backward of a model to tdim loops
/// (ModelToTdim.cpp); `timeBlock` as the pass option (0: automatic).
mlir::LogicalResult lowerModelNeuron(mlir::Operation *op, int64_t timeBlock);

/// Patterns lowering neuron.generic and neuron.generic_grad to tdim loops.
void populateNeuronToTdimPatterns(mlir::RewritePatternSet &patterns);

} // namespace nerve

#endif // NERVE_CONVERSION_NEURONTOTDIM_NEURONTOTDIM_H
