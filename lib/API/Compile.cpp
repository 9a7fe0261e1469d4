//===- Compile.cpp - spec text to a loaded module -----------------------===//
//
// in-process cache -> disk cache -> (on a miss) lowering (Lowering.cpp: the
// spec to host code and PTX, and the host object) -> link the host object
// (HostJIT) -> load the device code (PTX, through the driver) -> fill the
// caches. Every failure is returned with the diagnostics MLIR printed,
// never aborting.
//
//===----------------------------------------------------------------------===//

#include "DeferredKernels.h"
#include "HostJIT.h"
#include "KernelCache.h"
#include "Lowering.h"
#include "ModuleImpl.h"

#include "nerve/Runtime/CpuThreads.h"
#include "nerve/Runtime/DeviceMirror.h"
#include "nerve/Runtime/GpuRuntime.h"
#include "nerve/Support/Version.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <fstream>
#include <list>
#include <mutex>
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

/// The target `options` resolve to.
static Result<Target> resolveTarget(const CompileOptions &options, Target fallback) {
  Target target = options.target;
  if (target == Target::Auto)
    target = fallback;
  return target;
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
  // What is emitted is the whole device code, generated now.
  CompileOptions eager = options;
  eager.lazyKernels = false;
  Result<LoweredSpec> lowered = lowerSpec(spec, eager, *target, /*wantHostObject=*/false);
  if (!lowered)
    return lowered.status();
  if (what == Emit::PTX)
    return generatedPTX(lowered->deviceCode);
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

std::string nerve::cacheDirectory(const CompileOptions &options) {
  return resolveCacheSettings(options).dir;
}

bool nerve::diskCacheEnabled(const CompileOptions &options) {
  return resolveCacheSettings(options).enabled;
}

Result<int64_t> nerve::clearDiskCache(const CompileOptions &options) {
  return DiskCache(resolveCacheSettings(options)).clear();
}

/// Whether `code` holds device code generated at its first launch.
static bool anyDeferred(const DeviceCode &code) {
  return llvm::any_of(code, [](const auto &module) {
    return cuda::isDeferredDeviceCode(module.second.c_str());
  });
}

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
  LoadedHost::PTXSymbols ptxSymbols;
  for (const auto &[binary, ptx] : impl->deviceCode)
    ptxSymbols.push_back({binary, ptx.c_str()});
  std::vector<std::string> names;
  for (const EntryInfo &e : artifacts.entries)
    names.push_back(e.name);
  Result<std::unique_ptr<LoadedHost>> host =
      LoadedHost::load(artifacts.hostObject, names, ptxSymbols);
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
  // Deferred device code (lazyKernels) is generated at its modules' loads.
  if (artifacts.target == Target::CUDA)
    registerDeferredPTXGenerator();
  (void)cuda::takeModuleLoads(); // drop what an earlier compile left
  // Kernels load at their first launch; the first one now, so that PTX the
  // driver refuses (too new for it, another chip's) fails the compile. Not
  // when kernels are generated at their first launch: that would generate
  // one a run may never launch (the driver's refusal then fails the launch).
  bool deferred = anyDeferred(artifacts.deviceCode);
  if (artifacts.target == Target::CUDA && !deferred)
    cuda::loadNextModuleNow();
  if (deferred)
    impl->generations.start(impl->deviceCode);
  (*host)->initialize();
  cuda::loadNextModuleNow(false);
  cuda::ModuleLoads loads = cuda::takeModuleLoads();
  if (!loads.status)
    return loads.status;
  // With the level the driver compiled at, which nothing else shows.
  if (artifacts.target == Target::CUDA)
    times.push_back({"load module (driver PTX JIT" +
                         (loads.level ? " at -O" + std::to_string(loads.level) : std::string()) +
                         "), the first kernel's",
                     loads.milliseconds});

  impl->target = artifacts.target;
  impl->entries = artifacts.entries;
  impl->times = std::move(times);
  impl->host = host.take();
  impl->spec = spec;
  impl->options = options;
  impl->options.target = artifacts.target;
  return makeModule(std::move(impl));
}

std::shared_ptr<Module> nerve::makeModule(std::unique_ptr<Module::Impl> impl) {
  struct Access : Module {
    explicit Access(std::unique_ptr<Impl> i) : Module(std::move(i)) {}
  };
  return std::make_shared<Access>(std::move(impl));
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
  auto start = std::chrono::steady_clock::now();
  if (settings.enabled) {
    keyText = cacheKeyText(spec, options, target);
    if (std::shared_ptr<Module> module = memoryCache().find(keyText)) {
      ++counters().memoryHits;
      return module;
    }
  }
  // Nothing compiled, nothing for the disk cache: its launches' compiles
  // use both caches.
  if (options.specializeSizes) {
    Result<std::shared_ptr<Module>> module = specializingModule(spec, options, target);
    if (module && settings.enabled)
      memoryCache().insert(keyText, *module);
    return module;
  }
  if (settings.enabled) {
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
  // Deferred device code is stored again as PTX once it is all generated:
  // a later process then loads PTX, as after an eager compile.
  if (anyDeferred(artifacts.deviceCode))
    (*module)->impl_->generations.whenGenerated(
        [disk, keyText, artifacts](const DeviceCode &ptx) mutable {
          artifacts.deviceCode = ptx;
          (void)disk.store(keyText, artifacts);
        });
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
const std::string &Module::ptx() const {
  std::call_once(impl_->ptxOnce, [&] { impl_->ptx = generatedPTX(impl_->deviceCode); });
  return impl_->ptx;
}

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
  if (impl_->specializations) {
    Result<std::shared_ptr<Module>> specialized = impl_->specializationFor(*entry, args);
    if (!specialized)
      return specialized.status();
    return (*specialized)->launch(entryName, args, stream);
  }
  ArgPacker packer;
  if (Status s = packer.pack(*entry, args); !s)
    return s;
  return launchPacked(entry - impl_->entries.data(), packer.pointers(), stream);
}

Status Module::launchPacked(size_t index, void **pointers, void *stream) const {
  if (impl_->target == Target::CPU) {
    if (Status s = cpu::useThreads(impl_->options.cpuThreads); !s)
      return s;
    impl_->host->entries()[index](pointers);
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
  impl_->host->entries()[index](pointers);
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

Result<CudaDeviceInfo> nerve::cudaDevice() {
  Result<cuda::Device *> device = cuda::Device::get();
  if (!device)
    return device.status();
  CudaDeviceInfo info;
  info.ordinal = (*device)->ordinal();
  info.name = (*device)->name();
  info.computeCapability = (*device)->computeCapability();
  info.multiprocessors = (*device)->multiprocessors();
  info.driverVersion = (*device)->driverVersion();
  return info;
}

Status nerve::selectCudaDevice(int ordinal) { return cuda::Device::selectOrdinal(ordinal); }
