//===- TdimAttrs.h - tdim attributes -----------------------------*- C++ -*-===//

#ifndef NERVE_DIALECT_TDIM_IR_TDIMATTRS_H
#define NERVE_DIALECT_TDIM_IR_TDIMATTRS_H

#include "nerve/Dialect/Tdim/IR/TdimDialect.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

#include "nerve/Dialect/Tdim/IR/TdimEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "nerve/Dialect/Tdim/IR/TdimAttrs.h.inc"

namespace nerve::tdim {

/// Parses a dimension as written in types and ops: `i` or `i/64`.
mlir::ParseResult parseDim(mlir::AsmParser &parser, DimAttr &dim);
void printDim(mlir::AsmPrinter &printer, DimAttr dim);
/// The same, for an operation whose dimension is an inherent attribute.
inline void printDim(mlir::AsmPrinter &printer, mlir::Operation *,
                     DimAttr dim) {
  printDim(printer, dim);
}

/// Parses `[a, b/4, c]` into an array of DimAttr.
mlir::ParseResult parseDimList(mlir::AsmParser &parser, mlir::ArrayAttr &dims);
void printDimList(mlir::AsmPrinter &printer, mlir::Operation *,
                  mlir::ArrayAttr dims);

/// `` `i`, `j` `` -- a list of dimensions as diagnostics print it.
std::string describeDims(llvm::ArrayRef<DimAttr> dims);

} // namespace nerve::tdim

#endif // NERVE_DIALECT_TDIM_IR_TDIMATTRS_H
