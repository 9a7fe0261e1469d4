//===- nerve.h - nerve's C++ API ---------------------------------*- C++ -*-===//
//
// Compile a spec, look up its kernels, and run them on caller-owned device
// buffers and streams or on host arrays. Only the C++ standard library is
// needed to use this header; failures come back as values (Status, Result).
//
//   auto module = nerve::compile(specText, options);
//   if (!module) { std::cerr << module.message() << "\n"; return 1; }
//   for (const nerve::EntryInfo &e : (*module)->entries()) ...
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_NERVE_H
#define NERVE_NERVE_H

#include "nerve/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace nerve {

/// Where kernels run. `Auto` picks CUDA when a driver and a device are
/// present, the CPU otherwise.
enum class Target { Auto, CPU, CUDA };

/// Element types of kernel arguments.
enum class DType { F32, F16, BF16, F64, I1, I8, I32, I64, Index };

const char *toString(DType dtype);
const char *toString(Target target);
/// Bytes one element occupies in memory (i1 takes a byte).
int64_t byteWidth(DType dtype);

struct CompileOptions {
  Target target = Target::Auto;
  /// GPU architecture: sm_80, sm_89, sm_90 or sm_100.
  std::string chip = "sm_90";
  /// LLVM optimisation level for host and device code, 0-3. The driver
  /// compiles the PTX at one level more (ptxas -O1 to -O4).
  int optLevel = 3;
  /// Allow reassociation and approximate math everywhere. Off, f32 and f64
  /// math is IEEE's, but for one exception that exactMath removes.
  bool fastMath = false;
  /// IEEE semantics in every kernel. Off (the default), a GPU kernel whose
  /// buffers are all f16 or bf16 computes in f32 with approximate
  /// division, exp, log, log1p and tanh and with multiplications and
  /// additions that may contract into fused multiply-adds: their error
  /// (a few f32 ulps) is far below the 16-bit rounding of every result,
  /// and the exact forms cost such kernels a quarter of their speed
  /// (docs/decisions.md). Cannot be combined with fastMath.
  bool exactMath = false;
  /// Contractions as tiled kernels where the tiling heuristic takes them
  /// (one row, column and contracted dimension, a unit stride in each
  /// operand): f16 or bf16 operands on tensor cores (wgmma, mma.sync), f32
  /// ones with IEEE fused multiply-adds; off, every contraction runs as the
  /// general loops. Products are summed in f32 either way, in a different
  /// order.
  bool tensorCores = true;
  /// f32 contractions may read their operands as tf32 on tensor cores
  /// (wgmma on sm_90, mma.sync elsewhere): 10-bit mantissas, f32
  /// sums, as PyTorch's allow_tf32. Off: f32 products are IEEE.
  bool tf32 = false;
  /// libdevice.10.bc; empty: look in $CUDA_HOME and /usr/local/cuda.
  std::string libdevice;
  /// Time steps of a neuron whose loads are issued together (1-128; 0 picks
  /// enough for 64 bytes in flight per thread, 256 bytes of each row when
  /// time is the contiguous dimension): more loads in flight, more
  /// registers.
  int neuronTimeBlock = 0;
  /// CUDA: generate each kernel's PTX at the first launch of its module
  /// instead of in compile. A spec compiles to alternatives (vectors or
  /// elements, block sizes, row widths) of which a run launches a few:
  /// compile then does only nerve's passes and the host code, the first
  /// module (loaded at once, so that compile finds out whether the driver
  /// takes it) and each later one at its first launch the rest. The PTX is
  /// the same either way.
  bool lazyKernels = false;
  /// Compile for these sizes (dimension name -> size): every argument of a
  /// kernel with a dimension of that name (not a fold of it, not one a
  /// concat joins along) has that size, fixed at compile time. The kernels
  /// carry no alternatives for other sizes and fold their index arithmetic;
  /// launching with other sizes is an error.
  std::vector<std::pair<std::string, int64_t>> staticSizes;
  /// Compile each kernel at its first launch for the sizes that launch
  /// binds (as staticSizes would, that kernel alone), and again for every
  /// new set of sizes; each such compile goes through the caches like any
  /// other. compile() itself only parses and verifies the spec. After
  /// kMaxSizeSpecializations sets of sizes for one kernel, launches with
  /// further sizes share one compile for dynamic sizes.
  bool specializeSizes = false;
  static constexpr int kMaxSizeSpecializations = 8;
  /// CPU target: the threads this module's launches run on; 0, the
  /// default, follows cpuThreads() at each launch.
  int cpuThreads = 0;
  /// Compile only this kernel of the spec (empty: all of them).
  std::string entry;
  /// The name diagnostics give the spec (compileFile: the file's path).
  std::string sourceName = "spec";

  /// Reuse compiled kernels: a module compiled earlier in this process with
  /// the same spec and options is returned as it is; otherwise the disk
  /// cache is asked before compiling, and filled after. $NERVE_CACHE=0
  /// turns both off for the whole process.
  bool cache = true;
  /// The disk cache's directory; empty: $NERVE_CACHE_DIR, else
  /// $XDG_CACHE_HOME/nerve, else ~/.cache/nerve.
  std::string cacheDir;
  /// Bound of the disk cache in bytes, least recently used entries evicted
  /// first; 0: $NERVE_CACHE_MAX_BYTES, else 1 GiB.
  int64_t cacheMaxBytes = 0;
};

/// One argument of a kernel, as its spec declares it.
struct ArgInfo {
  std::string name;
  bool isOutput = false;
  bool isTensor = false;
  DType dtype = DType::F32;
  /// Dimension names in layout order, outermost first ("i/64" for folds).
  std::vector<std::string> dims;
  /// Static sizes, -1 where bound at launch.
  std::vector<int64_t> sizes;
  /// Strides in elements, -1 where bound at launch; empty when row-major.
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

/// A kernel of a compiled module.
struct EntryInfo {
  std::string name;
  std::vector<ArgInfo> args;
  /// Dimensions whose size may differ between arguments (the axes a
  /// concat joins along); every other name has one size per launch.
  std::vector<std::string> variableDims;
  unsigned numInputs() const;
};

/// An argument value: a tensor (pointer, sizes and strides in the
/// argument's dimension order, in elements) or a scalar.
struct Arg {
  enum class Kind { Tensor, Float, Int } kind = Kind::Tensor;
  void *data = nullptr;
  std::vector<int64_t> sizes;
  /// Empty: row-major in the argument's dimension order.
  std::vector<int64_t> strides;
  double floatValue = 0;
  int64_t intValue = 0;

  static Arg tensor(void *data, std::vector<int64_t> sizes,
                    std::vector<int64_t> strides = {});
  static Arg scalar(double value);
  static Arg scalarInt(int64_t value);
};

/// A compiled spec: its kernels, ready to launch.
class PreparedLaunch;

class Module {
public:
  virtual ~Module();

  Target target() const;
  const std::vector<EntryInfo> &entries() const;
  /// The kernel called `name`, or nullptr.
  const EntryInfo *findEntry(const std::string &name) const;

  /// PTX of the device code (empty for the CPU target).
  const std::string &ptx() const;
  /// LLVM IR of the host code (produced on first request, lowering the
  /// spec again when the module came from a cache).
  const std::string &llvmIR() const;

  /// How long each stage of compiling and loading took, in milliseconds:
  /// parsing, every pass, code generation, linking the host code, the
  /// driver's module load; for a module from the disk cache, reading the
  /// entry and loading it. A module from the in-process cache reports the
  /// stages of its first compile. For CUDA, the stages marked "(beside the
  /// host code)" (the PTX's generation) ran at the same time as the host
  /// code's lowering and code generation: the stages add up to more than
  /// the compile took.
  const std::vector<std::pair<std::string, double>> &compileTimes() const;

  /// Runs `entry` on buffers the caller owns: device pointers for CUDA (on
  /// `stream`, a CUstream; null is the default stream) and host pointers
  /// for the CPU. nerve does not synchronise the stream.
  Status launch(const std::string &entry, const std::vector<Arg> &args,
                void *stream = nullptr) const;

  /// The module whose kernel a launch of `entry` with `args` runs: for a
  /// module compiled with specializeSizes, the one compiled for the sizes
  /// `args` bind (compiled now if no launch compiled it yet: a warm-up, and
  /// its compileTimes() say where that compile went), owned by this module;
  /// otherwise this module. Only the sizes of `args` are read.
  Result<const Module *> compiledFor(const std::string &entry,
                                     const std::vector<Arg> &args) const;

  /// Runs `entry` on host memory and waits for it: for CUDA, every tensor
  /// is copied to the device, and the outputs are copied back.
  Status run(const std::string &entry, const std::vector<Arg> &args) const;

  struct Impl;

protected:
  explicit Module(std::unique_ptr<Impl> impl);
  /// Runs entry number `index` on packed arguments (ArgPacker's pointers).
  Status launchPacked(size_t index, void **pointers, void *stream) const;
  std::unique_ptr<Impl> impl_;
  friend Result<std::shared_ptr<Module>> compile(const std::string &,
                                                 const CompileOptions &);
  friend class PreparedLaunch;
  friend Result<std::unique_ptr<PreparedLaunch>>
  prepareLaunch(std::shared_ptr<const Module>, const std::string &, const std::vector<Arg> &);
};

/// One entry's launch with its arguments checked and packed once (sizes,
/// strides, scalars and the dimensions they bind), for callers that launch
/// the same shapes again and again (a framework's layer): each launch gives
/// only the tensors' data pointers. It holds its module; launches from
/// several threads at once are safe.
class PreparedLaunch {
public:
  ~PreparedLaunch();
  /// How many data pointers a launch takes: one per tensor argument.
  size_t tensorCount() const;
  /// Launches with `data[i]` as the data of the i-th tensor argument (in
  /// the entry's argument order), on `stream` as Module::launch does.
  Status launch(const void *const *data, size_t count, void *stream = nullptr) const;

  struct Impl;

private:
  explicit PreparedLaunch(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend Result<std::unique_ptr<PreparedLaunch>>
  prepareLaunch(std::shared_ptr<const Module>, const std::string &, const std::vector<Arg> &);
};

/// Checks and packs `args` for `entry` of `module` as Module::launch does,
/// except that their data pointers are not read (each launch gives its own).
Result<std::unique_ptr<PreparedLaunch>> prepareLaunch(std::shared_ptr<const Module> module,
                                                      const std::string &entry,
                                                      const std::vector<Arg> &args);

/// Compiles spec text (a module of tdim kernels and neuron ops).
Result<std::shared_ptr<Module>> compile(const std::string &spec,
                                        const CompileOptions &options = {});
/// What `emit` produces.
enum class Emit { PTX, LLVMIR };

/// Lowers a spec without loading or running anything, so it needs no GPU:
/// the PTX of its device code (CUDA target), or the LLVM IR of its host
/// code (for the target asked, the CPU when `Auto`).
Result<std::string> emit(const std::string &spec, const CompileOptions &options, Emit what);

/// The layout a specialisation gives one tensor argument: its dimensions,
/// as positions in the spec's declared order, from the outermost in memory
/// to the innermost; every stride is bound at launch except the
/// innermost's, which is 1 when `unitInnermost`.
struct ArgLayout {
  std::vector<int> order;
  bool unitInnermost = true;
};

/// `spec` with the arguments of kernel `entry` retyped to `layouts` (one per
/// argument, in argument order; nullopt keeps an argument's type). tdim
/// kernels name dimensions, never positions, so the result computes the
/// same: compiled, it runs on tensors laid out as given (a permuted,
/// sliced or channels-last view) without a copy.
Result<std::string> specializeLayouts(const std::string &spec, const std::string &entry,
                                      const std::vector<std::optional<ArgLayout>> &layouts);

/// Compiles the spec in a file.
Result<std::shared_ptr<Module>> compileFile(const std::string &path,
                                            const CompileOptions &options = {});

/// What the kernel caches did in this process so far.
struct CacheStats {
  uint64_t memoryHits = 0; ///< compiles answered by a module of this process
  uint64_t diskHits = 0;   ///< compiles answered by the disk cache
  uint64_t misses = 0;     ///< compiles that ran the compiler (cache on)
  uint64_t stores = 0;     ///< entries written to the disk cache
  uint64_t discarded = 0;  ///< disk entries found corrupted or stale, deleted
};
CacheStats cacheStats();

/// Forgets the modules the in-process cache holds (modules still in use
/// stay alive); the next compile of each goes to the disk cache.
void clearMemoryCache();

/// Blocks until the kernels that compiles with lazyKernels left to the
/// background threads are generated. A program never needs it (a launch
/// waits for its own kernels); benchmarks call it so that one compile's
/// background work does not run into the next one's timing.
void waitForBackgroundKernels();

/// The disk cache's directory for `options` (after $NERVE_CACHE_DIR and
/// the other defaults), and whether it is used at all ($NERVE_CACHE=0 and
/// `options.cache` turn it off).
std::string cacheDirectory(const CompileOptions &options = {});
bool diskCacheEnabled(const CompileOptions &options = {});

/// Deletes every entry of the disk cache `options` name; returns how many
/// were deleted.
Result<int64_t> clearDiskCache(const CompileOptions &options = {});

/// Whether a CUDA driver library and at least one device are usable; when
/// not, `why` says what is missing.
bool cudaAvailable(std::string *why = nullptr);

/// The GPU nerve runs kernels on.
struct CudaDeviceInfo {
  /// Its CUDA ordinal, as PyTorch's `cuda:N` counts.
  int ordinal = 0;
  std::string name;
  /// 90 for sm_90.
  int computeCapability = 0;
  int multiprocessors = 0;
  /// The driver's CUDA version, 13000 for 13.0.
  int driverVersion = 0;
};
/// Opens the GPU (once per process) and describes it.
Result<CudaDeviceInfo> cudaDevice();

/// Chooses the GPU nerve opens, by CUDA ordinal. Before nerve first uses
/// CUDA in the process it overrides $NERVE_CUDA_DEVICE (default 0); once a
/// GPU is open, choosing it again succeeds and any other is an error: a
/// process uses one GPU (as a DDP worker does).
Status selectCudaDevice(int ordinal);

/// The threads the CPU target's kernels run on, in this process: the last
/// setCpuThreads, else $NERVE_NUM_THREADS, else the cores this process may
/// run on. A kernel's results do not depend on it (reductions combine in
/// an order fixed by the shape alone).
int cpuThreads();
/// Sets cpuThreads() for the launches that follow, from any thread; 0
/// goes back to the default. Fewer than 0 is an error.
Status setCpuThreads(int threads);

/// nerve's and LLVM's versions, one line.
std::string versionString();

} // namespace nerve

#include "nerve/Builders.h"

#endif // NERVE_NERVE_H
