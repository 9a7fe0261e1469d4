//===- CudaDriver.cpp - the CUDA Driver API, loaded at run time ---------===//

#include "nerve/Runtime/CudaDriver.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

static std::mutex lostMutex; // guards Device::lost_

// The ordinal selectOrdinal chose (-1: none), and whether get() has opened
// a device; both guarded by selectMutex.
static std::mutex selectMutex;
static int selectedOrdinal = -1;
static int openedOrdinal = -1;

using namespace nerve;
using namespace nerve::cuda;

/// Loads every entry point; a missing one names itself.
static Status loadDriver(DriverAPI &api) {
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return Status::error("no CUDA driver: libcuda.so.1 could not be loaded (" +
                         std::string(dlerror()) + ")");
  std::string missing;
  auto bind = [&](auto &fn, const char *name) {
    void *symbol = dlsym(handle, name);
    if (!symbol)
      missing += (missing.empty() ? "" : ", ") + std::string(name);
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(symbol);
  };
  bind(api.cuInit, "cuInit");
  bind(api.cuDriverGetVersion, "cuDriverGetVersion");
  bind(api.cuGetErrorName, "cuGetErrorName");
  bind(api.cuGetErrorString, "cuGetErrorString");
  bind(api.cuDeviceGetCount, "cuDeviceGetCount");
  bind(api.cuDeviceGet, "cuDeviceGet");
  bind(api.cuDeviceGetName, "cuDeviceGetName");
  bind(api.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  bind(api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(api.cuCtxSetCurrent, "cuCtxSetCurrent");
  bind(api.cuCtxGetCurrent, "cuCtxGetCurrent");
  bind(api.cuCtxSynchronize, "cuCtxSynchronize");
  bind(api.cuModuleLoadDataEx, "cuModuleLoadDataEx");
  bind(api.cuModuleLoadData, "cuModuleLoadData");
  bind(api.cuModuleUnload, "cuModuleUnload");
  bind(api.cuModuleGetFunction, "cuModuleGetFunction");
  bind(api.cuFuncGetAttribute, "cuFuncGetAttribute");
  bind(api.cuFuncSetAttribute, "cuFuncSetAttribute");
  bind(api.cuLaunchKernel, "cuLaunchKernel");
  bind(api.cuStreamCreate, "cuStreamCreate");
  bind(api.cuStreamDestroy, "cuStreamDestroy_v2");
  bind(api.cuStreamSynchronize, "cuStreamSynchronize");
  bind(api.cuEventCreate, "cuEventCreate");
  bind(api.cuEventDestroy, "cuEventDestroy_v2");
  bind(api.cuEventRecord, "cuEventRecord");
  bind(api.cuEventSynchronize, "cuEventSynchronize");
  bind(api.cuEventElapsedTime, "cuEventElapsedTime");
  bind(api.cuMemAlloc, "cuMemAlloc_v2");
  bind(api.cuMemFree, "cuMemFree_v2");
  bind(api.cuMemAllocAsync, "cuMemAllocAsync");
  bind(api.cuMemFreeAsync, "cuMemFreeAsync");
  bind(api.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  bind(api.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  bind(api.cuMemcpyDtoD, "cuMemcpyDtoD_v2");
  bind(api.cuMemcpyAsync, "cuMemcpyAsync");
  bind(api.cuMemsetD8, "cuMemsetD8_v2");
  bind(api.cuMemsetD8Async, "cuMemsetD8Async");
  bind(api.cuMemGetInfo, "cuMemGetInfo_v2");
  bind(api.cuLinkCreate, "cuLinkCreate_v2");
  bind(api.cuLinkAddData, "cuLinkAddData_v2");
  bind(api.cuLinkComplete, "cuLinkComplete");
  bind(api.cuLinkDestroy, "cuLinkDestroy");
  if (!missing.empty())
    return Status::error("the CUDA driver is too old: libcuda.so.1 lacks " + missing);
  // Optional: only kernels launched in clusters need it.
  api.cuLaunchKernelEx = reinterpret_cast<decltype(api.cuLaunchKernelEx)>(
      dlsym(handle, "cuLaunchKernelEx"));
  // Optional: without them scratch comes from the default pool.
  api.cuMemPoolCreate =
      reinterpret_cast<decltype(api.cuMemPoolCreate)>(dlsym(handle, "cuMemPoolCreate"));
  api.cuMemPoolSetAttribute =
      reinterpret_cast<decltype(api.cuMemPoolSetAttribute)>(dlsym(handle, "cuMemPoolSetAttribute"));
  api.cuMemAllocFromPoolAsync = reinterpret_cast<decltype(api.cuMemAllocFromPoolAsync)>(
      dlsym(handle, "cuMemAllocFromPoolAsync"));
  return Status();
}

std::string Device::errorText(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (api_.cuGetErrorName)
    api_.cuGetErrorName(result, &name);
  if (api_.cuGetErrorString)
    api_.cuGetErrorString(result, &text);
  return std::string(text ? text : "unknown error") + " (" +
         (name ? name : "CUDA error " + std::to_string(result)) + ")";
}

Status Device::check(CUresult result, const char *what) const {
  if (result == CUDA_SUCCESS)
    return Status();
  std::string message = std::string(what) + ": " + errorText(result);
  if (losesContext(result)) {
    std::lock_guard<std::mutex> lock(lostMutex);
    if (lost_.empty())
      lost_ = message;
    message += "; CUDA cannot be used any more in this process (a kernel fault is not "
               "recoverable): restart it";
  }
  return Status::error(message);
}

bool Device::losesContext(CUresult result) {
  switch (result) {
  case 700: // CUDA_ERROR_ILLEGAL_ADDRESS
  case 709: // CUDA_ERROR_CONTEXT_IS_DESTROYED
  case 710: // CUDA_ERROR_ASSERT
  case 714: // CUDA_ERROR_HARDWARE_STACK_ERROR
  case 715: // CUDA_ERROR_ILLEGAL_INSTRUCTION
  case 716: // CUDA_ERROR_MISALIGNED_ADDRESS
  case 717: // CUDA_ERROR_INVALID_ADDRESS_SPACE
  case 718: // CUDA_ERROR_INVALID_PC
  case 719: // CUDA_ERROR_LAUNCH_FAILED
  case 999: // CUDA_ERROR_UNKNOWN
    return true;
  default:
    return false;
  }
}

Status Device::usable() const {
  std::lock_guard<std::mutex> lock(lostMutex);
  if (lost_.empty())
    return Status();
  return Status::error("the GPU cannot run kernels after an earlier fault (" + lost_ +
                       "); CUDA needs a new process to use the GPU again");
}

Result<Device *> Device::get() {
  static Device device;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] {
    if ((status = loadDriver(device.api_)), !status)
      return;
    const DriverAPI &api = device.api_;
    CUresult r = api.cuInit(0);
    if (r != CUDA_SUCCESS) {
      status = Status::error("no usable GPU: cuInit failed: " + device.errorText(r));
      return;
    }
    api.cuDriverGetVersion(&device.driverVersion_);
    int count = 0;
    if ((status = device.check(api.cuDeviceGetCount(&count), "cuDeviceGetCount")), !status)
      return;
    std::lock_guard<std::mutex> lock(selectMutex);
    int ordinal = 0;
    if (selectedOrdinal >= 0)
      ordinal = selectedOrdinal;
    else if (const char *env = std::getenv("NERVE_CUDA_DEVICE"))
      ordinal = std::atoi(env);
    openedOrdinal = ordinal;
    device.ordinal_ = ordinal;
    if (count == 0 || ordinal < 0 || ordinal >= count) {
      status = Status::error(count == 0 ? "no usable GPU: the driver sees no CUDA device"
                                        : "NERVE_CUDA_DEVICE=" + std::to_string(ordinal) +
                                              " but there are " + std::to_string(count) +
                                              " devices");
      return;
    }
    if ((status = device.check(api.cuDeviceGet(&device.device_, ordinal), "cuDeviceGet")),
        !status)
      return;
    char name[256] = {0};
    api.cuDeviceGetName(name, sizeof(name) - 1, device.device_);
    device.name_ = name;
    api.cuDeviceGetAttribute(&device.major_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                             device.device_);
    api.cuDeviceGetAttribute(&device.minor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                             device.device_);
    api.cuDeviceGetAttribute(&device.multiprocessors_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                             device.device_);
    status = device.check(api.cuDevicePrimaryCtxRetain(&device.context_, device.device_),
                          "cuDevicePrimaryCtxRetain");
    if (status)
      device.createScratchPool();
  });
  if (!status)
    return status;
  return &device;
}

Status Device::selectOrdinal(int ordinal) {
  if (ordinal < 0)
    return Status::error("CUDA device ordinal " + std::to_string(ordinal) + " is negative");
  std::lock_guard<std::mutex> lock(selectMutex);
  if (openedOrdinal < 0) {
    selectedOrdinal = ordinal;
    return Status();
  }
  if (openedOrdinal == ordinal)
    return Status();
  return Status::error("nerve already uses CUDA device " + std::to_string(openedOrdinal) +
                       " in this process and cannot switch to device " +
                       std::to_string(ordinal) + " (one GPU per process)");
}

void Device::createScratchPool() {
  if (!api_.cuMemPoolCreate || !api_.cuMemPoolSetAttribute || !api_.cuMemAllocFromPoolAsync)
    return;
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device_;
  CUmemoryPool pool = nullptr;
  if (api_.cuMemPoolCreate(&pool, &props) != CUDA_SUCCESS || !pool)
    return; // the default pool serves
  // Never trimmed at a synchronization: the pool holds at most the most
  // scratch that calls in flight together have needed.
  unsigned long long keep = ~0ull;
  if (api_.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) == CUDA_SUCCESS)
    scratchPool_ = pool;
}

Status Device::makeCurrent() const {
  CUcontext current = nullptr;
  if (api_.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current)
    return Status();
  return check(api_.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}
