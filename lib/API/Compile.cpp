//===- Compile.cpp - spec text to a loaded module -----------------------===//
//
// in-process cache -> disk cache -> (on a miss) parse, verify, collect
// kernel signatures, nerve-to-cpu / nerve-to-ptx (its PTX generated beside
// the host code and host object) -> link the host object (HostJIT) -> load
// the device code (PTX, through the driver) -> fill the caches. Every failure is returned with the
// diagnostics MLIR printed, never aborting.
//
//===----------------------------------------------------------------------===//

#include "Entries.h"
#include "HostJIT.h"
#include "HostObject.h"
#include "KernelCache.h"
#include "ModuleImpl.h"

#include "nerve/InitAll.h"
#include "nerve/Runtime/DeviceMirror.h"
#include "nerve/Runtime/GpuRuntime.h"
#include "nerve/Runtime/HostSymbols.h"
#include "nerve/Pipelines/Pipelines.h"
#include "nerve/Support/Version.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <list>
#include <map>
#include <thread>
#include <unistd.h>
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

/// The threads every compile shares (MLIR's passes over sibling ops, the
/// gpu.modules' code generation), started on first use. A forked child has
/// none of its parent's threads: it gets a pool of its own (the parent's is
/// left alone, unusable there).
llvm::ThreadPoolInterface *compileThreads() {
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
  /// Each gpu.binary's name and PTX (CUDA).
  std::vector<std::pair<std::string, std::string>> deviceCode;
  /// The host object, when asked for.
  std::string hostObject;
  std::vector<std::pair<std::string, double>> times;
};

/// Joins a thread however the scope is left.
struct JoiningThread {
  std::thread thread;
  ~JoiningThread() {
    if (thread.joinable())
      thread.join();
  }
};

/// Moves `top`'s gpu.modules into a module of their own and leaves in each
/// one's place a gpu.binary with an empty object per target: the host
/// passes and the host object need the binaries' names only.
static OwningOpRef<ModuleOp> takeGPUModules(ModuleOp top) {
  OwningOpRef<ModuleOp> device = ModuleOp::create(top.getLoc());
  MLIRContext *ctx = top.getContext();
  for (gpu::GPUModuleOp module : llvm::to_vector(top.getOps<gpu::GPUModuleOp>())) {
    SmallVector<Attribute> placeholders;
    if (ArrayAttr targets = module.getTargetsAttr())
      for (Attribute target : targets)
        placeholders.push_back(gpu::ObjectAttr::get(ctx, target, gpu::CompilationTarget::Assembly,
                                                    StringAttr::get(ctx, ""), nullptr, nullptr));
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

/// Parses and lowers `spec`; with `wantHostObject`, also emits the host
/// object. For CUDA the device code's PTX generation runs on a thread of its
/// own while the host code is lowered and compiled: neither needs the
/// other's result.
static Result<LoweredSpec> lowerSpec(const std::string &spec, const CompileOptions &options,
                                     Target target, bool wantHostObject) {
  if (options.optLevel < 0 || options.optLevel > 3)
    return Status::error("opt level " + std::to_string(options.optLevel) +
                         " is out of range 0-3");
  if (options.neuronTimeBlock < 0 || options.neuronTimeBlock > 128)
    return Status::error("neuron time block " + std::to_string(options.neuronTimeBlock) +
                         " is out of range 0-128 (0: automatic)");
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
  if (llvm::ThreadPoolInterface *threads = compileThreads())
    ctx->setThreadPool(*threads);
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
  if (target == Target::CPU) {
    buildNerveToCPUPipeline(pm, cpuOptions);
    if (failed(pm.run(*lowered.module)))
      return failWith(diags, "lowering the spec failed");
    if (wantHostObject)
      if (Status s = emitHostObjectOf(lowered, options); !s)
        return s;
    return lowered;
  }

  buildNerveToNVVMPipeline(pm, ptxOptions);
  if (failed(pm.run(*lowered.module)))
    return failWith(diags, "lowering the spec failed");

  // The rest of nerve-to-ptx in two halves at once: the PTX of the
  // gpu.modules (moved out of the way) and the host code.
  OwningOpRef<ModuleOp> device = takeGPUModules(*lowered.module);
  std::vector<std::pair<std::string, double>> deviceTimes;
  PassManager devicePM(ctx), hostPM(ctx);
  devicePM.addInstrumentation(std::make_unique<PassTimer>(deviceTimes));
  hostPM.addInstrumentation(std::make_unique<PassTimer>(lowered.times));
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
  llvm::append_range(lowered.times, deviceTimes);
  if (failed(serialized) || failed(hostLowered))
    return failWith(diags, "lowering the spec failed");
  if (!hostObject)
    return hostObject;

  // The binaries' contents go where their placeholders were, so that the
  // module is what nerve-to-ptx gives.
  for (gpu::BinaryOp binary : device->getOps<gpu::BinaryOp>()) {
    auto placeholder = lowered.module->lookupSymbol<gpu::BinaryOp>(binary.getSymName());
    placeholder.setObjectsAttr(binary.getObjectsAttr());
    std::string ptx;
    for (Attribute a : binary.getObjects())
      ptx += llvm::cast<gpu::ObjectAttr>(a).getObject().getValue().str();
    lowered.deviceCode.push_back({binary.getSymName().str(), std::move(ptx)});
  }
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
  Result<LoweredSpec> lowered = lowerSpec(spec, options, *target, /*wantHostObject=*/false);
  if (!lowered)
    return lowered.status();
  if (what == Emit::PTX) {
    std::string ptx;
    for (const auto &[binary, text] : lowered->deviceCode)
      ptx += text;
    return ptx;
  }
  std::string ir = printLLVMIR(*lowered->module);
  if (ir.empty())
    return Status::error("translating the host code to LLVM IR failed");
  return ir;
}

namespace {
/// Counters behind cacheStats().
struct CacheCounters {
  std::atomic<uint64_t> memoryHits{0}, diskHits{0}, misses{0}, stores{0}, discarded{0};
};
CacheCounters &counters() {
  static CacheCounters c;
  return c;
}

/// The modules compiled in this process, most recently used first, by key.
class MemoryCache {
public:
  std::shared_ptr<Module> find(const std::string &key) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = modules.begin(); it != modules.end(); ++it)
      if (it->first == key) {
        modules.splice(modules.begin(), modules, it);
        return modules.front().second;
      }
    return nullptr;
  }
  void insert(const std::string &key, std::shared_ptr<Module> module) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = modules.begin(); it != modules.end(); ++it)
      if (it->first == key) {
        modules.erase(it);
        break;
      }
    modules.emplace_front(key, std::move(module));
    if (modules.size() > kCapacity)
      modules.pop_back();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex);
    modules.clear();
  }

private:
  static constexpr size_t kCapacity = 64;
  std::mutex mutex;
  std::list<std::pair<std::string, std::shared_ptr<Module>>> modules;
};
MemoryCache &memoryCache() {
  // Destroyed at exit with the other statics, which run before the
  // (dlopen'ed) CUDA driver's own teardown: the modules unload cleanly.
  static MemoryCache cache;
  return cache;
}
} // namespace

CacheStats nerve::cacheStats() {
  CacheCounters &c = counters();
  CacheStats s;
  s.memoryHits = c.memoryHits;
  s.diskHits = c.diskHits;
  s.misses = c.misses;
  s.stores = c.stores;
  s.discarded = c.discarded;
  return s;
}

void nerve::clearMemoryCache() { memoryCache().clear(); }

/// Links the host object and loads the device code (the host code's
/// `_nerve_init` hands the PTX to the driver).
static Result<std::shared_ptr<Module>>
loadArtifacts(const CompiledArtifacts &artifacts,
              std::vector<std::pair<std::string, double>> times, const std::string &spec,
              const CompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  // The module owns the PTX texts the linked host code points to.
  auto impl = std::make_unique<Module::Impl>();
  impl->deviceCode = artifacts.deviceCode;
  LoadedHost::DeviceCode deviceCode;
  for (const auto &[binary, ptx] : impl->deviceCode) {
    deviceCode.push_back({binary, ptx.c_str()});
    impl->ptx += ptx;
  }
  std::vector<std::string> names;
  for (const EntryInfo &e : artifacts.entries)
    names.push_back(e.name);
  Result<std::unique_ptr<LoadedHost>> host =
      LoadedHost::load(artifacts.hostObject, names, deviceCode);
  if (!host)
    return host.status();
  times.push_back({"link host code", millisecondsSince(start)});

  if (artifacts.target == Target::CUDA) {
    Result<cuda::Device *> device = cuda::Device::get();
    if (!device)
      return device.status();
    if (Status s = (*device)->usable(); !s)
      return s;
  }
  (void)cuda::takeModuleLoadStatus(); // drop what an earlier compile left
  cuda::takeModuleLoadMilliseconds();
  // Kernels load at their first launch; the first one now, so that PTX the
  // driver refuses (too new for it, another chip's) fails the compile.
  if (artifacts.target == Target::CUDA)
    cuda::loadNextModuleNow();
  (*host)->initialize();
  cuda::loadNextModuleNow(false);
  if (Status loaded = cuda::takeModuleLoadStatus(); !loaded)
    return loaded;
  if (artifacts.target == Target::CUDA)
    times.push_back(
        {"load module (driver PTX JIT), the first kernel's", cuda::takeModuleLoadMilliseconds()});

  impl->target = artifacts.target;
  impl->entries = artifacts.entries;
  impl->times = std::move(times);
  impl->host = host.take();
  impl->spec = spec;
  impl->options = options;
  impl->options.target = artifacts.target;
  struct Access : Module {
    explicit Access(std::unique_ptr<Impl> i) : Module(std::move(i)) {}
  };
  return std::shared_ptr<Module>(std::make_shared<Access>(std::move(impl)));
}

Result<std::shared_ptr<Module>> nerve::compile(const std::string &spec,
                                               const CompileOptions &options) {
  std::string why;
  bool haveGpu = options.target != Target::CPU && cudaAvailable(&why);
  Target target = *resolveTarget(options, haveGpu ? Target::CUDA : Target::CPU);
  if (target == Target::CUDA && !haveGpu)
    return Status::error("the CUDA target needs a GPU: " + why);

  CacheSettings settings = resolveCacheSettings(options);
  DiskCache disk(settings);
  std::string keyText;
  if (settings.enabled) {
    auto start = std::chrono::steady_clock::now();
    keyText = cacheKeyText(spec, options, target);
    if (std::shared_ptr<Module> module = memoryCache().find(keyText)) {
      ++counters().memoryHits;
      return module;
    }
    bool discarded = false;
    if (std::optional<CompiledArtifacts> artifacts = disk.load(keyText, &discarded)) {
      Result<std::shared_ptr<Module>> module = loadArtifacts(
          *artifacts, {{"read disk cache", millisecondsSince(start)}}, spec, options);
      if (module) {
        ++counters().diskHits;
        memoryCache().insert(keyText, *module);
        return module;
      }
      // An entry that does not load is as bad as a corrupted one.
      std::remove(disk.entryPath(keyText).c_str());
      discarded = true;
    }
    if (discarded)
      ++counters().discarded;
    ++counters().misses;
  }

  Result<LoweredSpec> lowered = lowerSpec(spec, options, target, /*wantHostObject=*/true);
  if (!lowered)
    return lowered.status();
  CompiledArtifacts artifacts;
  artifacts.target = target;
  artifacts.entries = std::move(lowered->entries);
  artifacts.hostObject = std::move(lowered->hostObject);
  artifacts.deviceCode = std::move(lowered->deviceCode);
  Result<std::shared_ptr<Module>> module =
      loadArtifacts(artifacts, std::move(lowered->times), spec, options);
  if (!module || !settings.enabled)
    return module;
  // A cache that cannot be written costs speed, never the compile.
  if (disk.store(keyText, artifacts))
    ++counters().stores;
  memoryCache().insert(keyText, *module);
  return module;
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
  std::call_once(impl_->llvmIROnce, [&] {
    // Lowering again keeps compiles (and cache hits) free of printing.
    Result<std::string> ir = emit(impl_->spec, impl_->options, Emit::LLVMIR);
    impl_->llvmIR = ir ? ir.take() : std::string();
  });
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
    impl_->host->entries()[index](packer.pointers());
    return Status();
  }
  Result<cuda::Device *> device = cuda::Device::get();
  if (!device)
    return device.status();
  if (Status s = (*device)->makeCurrent(); !s)
    return s;
  if (Status s = (*device)->usable(); !s)
    return s;
  cuda::LaunchScope scope(static_cast<cuda::CUstream>(stream), /*synchronous=*/false);
  impl_->host->entries()[index](packer.pointers());
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
