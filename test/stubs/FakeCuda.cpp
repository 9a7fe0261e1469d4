//===- FakeCuda.cpp - a stand-in libcuda.so.1 for tests without a GPU ---===//
//
// Implements the CUDA Driver API entry points nerve binds, over host
// memory, so that the whole CUDA path (compile, JIT the host code, load the
// module, allocate, copy, launch) runs on machines with no GPU. Kernels do
// nothing. $NERVE_FAKE_CUDA selects a failure to provoke:
//
//   no-device   cuInit reports no device       old-driver  PTX too new
//   bad-ptx     the PTX does not compile       oom         allocation fails
//   launch      the launch is refused with an illegal address
//   fault       the launch is accepted, the kernel faults (illegal address):
//               the next synchronisation reports it
//   no-clusters launches in thread block clusters are refused
//
// As on a real GPU, an illegal address loses CUDA for the process: every
// later call fails with it.
//
// Tests put its directory first in LD_LIBRARY_PATH. It is never installed.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>

namespace {

bool mode(const char *name) {
  const char *m = std::getenv("NERVE_FAKE_CUDA");
  return m && std::strcmp(m, name) == 0;
}

struct FakeModule {
  std::string ptx;
};

int fakeObject; // distinct non-null handles
void *handle(int offset) { return reinterpret_cast<char *>(&fakeObject) + offset; }
void *current = nullptr;
bool lost = false; // a kernel faulted; only a reset helps

constexpr int kIllegalAddress = 700;
constexpr int kInvalidValue = 1;

} // namespace

/// Modules cuModuleLoadDataEx has loaded.
int modulesLoaded = 0;
int dependentLaunches = 0;
/// Allocations from a pool cuMemPoolCreate made, and whether that pool was
/// told to keep everything freed (its release threshold the largest).
int poolAllocations = 0;
int poolKeepsAll = 0;
/// The CU_JIT_OPTIMIZATION_LEVEL the last module was loaded with (-1: none
/// given).
int lastJITOptimizationLevel = -1;

extern "C" {

int cuInit(unsigned) { return mode("no-device") ? 100 : 0; }
int cuDriverGetVersion(int *v) {
  *v = mode("old-driver") ? 11000 : 13000;
  return 0;
}
int cuGetErrorName(int e, const char **s) {
  switch (e) {
  case 0: *s = "CUDA_SUCCESS"; break;
  case 1: *s = "CUDA_ERROR_INVALID_VALUE"; break;
  case 2: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
  case 100: *s = "CUDA_ERROR_NO_DEVICE"; break;
  case 218: *s = "CUDA_ERROR_INVALID_PTX"; break;
  case 222: *s = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"; break;
  case 500: *s = "CUDA_ERROR_NOT_FOUND"; break;
  case 700: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
  default: *s = "CUDA_ERROR_UNKNOWN"; break;
  }
  return 0;
}
int cuGetErrorString(int e, const char **s) {
  switch (e) {
  case 0: *s = "no error"; break;
  case 1: *s = "invalid argument"; break;
  case 2: *s = "out of memory"; break;
  case 100: *s = "no CUDA-capable device is detected"; break;
  case 218: *s = "a PTX JIT compilation failed"; break;
  case 222: *s = "the provided PTX was compiled with an unsupported toolchain."; break;
  case 500: *s = "named symbol not found"; break;
  case 700: *s = "an illegal memory access was encountered"; break;
  default: *s = "unknown error"; break;
  }
  return 0;
}
int cuDeviceGetCount(int *n) {
  *n = mode("no-device") ? 0 : 1;
  return 0;
}
int cuDeviceGet(int *d, int) {
  *d = 0;
  return 0;
}
int cuDeviceGetName(char *name, int len, int) {
  std::strncpy(name, "nerve fake GPU", static_cast<size_t>(len));
  return 0;
}
int cuDeviceGetAttribute(int *v, int attribute, int) {
  *v = attribute == 75 ? 9 : attribute == 76 ? 0 : attribute == 16 ? 132 : 0;
  return 0;
}
int cuDevicePrimaryCtxRetain(void **ctx, int) {
  *ctx = handle(1);
  return 0;
}

int cuCtxSetCurrent(void *ctx) {
  current = ctx;
  return 0;
}
int cuCtxGetCurrent(void **ctx) {
  *ctx = current;
  return 0;
}
int cuCtxSynchronize() { return lost ? kIllegalAddress : 0; }

int cuModuleLoadDataEx(void **module, const void *image, unsigned n, int *options,
                       void **values) {
  if (lost)
    return kIllegalAddress;
  std::string ptx(static_cast<const char *>(image));
  if (mode("bad-ptx") || mode("old-driver") || ptx.find(".entry") == std::string::npos) {
    for (unsigned i = 0; i < n; ++i)
      if (options[i] == 5 /* CU_JIT_ERROR_LOG_BUFFER */)
        std::strcpy(static_cast<char *>(values[i]), "ptxas fatal: the fake driver refuses this PTX");
    return mode("old-driver") ? 222 : 218;
  }
  *module = new FakeModule{ptx};
  ++modulesLoaded;
  lastJITOptimizationLevel = -1;
  for (unsigned i = 0; i < n; ++i)
    if (options[i] == 7 /* CU_JIT_OPTIMIZATION_LEVEL */)
      lastJITOptimizationLevel = static_cast<int>(reinterpret_cast<intptr_t>(values[i]));
  return 0;
}

/// Modules loaded so far in this process (for the tests of lazy loading).
int nerveFakeModulesLoaded() { return modulesLoaded; }
/// The JIT optimization level (ptxas -O0 to -O4) of the last module loaded.
int nerveFakeLastJITOptimizationLevel() { return lastJITOptimizationLevel; }
/// Launches that allowed programmatic dependence on the kernel before.
int nerveFakeDependentLaunches() { return dependentLaunches; }
/// Stream-ordered allocations from the pool the process created.
int nerveFakePoolAllocations() { return poolAllocations; }
/// 1 when that pool's release threshold is the largest there is.
int nerveFakePoolKeepsAll() { return poolKeepsAll; }
// A "cubin" of the fake driver is its marker followed by the PTX it was
// linked from.
const char kFakeCubinMarker[] = "FAKE-CUBIN\n";

int cuModuleLoadData(void **module, const void *image) {
  const char *text = static_cast<const char *>(image);
  size_t marker = sizeof(kFakeCubinMarker) - 1;
  if (std::strncmp(text, kFakeCubinMarker, marker) == 0)
    text += marker;
  return cuModuleLoadDataEx(module, text, 0, nullptr, nullptr);
}
int cuModuleUnload(void *module) {
  delete static_cast<FakeModule *>(module);
  return 0;
}
// Each kernel's static shared memory, from the `.shared` arrays its PTX
// declares, and the dynamic shared memory it was allowed: beyond 48 KiB of
// both together it must be allowed first, as on a real GPU; in mode
// "small-shared" the fake GPU allows at most 64 KiB.
std::map<void *, int> staticShared;
std::map<void *, int> sharedAllowed;
int staticSharedOf(const std::string &ptx, const std::string &name) {
  size_t begin = ptx.find(".entry " + name + "(");
  size_t end = ptx.find(".entry ", begin + 1);
  std::string body = ptx.substr(begin, end == std::string::npos ? end : end - begin);
  int bytes = 0;
  for (size_t at = body.find(".shared "); at != std::string::npos;
       at = body.find(".shared ", at + 1)) {
    size_t line = body.find('\n', at);
    std::string decl = body.substr(at, line - at);
    size_t open = decl.find('['), close = decl.find(']');
    if (open != std::string::npos && close != std::string::npos && close > open + 1)
      bytes += std::atoi(decl.substr(open + 1, close - open - 1).c_str());
  }
  return bytes;
}
int cuModuleGetFunction(void **fn, void *module, const char *name) {
  const std::string &ptx = static_cast<FakeModule *>(module)->ptx;
  if (ptx.find(".entry " + std::string(name) + "(") == std::string::npos)
    return 500;
  // A handle of its own for each kernel of each module, as a GPU's driver
  // gives (the runtime keeps facts per kernel).
  static std::map<std::pair<void *, std::string>, std::unique_ptr<char>> functions;
  std::unique_ptr<char> &function = functions[{module, name}];
  if (!function)
    function = std::make_unique<char>();
  *fn = function.get();
  staticShared[*fn] = staticSharedOf(ptx, name);
  return 0;
}
int cuFuncGetAttribute(int *value, int attribute, void *fn) {
  if (attribute != 1 /* CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES */)
    return kInvalidValue;
  *value = staticShared[fn];
  return 0;
}
int cuFuncSetAttribute(void *fn, int attribute, int value) {
  if (attribute != 8 /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */ ||
      (mode("small-shared") && value > 64 * 1024))
    return kInvalidValue;
  sharedAllowed[fn] = value;
  return 0;
}
int cuLaunchKernel(void *fn, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                   unsigned sharedBytes, void *, void **, void **) {
  if (lost)
    return kIllegalAddress;
  auto allowed = sharedAllowed.find(fn);
  if (allowed == sharedAllowed.end() ? int(sharedBytes) + staticShared[fn] > 48 * 1024
                                     : int(sharedBytes) > allowed->second)
    return kInvalidValue;
  if (mode("launch") || mode("fault"))
    lost = true;
  return mode("launch") ? kIllegalAddress : 0;
}
// Launches in thread block clusters (as cuda.h lays out their
// configuration); in mode "no-clusters" the GPU refuses them, as one before
// sm_90 does. A grid that is not a whole number of clusters, or clusters of
// more than 8 blocks, are refused too.
struct FakeLaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    void *alignment;
    struct {
      unsigned x, y, z;
    } clusterDim;
    int programmaticStreamSerializationAllowed;
  } value;
};
struct FakeLaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  void *hStream;
  FakeLaunchAttribute *attrs;
  unsigned numAttrs;
};
int cuLaunchKernelEx(const FakeLaunchConfig *config, void *fn, void **params, void **extra) {
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const FakeLaunchAttribute &a = config->attrs[i];
    if (a.id == 6 /* CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION */ &&
        a.value.programmaticStreamSerializationAllowed == 1)
      ++dependentLaunches;
    if (a.id != 4 /* CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION */)
      continue;
    if (mode("no-clusters"))
      return 98; // CUDA_ERROR_INVALID_DEVICE_FUNCTION
    unsigned x = a.value.clusterDim.x;
    if (x == 0 || x > 8 || config->gridDimX % x != 0 || a.value.clusterDim.y != 1 ||
        a.value.clusterDim.z != 1)
      return kInvalidValue;
  }
  return cuLaunchKernel(fn, config->gridDimX, config->gridDimY, config->gridDimZ,
                        config->blockDimX, config->blockDimY, config->blockDimZ,
                        config->sharedMemBytes, config->hStream, params, extra);
}
int cuStreamCreate(void **s, unsigned) {
  *s = handle(3);
  return 0;
}
int cuStreamDestroy_v2(void *) { return 0; }
int cuStreamSynchronize(void *) { return lost ? kIllegalAddress : 0; }
int cuEventCreate(void **e, unsigned) {
  *e = handle(4);
  return 0;
}
int cuEventDestroy_v2(void *) { return 0; }
int cuEventRecord(void *, void *) { return 0; }
int cuEventSynchronize(void *) { return 0; }
int cuEventElapsedTime(float *ms, void *, void *) {
  *ms = 1.0f;
  return 0;
}
int cuMemAlloc_v2(unsigned long long *ptr, size_t bytes) {
  if (lost)
    return kIllegalAddress;
  if (mode("oom"))
    return 2;
  *ptr = reinterpret_cast<unsigned long long>(std::malloc(bytes ? bytes : 1));
  return 0;
}
int cuMemFree_v2(unsigned long long ptr) {
  std::free(reinterpret_cast<void *>(ptr));
  return 0;
}
int cuMemAllocAsync(unsigned long long *ptr, size_t bytes, void *) {
  return cuMemAlloc_v2(ptr, bytes);
}
int cuMemFreeAsync(unsigned long long ptr, void *) { return cuMemFree_v2(ptr); }
// A pool of device memory (allocation type 1, pinned; location type 1, a
// device) is the one handle; its allocations are the others'.
int cuMemPoolCreate(void **pool, const void *props) {
  const int *fields = static_cast<const int *>(props);
  if (fields[0] != 1 || fields[2] != 1)
    return kInvalidValue;
  *pool = handle(5);
  return 0;
}
int cuMemPoolSetAttribute(void *pool, int attribute, void *value) {
  if (pool != handle(5))
    return kInvalidValue;
  if (attribute == 4) // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
    poolKeepsAll = *static_cast<unsigned long long *>(value) == ~0ull;
  return 0;
}
int cuMemAllocFromPoolAsync(unsigned long long *ptr, size_t bytes, void *pool, void *) {
  if (pool != handle(5))
    return kInvalidValue;
  int r = cuMemAlloc_v2(ptr, bytes);
  poolAllocations += r == 0;
  return r;
}
int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t bytes) {
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return 0;
}
int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t bytes) {
  std::memcpy(dst, reinterpret_cast<void *>(src), bytes);
  return 0;
}
int cuMemcpyDtoD_v2(unsigned long long dst, unsigned long long src, size_t bytes) {
  std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src), bytes);
  return 0;
}
int cuMemcpyAsync(unsigned long long dst, unsigned long long src, size_t bytes, void *) {
  return cuMemcpyDtoD_v2(dst, src, bytes);
}
int cuMemsetD8_v2(unsigned long long dst, unsigned char v, size_t bytes) {
  std::memset(reinterpret_cast<void *>(dst), v, bytes);
  return 0;
}
int cuMemsetD8Async(unsigned long long dst, unsigned char v, size_t bytes, void *) {
  return cuMemsetD8_v2(dst, v, bytes);
}
int cuMemGetInfo_v2(size_t *free, size_t *total) {
  *free = *total = size_t(1) << 34;
  return 0;
}
int cuLinkCreate_v2(unsigned, int *, void **, void **state) {
  *state = new std::string(kFakeCubinMarker);
  return 0;
}
int cuLinkAddData_v2(void *state, int, void *data, size_t size, const char *, unsigned, int *,
                     void **) {
  std::string ptx(static_cast<const char *>(data), size);
  if (mode("bad-ptx") || mode("old-driver") || ptx.find(".entry") == std::string::npos)
    return mode("old-driver") ? 222 : 218;
  static_cast<std::string *>(state)->append(ptx);
  return 0;
}
int cuLinkComplete(void *state, void **cubin, size_t *size) {
  auto *image = static_cast<std::string *>(state);
  *cubin = image->data();
  *size = image->size() + 1;
  return 0;
}
int cuLinkDestroy(void *state) {
  delete static_cast<std::string *>(state);
  return 0;
}

} // extern "C"
