//===- Compile.cpp - spec text to a loaded module -----------------------===//
//
// parse -> verify -> collect kernel signatures -> nerve-to-cpu / nerve-to-ptx
// -> JIT the host code (MLIR's ExecutionEngine) -> look up the entry points.
// Every failure is returned with the diagnostics MLIR printed, never
// aborting.
//
//===----------------------------------------------------------------------===//

#include "Entries.h"
#include "ModuleImpl.h"

#include "nerve/InitAll.h"
#include "nerve/Runtime/HostSymbols.h"
#include "nerve/Pipelines/Pipelines.h"
#include "nerve/Support/Version.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <sstream>

using namespace mlir;
using namespace nerve;

const char *nerve::toString(Target target) {
  switch (target) {
  case Target::Auto: return "auto";
  case Target::CPU: return "cpu";
  case Target::CUDA: return "cuda";
  }
  return "?";
}

unsigned EntryInfo::numInputs() const {
  unsigned n = 0;
  for (const ArgInfo &a : args)
    n += !a.isOutput;
  return n;
}

Arg Arg::tensor(void *data, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  Arg a;
  a.kind = Kind::Tensor;
  a.data = data;
  a.sizes = std::move(sizes);
  a.strides = std::move(strides);
  return a;
}

Arg Arg::scalar(double value) {
  Arg a;
  a.kind = Kind::Float;
  a.floatValue = value;
  return a;
}

Arg Arg::scalarInt(int64_t value) {
  Arg a;
  a.kind = Kind::Int;
  a.intValue = value;
  return a;
}

std::string nerve::versionString() { return getFullVersion(); }

/// Everything a nerve context can meet, registered once per process.
static const DialectRegistry &nerveRegistry() {
  static const DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    registerAllDialects(*r);
    return r;
  }();
  return *registry;
}

static void initializeLLVMTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

namespace {
/// Collects MLIR diagnostics into a string while alive.
class DiagnosticCollector {
public:
  DiagnosticCollector(llvm::SourceMgr &sourceMgr, MLIRContext *context)
      : stream(text), handler(sourceMgr, context, stream) {}
  std::string take() {
    stream.flush();
    std::string t = text;
    while (!t.empty() && t.back() == '\n')
      t.pop_back();
    return t;
  }

private:
  std::string text;
  llvm::raw_string_ostream stream;
  SourceMgrDiagnosticHandler handler;
};
} // namespace

static Status failWith(DiagnosticCollector &diags, const std::string &fallback) {
  std::string text = diags.take();
  return Status::error(text.empty() ? fallback : text);
}

Result<std::shared_ptr<Module>> nerve::compile(const std::string &spec,
                                               const CompileOptions &options) {
  if (options.optLevel < 0 || options.optLevel > 3)
    return Status::error("opt level " + std::to_string(options.optLevel) +
                         " is out of range 0-3");
  Target target = options.target;
  if (target == Target::Auto)
    target = cudaAvailable() ? Target::CUDA : Target::CPU;
  if (target == Target::CUDA)
    return Status::error("the CUDA target is not available in this build");

  auto impl = std::make_unique<Module::Impl>();
  impl->target = target;
  impl->context = std::make_unique<MLIRContext>(nerveRegistry(),
                                                MLIRContext::Threading::DISABLED);
  MLIRContext *ctx = impl->context.get();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(spec, "spec"),
                               llvm::SMLoc());
  DiagnosticCollector diags(sourceMgr, ctx);

  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, ctx);
  if (!module)
    return failWith(diags, "the spec does not parse");
  impl->entries = collectEntries(*module);
  if (impl->entries.empty())
    return Status::error("the spec has no tdim.kernel to compile");

  PassManager pm(ctx);
  buildNerveToCPUPipeline(pm);
  if (failed(pm.run(*module)))
    return failWith(diags, "lowering the spec failed");

  initializeLLVMTargets();
  ExecutionEngineOptions engineOptions;
  auto transformer = makeOptimizingTransformer(options.optLevel, /*sizeLevel=*/0,
                                               /*targetMachine=*/nullptr);
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = static_cast<llvm::CodeGenOptLevel>(options.optLevel);
  engineOptions.enableGDBNotificationListener = false;
  engineOptions.enablePerfNotificationListener = false;
  auto engine = ExecutionEngine::create(*module, engineOptions);
  if (!engine) {
    std::string message;
    llvm::raw_string_ostream os(message);
    os << "JIT compilation of the host code failed: " << engine.takeError();
    return Status::error(message);
  }
  impl->engine = std::move(*engine);
  impl->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (auto [name, address] : getHostSymbols())
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                             llvm::JITSymbolFlags::Exported};
    return map;
  });
  impl->engine->initialize();
  for (const EntryInfo &entry : impl->entries) {
    auto fn = impl->engine->lookupPacked("_mlir_ciface_" + entry.name);
    if (!fn) {
      llvm::consumeError(fn.takeError());
      return Status::error("kernel @" + entry.name + " has no entry point after lowering");
    }
    impl->packed.push_back(*fn);
  }
  impl->hostModule = std::move(module);
  struct Access : Module {
    explicit Access(std::unique_ptr<Impl> i) : Module(std::move(i)) {}
  };
  return std::shared_ptr<Module>(std::make_shared<Access>(std::move(impl)));
}

Result<std::shared_ptr<Module>> nerve::compileFile(const std::string &path,
                                                   const CompileOptions &options) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(path + ": cannot open the spec");
  std::ostringstream text;
  text << in.rdbuf();
  return compile(text.str(), options);
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

Module::Module(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Module::~Module() = default;

Target Module::target() const { return impl_->target; }
const std::vector<EntryInfo> &Module::entries() const { return impl_->entries; }
const std::string &Module::ptx() const { return impl_->ptx; }

const EntryInfo *Module::findEntry(const std::string &name) const {
  for (const EntryInfo &e : impl_->entries)
    if (e.name == name)
      return &e;
  return nullptr;
}

const std::string &Module::llvmIR() const {
  std::call_once(impl_->llvmIROnce, [&] {
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> m =
        translateModuleToLLVMIR(*impl_->hostModule, llvmContext, "nerve");
    if (!m)
      return;
    llvm::raw_string_ostream os(impl_->llvmIR);
    m->print(os, nullptr);
  });
  return impl_->llvmIR;
}

Status Module::launch(const std::string &entryName, const std::vector<Arg> &args,
                      void *stream) const {
  const EntryInfo *entry = findEntry(entryName);
  if (!entry)
    return Status::error("the module has no kernel @" + entryName);
  ArgPacker packer;
  if (Status s = packer.pack(*entry, args); !s)
    return s;
  size_t index = entry - impl_->entries.data();
  impl_->packed[index](packer.pointers());
  return Status();
}

Status Module::run(const std::string &entryName, const std::vector<Arg> &args) const {
  return launch(entryName, args);
}

bool nerve::cudaAvailable(std::string *why) {
  if (why)
    *why = "this build has no CUDA runtime";
  return false;
}
