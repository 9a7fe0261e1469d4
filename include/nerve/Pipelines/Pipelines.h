//===- Pipelines.h - nerve's named pass pipelines ----------------*- C++ -*-===//
//
// `nerve-to-cpu` and `nerve-to-ptx` take a spec (tdim kernels, neuron ops)
// down to LLVM IR for the host, and for the GPU down to PTX inside a
// gpu.binary. Each is a sequence of passes that also run alone, so every
// stage can be inspected with --mlir-print-ir-after-all.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_PIPELINES_PIPELINES_H
#define NERVE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace nerve {

/// From nerve's dialects to loops over memrefs: the part the CPU and GPU
/// pipelines share.
void buildNerveToLoopsPipeline(mlir::OpPassManager &pm);

struct NerveToCPUOptions : mlir::PassPipelineOptions<NerveToCPUOptions> {};

/// Everything to the LLVM dialect for the host CPU, ready for MLIR's
/// ExecutionEngine.
void buildNerveToCPUPipeline(mlir::OpPassManager &pm,
                             const NerveToCPUOptions &options = {});

/// Registers `nerve-to-loops`, `nerve-to-cpu` and `nerve-to-ptx`.
void registerNervePipelines();

} // namespace nerve

#endif // NERVE_PIPELINES_PIPELINES_H
