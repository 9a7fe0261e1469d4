//===- GPUMap.h - how a kernel's loops map onto the GPU ---------*- C++ -*-===//
//
// The gpumap dialect: the strategy attribute nerve-gpu-select-strategy
// writes on each top-level loop of a kernel and nerve-parallel-loops-to-gpu
// reads (GPUMap.td).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_GPUMAP_IR_GPUMAP_H
#define NERVE_DIALECT_GPUMAP_IR_GPUMAP_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "nerve/Target/ChipProfile.h"

#include "nerve/Dialect/GPUMap/IR/GPUMapDialect.h.inc"
#include "nerve/Dialect/GPUMap/IR/GPUMapEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "nerve/Dialect/GPUMap/IR/GPUMapAttrs.h.inc"

namespace nerve::gpumap {

/// The strategy written on `op`, if any.
inline StrategyAttr strategyOf(mlir::Operation *op) {
  return op->getAttrOfType<StrategyAttr>(GPUMapDialect::kStrategyAttrName);
}

} // namespace nerve::gpumap

#endif // NERVE_DIALECT_GPUMAP_IR_GPUMAP_H
