//===- NeuronChecker.h - operand checks shared by the neuron ops -*- C++ -*-===//
//
// Every misuse is reported in the user's terms: which operand, which
// dimension, what was expected.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_DIALECT_NEURON_IR_NEURONCHECKER_H
#define NERVE_LIB_DIALECT_NEURON_IR_NEURONCHECKER_H

#include "nerve/Dialect/Tdim/IR/TdimTypes.h"
#include "nerve/Dialect/Tdim/IR/TdimBuilders.h"
#include "nerve/Dialect/Tdim/IR/TdimVerifyUtils.h"

#include "mlir/IR/Operation.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace nerve::neuron::checks {

using tdim::DimAttr;
using tdim::TdimTensorType;
using mlir::LogicalResult;
using mlir::Operation;
using mlir::Value;
using mlir::success;
using mlir::failure;
using llvm::SmallVector;
using llvm::StringRef;
using mlir::FloatType;
using mlir::Type;

/// A number as a user would write it: 2, 0.5, 1e-05, nan.
inline std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

/// The operands of one neuron op, checked against its reference sequence
/// (`x` forward, `h_seq` backward) and its time dimension.
class NeuronChecker {
public:
  NeuronChecker(Operation *op, DimAttr time) : op(op), time(time) {}

  /// The reference sequence: has `time`, holds floats.
  LogicalResult reference(Value v, StringRef role) {
    ref = llvm::cast<TdimTensorType>(v.getType());
    refRole = role.str();
    if (!ref.hasDim(time))
      return op->emitOpError() << "`" << role << "` has no time dimension `" << time.str()
                               << "` (it has " << ref.describeDims() << ")";
    if (!llvm::isa<FloatType>(ref.getElementType()))
      return op->emitOpError() << "`" << role << "` holds " << ref.getElementType()
                               << "; neurons need f32, f64, f16 or bf16";
    tensors.push_back({"`" + role.str() + "`", ref});
    return success();
  }

  /// A sequence over the reference's dimensions (any layout).
  LogicalResult sequence(Value v, StringRef role, bool allowInt = false) {
    if (!v)
      return success();
    auto type = llvm::cast<TdimTensorType>(v.getType());
    if (!tdim::haveSameDims(type, ref))
      return op->emitOpError() << "`" << role << "` must have the dimensions of `" << refRole
                               << "` (" << ref.describeDims() << "), not "
                               << type.describeDims();
    return element(type, role, allowInt);
  }

  /// A per-neuron tensor: the reference's dimensions without time.
  LogicalResult perNeuron(Value v, StringRef role) {
    if (!v)
      return success();
    auto type = llvm::cast<TdimTensorType>(v.getType());
    SmallVector<DimAttr> expected;
    for (DimAttr d : ref.getDims())
      if (d != time)
        expected.push_back(d);
    bool ok = type.getRank() == expected.size() &&
              llvm::all_of(expected, [&](DimAttr d) { return type.hasDim(d); });
    if (!ok)
      return op->emitOpError() << "`" << role << "` must have the dimensions of `" << refRole
                               << "` without `" << time.str() << "` ("
                               << tdim::describeDims(expected) << "), not "
                               << type.describeDims();
    return element(type, role, false);
  }

  /// A 0-d tensor (a learnable scalar or its gradient).
  LogicalResult scalar(Value v, StringRef role) {
    if (!v)
      return success();
    auto type = llvm::cast<TdimTensorType>(v.getType());
    if (type.getRank() != 0)
      return op->emitOpError() << "`" << role << "` must be a 0-d tensor "
                               << "(`!tdim.tensor<[], f32>`), not one over "
                               << type.describeDims();
    return element(type, role, false);
  }

  /// One more tensor whose sizes must agree with the others'.
  LogicalResult extra(tdim::NamedTensor tensor) {
    tensors.push_back(std::move(tensor));
    return success();
  }

  LogicalResult sizes() { return tdim::checkConsistentSizes(op, tensors); }

  LogicalResult finite(StringRef name, std::optional<double> value) {
    if (value && !std::isfinite(*value))
      return op->emitOpError() << "`" << name << "` is " << num(*value)
                               << "; it must be finite";
    return success();
  }

private:
  LogicalResult element(TdimTensorType type, StringRef role, bool allowInt) {
    Type e = type.getElementType();
    bool ok = llvm::isa<FloatType>(e) ||
              (allowInt && (e.isSignlessInteger(1) || e.isSignlessInteger(8)));
    if (!ok)
      return op->emitOpError() << "`" << role << "` holds " << e << "; expected a float type"
                               << (allowInt ? " (or i1/i8 for spikes)" : "");
    tensors.push_back({"`" + role.str() + "`", type});
    return success();
  }

  Operation *op;
  DimAttr time;
  TdimTensorType ref;
  std::string refRole;
  SmallVector<tdim::NamedTensor> tensors;
};


} // namespace nerve::neuron::checks

#endif // NERVE_LIB_DIALECT_NEURON_IR_NEURONCHECKER_H
