//===- TdimDialect.h - the typed-dimension dialect ---------------*- C++ -*-===//

#ifndef NERVE_DIALECT_TDIM_IR_TDIMDIALECT_H
#define NERVE_DIALECT_TDIM_IR_TDIMDIALECT_H

#include "mlir/IR/Dialect.h"

#include "nerve/Dialect/Tdim/IR/TdimDialect.h.inc"

#endif // NERVE_DIALECT_TDIM_IR_TDIMDIALECT_H
