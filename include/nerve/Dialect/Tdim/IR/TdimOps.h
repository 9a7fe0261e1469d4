//===- TdimOps.h - tdim operations -------------------------------*- C++ -*-===//

#ifndef NERVE_DIALECT_TDIM_IR_TDIMOPS_H
#define NERVE_DIALECT_TDIM_IR_TDIMOPS_H

#include "nerve/Dialect/Tdim/IR/TdimAttrs.h"
#include "nerve/Dialect/Tdim/IR/TdimDialect.h"
#include "nerve/Dialect/Tdim/IR/TdimTypes.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"


#define GET_OP_CLASSES
#include "nerve/Dialect/Tdim/IR/TdimOps.h.inc"

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace nerve::tdim {

/// Whether any op strictly between `first` and `last` (same block) may
/// write memory, which would make moving reads across it unsafe.
bool writesBetween(mlir::Operation *first, mlir::Operation *last);

/// The single op writing `tensor` (a tdim.alloc) before `reader`, when the
/// only other use of `tensor` is `reader` itself; else null.
mlir::Operation *soleWriterBefore(mlir::Value tensor, mlir::Operation *reader);

} // namespace nerve::tdim

#endif // NERVE_DIALECT_TDIM_IR_TDIMOPS_H
