//===- DeferredKernels.h - kernels generated at their first launch -*- C++ -*-===//
//
// With CompileOptions::lazyKernels, a compile for CUDA stops each
// gpu.module before its own passes and hands the host code the module
// (cuda::kDeferredDeviceCodePrefix, then its bytecode) in place of PTX; the runtime
// asks generateDeferredPTX for the PTX at the module's first load. A spec
// that compiles to a dozen alternatives of which a run launches two then
// generates two.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_API_DEFERREDKERNELS_H
#define NERVE_LIB_API_DEFERREDKERNELS_H

#include "KernelCache.h"

#include "nerve/Status.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nerve {

/// `module` (its device passes not run) as deferred device code: the
/// prefix, then the module's MLIR bytecode in base64.
std::string deferDeviceCode(mlir::gpu::GPUModuleOp module);

/// The PTX of deferred device code: the module's device passes and its
/// serialisation, as an eager compile runs them, in a context of its own.
Result<std::string> generateDeferredPTX(const char *deferred);

/// All of `code`'s PTX, one binary after another: deferred modules'
/// generated now (or taken from their background generation); a module
/// whose generation fails contributes a comment saying why.
std::string generatedPTX(const DeviceCode &code);

/// Registers the runtime's generator of deferred device code (once): it
/// waits for a background generation of the same text when one was started
/// (BackgroundGenerations), else runs generateDeferredPTX.
void registerDeferredPTXGenerator();

/// The deferred modules of a compiled module, generated on the compile
/// threads from the moment it is loaded: a first launch then waits for its
/// module's PTX (or finds it ready) instead of generating it alone, and the
/// modules a launch needs together are generated at once. Keyed by the
/// texts the host code points to; a generation outlives its module safely
/// (it holds its own copy of the text).
struct DeferredGeneration;
class BackgroundGenerations {
public:
  BackgroundGenerations() = default;
  BackgroundGenerations(const BackgroundGenerations &) = delete;
  BackgroundGenerations &operator=(const BackgroundGenerations &) = delete;
  ~BackgroundGenerations();
  /// Starts generating `code`'s deferred modules (its strings must stay
  /// where they are while this object lives).
  void start(const DeviceCode &code);
  /// Once every module is generated, calls `then` (on a compile thread)
  /// with the device code as PTX; not if one failed. compile() stores it in
  /// the disk cache, so that a later process loads PTX, not deferred code.
  void whenGenerated(std::function<void(const DeviceCode &)> then);

private:
  std::vector<const char *> keys;
  /// Each module, by binary: deferred ones generating, the others done.
  std::vector<std::pair<std::string, std::shared_ptr<DeferredGeneration>>> modules;
};

} // namespace nerve

#endif // NERVE_LIB_API_DEFERREDKERNELS_H
