//===- InitAll.h - register nerve's dialects and passes ----------*- C++ -*-===//
//
// One place that knows everything a nerve tool must register: nerve's own
// dialects and passes, and the upstream dialects, extensions, translations
// and passes that nerve's pipelines use. Tools stay trivial by calling these.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_INITALL_H
#define NERVE_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace nerve {

/// Registers nerve's dialects and every upstream dialect, interface model and
/// LLVM IR translation that nerve's pipelines produce or consume.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers nerve's passes and pipelines and the upstream passes, so each
/// stage of a pipeline can also be run alone.
void registerAllPasses();

} // namespace nerve

#endif // NERVE_INITALL_H
