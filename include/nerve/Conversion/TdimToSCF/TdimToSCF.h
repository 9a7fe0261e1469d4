//===- TdimToSCF.h - tdim to loops over memrefs ------------------*- C++ -*-===//

#ifndef NERVE_CONVERSION_TDIMTOSCF_TDIMTOSCF_H
#define NERVE_CONVERSION_TDIMTOSCF_TDIMTOSCF_H

#include "nerve/Dialect/Tdim/IR/TdimTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/DialectConversion.h"

namespace nerve {

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
