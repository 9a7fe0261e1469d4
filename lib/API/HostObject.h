//===- HostObject.h - lowered host code to a relocatable object --*- C++ -*-===//
//
// The host side of a compiled spec (argument unpacking, grid computation,
// kernel launches; the whole kernel for the CPU target) becomes one ELF
// object for the running machine. Objects are what the kernel cache stores:
// loading one (HostJIT) skips translation and code generation.
//
// The object is self-describing through three conventions:
//   - `_nerve_packed_<entry>(void **args)` calls the entry's C interface
//     with its arguments unpacked from an array of pointers;
//   - `_nerve_init()` / `_nerve_fini()` run what the module's global
//     constructors and destructors would (loading and unloading the device
//     code), so loading needs no platform support for .init_array;
//   - `_nerve_ptx_<binary>`, undefined in the object, is the PTX of each
//     gpu.binary, defined by whoever links it (HostJIT).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_API_HOSTOBJECT_H
#define NERVE_LIB_API_HOSTOBJECT_H

#include "nerve/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace nerve {

inline constexpr const char *kHostInitSymbol = "_nerve_init";
inline constexpr const char *kHostFiniSymbol = "_nerve_fini";
inline std::string packedEntrySymbol(const std::string &entry) {
  return "_nerve_packed_" + entry;
}
/// The device code of gpu.binary @`binary`: a NUL-terminated PTX text the
/// host object refers to and the loader defines (HostJIT), so that the
/// object neither carries the PTX nor waits for it to be generated.
inline std::string ptxSymbol(const std::string &binary) { return "_nerve_ptx_" + binary; }

/// Translates `module` (LLVM dialect) to LLVM IR, optimises it at
/// `optLevel` and emits an object for the host CPU whose packed entry points
/// are those of `entries`. The contents of the module's gpu.binary ops are
/// left out: the object refers to each one's PTX by its ptxSymbol.
Result<std::string> emitHostObject(mlir::ModuleOp module, const std::vector<std::string> &entries,
                                   unsigned optLevel);

/// Registers the host CPU's LLVM target, once per process.
void initializeHostTarget();

/// The host CPU's name and features: objects are compiled for them, so they
/// are part of every cache key.
const std::string &hostCPUDescription();

} // namespace nerve

#endif // NERVE_LIB_API_HOSTOBJECT_H
