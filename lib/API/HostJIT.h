//===- HostJIT.h - loading host objects into the process ---------*- C++ -*-===//
//
// One ORC JIT per process links the host objects of compiled modules, each
// into a JITDylib of its own, so loading a module is linking one small
// object: no translation, no code generation. The runtime functions the
// objects call (nerve's mgpu* over the Driver API, its host helpers) and the
// process's own symbols (libm, libc) resolve at link time.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_API_HOSTJIT_H
#define NERVE_LIB_API_HOSTJIT_H

#include "nerve/Status.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace llvm::orc {
class JITDylib;
} // namespace llvm::orc

namespace nerve {

/// A host object linked into the process. Construction runs its
/// `_nerve_init` (which loads the device code); destruction runs
/// `_nerve_fini` and unlinks it.
class LoadedHost {
public:
  using PackedFn = void (*)(void **);

  /// The PTX of a gpu.binary, by the binary's name. The text must outlive
  /// the LoadedHost (the runtime loads a module at its first launch).
  using PTXSymbols = std::vector<std::pair<std::string, const char *>>;

  /// Links `object`, defining the PTX symbols it refers to from
  /// `ptxSymbols`, and looks up the packed entry point of each of
  /// `entries`; fails with a message (nothing stays linked then).
  static Result<std::unique_ptr<LoadedHost>> load(const std::string &object,
                                                  const std::vector<std::string> &entries,
                                                  const PTXSymbols &ptxSymbols);
  ~LoadedHost();

  /// Runs `_nerve_init`; its failures (the driver rejecting the device code)
  /// are reported by the runtime, see cuda::takeModuleLoads.
  void initialize();

  /// The packed entry points, in the order of `entries`.
  const std::vector<PackedFn> &entries() const { return entries_; }

private:
  LoadedHost() = default;
  llvm::orc::JITDylib *dylib_ = nullptr;
  void (*init_)() = nullptr;
  void (*fini_)() = nullptr;
  bool initialized_ = false;
  std::vector<PackedFn> entries_;
};

} // namespace nerve

#endif // NERVE_LIB_API_HOSTJIT_H
