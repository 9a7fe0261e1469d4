//===- HostJIT.cpp - loading host objects into the process --------------===//

#include "HostJIT.h"
#include "HostObject.h"

#include "nerve/Runtime/CpuThreads.h"
#include "nerve/Runtime/GpuRuntime.h"
#include "nerve/Runtime/HostSymbols.h"

#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <atomic>
#include <mutex>

using namespace nerve;

namespace {
/// The JIT only links objects: asked to compile IR, it refuses. (Leaving
/// LLJIT's own compiler in would build a TargetMachine at start-up, most of
/// a warm start's time.)
class NoIRCompiler : public llvm::orc::IRCompileLayer::IRCompiler {
public:
  NoIRCompiler() : IRCompiler(llvm::orc::IRSymbolMapper::ManglingOptions()) {}
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module &) override {
    return llvm::make_error<llvm::StringError>("nerve's host JIT links objects only",
                                               llvm::inconvertibleErrorCode());
  }
};

/// The process's JIT, created on first use.
struct ProcessJIT {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::string error;
};

ProcessJIT &processJIT() {
  static ProcessJIT *instance = [] {
    auto *p = new ProcessJIT();
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::Triple triple(llvm::sys::getProcessTriple());
    auto jit =
        llvm::orc::LLJITBuilder()
            .setJITTargetMachineBuilder(llvm::orc::JITTargetMachineBuilder(triple))
            .setDataLayout(llvm::DataLayout(triple.computeDataLayout()))
            .setCompileFunctionCreator(
                [](llvm::orc::JITTargetMachineBuilder)
                    -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
                  return std::make_unique<NoIRCompiler>();
                })
            // Objects come without initialisers (HostObject.h): no platform.
            .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
            .create();
    if (!jit)
      p->error = "cannot start the host JIT: " + llvm::toString(jit.takeError());
    else
      p->jit = std::move(*jit);
    return p;
  }();
  return *instance;
}

/// nerve's runtime functions and the module's device code, as JIT symbols.
llvm::orc::SymbolMap moduleSymbols(llvm::orc::ExecutionSession &session,
                                   const LoadedHost::PTXSymbols &ptxSymbols) {
  llvm::orc::SymbolMap map;
  llvm::orc::MangleAndInterner mangle(session, processJIT().jit->getDataLayout());
  auto define = [&](const std::string &name, const void *address) {
    map[mangle(name)] = {llvm::orc::ExecutorAddr::fromPtr(address), llvm::JITSymbolFlags::Exported};
  };
  for (auto [name, address] : getHostSymbols())
    define(name, address);
  for (auto [name, address] : cpu::openMPSymbols())
    define(name, address);
  for (auto [name, address] : cuda::getMgpuSymbols())
    define(name, address);
  for (const auto &[binary, ptx] : ptxSymbols)
    define(ptxSymbol(binary), ptx);
  return map;
}
} // namespace

Result<std::unique_ptr<LoadedHost>> LoadedHost::load(const std::string &object,
                                                     const std::vector<std::string> &entries,
                                                     const PTXSymbols &ptxSymbols) {
  ProcessJIT &p = processJIT();
  if (!p.jit)
    return Status::error(p.error);
  llvm::orc::LLJIT &jit = *p.jit;
  static std::atomic<uint64_t> counter{0};
  auto dylib = jit.createJITDylib("nerve-module-" + std::to_string(counter++));
  if (!dylib)
    return Status::error("cannot create a JIT library: " + llvm::toString(dylib.takeError()));

  std::unique_ptr<LoadedHost> host(new LoadedHost());
  host->dylib_ = &*dylib;
  auto fail = [&](const std::string &what, llvm::Error e) -> Status {
    return Status::error(what + ": " + llvm::toString(std::move(e)));
  };
  if (llvm::Error e = dylib->define(
          llvm::orc::absoluteSymbols(moduleSymbols(jit.getExecutionSession(), ptxSymbols))))
    return fail("cannot define nerve's runtime for the host code", std::move(e));
  if (llvm::Error e = jit.addObjectFile(
          *dylib, llvm::MemoryBuffer::getMemBufferCopy(object, "nerve-host.o")))
    return fail("cannot link the host code", std::move(e));

  auto lookup = [&](const std::string &symbol) -> Result<void *> {
    auto address = jit.lookup(*dylib, symbol);
    if (!address)
      return fail("linking the host code failed (" + symbol + ")", address.takeError());
    return address->toPtr<void *>();
  };
  Result<void *> init = lookup(kHostInitSymbol);
  if (!init)
    return init.status();
  Result<void *> fini = lookup(kHostFiniSymbol);
  if (!fini)
    return fini.status();
  host->init_ = reinterpret_cast<void (*)()>(*init);
  host->fini_ = reinterpret_cast<void (*)()>(*fini);
  for (const std::string &entry : entries) {
    Result<void *> fn = lookup(packedEntrySymbol(entry));
    if (!fn)
      return Status::error("kernel @" + entry + " has no entry point in the host code");
    host->entries_.push_back(reinterpret_cast<PackedFn>(*fn));
  }
  return host;
}

void LoadedHost::initialize() {
  if (initialized_ || !init_)
    return;
  initialized_ = true;
  init_();
}

LoadedHost::~LoadedHost() {
  if (initialized_ && fini_)
    fini_();
  if (dylib_)
    if (llvm::Error e = processJIT().jit->getExecutionSession().removeJITDylib(*dylib_))
      llvm::consumeError(std::move(e)); // nothing a destructor can report
}
