//===- Fold.h - sequential folds that state how partials merge --*- C++ -*-===//
//
// The fold dialect: fold.for, the loop a multi-op reduction lowers to, with
// the region that merges two partial results (Fold.td).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_FOLD_IR_FOLD_H
#define NERVE_DIALECT_FOLD_IR_FOLD_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "nerve/Dialect/Fold/IR/FoldDialect.h.inc"

#define GET_OP_CLASSES
#include "nerve/Dialect/Fold/IR/FoldOps.h.inc"

#endif // NERVE_DIALECT_FOLD_IR_FOLD_H
