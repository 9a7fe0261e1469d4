//===- Passes.h - nerve's conversions ----------------------------*- C++ -*-===//

#ifndef NERVE_CONVERSION_PASSES_H
#define NERVE_CONVERSION_PASSES_H

#include "nerve/Conversion/NeuronToTdim/NeuronToTdim.h"
#include "nerve/Conversion/TdimToSCF/TdimToSCF.h"
#include "nerve/Dialect/Fold/IR/Fold.h"
#include "nerve/Dialect/GPUMap/IR/GPUMap.h"
#include "nerve/Dialect/Tdim/IR/TdimDialect.h"
#include "nerve/Target/ChipProfile.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/Pass.h"

namespace nerve {

#define GEN_PASS_DECL
#include "nerve/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nerve/Conversion/Passes.h.inc"

} // namespace nerve

#endif // NERVE_CONVERSION_PASSES_H
