//===- nerve-run.cpp - compile a spec and run one of its kernels --------===//
//
//   nerve-run SPEC.mlir [--entry NAME] [--target cuda|cpu|auto]
//             [--input NAME=FILE.npy | NAME=VALUE ...] [--random SEED]
//             [--dim NAME=SIZE ...] [--output-dir DIR] [--bench N] ...
//
// Binds every input from a .npy file, a literal scalar or seeded random
// data, runs the kernel on the GPU (or the CPU, saying which), and writes
// every output as NAME.npy.
//
//===----------------------------------------------------------------------===//

#include "nerve/Runtime/ArgBuffer.h"
#include "nerve/Runtime/CudaDriver.h"
#include "nerve/Runtime/DeviceMirror.h"
#include "nerve/Support/Version.h"
#include "nerve/nerve.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

using namespace nerve;
namespace cl = llvm::cl;

static cl::OptionCategory category("nerve-run options");
static cl::opt<std::string> specPath(cl::Positional, cl::desc("<spec.mlir>"), cl::Required,
                                     cl::cat(category));
static cl::opt<std::string> entryName("entry", cl::desc("Kernel to run (default: the only one)"),
                                      cl::value_desc("NAME"), cl::cat(category));
static cl::opt<std::string> targetName("target", cl::desc("cuda, cpu or auto (default)"),
                                       cl::init("auto"), cl::cat(category));
static cl::list<std::string> inputs("input",
                                    cl::desc("Bind an input: NAME=FILE.npy, or NAME=VALUE for a scalar"),
                                    cl::value_desc("NAME=FILE"), cl::cat(category));
static cl::list<std::string> dims("dim", cl::desc("Size of a dimension no input binds"),
                                  cl::value_desc("NAME=SIZE"), cl::cat(category));
static cl::opt<int64_t> randomSeed("random",
                                   cl::desc("Fill unbound inputs with seeded standard-normal data"),
                                   cl::value_desc("SEED"), cl::init(-1), cl::cat(category));
static cl::opt<std::string> outputDir("output-dir", cl::desc("Where outputs are written"),
                                      cl::init("."), cl::value_desc("DIR"), cl::cat(category));
static cl::opt<bool> writeOutputs("write-outputs",
                                  cl::desc("Write the outputs as NAME.npy (default true)"),
                                  cl::init(true), cl::cat(category));
static cl::opt<bool> saveInputs("save-inputs",
                                cl::desc("Also write the inputs (random ones included) as NAME.npy"),
                                cl::cat(category));
static cl::opt<unsigned> benchRuns("bench",
                                   cl::desc("Time N launches after warm-up, each once the one "
                                            "before has finished"),
                                   cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<std::string> l2Flush(
    "l2-flush",
    cl::desc("How --bench empties L2 before each timed run: read (default: a kernel reads "
             "256 MiB, leaving clean lines), write (a 256 MiB memset, leaving dirty lines the "
             "timed run writes back) or none"),
    cl::init("read"), cl::cat(category));
static cl::opt<std::string> chip("chip", cl::desc("GPU architecture (sm_80, sm_89, sm_90, sm_100)"),
                                 cl::init("sm_90"), cl::cat(category));
static cl::opt<unsigned> optLevel("opt-level", cl::desc("Optimisation level 0-3"), cl::init(3),
                                  cl::cat(category));
static cl::opt<int> timeBlock("time-block",
                              cl::desc("Time steps of a neuron whose loads are issued together "
                                       "(1-128; default 0: automatic)"),
                              cl::init(0), cl::cat(category));
static cl::opt<bool> showTiming("timing",
                                cl::desc("Print how long parsing, each pass, code generation, "
                                         "the cache, the module load and the first launch took"),
                                cl::cat(category));
static cl::opt<std::string> libdevicePath(
    "libdevice", cl::desc("libdevice.10.bc to link, or 'none' (default: find a CUDA toolkit)"),
    cl::init(""), cl::cat(category));

static cl::opt<bool> useCache("cache",
                              cl::desc("Reuse compiled kernels from the kernel cache, and fill "
                                       "it (default on; --cache=false compiles afresh)"),
                              cl::init(true), cl::cat(category));
static cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("Kernel cache directory (default: $NERVE_CACHE_DIR, $XDG_CACHE_HOME/nerve or "
             "~/.cache/nerve)"),
    cl::init(""), cl::cat(category));

static int fail(const std::string &message) {
  // Compiler diagnostics already read "file:line:col: error: ...".
  static const llvm::Regex located("^[^ ]+:[0-9]+:[0-9]+: (error|warning|note): ");
  if (located.match(message))
    llvm::errs() << message << "\n";
  else
    llvm::errs() << "nerve-run: error: " << message << "\n";
  return 1;
}

static bool splitAssignment(const std::string &text, std::string &name, std::string &value) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return false;
  name = text.substr(0, eq);
  value = text.substr(eq + 1);
  return true;
}

static std::string argNames(const EntryInfo &entry) {
  std::string s;
  for (const ArgInfo &a : entry.args)
    s += (s.empty() ? "" : ", ") + a.name;
  return s;
}

static double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

namespace {
struct BenchResult {
  double medianMs = 0, minMs = 0, copyGBs = 0;
  /// A device copy moving as many bytes as the kernel (half read, half
  /// written), timed the same way: what "as fast as memory allows" means at
  /// this size, launch latency and ramp-up included. 0 on the CPU.
  double sameSizeCopyMs = 0;
};
} // namespace

/// Bytes per second a large host memcpy reaches (read + written), the CPU's
/// counterpart of the device copy bandwidth.
static double hostCopyBandwidth() {
  const size_t bytes = size_t(256) << 20;
  std::vector<uint8_t> a(bytes, 1), b(bytes, 0);
  std::vector<double> times;
  for (int i = 0; i < 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    a[i] = b[bytes - 1 - i];
  }
  return 2.0 * bytes / medianOf(times);
}

static Result<BenchResult> benchCpu(const Module &module, const std::string &entry,
                                    const std::vector<Arg> &args, unsigned runs) {
  BenchResult r;
  std::vector<double> times;
  for (unsigned i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (Status s = module.launch(entry, args); !s)
      return s;
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  r.medianMs = medianOf(times);
  r.minMs = *std::min_element(times.begin(), times.end());
  r.copyGBs = hostCopyBandwidth() / 1e9;
  return r;
}

/// Empties L2 before a timed run, so that no run finds its inputs there.
/// H200's L2 holds 50 MB, as much as a mid-sized problem. How matters for
/// kernels that write little: a memset leaves L2 full of dirty lines, and
/// the timed kernel then pays for writing back 50 MB it never wrote (a third
/// of a 16-bit 16384 x 4096 row sum's own bytes). The default reads 256 MiB
/// instead, with a row sum nerve compiles, which leaves clean lines.
class L2Flush {
public:
  enum class Mode { Read, Write, None };

  static Result<Mode> parseMode(const std::string &name) {
    if (name == "read")
      return Mode::Read;
    if (name == "write")
      return Mode::Write;
    if (name == "none")
      return Mode::None;
    return Status::error("--l2-flush takes read, write or none, not '" + name + "'");
  }

  /// What `mode` does, as --bench reports it.
  static const char *describe(Mode mode) {
    switch (mode) {
    case Mode::Read:
      return "emptied by reading 256 MiB (--l2-flush=read)";
    case Mode::Write:
      return "emptied by a 256 MiB memset, leaving dirty lines (--l2-flush=write)";
    case Mode::None:
      return "left as the last run left it (--l2-flush=none)";
    }
    return "";
  }

  static Result<std::unique_ptr<L2Flush>> create(Mode mode, cuda::Device &device,
                                                 const CompileOptions &options) {
    std::unique_ptr<L2Flush> flush(new L2Flush(mode, device));
    if (mode == Mode::None)
      return flush;
    const cuda::DriverAPI &api = device.api();
    if (Status s = device.check(api.cuMemAlloc(&flush->buffer_, kBytes),
                                "allocating the L2 flush buffer");
        !s)
      return s;
    if (mode == Mode::Write)
      return flush;
    api.cuMemsetD8(flush->buffer_, 0, kBytes); // the reader's input, defined
    if (Status s = device.check(api.cuMemAlloc(&flush->sums_, kRows * 4),
                                "allocating the L2 flush buffer");
        !s)
      return s;
    // kRows x kColumns f32, summed by rows.
    static const char *spec = R"(
      !x = !tdim.tensor<[r: 65536, c: 1024], f32>
      tdim.kernel @l2_flush(%x: !x) -> (%sum: !tdim.tensor<[r: 65536], f32>) {
        tdim.reduce ins(%x : !x) outs(%sum : !tdim.tensor<[r: 65536], f32>) over [c]
          init [0.0 : f32] combine {
          ^bb0(%a: f32, %b: f32):
            %s = arith.addf %a, %b : f32
            tdim.yield %s : f32
          }
        tdim.return
      })";
    CompileOptions flushOptions = options;
    flushOptions.sourceName = "<l2-flush>";
    Result<std::shared_ptr<Module>> compiled = compile(spec, flushOptions);
    if (!compiled)
      return compiled.status();
    flush->reader_ = compiled.take();
    return flush;
  }

  /// Enqueues the eviction on `stream`; `i` varies the memset's byte.
  Status enqueue(cuda::CUstream stream, unsigned i) const {
    const cuda::DriverAPI &api = device_.api();
    switch (mode_) {
    case Mode::None:
      return Status();
    case Mode::Write:
      return device_.check(api.cuMemsetD8Async(buffer_, static_cast<unsigned char>(i), kBytes,
                                               stream),
                           "cuMemsetD8Async");
    case Mode::Read:
      return reader_->launch(
          "l2_flush",
          {Arg::tensor(reinterpret_cast<void *>(buffer_), {int64_t(kRows), int64_t(kColumns)}),
           Arg::tensor(reinterpret_cast<void *>(sums_), {int64_t(kRows)})},
          stream);
    }
    return Status();
  }

  ~L2Flush() {
    if (buffer_)
      device_.api().cuMemFree(buffer_);
    if (sums_)
      device_.api().cuMemFree(sums_);
  }

private:
  static constexpr size_t kRows = 65536, kColumns = 1024; // 256 MiB of f32
  static constexpr size_t kBytes = kRows * kColumns * sizeof(float);

  L2Flush(Mode mode, cuda::Device &device) : mode_(mode), device_(device) {}

  Mode mode_;
  cuda::Device &device_;
  cuda::CUdeviceptr buffer_ = 0, sums_ = 0;
  std::shared_ptr<Module> reader_;
};

/// Times `runs` launches with device events after a warm-up, L2 emptied
/// before each as `flushMode` says, the device's copy bandwidth (a 1 GiB
/// device-to-device copy, bytes read plus written) and a copy moving
/// `bytesMoved` in the same process, emptied the same way.
static Result<BenchResult> benchGpu(const Module &module, const std::string &entry,
                                    const std::vector<Arg> &args, unsigned runs,
                                    uint64_t bytesMoved, L2Flush::Mode flushMode,
                                    const CompileOptions &options) {
  Result<cuda::Device *> found = cuda::Device::get();
  if (!found)
    return found.status();
  cuda::Device *device = *found;
  const cuda::DriverAPI &api = device->api();
  cuda::CUstream stream = nullptr;
  if (Status s = device->check(api.cuStreamCreate(&stream, 0), "cuStreamCreate"); !s)
    return s;
  std::vector<cuda::CUevent> events(2 * runs + 2, nullptr);
  for (cuda::CUevent &e : events)
    if (Status s = device->check(api.cuEventCreate(&e, 0), "cuEventCreate"); !s)
      return s;
  auto cleanup = [&] {
    for (cuda::CUevent e : events)
      if (e)
        api.cuEventDestroy(e);
    api.cuStreamDestroy(stream);
  };
  BenchResult r;
  Result<std::unique_ptr<L2Flush>> flush = L2Flush::create(flushMode, *device, options);
  if (!flush) {
    cleanup();
    return flush.status();
  }
  Status status;
  for (int warm = 0; warm < 3 && status; ++warm)
    status = module.launch(entry, args, stream);
  std::vector<double> times;
  for (unsigned i = 0; i < runs && status; ++i) {
    status = (*flush)->enqueue(stream, i);
    if (!status)
      break;
    api.cuEventRecord(events[2 * i], stream);
    status = module.launch(entry, args, stream);
    api.cuEventRecord(events[2 * i + 1], stream);
    // Each run waits for the one before, as the copies below and the
    // benchmarks' PyTorch runs are timed: enqueued back to back, the same
    // kernels measured 1-11% slower on an H200 (docs/decisions.md, "Timed
    // runs wait for each other").
    if (status)
      status = device->check(api.cuEventSynchronize(events[2 * i + 1]),
                             ("running kernel @" + entry + " on the GPU").c_str());
  }
  if (status)
    status = device->check(api.cuStreamSynchronize(stream),
                           ("running kernel @" + entry + " on the GPU").c_str());
  // The median time of `timed` device copies after `warm` untimed ones,
  // with L2 evicted before each when `flushFirst`; failures go to `status`.
  auto timeCopies = [&](cuda::CUdeviceptr to, cuda::CUdeviceptr from, size_t bytes,
                        unsigned warm, unsigned timed, bool flushFirst) {
    std::vector<double> copies;
    for (unsigned i = 0; i < warm + timed && status; ++i) {
      if (flushFirst && !(status = (*flush)->enqueue(stream, i)))
        break;
      api.cuEventRecord(events[0], stream);
      status = device->check(api.cuMemcpyAsync(to, from, bytes, stream), "cuMemcpyAsync");
      api.cuEventRecord(events[1], stream);
      api.cuEventSynchronize(events[1]);
      float ms = 0;
      api.cuEventElapsedTime(&ms, events[0], events[1]);
      if (i >= warm)
        copies.push_back(ms);
    }
    return copies.empty() ? 0.0 : medianOf(copies);
  };
  for (unsigned i = 0; i < runs && status; ++i) {
    float ms = 0;
    api.cuEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]);
    times.push_back(ms);
  }
  if (status) {
    const size_t bytes = size_t(1) << 30;
    cuda::CUdeviceptr a = 0, b = 0;
    status = device->check(api.cuMemAlloc(&a, bytes), "allocating 1 GiB for the copy bandwidth");
    if (status)
      status = device->check(api.cuMemAlloc(&b, bytes), "allocating 1 GiB for the copy bandwidth");
    if (status) {
      api.cuMemsetD8(a, 1, bytes);
      double ms = timeCopies(b, a, bytes, /*warm=*/2, /*timed=*/10, /*flushFirst=*/false);
      if (status)
        r.copyGBs = 2.0 * bytes / (ms * 1e-3) / 1e9;
    }
    if (a)
      api.cuMemFree(a);
    if (b)
      api.cuMemFree(b);
  }
  // The same-size copy, L2 flushed before each run as for the kernel; after
  // the reference copy, which it would otherwise disturb (measured: the
  // 1 GiB reference fell from 4220 to 3800 GB/s after 2 GiB same-size copies).
  size_t half = static_cast<size_t>(bytesMoved / 2);
  cuda::CUdeviceptr from = 0, to = 0;
  if (status && half > 0 && api.cuMemAlloc(&from, half) == cuda::CUDA_SUCCESS &&
      api.cuMemAlloc(&to, half) == cuda::CUDA_SUCCESS) {
    api.cuMemsetD8(from, 1, half);
    double ms = timeCopies(to, from, half, /*warm=*/3, runs, /*flushFirst=*/true);
    if (status)
      r.sameSizeCopyMs = ms;
  }
  if (from)
    api.cuMemFree(from);
  if (to)
    api.cuMemFree(to);
  cleanup();
  if (!status)
    return status;
  r.medianMs = medianOf(times);
  r.minMs = *std::min_element(times.begin(), times.end());
  return r;
}

/// The compile options the flags ask for.
static Result<CompileOptions> compileOptions() {
  CompileOptions options;
  if (targetName == "cuda")
    options.target = Target::CUDA;
  else if (targetName == "cpu")
    options.target = Target::CPU;
  else if (targetName != "auto")
    return Status::error("unknown target '" + targetName + "'; use cuda, cpu or auto");
  options.chip = chip;
  options.optLevel = static_cast<int>(optLevel);
  options.libdevice = libdevicePath;
  options.neuronTimeBlock = timeBlock;
  options.cache = useCache;
  options.cacheDir = cacheDir;
  return options;
}

/// The kernel --entry names, or the spec's only one.
static Result<const EntryInfo *> chooseEntry(const Module &module) {
  if (entryName.empty()) {
    if (module.entries().size() != 1) {
      std::string names;
      for (const EntryInfo &e : module.entries())
        names += (names.empty() ? "@" : ", @") + e.name;
      return Status::error("the spec has kernels " + names + "; choose one with --entry");
    }
    return &module.entries().front();
  }
  if (const EntryInfo *entry = module.findEntry(entryName))
    return entry;
  return Status::error("the spec has no kernel @" + entryName);
}

/// One run's arguments, as the flags give them and as they are laid out.
struct RunArgs {
  const EntryInfo *entry = nullptr;
  std::map<std::string, std::string> given; ///< --input by name
  DimBinding binding;                       ///< sizes of the dimensions
  std::vector<std::optional<ArgBuffer>> buffers;
  std::vector<Arg> args;
  std::vector<std::optional<HostArray>> loaded;
  int64_t bytesMoved = 0;

  explicit RunArgs(const EntryInfo &e)
      : entry(&e), buffers(e.args.size()), args(e.args.size()), loaded(e.args.size()) {}
};

/// --input and --dim by name.
static Status parseGiven(RunArgs &run) {
  const EntryInfo &entry = *run.entry;
  for (const std::string &text : inputs) {
    std::string name, value;
    if (!splitAssignment(text, name, value))
      return Status::error("--input expects NAME=FILE.npy or NAME=VALUE, not '" + text + "'");
    auto it = std::find_if(entry.args.begin(), entry.args.end(),
                           [&](const ArgInfo &a) { return a.name == name; });
    if (it == entry.args.end())
      return Status::error("kernel @" + entry.name + " has no argument `" + name +
                           "` (it takes " + argNames(entry) + ")");
    if (it->isOutput)
      return Status::error("`" + name + "` is an output of @" + entry.name +
                           "; it is written, not read");
    run.given[name] = value;
  }
  for (const std::string &text : dims) {
    std::string name, value;
    char *end = nullptr;
    if (!splitAssignment(text, name, value))
      return Status::error("--dim expects NAME=SIZE, not '" + text + "'");
    long long size = std::strtoll(value.c_str(), &end, 10);
    if (*end || size < 0)
      return Status::error("--dim " + name + " needs a non-negative integer size, not '" + value +
                           "'");
    run.binding[name] = size;
  }
  return Status();
}

/// Inputs from files first: they bind the sizes of dynamic dimensions.
static Status loadGiven(RunArgs &run) {
  const EntryInfo &entry = *run.entry;
  for (size_t i = 0; i < entry.args.size(); ++i) {
    const ArgInfo &a = entry.args[i];
    auto it = run.given.find(a.name);
    if (a.isOutput || it == run.given.end())
      continue;
    if (!a.isTensor) {
      char *end = nullptr;
      double v = std::strtod(it->second.c_str(), &end);
      if (end == it->second.c_str() || *end)
        return Status::error("scalar %" + a.name + " needs a number, not '" + it->second + "'");
      run.args[i] = Arg::scalar(v);
      continue;
    }
    Result<HostArray> array = readNpy(it->second);
    if (!array)
      return array.status();
    if (array->dtype != a.dtype && !(a.dtype == DType::BF16 && array->dtype == DType::F32))
      return Status::error(it->second + " holds " + toString(array->dtype) + " but argument %" +
                           a.name + " is " + toString(a.dtype));
    if (a.dtype == DType::BF16 && array->dtype == DType::F32) {
      HostArray rounded = HostArray::zeros(DType::BF16, array->shape);
      for (int64_t e = 0; e < array->numElements(); ++e)
        rounded.setDouble(e, array->getDouble(e));
      *array = std::move(rounded);
    }
    if (Status s = bindShape(a, array->shape, run.binding, entry.variableDims); !s)
      return s;
    run.loaded[i] = array.take();
  }
  return Status();
}

/// All host arrays together must fit (random inputs exist twice: as
/// generated and laid out), or the run would end in the OOM killer.
static Status checkHostMemory(const RunArgs &run) {
  const EntryInfo &entry = *run.entry;
  uint64_t hostBytes = 0;
  for (size_t i = 0; i < entry.args.size(); ++i) {
    const ArgInfo &a = entry.args[i];
    if (!a.isTensor)
      continue;
    Result<std::vector<int64_t>> sizes = sizesFor(a, run.binding);
    if (!sizes)
      continue; // reported below, where the argument is needed
    uint64_t bytes = static_cast<uint64_t>(byteWidth(a.dtype));
    for (int64_t size : *sizes)
      bytes *= static_cast<uint64_t>(size); // each fits: sizesFor checked
    hostBytes += bytes * (a.isOutput || run.loaded[i] ? 1 : 2);
  }
  if (hostBytes > hostMemoryBytes())
    return Status::error("the arguments of @" + entry.name + " need " +
                         std::to_string(hostBytes) +
                         " bytes of host memory together, more than this machine's memory (" +
                         std::to_string(hostMemoryBytes()) + " bytes)");
  return Status();
}

/// Random values (--random) for the inputs no flag gives.
static Status randomInputs(RunArgs &run) {
  const EntryInfo &entry = *run.entry;
  std::mt19937_64 rng(static_cast<uint64_t>(randomSeed < 0 ? 0 : randomSeed.getValue()));
  for (size_t i = 0; i < entry.args.size(); ++i) {
    const ArgInfo &a = entry.args[i];
    if (a.isOutput || run.loaded[i] || run.given.count(a.name))
      continue;
    if (randomSeed < 0)
      return Status::error("argument %" + a.name + " has no value: pass --input " + a.name +
                           "=FILE.npy or --random SEED");
    if (!a.isTensor) {
      HostArray v = randomArray(a.dtype, {}, rng);
      run.args[i] = Arg::scalar(v.getDouble(0));
      continue;
    }
    Result<std::vector<int64_t>> sizes = sizesFor(a, run.binding);
    if (!sizes)
      return sizes.status();
    run.loaded[i] = randomArray(a.dtype, *sizes, rng);
    if (Status s = bindShape(a, run.loaded[i]->shape, run.binding, entry.variableDims); !s)
      return s;
  }
  return Status();
}

/// A file in --output-dir.
static std::string outputFile(const std::string &file) {
  llvm::SmallString<256> path(outputDir.getValue());
  llvm::sys::path::append(path, file);
  return std::string(path.str());
}
static std::string outputPath(const std::string &name) { return outputFile(name + ".npy"); }

/// Every tensor laid out in its buffer (inputs filled), and the inputs
/// saved with --save-inputs.
static Status layOut(RunArgs &run) {
  const EntryInfo &entry = *run.entry;
  for (size_t i = 0; i < entry.args.size(); ++i) {
    const ArgInfo &a = entry.args[i];
    if (!a.isTensor) {
      if (saveInputs) {
        HostArray v = HostArray::zeros(a.dtype, {});
        v.setDouble(0, run.args[i].floatValue);
        if (Status s = writeNpy(outputPath(a.name), v); !s)
          return s;
      }
      continue;
    }
    Result<std::vector<int64_t>> sizes = sizesFor(a, run.binding);
    if (!sizes)
      return sizes.status();
    Result<ArgBuffer> buffer = makeArgBuffer(a, *sizes);
    if (!buffer)
      return buffer.status();
    if (run.loaded[i]) {
      if (Status s = scatter(*run.loaded[i], *buffer); !s)
        return Status::error("argument %" + a.name + ": " + s.message());
      if (saveInputs)
        if (Status s = writeNpy(outputPath(a.name), *run.loaded[i]); !s)
          return s;
    }
    run.bytesMoved += buffer->numElements() * byteWidth(a.dtype);
    run.buffers[i] = buffer.take();
    run.args[i] = run.buffers[i]->asArg();
  }
  return Status();
}

/// The signature beside the arrays, so a checker can align them by name.
static Status writeEntryJson(const EntryInfo &entry) {
  std::error_code ec;
  llvm::raw_fd_ostream json(outputFile("entry.json"), ec);
  if (ec)
    return Status::error("cannot write entry.json: " + ec.message());
  json << "{\"name\": \"" << entry.name << "\", \"args\": [";
  for (size_t i = 0; i < entry.args.size(); ++i) {
    const ArgInfo &a = entry.args[i];
    json << (i ? ", " : "") << "{\"name\": \"" << a.name << "\", \"output\": "
         << (a.isOutput ? "true" : "false") << ", \"tensor\": " << (a.isTensor ? "true" : "false")
         << ", \"dtype\": \"" << toString(a.dtype) << "\", \"dims\": [";
    for (size_t d = 0; d < a.dims.size(); ++d)
      json << (d ? ", " : "") << "\"" << a.dims[d] << "\"";
    json << "]}";
  }
  json << "]}\n";
  return Status();
}

/// The arguments, from the flags, files and --random, laid out.
static Result<std::unique_ptr<RunArgs>> prepareArgs(const EntryInfo &entry) {
  auto run = std::make_unique<RunArgs>(entry);
  if (Status s = parseGiven(*run); !s)
    return s;
  if (Status s = loadGiven(*run); !s)
    return s;
  if (Status s = checkHostMemory(*run); !s)
    return s;
  if (Status s = randomInputs(*run); !s)
    return s;
  std::error_code ec = llvm::sys::fs::create_directories(outputDir);
  if (ec)
    return Status::error("cannot create " + outputDir + ": " + ec.message());
  if (Status s = layOut(*run); !s)
    return s;
  if (saveInputs)
    if (Status s = writeEntryJson(entry); !s)
      return s;
  return run;
}

/// Milliseconds since `start`.
static double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// How long the run's steps took, in ms.
struct Timings {
  bool deviceStarted = false; ///< the CUDA driver and context were started
  double deviceStartMs = 0, compileWallMs = 0, launchMs = 0;
};

/// Where the compile went (--timing). Passes over the gpu.modules run
/// concurrently, and the PTX is generated beside the host code: their
/// times overlap, and the wall clock is the total.
static void printTiming(const Module &module, bool onGpu, const Timings &t) {
  std::vector<std::pair<std::string, double>> rows;
  if (t.deviceStarted)
    rows.push_back({"(CUDA driver and context start)", t.deviceStartMs});
  llvm::append_range(rows, module.compileTimes());
  rows.push_back({"compile and load (wall clock)", t.compileWallMs});
  rows.push_back(
      {onGpu ? "first launch (with copy back, synchronised)" : "first launch", t.launchMs});
  size_t width = 0;
  for (const auto &row : rows)
    width = std::max(width, row.first.size());
  llvm::outs() << "nerve-run: timing (ms)\n";
  for (const auto &[stage, ms] : rows)
    llvm::outs() << "  " << llvm::left_justify(stage, width) << llvm::format(" %9.3f\n", ms);
}

/// --bench: the kernel timed against the copy bandwidth measured now.
static Status runBench(const Module &module, const RunArgs &run, std::vector<Arg> &launchArgs,
                       bool onGpu, L2Flush::Mode flushMode, const CompileOptions &options) {
  int64_t bytesMoved = run.bytesMoved;
  Result<BenchResult> bench =
      onGpu ? benchGpu(module, run.entry->name, launchArgs, benchRuns, bytesMoved, flushMode,
                       options)
            : benchCpu(module, run.entry->name, launchArgs, benchRuns);
  if (!bench)
    return bench.status();
  double gbs = bytesMoved / (bench->medianMs * 1e-3) / 1e9;
  llvm::outs() << llvm::format(
      "nerve-run: bench %u runs on the %s: median %.4f ms, min %.4f ms, %lld bytes moved, "
      "%.1f GB/s = %.1f%% of the %s copy bandwidth (%.1f GB/s, measured now)\n",
      benchRuns.getValue(), onGpu ? "GPU" : "CPU", bench->medianMs, bench->minMs,
      static_cast<long long>(bytesMoved), gbs, 100 * gbs / bench->copyGBs,
      onGpu ? "device" : "host", bench->copyGBs);
  if (bench->sameSizeCopyMs > 0)
    llvm::outs() << llvm::format(
        "nerve-run: a device copy moving the same bytes takes %.4f ms (%.1f%% of the copy "
        "bandwidth); the kernel runs at %.1f%% of its speed\n",
        bench->sameSizeCopyMs,
        100 * (bytesMoved / (bench->sameSizeCopyMs * 1e-3) / 1e9) / bench->copyGBs,
        100 * bench->sameSizeCopyMs / bench->medianMs);
  if (onGpu)
    llvm::outs() << "nerve-run: before each timed run (kernel and copy), L2 was "
                 << L2Flush::describe(flushMode) << "\n";
  return Status();
}

/// A launch's arguments: on the GPU, in device memory (the mirror).
struct Launched {
  std::unique_ptr<DeviceMirror> mirror;
  std::vector<Arg> args;
};

/// The first launch (on the GPU, with the arguments in device memory and
/// the outputs copied back), timed into `t`, then the outputs written.
static Status launchAndWrite(Module &module, RunArgs &run, bool onGpu, Launched &launched,
                             Timings &t) {
  const EntryInfo &entry = *run.entry;
  launched.args = run.args;
  if (onGpu) {
    Result<std::unique_ptr<DeviceMirror>> m = DeviceMirror::create(entry, run.args);
    if (!m)
      return m.status();
    launched.mirror = m.take();
    launched.args = launched.mirror->args();
  }
  auto launchStart = std::chrono::steady_clock::now();
  if (Status s = module.launch(entry.name, launched.args); !s)
    return s;
  if (launched.mirror)
    if (Status s = launched.mirror->copyOutputs(); !s)
      return s;
  t.launchMs = msSince(launchStart);
  for (size_t i = 0; i < entry.args.size(); ++i) {
    const ArgInfo &a = entry.args[i];
    if (!a.isOutput || !writeOutputs)
      continue;
    std::string path = outputPath(a.name);
    if (Status s = writeNpy(path, gather(*run.buffers[i])); !s)
      return s;
    llvm::outs() << "nerve-run: wrote " << path << "\n";
  }
  return Status();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(nerve::printVersion);
  cl::ParseCommandLineOptions(argc, argv, "nerve-run: compile a nerve spec and run a kernel\n");

  Result<CompileOptions> flags = compileOptions();
  if (!flags)
    return fail(flags.message());
  CompileOptions options = flags.take();
  Result<L2Flush::Mode> flushMode = L2Flush::parseMode(l2Flush);
  if (!flushMode)
    return fail(flushMode.message());

  std::string why;
  if (options.target == Target::Auto && !cudaAvailable(&why))
    llvm::outs() << "nerve-run: " << why << "; running on the CPU\n";

  // The driver and the device's context start once per process (often
  // 100-200 ms): timed apart from compiling.
  Timings t;
  t.deviceStarted = options.target != Target::CPU;
  auto deviceStart = std::chrono::steady_clock::now();
  if (t.deviceStarted)
    (void)cudaAvailable();
  t.deviceStartMs = msSince(deviceStart);
  auto compileStart = std::chrono::steady_clock::now();
  Result<std::shared_ptr<Module>> compiled = compileFile(specPath, options);
  t.compileWallMs = msSince(compileStart);
  if (!compiled)
    return fail(compiled.message());
  std::shared_ptr<Module> module = compiled.take();

  Result<const EntryInfo *> entry = chooseEntry(*module);
  if (!entry)
    return fail(entry.message());
  Result<std::unique_ptr<RunArgs>> prepared = prepareArgs(**entry);
  if (!prepared)
    return fail(prepared.message());
  RunArgs &run = **prepared;

  bool onGpu = module->target() == Target::CUDA;
  llvm::outs() << "nerve-run: @" << run.entry->name << " on ";
  if (onGpu)
    llvm::outs() << "the GPU (" << (*cuda::Device::get())->name() << ")\n";
  else
    llvm::outs() << "the CPU\n";

  Launched launched;
  if (Status s = launchAndWrite(*module, run, onGpu, launched, t); !s)
    return fail(s.message());
  if (showTiming)
    printTiming(*module, onGpu, t);
  if (benchRuns > 0)
    if (Status s = runBench(*module, run, launched.args, onGpu, *flushMode, options); !s)
      return fail(s.message());
  return 0;
}
