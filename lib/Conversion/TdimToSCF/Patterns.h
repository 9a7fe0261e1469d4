//===- Patterns.h - pieces of the tdim to SCF lowering -----------*- C++ -*-===//

#ifndef NERVE_LIB_CONVERSION_TDIMTOSCF_PATTERNS_H
#define NERVE_LIB_CONVERSION_TDIMTOSCF_PATTERNS_H

#include "nerve/Conversion/TdimToSCF/TdimToSCF.h"
#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace nerve::tdim_to_scf {

/// The extent of `dim` of `tensor` (a tdim tensor lowered to `memref`).
mlir::Value buildDimSize(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value memref, tdim::TdimTensorType tensor,
                         tdim::DimAttr dim);

/// The indices of `tensor` in memref order, picked by dimension from
/// `ivs` (aligned with `dims`); dimensions the tensor lacks are skipped.
llvm::SmallVector<mlir::Value> indicesFor(tdim::TdimTensorType tensor,
                                          llvm::ArrayRef<tdim::DimAttr> dims,
                                          mlir::ValueRange ivs);

/// Extends or rounds a float `value` to `type` (no-op when equal).
mlir::Value convertFloat(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value value, mlir::Type type);

/// Clones the ops of a single-block `region` with its arguments bound to
/// `args` (and values from outside it as `mapping` maps them) and returns
/// the values its `tdim.yield` yields.
llvm::SmallVector<mlir::Value> inlineRegion(mlir::OpBuilder &b,
                                            mlir::Region &region,
                                            mlir::ValueRange args,
                                            mlir::IRMapping mapping = {});

void populateIndexPatterns(const TdimTypeConverter &converter,
                           mlir::RewritePatternSet &patterns);
void populateMemoryPatterns(const TdimTypeConverter &converter,
                            mlir::RewritePatternSet &patterns);
void populateTensorOpPatterns(const TdimTypeConverter &converter,
                              mlir::RewritePatternSet &patterns);

} // namespace nerve::tdim_to_scf

#endif // NERVE_LIB_CONVERSION_TDIMTOSCF_PATTERNS_H
