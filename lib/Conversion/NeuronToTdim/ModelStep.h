//===- ModelStep.h - one time step of a neuron model -------------*- C++ -*-===//
//
// A neuron.model's step (threshold, charge, fire, resets) built as scalar
// code for one neuron, and its vector-Jacobian product by reverse-mode
// differentiation of the same regions: backward through every state, the
// threshold and the parameters, derived from the model alone.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_CONVERSION_NEURONTOTDIM_MODELSTEP_H
#define NERVE_LIB_CONVERSION_NEURONTOTDIM_MODELSTEP_H

#include "FloatArith.h"

#include "nerve/Conversion/NeuronToTdim/NeuronToTdim.h"
#include "nerve/Dialect/Neuron/IR/NeuronOps.h"

namespace nerve {

/// What a step is computed from, in the compute type. `charged` holds, per
/// state, its value after charge when it is at hand (saved by forward), or
/// null: it is then computed from the charge region.
struct ModelStepArgs {
  llvm::ArrayRef<mlir::Value> pre;    ///< the states before the step
  llvm::ArrayRef<mlir::Value> inputs; ///< this step's inputs
  llvm::ArrayRef<mlir::Value> params;
  llvm::ArrayRef<mlir::Value> charged;
};

/// A step's forward values.
struct ModelStepValues {
  llvm::SmallVector<mlir::Value> charged; ///< per state, after charge
  mlir::Value theta;                      ///< the threshold
  mlir::Value fired;                      ///< i1: charged[0] - theta >= 0
  llvm::SmallVector<mlir::Value> next;    ///< per state, after its reset
};

/// State `i` after its reset, from its charged value `h`, the spike
/// (`fired`, i1), the threshold and the parameters.
mlir::Value resetState(FloatArith fa, neuron::ModelOp model, unsigned i, mlir::Value h,
                       mlir::Value fired, mlir::Value theta,
                       llvm::ArrayRef<mlir::Value> params);

/// Builds the step: threshold, charge, fire, resets.
ModelStepValues buildModelStep(FloatArith fa, neuron::ModelOp model, const ModelStepArgs &args);

/// Upstream gradients of a step's outputs (null: zero): the spike and each
/// state after its reset.
struct ModelStepSeeds {
  mlir::Value spike;
  llvm::ArrayRef<mlir::Value> next;
};

/// Gradients of the step's arguments (null: zero).
struct ModelStepGrads {
  llvm::SmallVector<mlir::Value> pre, inputs, params;
};

/// Builds the step's forward values from `args`, then its vector-Jacobian
/// product for `seeds`, by reverse-mode differentiation of the threshold
/// and charge regions. Fails, with a diagnostic, on an op it cannot
/// differentiate.
mlir::FailureOr<ModelStepGrads> buildModelStepGrads(FloatArith fa, neuron::ModelOp model,
                                                    const ModelStepArgs &args,
                                                    const ModelStepSeeds &seeds,
                                                    const ModelGradOptions &options);

} // namespace nerve

#endif // NERVE_LIB_CONVERSION_NEURONTOTDIM_MODELSTEP_H
