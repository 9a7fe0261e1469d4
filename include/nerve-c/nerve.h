/*===- nerve-c/nerve.h - nerve's C API ------------------------------*- C -*-===*\
|*                                                                            *|
|* Compile a spec, list its kernels and their arguments, and launch them on   *|
|* tensors described by pointer, sizes and strides, from any language with a  *|
|* C foreign-function interface (nerve's Python package uses ctypes). It is   *|
|* a thin layer over the C++ API (nerve/nerve.h), in MLIR's C-API style:      *|
|* opaque handles that are structs around one pointer, plain C types, a       *|
|* string reference type that is not NUL-terminated, and no exception, no    *|
|* abort and no C++ type across the boundary.                                 *|
|*                                                                            *|
|* Errors: a function that can fail returns a NerveStatus. A null status is   *|
|* success; any other holds a one-line message and must be destroyed with    *|
|* nerveStatusDestroy. Handles a function returns through a pointer are set   *|
|* only on success.                                                           *|
|*                                                                            *|
|* Ownership: a NerveModule is owned by the caller (nerveModuleDestroy);      *|
|* NerveEntry and NerveArgInfo handles and every NerveStringRef a module      *|
|* hands out are borrowed and live as long as the module. Strings returned    *|
|* for the caller to keep come through a NerveStringCallback.                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef NERVE_C_NERVE_H
#define NERVE_C_NERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define NERVE_CAPI_EXPORTED __attribute__((visibility("default")))
#else
#define NERVE_CAPI_EXPORTED
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this interface: it grows by one whenever a declaration
 * here changes, so that a binding can check it matches the library. */
#define NERVE_C_API_VERSION 5

#define NERVE_DEFINE_C_API_STRUCT(name, storage)                               \
  struct name {                                                                \
    storage *ptr;                                                              \
  };                                                                           \
  typedef struct name name

NERVE_DEFINE_C_API_STRUCT(NerveStatus, void);
NERVE_DEFINE_C_API_STRUCT(NerveCompileOptions, void);
NERVE_DEFINE_C_API_STRUCT(NerveModule, void);
NERVE_DEFINE_C_API_STRUCT(NerveEntry, const void);
NERVE_DEFINE_C_API_STRUCT(NerveArgInfo, const void);
NERVE_DEFINE_C_API_STRUCT(NerveLaunchPlan, void);

#undef NERVE_DEFINE_C_API_STRUCT

/*===----------------------------------------------------------------------===*
 * Strings and errors
 *===----------------------------------------------------------------------===*/

/* A string that is not necessarily NUL-terminated. */
typedef struct NerveStringRef {
  const char *data;
  size_t length;
} NerveStringRef;

/* Receives a string the callee built; the string lives until the callback
 * returns, so the callback copies what it keeps. */
typedef void (*NerveStringCallback)(NerveStringRef text, void *userData);

static inline NerveStringRef nerveStringRefCreate(const char *data, size_t length) {
  NerveStringRef s = {data, length};
  return s;
}

static inline bool nerveStatusIsOk(NerveStatus status) { return status.ptr == NULL; }

/* The message of a failed status (empty for success). */
NERVE_CAPI_EXPORTED NerveStringRef nerveStatusGetMessage(NerveStatus status);

/* Frees a status; destroying success does nothing. */
NERVE_CAPI_EXPORTED void nerveStatusDestroy(NerveStatus status);

/*===----------------------------------------------------------------------===*
 * Versions
 *===----------------------------------------------------------------------===*/

/* NERVE_C_API_VERSION of the library. */
NERVE_CAPI_EXPORTED int nerveGetCAPIVersion(void);

/* nerve's and LLVM's versions, one line (static storage). */
NERVE_CAPI_EXPORTED NerveStringRef nerveGetVersion(void);

/*===----------------------------------------------------------------------===*
 * Compile options
 *===----------------------------------------------------------------------===*/

typedef enum NerveTarget {
  NerveTargetAuto = 0, /* CUDA when a driver and a device are usable, else CPU */
  NerveTargetCPU = 1,
  NerveTargetCUDA = 2,
} NerveTarget;

/* Element types of kernel arguments, as nerve::DType orders them. */
typedef enum NerveDType {
  NerveDTypeF32 = 0,
  NerveDTypeF16 = 1,
  NerveDTypeBF16 = 2,
  NerveDTypeF64 = 3,
  NerveDTypeI1 = 4,
  NerveDTypeI8 = 5,
  NerveDTypeI32 = 6,
  NerveDTypeI64 = 7,
  NerveDTypeIndex = 8,
} NerveDType;

/* Options with nerve::CompileOptions's defaults. */
NERVE_CAPI_EXPORTED NerveCompileOptions nerveCompileOptionsCreate(void);
NERVE_CAPI_EXPORTED void nerveCompileOptionsDestroy(NerveCompileOptions options);

NERVE_CAPI_EXPORTED void nerveCompileOptionsSetTarget(NerveCompileOptions options,
                                                      NerveTarget target);
/* sm_80, sm_89, sm_90 or sm_100 (checked when compiling). */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetChip(NerveCompileOptions options,
                                                    NerveStringRef chip);
/* 0-3. */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetOptLevel(NerveCompileOptions options,
                                                        int level);
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetFastMath(NerveCompileOptions options,
                                                        bool fastMath);
/* Each kernel's PTX generated at its first launch, not in compile
   (nerve::CompileOptions::lazyKernels). */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetLazyKernels(NerveCompileOptions options,
                                                           bool lazyKernels);
/* Compile each kernel at its launches for the sizes they bind
   (nerve::CompileOptions::specializeSizes). */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetSpecializeSizes(NerveCompileOptions options,
                                                               bool specializeSizes);
/* Compile for `size` in dimension `name` (nerve::CompileOptions::staticSizes);
   a second call with the same name replaces the size. */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetStaticSize(NerveCompileOptions options,
                                                          NerveStringRef name, int64_t size);
/* Compile only this kernel of the spec; empty: all (nerve::CompileOptions::entry). */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetEntry(NerveCompileOptions options,
                                                     NerveStringRef entry);
/* IEEE math in every kernel, 16-bit ones included (nerve::CompileOptions::exactMath). */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetExactMath(NerveCompileOptions options,
                                                         bool exactMath);
/* Contractions as tiled kernels where they can (the default): 16-bit operands on
   tensor cores, f32 with IEEE fused multiply-adds; false: every contraction by the
   general loops (nerve::CompileOptions::tensorCores). */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetTensorCores(NerveCompileOptions options,
                                                           bool tensorCores);
/* f32 contractions may read their operands as tf32 on tensor cores (10-bit
   mantissas, f32 sums; off by default) (nerve::CompileOptions::tf32). */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetTF32(NerveCompileOptions options, bool tf32);
/* libdevice.10.bc's path, "none", or empty to search. */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetLibdevice(NerveCompileOptions options,
                                                         NerveStringRef path);
/* 0: automatic. */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetNeuronTimeBlock(NerveCompileOptions options,
                                                               int steps);
/* CPU target: the threads the module's launches run on; 0 (the default)
 * follows nerveGetCpuThreads() at each launch. */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetCpuThreads(NerveCompileOptions options,
                                                          int threads);
/* How diagnostics name the spec. */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetSourceName(NerveCompileOptions options,
                                                          NerveStringRef name);
/* Whether to use the in-process and disk caches. */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetCache(NerveCompileOptions options,
                                                     bool enabled);
/* The disk cache's directory (empty: the default, docs/cache.md). */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetCacheDir(NerveCompileOptions options,
                                                        NerveStringRef dir);
/* The disk cache's bound in bytes (0: the default). */
NERVE_CAPI_EXPORTED void nerveCompileOptionsSetCacheMaxBytes(NerveCompileOptions options,
                                                             int64_t bytes);

/*===----------------------------------------------------------------------===*
 * Compiling and modules
 *===----------------------------------------------------------------------===*/

/* Compiles spec text. A null `options` handle means the defaults. */
NERVE_CAPI_EXPORTED NerveStatus nerveCompile(NerveStringRef spec, NerveCompileOptions options,
                                             NerveModule *result);

/* Compiles the spec in a file. */
NERVE_CAPI_EXPORTED NerveStatus nerveCompileFile(NerveStringRef path,
                                                 NerveCompileOptions options,
                                                 NerveModule *result);

/* Releases the caller's reference; the module's entries, argument infos
 * and strings become invalid. */
NERVE_CAPI_EXPORTED void nerveModuleDestroy(NerveModule module);

/* NerveTargetCPU or NerveTargetCUDA. */
NERVE_CAPI_EXPORTED NerveTarget nerveModuleGetTarget(NerveModule module);

NERVE_CAPI_EXPORTED intptr_t nerveModuleGetNumEntries(NerveModule module);
NERVE_CAPI_EXPORTED NerveEntry nerveModuleGetEntry(NerveModule module, intptr_t pos);
/* The entry called `name`, or a null handle. */
NERVE_CAPI_EXPORTED NerveEntry nerveModuleLookupEntry(NerveModule module, NerveStringRef name);

/* The PTX of the device code (empty for the CPU target). */
NERVE_CAPI_EXPORTED NerveStringRef nerveModuleGetPTX(NerveModule module);
/* The LLVM IR of the host code, produced on the first call. */
NERVE_CAPI_EXPORTED NerveStringRef nerveModuleGetLLVMIR(NerveModule module);

/* How long each stage of compiling and loading took (Module::compileTimes). */
NERVE_CAPI_EXPORTED intptr_t nerveModuleGetNumCompileTimes(NerveModule module);
NERVE_CAPI_EXPORTED void nerveModuleGetCompileTime(NerveModule module, intptr_t pos,
                                                   NerveStringRef *stage, double *milliseconds);

/*===----------------------------------------------------------------------===*
 * Entries and their arguments
 *===----------------------------------------------------------------------===*/

static inline bool nerveEntryIsNull(NerveEntry entry) { return entry.ptr == NULL; }

NERVE_CAPI_EXPORTED NerveStringRef nerveEntryGetName(NerveEntry entry);
/* Inputs first, then outputs, as the spec declares them. */
NERVE_CAPI_EXPORTED intptr_t nerveEntryGetNumArgs(NerveEntry entry);
NERVE_CAPI_EXPORTED NerveArgInfo nerveEntryGetArg(NerveEntry entry, intptr_t pos);
/* Dimensions whose size may differ between arguments (concat axes). */
NERVE_CAPI_EXPORTED intptr_t nerveEntryGetNumVariableDims(NerveEntry entry);
NERVE_CAPI_EXPORTED NerveStringRef nerveEntryGetVariableDim(NerveEntry entry, intptr_t pos);

NERVE_CAPI_EXPORTED NerveStringRef nerveArgInfoGetName(NerveArgInfo arg);
NERVE_CAPI_EXPORTED bool nerveArgInfoIsOutput(NerveArgInfo arg);
NERVE_CAPI_EXPORTED bool nerveArgInfoIsTensor(NerveArgInfo arg);
NERVE_CAPI_EXPORTED NerveDType nerveArgInfoGetDType(NerveArgInfo arg);
/* Dimensions, in layout (memory) order, outermost first; 0 for scalars. */
NERVE_CAPI_EXPORTED intptr_t nerveArgInfoGetRank(NerveArgInfo arg);
/* "n", or "i/64" for a fold. */
NERVE_CAPI_EXPORTED NerveStringRef nerveArgInfoGetDimName(NerveArgInfo arg, intptr_t pos);
/* The static size, or -1 where bound at launch. */
NERVE_CAPI_EXPORTED int64_t nerveArgInfoGetStaticSize(NerveArgInfo arg, intptr_t pos);
/* Whether the spec spells strides out (else the layout is row-major in
 * layout order). */
NERVE_CAPI_EXPORTED bool nerveArgInfoHasStrides(NerveArgInfo arg);
/* The spec's stride in elements, or -1 where bound at launch (only when
 * nerveArgInfoHasStrides). */
NERVE_CAPI_EXPORTED int64_t nerveArgInfoGetStride(NerveArgInfo arg, intptr_t pos);
/* The spec's offset in elements, -1 where bound at launch. */
NERVE_CAPI_EXPORTED int64_t nerveArgInfoGetOffset(NerveArgInfo arg);

/*===----------------------------------------------------------------------===*
 * Launching
 *===----------------------------------------------------------------------===*/

typedef enum NerveArgKind {
  NerveArgKindTensor = 0,
  NerveArgKindFloat = 1,
  NerveArgKindInt = 2,
} NerveArgKind;

/* One argument of a launch, in the entry's argument order. A tensor gives
 * its data (a device pointer for CUDA modules, a host pointer for CPU
 * ones, at the element the tensor starts with), `rank` sizes and, unless
 * `strides` is null (the spec's layout), `rank` strides in elements, both
 * in the argument's dimension order. A scalar gives floatValue or
 * intValue. */
typedef struct NerveArgValue {
  int32_t kind; /* NerveArgKind */
  int32_t rank;
  void *data;
  const int64_t *sizes;
  const int64_t *strides;
  double floatValue;
  int64_t intValue;
} NerveArgValue;

/* Launches `entry` on `stream` (a CUstream; null: the default stream) for
 * a CUDA module, or runs it on the calling thread for a CPU module. Every
 * argument is checked first; errors name the argument and the dimension.
 * nerve does not synchronise the stream. */
NERVE_CAPI_EXPORTED NerveStatus nerveEntryLaunch(NerveModule module, NerveEntry entry,
                                                 const NerveArgValue *args, intptr_t numArgs,
                                                 void *stream);

/* Runs `entry` on host memory and waits: for CUDA, nerve copies the tensors
 * to the device and the outputs back. */
NERVE_CAPI_EXPORTED NerveStatus nerveEntryRun(NerveModule module, NerveEntry entry,
                                              const NerveArgValue *args, intptr_t numArgs);

/* Checks and packs `entry`'s arguments once, as nerveEntryLaunch would,
 * without reading the tensors' data pointers: each nerveLaunchPlanLaunch
 * then gives only those, for callers that launch the same shapes again and
 * again. The plan holds its module; destroy it with nerveLaunchPlanDestroy. */
NERVE_CAPI_EXPORTED NerveStatus nerveLaunchPlanCreate(NerveModule module, NerveEntry entry,
                                                      const NerveArgValue *args,
                                                      intptr_t numArgs, NerveLaunchPlan *plan);

/* How many data pointers a launch of `plan` takes: one per tensor argument. */
NERVE_CAPI_EXPORTED intptr_t nerveLaunchPlanGetNumTensors(NerveLaunchPlan plan);

/* Launches `plan` with `data[i]` as the data of its i-th tensor argument (in
 * argument order), on `stream` as nerveEntryLaunch does. Launches from
 * several threads at once are safe. */
NERVE_CAPI_EXPORTED NerveStatus nerveLaunchPlanLaunch(NerveLaunchPlan plan, void *const *data,
                                                      intptr_t numData, void *stream);

NERVE_CAPI_EXPORTED void nerveLaunchPlanDestroy(NerveLaunchPlan plan);

/*===----------------------------------------------------------------------===*
 * Layouts
 *===----------------------------------------------------------------------===*/

/* The layout a specialisation gives one argument: `order` lists the
 * argument's dimensions (positions in the spec's declared order) from the
 * outermost in memory to the innermost; every stride is bound at launch,
 * except the innermost's, which is 1 when `unitInnermost`. */
typedef struct NerveArgLayout {
  const int32_t *order;
  int32_t rank;
  bool unitInnermost;
} NerveArgLayout;

/* The spec text with `entry`'s tensor arguments retyped to `layouts` (one
 * per argument, in the entry's argument order; a null `order` keeps that
 * argument's type). Dimensions are named, never positional, so the kernel
 * means the same; it is compiled for the layouts the caller has. */
NERVE_CAPI_EXPORTED NerveStatus nerveSpecializeLayouts(NerveStringRef spec, NerveStringRef entry,
                                                       const NerveArgLayout *layouts,
                                                       intptr_t numLayouts,
                                                       NerveStringCallback callback,
                                                       void *userData);

/*===----------------------------------------------------------------------===*
 * Kernels from expressions (nerve/Builders.h)
 *===----------------------------------------------------------------------===*/

/* The spec of an elementwise kernel, CuPy's ElementwiseKernel over typed
 * dimensions: inputs "f32 x[b, n], f32 a", outputs "f32 y[b, n]", body
 * "y = a * x". */
NERVE_CAPI_EXPORTED NerveStatus nerveElementwiseSpec(NerveStringRef name, NerveStringRef inputs,
                                                     NerveStringRef outputs, NerveStringRef body,
                                                     NerveStringCallback callback,
                                                     void *userData);

/* The spec of a reduction kernel, CuPy's ReductionKernel: `map` per point,
 * `combine` of `a` and `b`, its `identity`, then `post` of `a` and `count`. */
NERVE_CAPI_EXPORTED NerveStatus nerveReductionSpec(NerveStringRef name, NerveStringRef inputs,
                                                   NerveStringRef output, NerveStringRef map,
                                                   NerveStringRef combine, NerveStringRef identity,
                                                   NerveStringRef post,
                                                   NerveStringCallback callback, void *userData);

/*===----------------------------------------------------------------------===*
 * Neuron models (nerve/Builders.h)
 *===----------------------------------------------------------------------===*/

/* The `neuron.model` spec of a neuron from expressions: `states` "v = 0.0,
 * w = 0.0" (the first fires), `inputs` "x", `params` "tau = 2.0, b = 0.1",
 * `charge` statements run in order ("v = v + (x - v) / tau; w = ..."),
 * `threshold` a number or an expression of the states and parameters,
 * `resets` "v = hard 0.0, w = add b" (or "v = soft"); `computeType` f32
 * or f64. */
NERVE_CAPI_EXPORTED NerveStatus nerveNeuronModelSpec(
    NerveStringRef name, NerveStringRef computeType, NerveStringRef states,
    NerveStringRef inputs, NerveStringRef params, NerveStringRef charge,
    NerveStringRef threshold, NerveStringRef resets, NerveStringCallback callback,
    void *userData);

/* The definition of a built-in neuron (qif, eif, izhikevich, alif, adex),
 * `params` overriding defaults ("tau = 3.0"), hard reset to `vReset` when
 * `hardReset`, else soft: six lines "states: ...", "inputs: ...",
 * "params: ...", "charge: ...", "threshold: ...", "resets: ...", each the
 * text nerveNeuronModelSpec takes for that field. */
NERVE_CAPI_EXPORTED NerveStatus nerveBuiltinNeuronDef(
    NerveStringRef kind, NerveStringRef params, double vThreshold, bool hardReset,
    double vReset, NerveStringCallback callback, void *userData);

/* What forward must save for model @`model`'s backward, for the gradients of
 * the inputs and parameters listed ("x", "tau, b"), as three lines:
 * "h_seq: v", "seq: w", "ins: x" (names comma-separated, possibly none). */
NERVE_CAPI_EXPORTED NerveStatus nerveNeuronModelSaves(
    NerveStringRef modelSpec, NerveStringRef model, NerveStringRef gradInputs,
    NerveStringRef gradParams, NerveStringRef surrogate, bool detachReset, bool detachThreshold,
    NerveStringCallback callback, void *userData);

/*===----------------------------------------------------------------------===*
 * Caches
 *===----------------------------------------------------------------------===*/

typedef struct NerveCacheStats {
  uint64_t memoryHits; /* compiles answered by a module of this process */
  uint64_t diskHits;   /* compiles answered by the disk cache */
  uint64_t misses;     /* compiles that ran the compiler (cache on) */
  uint64_t stores;     /* entries written to the disk cache */
  uint64_t discarded;  /* disk entries found corrupted or stale, deleted */
} NerveCacheStats;

NERVE_CAPI_EXPORTED NerveCacheStats nerveCacheGetStats(void);

/* Forgets the in-process cache's modules (those still held stay alive). */
NERVE_CAPI_EXPORTED void nerveCacheClearMemory(void);

/* The disk cache's directory under `options` (null: the defaults), and
 * whether it is used. */
NERVE_CAPI_EXPORTED void nerveCacheGetDirectory(NerveCompileOptions options,
                                                NerveStringCallback callback, void *userData);
NERVE_CAPI_EXPORTED bool nerveCacheIsDiskEnabled(NerveCompileOptions options);

/* Deletes every entry of the disk cache; `removed` (if not null) gets how
 * many. */
NERVE_CAPI_EXPORTED NerveStatus nerveCacheClearDisk(NerveCompileOptions options,
                                                    int64_t *removed);

/*===----------------------------------------------------------------------===*
 * The GPU
 *===----------------------------------------------------------------------===*/

typedef struct NerveCudaDeviceInfo {
  int32_t ordinal;            /* as PyTorch's cuda:N counts */
  int32_t computeCapability;  /* 90 for sm_90 */
  int32_t multiprocessors;
  int32_t driverVersion;      /* 13000 for CUDA 13.0 */
  char name[256];             /* NUL-terminated */
} NerveCudaDeviceInfo;

/* Opens the GPU (once per process) and describes it; fails, saying why,
 * when there is no usable driver or device. */
NERVE_CAPI_EXPORTED NerveStatus nerveCudaGetDevice(NerveCudaDeviceInfo *info);

/* The threads the CPU target's kernels run on in this process: the last
 * nerveSetCpuThreads, else $NERVE_NUM_THREADS, else the cores the process
 * may run on. Results do not depend on it. */
NERVE_CAPI_EXPORTED int nerveGetCpuThreads(void);
/* Sets it for the launches that follow; 0 goes back to the default, fewer
 * than 0 (or more than 4096) is an error. */
NERVE_CAPI_EXPORTED NerveStatus nerveSetCpuThreads(int threads);

/* Chooses the GPU nerve opens (before its first use of CUDA; afterwards
 * only the open one can be chosen: one GPU per process). */
NERVE_CAPI_EXPORTED NerveStatus nerveCudaSelectDevice(int ordinal);

/* The chip nerve compiles for on a GPU of compute capability
 * `computeCapability` (86 gives "sm_80": PTX runs on its own and later
 * architectures); an empty string when nerve has none for it. The string is
 * static. */
NERVE_CAPI_EXPORTED NerveStringRef nerveChipForComputeCapability(int computeCapability);

#ifdef __cplusplus
}
#endif

#endif /* NERVE_C_NERVE_H */
