//===- TdimToSCF.h - tdim to loops over memrefs ------------------*- C++ -*-===//

#ifndef NERVE_CONVERSION_TDIMTOSCF_TDIMTOSCF_H
#define NERVE_CONVERSION_TDIMTOSCF_TDIMTOSCF_H

#include "nerve/Dialect/Tdim/IR/TdimTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/DialectConversion.h"

namespace nerve {

/// On the scf.for a tdim.reduce folds with, when its combine is more than
/// one op: the symbol of a private function of 2N arguments and N results
/// (two partial accumulator tuples in, merged tuple out), so that a later
/// split of the fold can merge partial results. The loop's init values are
/// the accumulators' identities.
constexpr llvm::StringLiteral kCombineAttrName = "nerve.combine";

/// On such an scf.for of two f32 accumulators (m, s), from a `tdim.reduce`
/// marked tdim::kMaxSumExpAttrName: each iteration folds a value v in as
/// (v, 1) with the online merge of a maximum and a sum of exp(x - maximum),
/// so a block of iterations may fold at once (their maximum first, then one
/// exp each).
constexpr llvm::StringLiteral kMaxSumExpAttrName = "nerve.max_sum_exp";

/// The memref a `!tdim.tensor` lowers to: its dimensions in list order,
/// identity layout when row-major, else its strides and offset.
mlir::MemRefType convertTdimTensorType(tdim::TdimTensorType type);

/// Converts tdim tensors to memrefs and typed indices to `index`.
class TdimTypeConverter : public mlir::TypeConverter {
public:
  TdimTypeConverter();
};

/// The patterns of `convert-tdim-to-scf`.
void populateTdimToSCFConversionPatterns(const TdimTypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);

} // namespace nerve

#endif // NERVE_CONVERSION_TDIMTOSCF_TDIMTOSCF_H
