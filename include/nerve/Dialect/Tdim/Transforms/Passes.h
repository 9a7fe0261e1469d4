//===- Passes.h - tdim transformations ---------------------------*- C++ -*-===//

#ifndef NERVE_DIALECT_TDIM_TRANSFORMS_PASSES_H
#define NERVE_DIALECT_TDIM_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace nerve::tdim {

#define GEN_PASS_DECL
#include "nerve/Dialect/Tdim/Transforms/Passes.h.inc"

/// Patterns that rewrite softmax, log_softmax, layer_norm, broadcast,
/// relayout and concat into tdim.map / tdim.reduce (`storeExponentials`:
/// tdim-decompose's option).
void populateDecompositionPatterns(mlir::RewritePatternSet &patterns,
                                   bool storeExponentials = false);

/// Patterns that inline a `tdim.map` writing a `tdim.alloc`ed tensor into
/// the single `tdim.map` or `tdim.reduce` that reads it, so the
/// intermediate tensor disappears (tdim-fuse-elementwise).
void populateElementwiseFusionPatterns(mlir::RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "nerve/Dialect/Tdim/Transforms/Passes.h.inc"

} // namespace nerve::tdim

#endif // NERVE_DIALECT_TDIM_TRANSFORMS_PASSES_H
