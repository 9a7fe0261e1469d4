//===- Passes.h - PTX from GPU modules, and its checks -----------*- C++ -*-===//

#ifndef NERVE_TARGET_PTX_PASSES_H
#define NERVE_TARGET_PTX_PASSES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/Pass.h"

namespace nerve {

#define GEN_PASS_DECL
#include "nerve/Target/PTX/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nerve/Target/PTX/Passes.h.inc"

} // namespace nerve

#endif // NERVE_TARGET_PTX_PASSES_H
