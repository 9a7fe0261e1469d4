//===- ModuleImpl.h - what a compiled module holds ---------------*- C++ -*-===//

#ifndef NERVE_LIB_API_MODULEIMPL_H
#define NERVE_LIB_API_MODULEIMPL_H

#include "nerve/nerve.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <array>
#include <mutex>

namespace nerve {

struct Module::Impl {
  Target target = Target::CPU;
  std::vector<EntryInfo> entries;
  /// The packed host entry point (`_mlir__mlir_ciface_<name>`) per entry.
  std::vector<void (*)(void **)> packed;
  std::string ptx;
  std::vector<std::pair<std::string, double>> times;

  std::unique_ptr<mlir::MLIRContext> context;
  /// The host code in the LLVM dialect, kept to print LLVM IR on request.
  mlir::OwningOpRef<mlir::ModuleOp> hostModule;
  std::unique_ptr<mlir::ExecutionEngine> engine;

  mutable std::once_flag llvmIROnce;
  mutable std::string llvmIR;
};

/// Checks `args` against `entry` and builds the memref descriptors and the
/// pointer array the packed entry point takes. Tensor data pointers are
/// used as they are (host or device memory alike).
class ArgPacker {
public:
  Status pack(const EntryInfo &entry, const std::vector<Arg> &args);
  void **pointers() { return pointers_.data(); }

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
