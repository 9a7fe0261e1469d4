//===- GpuRuntime.h - what JIT-compiled host code calls for the GPU -*- C++ -*-===//
//
// MLIR's host lowering (gpu-to-llvm) turns module loads, allocations and
// kernel launches into calls to `mgpu*` functions. nerve provides them over
// its Driver API wrapper, so the host side of a kernel is real compiled
// code and nerve's runtime only decides the policy:
//
// - every call of a kernel entry runs on one stream, the caller's: the
//   "stream" the code creates is the caller's and is never destroyed, and
//   the synchronisation at the end happens only when asked for;
// - a failing driver call cannot return an error through compiled code, so
//   the first failure is recorded, later launches of the same call are
//   skipped, and the caller gets the error as a Status.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_RUNTIME_GPURUNTIME_H
#define NERVE_RUNTIME_GPURUNTIME_H

#include "nerve/Runtime/CudaDriver.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nerve::cuda {

/// While alive, the mgpu* calls of this thread launch on `stream` and
/// synchronise at the end only when `synchronous`.
class LaunchScope {
public:
  LaunchScope(CUstream stream, bool synchronous);
  ~LaunchScope();
  /// The first error a runtime call of this scope met.
  Status status() const;

private:
  bool previousActive;
  CUstream previousStream;
  bool previousSynchronous;
};

/// Kernels' modules load lazily: the host code's global constructors
/// (mgpuModuleLoadJIT) register them, and the driver JIT-compiles each at
/// the first launch of its kernel. With `now`, the next module registered on
/// this thread loads at once instead, so that compile finds out whether the
/// driver takes the PTX at all; false cancels that.
void loadNextModuleNow(bool now = true);

/// What loading modules on this thread came to.
struct ModuleLoads {
  /// Errors recorded while loading modules at once (loadNextModuleNow).
  Status status;
  /// Milliseconds the driver spent loading modules (its PTX JIT).
  double milliseconds = 0;
  /// The optimization level (ptxas -O0 to -O4) the driver was asked to
  /// compile the last module loaded at; 0 if none was loaded.
  int level = 0;
};

/// What loading modules on this thread came to since the last call,
/// cleared by the call.
ModuleLoads takeModuleLoads();

/// How device code generated at its first launch reads until then: these
/// bytes, then what the generator takes (a compile with lazyKernels hands
/// the host code such text in place of PTX).
constexpr const char *kDeferredDeviceCodePrefix = "// nerve: generated at the first launch\n";

/// Whether `text` is device code to generate at its first launch.
bool isDeferredDeviceCode(const char *text);

/// What turns deferred device code into PTX (nerve's compiler, which sets
/// it): PTX, or an error.
using DeferredPTXGenerator = Result<std::string> (*)(const char *deferred);
void setDeferredPTXGenerator(DeferredPTXGenerator generator);

/// The mgpu* functions, for the ExecutionEngine's symbol table.
std::vector<std::pair<const char *, void *>> getMgpuSymbols();

} // namespace nerve::cuda

#endif // NERVE_RUNTIME_GPURUNTIME_H
