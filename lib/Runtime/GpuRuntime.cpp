//===- GpuRuntime.cpp - the mgpu* functions JIT-compiled host code calls -===//

#include "nerve/Runtime/GpuRuntime.h"
#include "nerve/Target/ChipProfile.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

using namespace nerve;
using namespace nerve::cuda;

namespace {
/// Per-thread state of the kernel call in progress.
struct ThreadState {
  bool active = false;
  CUstream stream = nullptr;
  bool synchronous = false;
  std::string error;
  std::string loadError;
  double loadMilliseconds = 0;
  int loadLevel = 0;
  bool loadNextModuleNow = false;
};
thread_local ThreadState state;

/// What generates deferred device code's PTX (set by nerve's compiler).
std::atomic<DeferredPTXGenerator> deferredGenerator{nullptr};

/// Records the first failure of the current call.
void record(std::string &slot, const std::string &message) {
  if (slot.empty())
    slot = message;
}

/// The device, or a recorded error.
const Device *device(std::string &slot) {
  Result<Device *> d = Device::get();
  if (!d) {
    record(slot, d.message());
    return nullptr;
  }
  if (Status s = (*d)->makeCurrent(); !s) {
    record(slot, s.message());
    return nullptr;
  }
  return *d;
}

bool ok(const Device *d, CUresult r, const char *what, std::string &slot) {
  if (r == CUDA_SUCCESS)
    return true;
  record(slot, d->check(r, what).message());
  return false;
}

/// A kernel's module, its PTX JIT-compiled by the driver at the first launch
/// that needs it: a spec compiles to alternatives (by vectors or elements,
/// block sizes, row widths) of which a run launches few, and the driver's
/// JIT of all of them was most of a cold compile.
struct LazyModule {
  const void *ptx; ///< the host code's constant, alive as long as it is
  int optLevel;
  /// The PTX generated from deferred device code (isDeferredDeviceCode),
  /// once it was.
  std::string generated;
  CUmodule module = nullptr;
  std::string error; ///< why the driver refused it, once it did
  /// Its kernels begin with griddepcontrol (nerve-grid-dependencies): they
  /// may be launched before the kernel ahead of them on the stream ends.
  bool gridDependent = false;
};
/// Held while a module loads.
std::mutex loadMutex;

/// A kernel as the host code holds it (mgpuModuleGetFunction's handle):
/// what its launches need, with no lookup.
struct Kernel {
  CUfunction fn = nullptr;
  std::string name; ///< for messages
  /// Its module is grid-dependent (see LazyModule).
  bool gridDependent = false;
  /// Dynamic shared memory it was allowed beyond the default 48 KiB
  /// (under functionsMutex).
  int32_t sharedOptIn = 0;
  /// Its static shared memory (reduction scratch): what a block takes
  /// without asking is 48 KiB of static and dynamic together.
  int32_t staticShared = 0;
};

/// Kernels, looked up once per (module, name). Keyed by the lazy module, so
/// that a launch whose kernel is known takes one lock and no look at the
/// module; a map's entries stay where they are, so the host code holds
/// pointers to them.
std::mutex functionsMutex;
std::map<std::pair<const LazyModule *, std::string>, Kernel> kernels;

/// Lets `k` take `bytes` of dynamic shared memory when that is more than a
/// block gets without asking (row programs stage rows up to the chip's
/// opt-in limit).
bool allowSharedBytes(const Device *d, Kernel &k, int32_t bytes) {
  if (bytes + k.staticShared <= kSharedBytesWithoutOptIn)
    return true;
  {
    std::lock_guard<std::mutex> lock(functionsMutex);
    if (k.sharedOptIn >= bytes)
      return true;
  }
  CUresult r =
      d->api().cuFuncSetAttribute(k.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
  if (r != CUDA_SUCCESS) {
    std::string what = "kernel " + k.name + " needs " + std::to_string(bytes) +
                       " bytes of shared memory a block, more than this GPU allows (was it "
                       "compiled for another chip?)";
    return ok(d, r, what.c_str(), state.error);
  }
  std::lock_guard<std::mutex> lock(functionsMutex);
  k.sharedOptIn = bytes;
  return true;
}
} // namespace

LaunchScope::LaunchScope(CUstream stream, bool synchronous)
    : previousActive(state.active), previousStream(state.stream),
      previousSynchronous(state.synchronous) {
  state.active = true;
  state.stream = stream;
  state.synchronous = synchronous;
  state.error.clear();
}

LaunchScope::~LaunchScope() {
  state.active = previousActive;
  state.stream = previousStream;
  state.synchronous = previousSynchronous;
}

Status LaunchScope::status() const {
  return state.error.empty() ? Status() : Status::error(state.error);
}

cuda::ModuleLoads cuda::takeModuleLoads() {
  ModuleLoads loads;
  if (!state.loadError.empty())
    loads.status = Status::error(state.loadError);
  loads.milliseconds = state.loadMilliseconds;
  loads.level = state.loadLevel;
  state.loadError.clear();
  state.loadMilliseconds = 0;
  state.loadLevel = 0;
  return loads;
}

/// `m`'s PTX: the host code's text, or the PTX generated from it when it is
/// deferred device code (once); null, with the error recorded in `slot` and
/// `m`, when generating it failed.
static const char *generatedPTX(LazyModule &m, std::string &slot) {
  const char *text = static_cast<const char *>(m.ptx);
  if (!isDeferredDeviceCode(text))
    return text;
  if (!m.generated.empty())
    return m.generated.c_str();
  DeferredPTXGenerator generate = deferredGenerator.load();
  Result<std::string> ptx =
      generate ? generate(text)
               : Result<std::string>(Status::error("no compiler is there to generate it"));
  if (!ptx) {
    m.error = "generating a kernel's PTX at its first launch failed: " + ptx.message();
    record(slot, m.error);
    return nullptr;
  }
  m.generated = ptx.take();
  return m.generated.c_str();
}

/// JIT-compiles `m` unless it is loaded; false, with the error recorded in
/// `slot`, when the driver refuses it (once: later calls repeat the error).
static bool loadModule(LazyModule &m, std::string &slot) {
  if (m.module)
    return true;
  if (!m.error.empty()) {
    record(slot, m.error);
    return false;
  }
  const Device *d = device(slot);
  if (!d)
    return false;
  if (Status s = d->usable(); !s) {
    record(slot, s.message());
    return false;
  }
  const char *ptx = generatedPTX(m, slot);
  if (!ptx)
    return false;
  m.gridDependent = std::strstr(ptx, "griddepcontrol.wait");
  // The driver JIT-compiles the PTX; its own cache (~/.nv/ComputeCache)
  // keeps the result, so loading PTX it has seen before is fast.
  auto start = std::chrono::steady_clock::now();
  char errorLog[16384] = {0};
  // ptxas's -O0 to -O4: one more than LLVM's level.
  int level = m.optLevel < 0 ? 4 : m.optLevel + 1;
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {errorLog, reinterpret_cast<void *>(sizeof(errorLog) - 1),
                    reinterpret_cast<void *>(static_cast<intptr_t>(level))};
  CUmodule module = nullptr;
  CUresult r = d->api().cuModuleLoadDataEx(&module, ptx, 3, options, values);
  state.loadMilliseconds +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (r == CUDA_SUCCESS) {
    m.module = module;
    state.loadLevel = level;
    return true;
  }
  std::string message = "the CUDA driver could not load the PTX: " + d->errorText(r);
  if (r == 222 /* CUDA_ERROR_UNSUPPORTED_PTX_VERSION */)
    message += "; the driver (CUDA " + std::to_string(d->driverVersion() / 1000) + "." +
               std::to_string(d->driverVersion() % 1000 / 10) +
               ") is too old for this PTX: update the driver";
  if (errorLog[0]) {
    // One line: the log's own lines joined.
    std::string log(errorLog);
    while (!log.empty() && (log.back() == '\n' || log.back() == ' '))
      log.pop_back();
    for (char &c : log)
      if (c == '\n')
        c = ';';
    message += "; JIT log: " + log;
  }
  m.error = message;
  record(slot, message);
  return false;
}

void cuda::loadNextModuleNow(bool now) { state.loadNextModuleNow = now; }

bool cuda::isDeferredDeviceCode(const char *text) {
  return text && std::strncmp(text, kDeferredDeviceCodePrefix,
                              std::strlen(kDeferredDeviceCodePrefix)) == 0;
}

void cuda::setDeferredPTXGenerator(DeferredPTXGenerator generator) {
  deferredGenerator.store(generator);
}

extern "C" {

/// Runs in the host code's global constructors: the module loads at its
/// first launch, or now when compile asked for it (loadNextModuleNow).
static void *nerve_mgpuModuleLoadJIT(void *ptx, int optLevel) {
  auto *m = new LazyModule{ptx, optLevel, {}, nullptr, {}};
  if (state.loadNextModuleNow) {
    state.loadNextModuleNow = false;
    std::lock_guard<std::mutex> lock(loadMutex);
    loadModule(*m, state.loadError);
  }
  return m;
}

static void *nerve_mgpuModuleLoad(void *data, size_t) {
  return nerve_mgpuModuleLoadJIT(data, 3);
}

static void nerve_mgpuModuleUnload(void *handle) {
  std::unique_ptr<LazyModule> m(static_cast<LazyModule *>(handle));
  Result<Device *> d = Device::get();
  if (!d || !m || !m->module)
    return;
  {
    std::lock_guard<std::mutex> lock(functionsMutex);
    for (auto it = kernels.begin(); it != kernels.end();)
      it = it->first.first == m.get() ? kernels.erase(it) : std::next(it);
  }
  (*d)->api().cuModuleUnload(m->module);
}

static void *nerve_mgpuModuleGetFunction(void *handle, const char *name) {
  if (!handle) {
    record(state.error, "kernel " + std::string(name) + " has no loaded module");
    return nullptr;
  }
  auto &m = *static_cast<LazyModule *>(handle);
  auto key = std::make_pair(static_cast<const LazyModule *>(&m), std::string(name));
  {
    std::lock_guard<std::mutex> lock(functionsMutex);
    if (auto it = kernels.find(key); it != kernels.end())
      return &it->second;
  }
  {
    std::lock_guard<std::mutex> lock(loadMutex);
    if (!loadModule(m, state.error))
      return nullptr;
  }
  std::lock_guard<std::mutex> lock(functionsMutex);
  if (auto it = kernels.find(key); it != kernels.end())
    return &it->second; // another thread looked it up meanwhile
  const Device *d = device(state.error);
  if (!d)
    return nullptr;
  CUfunction fn = nullptr;
  if (!ok(d, d->api().cuModuleGetFunction(&fn, m.module, name), "cuModuleGetFunction", state.error))
    return nullptr;
  int staticShared = 0;
  if (!ok(d, d->api().cuFuncGetAttribute(&staticShared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn),
          "cuFuncGetAttribute", state.error))
    return nullptr;
  Kernel &k = kernels[key];
  k.staticShared = staticShared;
  k.fn = fn;
  k.name = name;
  k.gridDependent = m.gridDependent;
  return &k;
}

static void *nerve_mgpuStreamCreate() {
  if (state.active)
    return state.stream;
  const Device *d = device(state.error);
  CUstream stream = nullptr;
  if (d)
    ok(d, d->api().cuStreamCreate(&stream, 0), "cuStreamCreate", state.error);
  return stream;
}

static void nerve_mgpuStreamDestroy(void *stream) {
  if (state.active && stream == state.stream)
    return; // the caller's
  if (Result<Device *> d = Device::get(); d && stream)
    (*d)->api().cuStreamDestroy(static_cast<CUstream>(stream));
}

static void nerve_mgpuStreamSynchronize(void *stream) {
  if (state.active && !state.synchronous)
    return;
  if (const Device *d = device(state.error))
    ok(d, d->api().cuStreamSynchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize",
       state.error);
}

/// The device to launch `function` (a Kernel) on with `smem` bytes of
/// dynamic shared memory, or null when there is nothing to launch (an
/// earlier step of this call failed, or the grid is empty) or it cannot be
/// (the error is recorded).
static const Device *launchDevice(void *function, intptr_t gridX, intptr_t gridY,
                                  intptr_t gridZ, int32_t smem) {
  if (!state.error.empty() || !function)
    return nullptr; // an earlier step of this call failed
  if (gridX <= 0 || gridY <= 0 || gridZ <= 0)
    return nullptr;
  const Device *d = device(state.error);
  if (!d || !allowSharedBytes(d, *static_cast<Kernel *>(function), smem))
    return nullptr;
  return d;
}

/// cuLaunchKernelEx's configuration of a launch with one `attribute`
/// (which must outlive the launch call).
static CUlaunchConfig launchConfig(intptr_t gridX, intptr_t gridY, intptr_t gridZ, intptr_t blockX,
                                   intptr_t blockY, intptr_t blockZ, int32_t smem, void *stream,
                                   CUlaunchAttribute &attribute) {
  CUlaunchConfig config{};
  config.gridDimX = unsigned(gridX);
  config.gridDimY = unsigned(gridY);
  config.gridDimZ = unsigned(gridZ);
  config.blockDimX = unsigned(blockX);
  config.blockDimY = unsigned(blockY);
  config.blockDimZ = unsigned(blockZ);
  config.sharedMemBytes = unsigned(smem);
  config.hStream = static_cast<CUstream>(stream);
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

static void nerve_mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                   intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                                   intptr_t blockZ, int32_t smem, void *stream, void **params,
                                   void **extra, size_t) {
  const Device *d = launchDevice(function, gridX, gridY, gridZ, smem);
  if (!d)
    return;
  const Kernel &k = *static_cast<Kernel *>(function);
  CUfunction fn = k.fn;
  CUresult r;
  if (k.gridDependent && d->api().cuLaunchKernelEx) {
    // Programmatic dependent launch: the kernel waits for the one before
    // it itself (griddepcontrol.wait), so it may be scheduled early.
    CUlaunchAttribute dependent{};
    dependent.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    dependent.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config =
        launchConfig(gridX, gridY, gridZ, blockX, blockY, blockZ, smem, stream, dependent);
    r = d->api().cuLaunchKernelEx(&config, fn, params, extra);
  } else {
    r = d->api().cuLaunchKernel(fn, gridX, gridY, gridZ, blockX, blockY, blockZ, smem,
                                static_cast<CUstream>(stream), params, extra);
  }
  if (r != CUDA_SUCCESS)
    ok(d, r, ("launching kernel " + k.name + " failed").c_str(), state.error);
}

/// A launch in 1-D thread block clusters of `clusterX` blocks (the row
/// programs that split a row over a cluster).
static void nerve_mgpuLaunchClusterKernel(void *function, intptr_t clusterX, intptr_t clusterY,
                                          intptr_t clusterZ, intptr_t gridX, intptr_t gridY,
                                          intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                                          intptr_t blockZ, int32_t smem, void *stream,
                                          void **params, void **extra) {
  const Device *d = launchDevice(function, gridX, gridY, gridZ, smem);
  if (!d)
    return;
  const Kernel &k = *static_cast<Kernel *>(function);
  if (!d->api().cuLaunchKernelEx) {
    state.error = "kernel " + k.name +
                  " runs in thread block clusters, which this CUDA driver cannot launch "
                  "(it lacks cuLaunchKernelEx: CUDA 11.8 or later is needed)";
    return;
  }
  CUlaunchAttribute cluster{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim = {unsigned(clusterX), unsigned(clusterY), unsigned(clusterZ)};
  CUlaunchConfig config =
      launchConfig(gridX, gridY, gridZ, blockX, blockY, blockZ, smem, stream, cluster);
  CUresult r = d->api().cuLaunchKernelEx(&config, k.fn, params, extra);
  if (r == CUDA_SUCCESS)
    return;
  // What the GPU was asked for: a refusal on sm_90 or later is about the
  // blocks' resources, not the clusters themselves.
  std::string what = "launching kernel " + k.name + " in clusters of " + std::to_string(clusterX) +
                     " blocks (" + std::to_string(blockX * blockY * blockZ) + " threads and " +
                     std::to_string(smem) + " bytes of dynamic shared memory each) failed";
  if (int cc = d->computeCapability(); cc < 90)
    what +=
        " (thread block clusters need sm_90 or later; this GPU is sm_" + std::to_string(cc) + ")";
  ok(d, r, what.c_str(), state.error);
}

static void *nerve_mgpuMemAlloc(uint64_t bytes, void *stream, bool) {
  if (bytes == 0 || !state.error.empty())
    return nullptr;
  const Device *d = device(state.error);
  if (!d)
    return nullptr;
  CUdeviceptr ptr = 0;
  auto s = static_cast<CUstream>(stream);
  CUresult r = d->scratchPool() ? d->api().cuMemAllocFromPoolAsync(&ptr, bytes, d->scratchPool(), s)
                                : d->api().cuMemAllocAsync(&ptr, bytes, s);
  if (!ok(d, r, ("allocating " + std::to_string(bytes) + " bytes of device memory").c_str(),
          state.error))
    return nullptr;
  return reinterpret_cast<void *>(ptr);
}

static void nerve_mgpuMemFree(void *ptr, void *stream) {
  if (!ptr)
    return;
  if (const Device *d = device(state.error))
    d->api().cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr), static_cast<CUstream>(stream));
}

static void nerve_mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  if (!state.error.empty() || bytes == 0)
    return;
  if (const Device *d = device(state.error))
    ok(d,
       d->api().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                              reinterpret_cast<CUdeviceptr>(src), bytes,
                              static_cast<CUstream>(stream)),
       "cuMemcpyAsync", state.error);
}

} // extern "C"

std::vector<std::pair<const char *, void *>> cuda::getMgpuSymbols() {
  return {
      {"mgpuModuleLoadJIT", reinterpret_cast<void *>(&nerve_mgpuModuleLoadJIT)},
      {"mgpuModuleLoad", reinterpret_cast<void *>(&nerve_mgpuModuleLoad)},
      {"mgpuModuleUnload", reinterpret_cast<void *>(&nerve_mgpuModuleUnload)},
      {"mgpuModuleGetFunction", reinterpret_cast<void *>(&nerve_mgpuModuleGetFunction)},
      {"mgpuStreamCreate", reinterpret_cast<void *>(&nerve_mgpuStreamCreate)},
      {"mgpuStreamDestroy", reinterpret_cast<void *>(&nerve_mgpuStreamDestroy)},
      {"mgpuStreamSynchronize", reinterpret_cast<void *>(&nerve_mgpuStreamSynchronize)},
      {"mgpuLaunchKernel", reinterpret_cast<void *>(&nerve_mgpuLaunchKernel)},
      {"mgpuLaunchClusterKernel", reinterpret_cast<void *>(&nerve_mgpuLaunchClusterKernel)},
      {"mgpuMemAlloc", reinterpret_cast<void *>(&nerve_mgpuMemAlloc)},
      {"mgpuMemFree", reinterpret_cast<void *>(&nerve_mgpuMemFree)},
      {"mgpuMemcpy", reinterpret_cast<void *>(&nerve_mgpuMemcpy)},
  };
}
