//===- Passes.h - gpumap's decisions made on nerve's ops ---------*- C++ -*-===//
//
// Passes that choose how ops of nerve's dialects map onto the GPU and
// record the choice as gpumap attributes (Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_GPUMAP_TRANSFORMS_PASSES_H
#define NERVE_DIALECT_GPUMAP_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace nerve {

#define GEN_PASS_DECL
#include "nerve/Dialect/GPUMap/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nerve/Dialect/GPUMap/Transforms/Passes.h.inc"

} // namespace nerve

#endif // NERVE_DIALECT_GPUMAP_TRANSFORMS_PASSES_H
