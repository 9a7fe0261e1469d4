//===- CPUMap.h - how a kernel's loops map onto the CPU's threads -*- C++ -*-===//
//
// The cpumap dialect: the strategy attribute nerve-cpu-select-strategy
// writes on each outermost parallel loop of a kernel and
// nerve-apply-cpu-strategy reads (CPUMap.td).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_CPUMAP_IR_CPUMAP_H
#define NERVE_DIALECT_CPUMAP_IR_CPUMAP_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "nerve/Dialect/CPUMap/IR/CPUMapDialect.h.inc"
#include "nerve/Dialect/CPUMap/IR/CPUMapEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "nerve/Dialect/CPUMap/IR/CPUMapAttrs.h.inc"

namespace mlir::scf {
class ParallelOp;
} // namespace mlir::scf

namespace nerve::cpumap {

/// The strategy written on `op`, if any.
inline StrategyAttr strategyOf(mlir::Operation *op) {
  return op->getAttrOfType<StrategyAttr>(CPUMapDialect::kStrategyAttrName);
}

/// Whether `v` is the same for every iteration of `loop`: defined outside
/// it, or by a pure op of its body without regions whose operands are.
bool isUniformIn(mlir::Value v, mlir::scf::ParallelOp loop);

/// The loop a `time_chunks` strategy runs time-outermost: the one
/// `scf.for` carrying values in `loop`'s body, whose bounds do not depend
/// on `loop`'s induction variables. Null when `loop` is no such recurrence.
mlir::Operation *recurrenceOf(mlir::scf::ParallelOp loop);

} // namespace nerve::cpumap

#endif // NERVE_DIALECT_CPUMAP_IR_CPUMAP_H
