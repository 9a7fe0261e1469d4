//===- ModuleImpl.h - what a compiled module holds ---------------*- C++ -*-===//

#ifndef NERVE_LIB_API_MODULEIMPL_H
#define NERVE_LIB_API_MODULEIMPL_H

#include "nerve/nerve.h"

#include "DeferredKernels.h"
#include "HostJIT.h"
#include "KernelCache.h"

#include <array>
#include <future>
#include <map>
#include <mutex>

namespace nerve {

/// What a module that compiles at its launches (specializeSizes) keeps:
/// a compile per kernel and set of sizes.
struct SizeSpecializations {
  std::mutex mutex;
  /// "entry;dim=size;..." (or "entry;dynamic") -> the module compiled so,
  /// or being compiled (the lock is not held while compiling).
  std::map<std::string, std::shared_future<Result<std::shared_ptr<Module>>>> modules;
  /// Per kernel, the sets of sizes that got a compile of their own.
  std::map<std::string, int> counts;
};

struct Module::Impl {
  Target target = Target::CPU;
  std::vector<EntryInfo> entries;
  /// The linked host code points into these PTX texts, so they are
  /// declared before (and outlive) `host`.
  DeviceCode deviceCode;
  /// deviceCode's deferred modules (lazyKernels), generated in the
  /// background; declared after it, so it goes first.
  BackgroundGenerations generations;
  std::vector<std::pair<std::string, double>> times;
  /// The linked host code: a packed entry point per entry.
  std::unique_ptr<LoadedHost> host;
  /// What the module was compiled from, to print its LLVM IR on request.
  std::string spec;
  CompileOptions options;

  /// Set when the module compiles at its launches (specializeSizes).
  std::unique_ptr<SizeSpecializations> specializations;
  /// The module compiled for `entry` at the sizes `args` bind, compiled
  /// now if it was not yet (specializations set).
  Result<std::shared_ptr<Module>> specializationFor(const EntryInfo &entry,
                                                    const std::vector<Arg> &args);

  mutable std::once_flag llvmIROnce;
  mutable std::string llvmIR;
  /// All of the PTX, joined at the first Module::ptx().
  mutable std::once_flag ptxOnce;
  mutable std::string ptx;
};

/// A module holding `impl`.
std::shared_ptr<Module> makeModule(std::unique_ptr<Module::Impl> impl);

/// What compile() returns with specializeSizes: the spec parsed and
/// verified, each kernel compiled at its launches (SizeSpecialization.cpp).
Result<std::shared_ptr<Module>> specializingModule(const std::string &spec,
                                                   const CompileOptions &options, Target target);

/// Checks `args` against `entry` and builds the memref descriptors and the
/// pointer array the packed entry point takes. Tensor data pointers are
/// used as they are (host or device memory alike).
class ArgPacker {
public:
  /// Whether a tensor's data pointer must be set now, or comes at launch
  /// (a PreparedLaunch).
  enum class Data { Now, AtLaunch };
  Status pack(const EntryInfo &entry, const std::vector<Arg> &args, Data data = Data::Now);
  void **pointers() { return pointers_.data(); }
  /// Per tensor argument, its memref descriptor; per scalar, its bytes.
  const std::vector<std::vector<int64_t>> &descriptors() const { return descriptors_; }
  const std::vector<std::array<uint8_t, 8>> &scalars() const { return scalars_; }

private:
  std::vector<std::vector<int64_t>> descriptors_;
  std::vector<void *> descriptorPtrs_;
  std::vector<std::array<uint8_t, 8>> scalars_;
  std::vector<void *> pointers_;
};

/// The sizes of every dimension bound by `args` (name -> size), checking
/// that they agree; fails with a message naming the arguments.
Result<std::vector<std::pair<std::string, int64_t>>>
bindDimensions(const EntryInfo &entry, const std::vector<Arg> &args);

} // namespace nerve

#endif // NERVE_LIB_API_MODULEIMPL_H
