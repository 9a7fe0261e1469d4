//===- Lowering.h - spec text to lowered host and device code -----*- C++ -*-===//
//
// The compile path's first half, shared by compile() and emit(): parse and
// verify a spec, collect its kernel signatures, run nerve-to-cpu or
// nerve-to-ptx, and (for compile) emit the host object. For CUDA the PTX is
// generated on a thread of its own while the host half runs.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_API_LOWERING_H
#define NERVE_LIB_API_LOWERING_H

#include "KernelCache.h"

#include "nerve/nerve.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace nerve {

/// Every dialect a spec (and its lowering) can meet, registered once per
/// process.
const mlir::DialectRegistry &specDialects();

/// The threads every compile shares (MLIR's passes over sibling ops, the
/// gpu.modules' code generation, deferred kernels generated in the
/// background), started on first use; null on a single core.
llvm::ThreadPoolInterface *compileThreads();

/// Collects MLIR's diagnostics into a string while alive.
class DiagnosticCollector {
public:
  DiagnosticCollector(llvm::SourceMgr &sourceMgr, mlir::MLIRContext *context);
  /// What was collected, without trailing newlines.
  std::string take();
  /// An error with what was collected, or `fallback` if nothing was.
  Status fail(const std::string &fallback);

private:
  std::string text;
  llvm::raw_string_ostream stream;
  mlir::SourceMgrDiagnosticHandler handler;
};

/// A parsed and lowered spec: host code in the LLVM dialect (and PTX for
/// CUDA), with the kernel signatures it started from.
struct LoweredSpec {
  Target target = Target::CPU;
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<EntryInfo> entries;
  DeviceCode deviceCode; ///< CUDA only
  /// The host object, when asked for.
  std::string hostObject;
  std::vector<std::pair<std::string, double>> times;
};

/// Parses and lowers `spec`; with `wantHostObject`, also emits the host
/// object. For CUDA the device code's PTX generation runs on a thread of its
/// own while the host code is lowered and compiled: neither needs the
/// other's result.
Result<LoweredSpec> lowerSpec(const std::string &spec, const CompileOptions &options,
                              Target target, bool wantHostObject);

/// Parses and verifies `spec` as lowerSpec does (options.entry and
/// options.staticSizes applied), lowering nothing: its kernels' signatures.
Result<std::vector<EntryInfo>> checkSpec(const std::string &spec, const CompileOptions &options);

/// Milliseconds from `start` to now, for Module::compileTimes().
inline double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace nerve

#endif // NERVE_LIB_API_LOWERING_H
