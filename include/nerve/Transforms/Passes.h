//===- Passes.h - nerve's passes over any dialect ----------------*- C++ -*-===//
//
// Transforms of upstream dialects that no nerve dialect owns (Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_TRANSFORMS_PASSES_H
#define NERVE_TRANSFORMS_PASSES_H

#include "nerve/Dialect/CPUMap/IR/CPUMap.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace nerve {

#define GEN_PASS_DECL
#include "nerve/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nerve/Transforms/Passes.h.inc"

} // namespace nerve

#endif // NERVE_TRANSFORMS_PASSES_H
