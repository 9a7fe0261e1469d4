//===- GPUMap.h - how a kernel's loops map onto the GPU ---------*- C++ -*-===//
//
// The gpumap dialect: the strategy attribute nerve-gpu-select-strategy
// writes on each top-level loop of a kernel and nerve-parallel-loops-to-gpu
// reads, the occupancy hint a strategy leaves in a launch, and a
// contraction's tensor-core tiling with the op it lowers to (GPUMap.td).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_GPUMAP_IR_GPUMAP_H
#define NERVE_DIALECT_GPUMAP_IR_GPUMAP_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "nerve/Target/ChipProfile.h"

#include "nerve/Dialect/GPUMap/IR/GPUMapDialect.h.inc"
#include "nerve/Dialect/GPUMap/IR/GPUMapEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "nerve/Dialect/GPUMap/IR/GPUMapAttrs.h.inc"

namespace nerve::gpumap {
/// The resource gpumap.occupancy_hint writes: its kernel's occupancy, no
/// memory.
struct OccupancyResource : mlir::SideEffects::Resource::Base<OccupancyResource> {
  llvm::StringRef getName() final { return "<gpumap occupancy>"; }
};
} // namespace nerve::gpumap

#define GET_OP_CLASSES
#include "nerve/Dialect/GPUMap/IR/GPUMapOps.h.inc"

namespace nerve::gpumap {

/// The dimension of `type` with a static unit stride, if any (each operand
/// of a gpumap.tiled_contract has one).
std::optional<unsigned> unitStrideDim(mlir::MemRefType type);

/// The heuristics' form of a contraction's tiling.
struct ContractTiling;
ContractTiling tilingOf(ContractTilingAttr tiling);
/// The attribute that records `tiling`.
ContractTilingAttr attrOf(mlir::MLIRContext *context, const ContractTiling &tiling);

/// The strategy written on `op`, if any.
inline StrategyAttr strategyOf(mlir::Operation *op) {
  return op->getAttrOfType<StrategyAttr>(GPUMapDialect::kStrategyAttrName);
}

} // namespace nerve::gpumap

#endif // NERVE_DIALECT_GPUMAP_IR_GPUMAP_H
