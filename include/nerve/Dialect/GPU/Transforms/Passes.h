//===- Passes.h - nerve's passes over GPU kernels ----------------*- C++ -*-===//
//
// Transforms of upstream's gpu dialect that nerve runs once its loops are
// kernels (Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_GPU_TRANSFORMS_PASSES_H
#define NERVE_DIALECT_GPU_TRANSFORMS_PASSES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/Pass.h"

namespace nerve {

/// An i32 attribute on an op of a launch's body: the blocks ptxas should fit
/// on an SM when it allocates the kernel's registers. Outlining keeps ops,
/// not the launch's attributes; nerve-occupancy-hints moves it onto the
/// kernel.
constexpr llvm::StringLiteral kBlocksPerSMAttr = "nerve.blocks_per_sm";

#define GEN_PASS_DECL
#include "nerve/Dialect/GPU/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nerve/Dialect/GPU/Transforms/Passes.h.inc"

} // namespace nerve

#endif // NERVE_DIALECT_GPU_TRANSFORMS_PASSES_H
