//===- CudaDriver.h - the CUDA Driver API, loaded at run time ----*- C++ -*-===//
//
// nerve talks to the GPU only through the CUDA Driver API, found with
// dlopen("libcuda.so.1") when first needed: nerve builds, and runs on the
// CPU, on machines with no GPU, no driver and no CUDA toolkit. The few types
// and constants it uses are declared here, so cuda.h is not needed either.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_RUNTIME_CUDADRIVER_H
#define NERVE_RUNTIME_CUDADRIVER_H

#include "nerve/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace nerve::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUlinkState = struct CUlinkState_st *;
using CUmemoryPool = struct CUmemPoolHandle_st *;

/// cuMemPoolCreate's properties (cuda.h's CUmemPoolProps): device memory
/// of one device; the rest zero.
struct CUmemPoolProps {
  int allocType;   ///< CU_MEM_ALLOCATION_TYPE_PINNED
  int handleTypes; ///< none
  struct {
    int type; ///< CU_MEM_LOCATION_TYPE_DEVICE
    int id;   ///< the device ordinal
  } location;
  void *win32SecurityAttributes;
  size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
};
static_assert(sizeof(CUmemPoolProps) == 88, "CUmemPoolProps layout");

/// cuLaunchKernelEx's launch attribute (cuda.h's CUlaunchAttribute): an id,
/// then a 64-byte value; nerve sets only the cluster dimension.
struct CUlaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    void *alignment; // the value is pointer-aligned
    struct {
      unsigned x, y, z;
    } clusterDim;
    int programmaticStreamSerializationAllowed;
  } value;
};
static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute layout");

/// cuLaunchKernelEx's configuration (cuda.h's CUlaunchConfig).
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};

/// Entry points of libcuda.so.1 (the versioned names cuda.h maps to).
struct DriverAPI {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
  /// Drivers before CUDA 11.8 lack it (null): clusters cannot be launched.
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemGetInfo)(size_t *, size_t *);
  CUresult (*cuLinkCreate)(unsigned, int *, void **, CUlinkState *);
  CUresult (*cuLinkAddData)(CUlinkState, int, void *, size_t, const char *, unsigned, int *,
                            void **);
  CUresult (*cuLinkComplete)(CUlinkState, void **, size_t *);
  CUresult (*cuLinkDestroy)(CUlinkState);
  /// Optional (null when the driver lacks them): nerve's scratch pool.
  CUresult (*cuMemPoolCreate)(CUmemoryPool *, const CUmemPoolProps *);
  CUresult (*cuMemPoolSetAttribute)(CUmemoryPool, int, void *);
  CUresult (*cuMemAllocFromPoolAsync)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
};

// Constants of cuda.h that nerve uses.
enum : int {
  CUDA_SUCCESS = 0,
  CU_JIT_WALL_TIME = 2,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_OPTIMIZATION_LEVEL = 7,
  CU_JIT_INPUT_PTX = 1,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
  CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
  CU_MEM_ALLOCATION_TYPE_PINNED = 1,
  CU_MEM_LOCATION_TYPE_DEVICE = 1,
};

/// The driver and the device nerve uses: device 0 (or $NERVE_CUDA_DEVICE, or
/// the one selectOrdinal chose) and its primary context, the one the CUDA
/// runtime and PyTorch use too.
class Device {
public:
  /// Loads the driver and opens the device once per process; every later
  /// call returns the same result.
  static Result<Device *> get();
  /// Chooses the device (a CUDA ordinal) `get` opens. Before the device is
  /// opened it overrides $NERVE_CUDA_DEVICE; afterwards it succeeds only
  /// for the device already open: one process uses one GPU.
  static Status selectOrdinal(int ordinal);

  const DriverAPI &api() const { return api_; }
  /// Makes the device's primary context current on the calling thread
  /// (unless a context already is: then the caller's is kept).
  Status makeCurrent() const;

  /// "cuMemAlloc: out of memory (CUDA_ERROR_OUT_OF_MEMORY)", or success.
  /// An error that leaves the context unusable (a kernel faulted) marks the
  /// device lost and says so.
  Status check(CUresult result, const char *what) const;
  std::string errorText(CUresult result) const;

  /// Errors after which CUDA cannot be used any more in this process: a
  /// kernel faulted (illegal address, misaligned access, trap, illegal
  /// instruction...). The driver fails every later call with them, a reset
  /// of the context included; only a new process uses the GPU again.
  static bool losesContext(CUresult result);
  /// Fails, naming the fault, once CUDA has been lost.
  Status usable() const;

  const std::string &name() const { return name_; }
  int ordinal() const { return ordinal_; }
  int computeCapability() const { return major_ * 10 + minor_; }
  int multiprocessors() const { return multiprocessors_; }
  /// The driver's CUDA version, e.g. 13000 for 13.0.
  int driverVersion() const { return driverVersion_; }
  /// The memory pool kernels' scratch buffers come from (allocated and
  /// freed in stream order), or null for the device's default pool. It
  /// keeps what is freed instead of returning it to the driver at the
  /// next synchronization, as the default pool does: a kernel that needs
  /// scratch, run and then waited for, would otherwise map its scratch
  /// afresh every call.
  CUmemoryPool scratchPool() const { return scratchPool_; }

private:
  void createScratchPool();

  DriverAPI api_{};
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUmemoryPool scratchPool_ = nullptr;
  std::string name_;
  /// The fault that lost CUDA; empty while it is usable.
  mutable std::string lost_;
  int ordinal_ = 0, major_ = 0, minor_ = 0, multiprocessors_ = 0, driverVersion_ = 0;
};

} // namespace nerve::cuda

#endif // NERVE_RUNTIME_CUDADRIVER_H
