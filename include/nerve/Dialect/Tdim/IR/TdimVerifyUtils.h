//===- TdimVerifyUtils.h - shared checks of tdim verifiers -------*- C++ -*-===//
//
// Checks that several ops make of their tensor operands, phrased in the
// user's terms: dimension names and operand numbers, never positions.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_TDIM_IR_TDIMVERIFYUTILS_H
#define NERVE_DIALECT_TDIM_IR_TDIMVERIFYUTILS_H

#include "nerve/Dialect/Tdim/IR/TdimTypes.h"

#include "mlir/IR/Operation.h"

#include <string>

namespace nerve::tdim {

/// A tensor operand and how diagnostics refer to it ("operand #1",
/// "argument %x").
struct NamedTensor {
  std::string what;
  TdimTensorType type;
};

/// Every dimension that appears in several tensors must have one static size
/// (a fold `i/64` must be `i`'s size divided by 64, exactly). Sizes along
/// the axes in `exempt` (those a concat joins) may differ.
mlir::LogicalResult checkConsistentSizes(mlir::Operation *op,
                                         llvm::ArrayRef<NamedTensor> tensors,
                                         llvm::ArrayRef<DimAttr> exempt = {});

/// Whether two tensors have the same set of dimensions, in any order.
bool haveSameDims(TdimTensorType a, TdimTensorType b);

/// The dimensions of `type` that `others` lacks.
llvm::SmallVector<DimAttr> dimsMissingFrom(TdimTensorType type,
                                           TdimTensorType others);

} // namespace nerve::tdim

#endif // NERVE_DIALECT_TDIM_IR_TDIMVERIFYUTILS_H
