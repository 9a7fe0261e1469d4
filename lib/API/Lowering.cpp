//===- Lowering.cpp - spec text to lowered host and device code ----------===//

#include "Lowering.h"
#include "DeferredKernels.h"
#include "Entries.h"
#include "HostObject.h"

#include "nerve/InitAll.h"
#include "nerve/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace nerve;

/// Everything a nerve context can meet, registered once per process.
const DialectRegistry &nerve::specDialects() {
  static const DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    registerAllDialects(*r);
    return r;
  }();
  return *registry;
}

DiagnosticCollector::DiagnosticCollector(llvm::SourceMgr &sourceMgr, MLIRContext *context)
    : stream(text), handler(sourceMgr, context, stream) {}

std::string DiagnosticCollector::take() {
  stream.flush();
  std::string t = text;
  while (!t.empty() && t.back() == '\n')
    t.pop_back();
  return t;
}

Status DiagnosticCollector::fail(const std::string &fallback) {
  std::string t = take();
  return Status::error(t.empty() ? fallback : t);
}


namespace {
/// Times each pass as it runs, for Module::compileTimes(). Passes on
/// sibling ops (the gpu.modules) run on several threads at once: each
/// thread keeps its own stack of start times.
class PassTimer : public PassInstrumentation {
public:
  explicit PassTimer(std::vector<std::pair<std::string, double>> &times) : times(times) {}
  void runBeforePass(Pass *, Operation *) override {
    std::lock_guard<std::mutex> lock(mutex);
    starts[std::this_thread::get_id()].push_back(std::chrono::steady_clock::now());
  }
  void runAfterPass(Pass *pass, Operation *) override { record(pass); }
  void runAfterPassFailed(Pass *pass, Operation *) override { record(pass); }

private:
  void record(Pass *pass) {
    auto now = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(mutex);
    auto &stack = starts[std::this_thread::get_id()];
    double ms = std::chrono::duration<double, std::milli>(now - stack.back()).count();
    stack.pop_back();
    // Nested pipelines report their passes themselves.
    if (!pass->getName().ends_with("OpToOpPassAdaptor"))
      times.push_back({pass->getArgument().empty() ? pass->getName().str()
                                                   : pass->getArgument().str(),
                       ms});
  }
  std::vector<std::pair<std::string, double>> &times;
  std::mutex mutex;
  std::map<std::thread::id, std::vector<std::chrono::steady_clock::time_point>> starts;
};

} // namespace

/// A forked child has none of its parent's threads: it gets a pool of its
/// own (the parent's is left alone, unusable there).
llvm::ThreadPoolInterface *nerve::compileThreads() {
  static std::mutex mutex;
  static llvm::DefaultThreadPool *pool = nullptr;
  static pid_t owner = 0;
  if (llvm::hardware_concurrency().compute_thread_count() <= 1)
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (!pool || owner != getpid()) {
    pool = new llvm::DefaultThreadPool(llvm::hardware_concurrency());
    owner = getpid();
  }
  return pool;
}

/// Joins a thread however the scope is left.
struct JoiningThread {
  std::thread thread;
  ~JoiningThread() {
    if (thread.joinable())
      thread.join();
  }
};

/// The properties of a device object that the host code reads: the
/// optimization level ("O") that upstream's gpu.binary translation passes
/// to mgpuModuleLoadJIT, and so to the driver's PTX compiler. Serializing
/// for an NVVM target records the target's level there.
static DictionaryAttr loadProperties(MLIRContext *ctx, Attribute target) {
  auto nvvm = llvm::dyn_cast<NVVM::NVVMTargetAttr>(target);
  if (!nvvm)
    return nullptr;
  Builder b(ctx);
  return b.getDictionaryAttr({b.getNamedAttr("O", b.getI32IntegerAttr(nvvm.getO()))});
}

/// The "O" property of a device object, or null.
static Attribute optLevelOf(gpu::ObjectAttr object) {
  DictionaryAttr properties = object.getProperties();
  return properties ? properties.get("O") : nullptr;
}

/// Moves `top`'s gpu.modules into a module of their own and leaves in each
/// one's place a gpu.binary with an empty object per target, loaded as the
/// serialized one will be (format and optimization level): the host passes
/// and the host object need no more than that and the binaries' names.
static OwningOpRef<ModuleOp> takeGPUModules(ModuleOp top) {
  OwningOpRef<ModuleOp> device = ModuleOp::create(top.getLoc());
  MLIRContext *ctx = top.getContext();
  for (gpu::GPUModuleOp module : llvm::to_vector(top.getOps<gpu::GPUModuleOp>())) {
    SmallVector<Attribute> placeholders;
    if (ArrayAttr targets = module.getTargetsAttr())
      for (Attribute target : targets)
        placeholders.push_back(gpu::ObjectAttr::get(ctx, target, gpu::CompilationTarget::Assembly,
                                                    StringAttr::get(ctx, ""),
                                                    loadProperties(ctx, target), nullptr));
    OpBuilder builder(module);
    gpu::BinaryOp::create(builder, module.getLoc(), module.getName(),
                          module.getOffloadingHandlerAttr(), builder.getArrayAttr(placeholders));
    module->remove();
    device->push_back(module);
  }
  return device;
}

/// Loads, on this thread, every dialect the pass managers may ask for, so
/// that pass managers running at once on two threads only look them up.
static void loadDependentDialects(MLIRContext *ctx, std::initializer_list<PassManager *> pms) {
  DialectRegistry registry;
  for (PassManager *pm : pms)
    pm->getDependentDialects(registry);
  ctx->appendDialectRegistry(registry);
  for (StringRef name : registry.getDialectNames())
    ctx->getOrLoadDialect(name);
}

/// For CUDA the host code only unpacks arguments and launches kernels:
/// optimising it costs compile time and saves nothing measurable.
static unsigned hostOptLevel(Target target, const CompileOptions &options) {
  return target == Target::CUDA ? 0 : static_cast<unsigned>(options.optLevel);
}

/// Adds the host object of `lowered`'s (host) module to it.
static Status emitHostObjectOf(LoweredSpec &lowered, const CompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> names;
  for (const EntryInfo &e : lowered.entries)
    names.push_back(e.name);
  Result<std::string> object =
      emitHostObject(*lowered.module, names, hostOptLevel(lowered.target, options));
  if (!object)
    return object.status();
  lowered.hostObject = object.take();
  lowered.times.push_back({"host code generation", millisecondsSince(start)});
  return Status();
}

/// The rest of a compile with lazyKernels: each gpu.module's text becomes
/// its device code (generated at its first launch: DeferredKernels.h), the
/// host code is lowered and compiled against the placeholders.
static Status lowerHostDeferringKernels(LoweredSpec &lowered, const CompileOptions &options,
                                        bool wantHostObject, DiagnosticCollector &diags) {
  auto start = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> device = takeGPUModules(*lowered.module);
  for (gpu::GPUModuleOp module : device->getOps<gpu::GPUModuleOp>())
    lowered.deviceCode.push_back({module.getName().str(), deferDeviceCode(module)});
  lowered.times.push_back({"device code kept for its first launch", millisecondsSince(start)});
  PassManager hostPM(lowered.context.get());
  hostPM.addInstrumentation(std::make_unique<PassTimer>(lowered.times));
  buildNerveToHostLLVMPipeline(hostPM);
  initializeHostTarget();
  if (failed(hostPM.run(*lowered.module)))
    return diags.fail("lowering the spec failed");
  if (wantHostObject)
    return emitHostObjectOf(lowered, options);
  return Status();
}

/// A context for one spec: every dialect it may meet, the compile threads.
static std::unique_ptr<MLIRContext> makeSpecContext() {
  auto ctx = std::make_unique<MLIRContext>(specDialects(), MLIRContext::Threading::DISABLED);
  if (llvm::ThreadPoolInterface *threads = compileThreads())
    ctx->setThreadPool(*threads);
  // Messages name the user's ops, without dumping the IR they sit in.
  ctx->printOpOnDiagnostic(false);
  return ctx;
}

/// `spec` as the buffer diagnostics point into, named options.sourceName.
static void addSpecSource(llvm::SourceMgr &sourceMgr, const std::string &spec,
                          const CompileOptions &options) {
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(spec, options.sourceName),
                               llvm::SMLoc());
}

/// Parses and verifies the spec in `sourceMgr` into `lowered` (its module
/// and entries), keeps `options.entry` alone if set and binds
/// `options.staticSizes`: the shapes nerve-specialize-shapes then gives.
static Result<std::vector<std::string>> parseSpec(LoweredSpec &lowered,
                                                  llvm::SourceMgr &sourceMgr,
                                                  DiagnosticCollector &diags,
                                                  const CompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  lowered.module = parseSourceFile<ModuleOp>(sourceMgr, lowered.context.get());
  lowered.times.push_back({"parse and verify", millisecondsSince(start)});
  if (!lowered.module)
    return diags.fail("the spec does not parse");
  lowered.entries = collectEntries(*lowered.module);
  if (lowered.entries.empty())
    return Status::error("the spec has no tdim.kernel to compile");
  if (Status s = selectEntry(*lowered.module, lowered.entries, options.entry); !s)
    return s;
  return bindStaticSizes(lowered.entries, options.staticSizes);
}

Result<std::vector<EntryInfo>> nerve::checkSpec(const std::string &spec,
                                                const CompileOptions &options) {
  LoweredSpec parsed;
  parsed.context = makeSpecContext();
  llvm::SourceMgr sourceMgr;
  addSpecSource(sourceMgr, spec, options);
  DiagnosticCollector diags(sourceMgr, parsed.context.get());
  if (Result<std::vector<std::string>> shapes = parseSpec(parsed, sourceMgr, diags, options);
      !shapes)
    return shapes.status();
  return std::move(parsed.entries);
}

Result<LoweredSpec> nerve::lowerSpec(const std::string &spec, const CompileOptions &options,
                                     Target target, bool wantHostObject) {
  if (options.optLevel < 0 || options.optLevel > 3)
    return Status::error("opt level " + std::to_string(options.optLevel) +
                         " is out of range 0-3");
  if (options.fastMath && options.exactMath)
    return Status::error("fast math and exact math exclude each other: choose one");
  if (options.cpuThreads < 0 || options.cpuThreads > 4096)
    return Status::error("cpu threads " + std::to_string(options.cpuThreads) +
                         " is out of range 0-4096 (0: the process's setting)");
  if (options.neuronTimeBlock < 0 || options.neuronTimeBlock > 128)
    return Status::error("neuron time block " + std::to_string(options.neuronTimeBlock) +
                         " is out of range 0-128 (0: automatic)");
  NerveToPTXOptions ptxOptions;
  ptxOptions.neuronTimeBlock = options.neuronTimeBlock;
  NerveToCPUOptions cpuOptions;
  cpuOptions.neuronTimeBlock = options.neuronTimeBlock;
  if (target == Target::CUDA) {
    std::optional<GpuChip> chip = parseChip(options.chip);
    if (!chip)
      return Status::error(unknownChipMessage(options.chip));
    ptxOptions.chip = *chip;
    ptxOptions.optLevel = options.optLevel;
    ptxOptions.fastMath = options.fastMath;
    ptxOptions.exactMath = options.exactMath;
    ptxOptions.tensorCores = options.tensorCores;
    ptxOptions.tf32 = options.tf32;
    ptxOptions.libdevice = options.libdevice;
  }

  LoweredSpec lowered;
  lowered.target = target;
  lowered.context = makeSpecContext();
  MLIRContext *ctx = lowered.context.get();
  llvm::SourceMgr sourceMgr;
  addSpecSource(sourceMgr, spec, options);
  DiagnosticCollector diags(sourceMgr, ctx);
  Result<std::vector<std::string>> shapes = parseSpec(lowered, sourceMgr, diags, options);
  if (!shapes)
    return shapes.status();
  ptxOptions.shapes = *shapes;
  cpuOptions.shapes = *shapes;

  PassManager pm(ctx);
  pm.addInstrumentation(std::make_unique<PassTimer>(lowered.times));
  if (target == Target::CPU) {
    buildNerveToCPUPipeline(pm, cpuOptions);
    if (failed(pm.run(*lowered.module)))
      return diags.fail("lowering the spec failed");
    if (wantHostObject)
      if (Status s = emitHostObjectOf(lowered, options); !s)
        return s;
    return lowered;
  }

  // With lazyKernels the gpu.modules wait for their own passes: deferred
  // when there are several to choose from at run time, run below beside the
  // host code when there is one (its first launch would need it at once).
  bool lazy = options.lazyKernels;
  buildNerveToNVVMPipeline(pm, ptxOptions, /*withDeviceCode=*/!lazy);
  if (failed(pm.run(*lowered.module)))
    return diags.fail("lowering the spec failed");
  if (lazy && llvm::range_size(lowered.module->getOps<gpu::GPUModuleOp>()) > 1) {
    if (Status s = lowerHostDeferringKernels(lowered, options, wantHostObject, diags); !s)
      return s;
    return lowered;
  }

  // The rest of nerve-to-ptx in two halves at once: the PTX of the
  // gpu.modules (moved out of the way) and the host code.
  OwningOpRef<ModuleOp> device = takeGPUModules(*lowered.module);
  std::vector<std::pair<std::string, double>> deviceTimes;
  PassManager devicePM(ctx), hostPM(ctx);
  devicePM.addInstrumentation(std::make_unique<PassTimer>(deviceTimes));
  hostPM.addInstrumentation(std::make_unique<PassTimer>(lowered.times));
  if (lazy)
    buildNerveDeviceCodePipeline(devicePM.nest<gpu::GPUModuleOp>(), ptxOptions.chip,
                                 findLibdevice(ptxOptions.libdevice).has_value());
  buildNerveSerializePTXPipeline(devicePM);
  buildNerveToHostLLVMPipeline(hostPM);
  loadDependentDialects(ctx, {&devicePM, &hostPM});
  // LLVM's target registry is a list that registering writes to: both
  // back ends are registered before either half looks one up.
  initializeHostTarget();
  NVVM::SerializeGPUModuleBase::init();
  LogicalResult serialized = failure(), hostLowered = failure();
  Status hostObject;
  {
    JoiningThread deviceThread{std::thread([&] { serialized = devicePM.run(*device); })};
    hostLowered = hostPM.run(*lowered.module);
    if (succeeded(hostLowered) && wantHostObject)
      hostObject = emitHostObjectOf(lowered, options);
  }
  // Reported after the host half's stages, with which they overlapped.
  for (auto &[stage, ms] : deviceTimes)
    lowered.times.push_back({stage + " (beside the host code)", ms});
  if (failed(serialized) || failed(hostLowered))
    return diags.fail("lowering the spec failed");
  if (!hostObject)
    return hostObject;

  // The binaries' contents go where their placeholders were, so that the
  // module is what nerve-to-ptx gives.
  for (gpu::BinaryOp binary : device->getOps<gpu::BinaryOp>()) {
    auto placeholder = lowered.module->lookupSymbol<gpu::BinaryOp>(binary.getSymName());
    if (!placeholder)
      return Status::error("the host code lost the device code @" +
                           binary.getSymName().str());
    // The host object loads each binary as its placeholder said: a
    // serialized object that says otherwise would be loaded wrongly.
    ArrayAttr loaded = placeholder.getObjects(), real = binary.getObjects();
    bool same = loaded.size() == real.size();
    for (size_t i = 0; same && i < real.size(); ++i) {
      auto a = llvm::cast<gpu::ObjectAttr>(loaded[i]), b = llvm::cast<gpu::ObjectAttr>(real[i]);
      same = a.getFormat() == b.getFormat() && optLevelOf(a) == optLevelOf(b);
    }
    if (!same)
      return Status::error("the host code loads the device code @" + binary.getSymName().str() +
                           " with other options than it was generated with");
    placeholder.setObjectsAttr(binary.getObjectsAttr());
    std::string ptx;
    for (Attribute a : binary.getObjects())
      ptx += llvm::cast<gpu::ObjectAttr>(a).getObject().getValue().str();
    lowered.deviceCode.push_back({binary.getSymName().str(), std::move(ptx)});
  }
  return lowered;
}

