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
#include "nerve/Runtime/DeviceMirror.h"
#include "nerve/Runtime/GpuRuntime.h"
#include "nerve/Runtime/HostSymbols.h"
#include "nerve/Pipelines/Pipelines.h"
#include "nerve/Support/Version.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
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

namespace {
/// Times each pass as it runs, for Module::compileTimes().
class PassTimer : public PassInstrumentation {
public:
  explicit PassTimer(std::vector<std::pair<std::string, double>> &times) : times(times) {}
  void runBeforePass(Pass *, Operation *) override {
    starts.push_back(std::chrono::steady_clock::now());
  }
  void runAfterPass(Pass *pass, Operation *) override { record(pass); }
  void runAfterPassFailed(Pass *pass, Operation *) override { record(pass); }

private:
  void record(Pass *pass) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                          starts.back())
                    .count();
    starts.pop_back();
    // Nested pipelines report their passes themselves.
    if (!pass->getName().ends_with("OpToOpPassAdaptor"))
      times.push_back({pass->getArgument().empty() ? pass->getName().str()
                                                   : pass->getArgument().str(),
                       ms});
  }
  std::vector<std::pair<std::string, double>> &times;
  std::vector<std::chrono::steady_clock::time_point> starts;
};

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}
} // namespace

/// The target `options` resolve to.
static Result<Target> resolveTarget(const CompileOptions &options, Target fallback) {
  Target target = options.target;
  if (target == Target::Auto)
    target = fallback;
  return target;
}

/// A parsed and lowered spec: host code in the LLVM dialect (and PTX for
/// CUDA), with the kernel signatures it started from.
struct LoweredSpec {
  Target target = Target::CPU;
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  std::vector<EntryInfo> entries;
  std::string ptx;
  std::vector<std::pair<std::string, double>> times;
};

static Result<LoweredSpec> lowerSpec(const std::string &spec, const CompileOptions &options,
                                     Target target) {
  if (options.optLevel < 0 || options.optLevel > 3)
    return Status::error("opt level " + std::to_string(options.optLevel) +
                         " is out of range 0-3");
  if (options.neuronTimeBlock < 0 || options.neuronTimeBlock > 64)
    return Status::error("neuron time block " + std::to_string(options.neuronTimeBlock) +
                         " is out of range 0-64 (0: automatic)");
  NerveToPTXOptions ptxOptions;
  ptxOptions.neuronTimeBlock = options.neuronTimeBlock;
  NerveToCPUOptions cpuOptions;
  cpuOptions.neuronTimeBlock = options.neuronTimeBlock;
  if (target == Target::CUDA) {
    static const std::pair<const char *, GpuChip> chips[] = {
        {"sm_80", GpuChip::sm_80}, {"sm_89", GpuChip::sm_89},
        {"sm_90", GpuChip::sm_90}, {"sm_100", GpuChip::sm_100}};
    auto it = llvm::find_if(chips, [&](auto &c) { return options.chip == c.first; });
    if (it == std::end(chips))
      return Status::error("unknown chip '" + options.chip +
                           "'; nerve compiles for sm_80, sm_89, sm_90 and sm_100");
    ptxOptions.chip = it->second;
    ptxOptions.optLevel = options.optLevel;
    ptxOptions.fastMath = options.fastMath;
    ptxOptions.libdevice = options.libdevice;
  }

  LoweredSpec lowered;
  lowered.target = target;
  lowered.context = std::make_unique<MLIRContext>(nerveRegistry(),
                                                  MLIRContext::Threading::DISABLED);
  MLIRContext *ctx = lowered.context.get();
  // Messages name the user's ops, without dumping the IR they sit in.
  ctx->printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(spec, options.sourceName),
                               llvm::SMLoc());
  DiagnosticCollector diags(sourceMgr, ctx);

  auto start = std::chrono::steady_clock::now();
  lowered.module = parseSourceFile<ModuleOp>(sourceMgr, ctx);
  lowered.times.push_back({"parse and verify", millisecondsSince(start)});
  if (!lowered.module)
    return failWith(diags, "the spec does not parse");
  lowered.entries = collectEntries(*lowered.module);
  if (lowered.entries.empty())
    return Status::error("the spec has no tdim.kernel to compile");

  PassManager pm(ctx);
  pm.addInstrumentation(std::make_unique<PassTimer>(lowered.times));
  if (target == Target::CUDA)
    buildNerveToPTXPipeline(pm, ptxOptions);
  else
    buildNerveToCPUPipeline(pm, cpuOptions);
  if (failed(pm.run(*lowered.module)))
    return failWith(diags, "lowering the spec failed");
  lowered.module->walk([&](gpu::BinaryOp binary) {
    for (Attribute a : binary.getObjects())
      lowered.ptx += llvm::cast<gpu::ObjectAttr>(a).getObject().getValue().str();
  });
  return lowered;
}

static std::string printLLVMIR(ModuleOp module) {
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> m = translateModuleToLLVMIR(module, llvmContext, "nerve");
  if (!m)
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  m->print(os, nullptr);
  return text;
}

Result<std::string> nerve::emit(const std::string &spec, const CompileOptions &options,
                                Emit what) {
  Result<Target> target =
      resolveTarget(options, what == Emit::PTX ? Target::CUDA : Target::CPU);
  if (what == Emit::PTX && *target != Target::CUDA)
    return Status::error("PTX is emitted for the CUDA target only");
  Result<LoweredSpec> lowered = lowerSpec(spec, options, *target);
  if (!lowered)
    return lowered.status();
  if (what == Emit::PTX)
    return lowered->ptx;
  std::string ir = printLLVMIR(*lowered->module);
  if (ir.empty())
    return Status::error("translating the host code to LLVM IR failed");
  return ir;
}

Result<std::shared_ptr<Module>> nerve::compile(const std::string &spec,
                                               const CompileOptions &options) {
  std::string why;
  bool haveGpu = options.target != Target::CPU && cudaAvailable(&why);
  Target target = *resolveTarget(options, haveGpu ? Target::CUDA : Target::CPU);
  if (target == Target::CUDA && !haveGpu)
    return Status::error("the CUDA target needs a GPU: " + why);
  Result<LoweredSpec> lowered = lowerSpec(spec, options, target);
  if (!lowered)
    return lowered.status();

  auto impl = std::make_unique<Module::Impl>();
  impl->target = target;
  impl->entries = std::move(lowered->entries);
  impl->ptx = std::move(lowered->ptx);
  impl->times = std::move(lowered->times);
  impl->context = std::move(lowered->context);
  OwningOpRef<ModuleOp> module = std::move(lowered->module);

  initializeLLVMTargets();
  auto start = std::chrono::steady_clock::now();
  ExecutionEngineOptions engineOptions;
  // For CUDA the host code only unpacks arguments and launches kernels:
  // optimising it costs compile time and saves nothing measurable.
  unsigned hostOptLevel = target == Target::CUDA ? 0 : static_cast<unsigned>(options.optLevel);
  auto transformer = makeOptimizingTransformer(hostOptLevel, /*sizeLevel=*/0,
                                               /*targetMachine=*/nullptr);
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = static_cast<llvm::CodeGenOptLevel>(hostOptLevel);
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
    auto add = [&](const std::vector<std::pair<const char *, void *>> &symbols) {
      for (auto [name, address] : symbols)
        map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                               llvm::JITSymbolFlags::Exported};
    };
    add(getHostSymbols());
    add(cuda::getMgpuSymbols());
    return map;
  });
  for (const EntryInfo &entry : impl->entries) {
    auto fn = impl->engine->lookupPacked("_mlir_ciface_" + entry.name);
    if (!fn) {
      llvm::consumeError(fn.takeError());
      return Status::error("kernel @" + entry.name + " has no entry point after lowering");
    }
    impl->packed.push_back(*fn);
  }
  impl->times.push_back({"JIT host code", millisecondsSince(start)});
  // Global constructors load the device code (mgpuModuleLoadJIT): the
  // driver's PTX JIT runs here, and its failure is reported here.
  (void)cuda::takeModuleLoadStatus(); // drop what an earlier compile left
  cuda::takeModuleLoadMilliseconds();
  impl->engine->initialize();
  if (Status loaded = cuda::takeModuleLoadStatus(); !loaded)
    return loaded;
  if (target == Target::CUDA)
    impl->times.push_back({"load module (driver PTX JIT)", cuda::takeModuleLoadMilliseconds()});
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
  CompileOptions named = options;
  named.sourceName = path;
  return compile(text.str(), named);
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
  std::call_once(impl_->llvmIROnce, [&] { impl_->llvmIR = printLLVMIR(*impl_->hostModule); });
  return impl_->llvmIR;
}

const std::vector<std::pair<std::string, double>> &Module::compileTimes() const {
  return impl_->times;
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
  if (impl_->target == Target::CPU) {
    impl_->packed[index](packer.pointers());
    return Status();
  }
  Result<cuda::Device *> device = cuda::Device::get();
  if (!device)
    return device.status();
  if (Status s = (*device)->makeCurrent(); !s)
    return s;
  cuda::LaunchScope scope(static_cast<cuda::CUstream>(stream), /*synchronous=*/false);
  impl_->packed[index](packer.pointers());
  return scope.status();
}

Status Module::run(const std::string &entryName, const std::vector<Arg> &args) const {
  if (impl_->target == Target::CPU)
    return launch(entryName, args);
  const EntryInfo *entry = findEntry(entryName);
  if (!entry)
    return Status::error("the module has no kernel @" + entryName);
  Result<std::unique_ptr<DeviceMirror>> mirror = DeviceMirror::create(*entry, args);
  if (!mirror)
    return mirror.status();
  if (Status s = launch(entryName, (*mirror)->args(), nullptr); !s)
    return s;
  return (*mirror)->copyOutputs();
}

bool nerve::cudaAvailable(std::string *why) {
  Result<cuda::Device *> device = cuda::Device::get();
  if (!device && why)
    *why = device.message();
  return device.ok();
}
