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

#define GEN_PASS_DECL
#include "nerve/Dialect/GPU/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nerve/Dialect/GPU/Transforms/Passes.h.inc"

} // namespace nerve

#endif // NERVE_DIALECT_GPU_TRANSFORMS_PASSES_H
