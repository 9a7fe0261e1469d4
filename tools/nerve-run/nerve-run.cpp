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

#include "Bench.h"

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
using namespace nerve::run;
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
static cl::opt<int> cpuThreadsOption(
    "cpu-threads",
    cl::desc("Threads a CPU kernel runs on (default 0: $NERVE_NUM_THREADS, else every core)"),
    cl::init(0), cl::cat(category));
static cl::opt<int> timeBlock("time-block",
                              cl::desc("Time steps of a neuron whose loads are issued together "
                                       "(1-128; default 0: automatic)"),
                              cl::init(0), cl::cat(category));
static cl::opt<bool> specializeSizes(
    "specialize-sizes",
    cl::desc("Compile the kernel at its launch for the sizes of its inputs (fewer alternatives, "
             "folded index arithmetic)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> lazyKernels("lazy-kernels",
                                 cl::desc("Generate each kernel's PTX at its first launch, not "
                                          "in compile (CUDA)"),
                                 cl::init(false), cl::cat(category));
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
  options.cpuThreads = cpuThreadsOption;
  options.lazyKernels = lazyKernels;
  options.specializeSizes = specializeSizes;
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
                       bool onGpu, L2FlushMode flushMode, const CompileOptions &options) {
  int64_t bytesMoved = run.bytesMoved;
  Result<BenchResult> bench =
      onGpu ? benchGpu(module, run.entry->name, launchArgs, benchRuns, bytesMoved, flushMode,
                       options)
            : benchCpu(module, run.entry->name, launchArgs, benchRuns,
                       options.cpuThreads ? options.cpuThreads : cpuThreads());
  if (!bench)
    return bench.status();
  double gbs = bytesMoved / (bench->medianMs * 1e-3) / 1e9;
  llvm::outs() << llvm::format(
      "nerve-run: bench %u runs on the %s: median %.4f ms, min %.4f ms, %lld bytes moved, "
      "%.1f GB/s = %.1f%% of the %s copy bandwidth (%.1f GB/s%s, measured now)\n",
      benchRuns.getValue(), onGpu ? "GPU" : "CPU", bench->medianMs, bench->minMs,
      static_cast<long long>(bytesMoved), gbs, 100 * gbs / bench->copyGBs,
      onGpu ? "device" : "host", bench->copyGBs,
      onGpu ? ""
            : (" on " + std::to_string(bench->copyThreads) +
               (bench->copyThreads == 1 ? " thread" : " threads") + ", as the kernel")
                  .c_str());
  if (bench->sameSizeCopyMs > 0)
    llvm::outs() << llvm::format(
        "nerve-run: a device copy moving the same bytes takes %.4f ms (%.1f%% of the copy "
        "bandwidth); the kernel runs at %.1f%% of its speed\n",
        bench->sameSizeCopyMs,
        100 * (bytesMoved / (bench->sameSizeCopyMs * 1e-3) / 1e9) / bench->copyGBs,
        100 * bench->sameSizeCopyMs / bench->medianMs);
  if (onGpu)
    llvm::outs() << "nerve-run: before each timed run (kernel and copy), L2 was "
                 << describeL2Flush(flushMode) << "\n";
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
  Result<L2FlushMode> flushMode = parseL2Flush(l2Flush);
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

  // With --specialize-sizes the kernel compiles for the inputs' sizes
  // here, timed as the compile it is, not as part of the first launch.
  const Module *compiledForRun = module.get();
  if (options.specializeSizes) {
    auto start = std::chrono::steady_clock::now();
    Result<const Module *> specialized = module->compiledFor(run.entry->name, run.args);
    if (!specialized)
      return fail(specialized.message());
    compiledForRun = *specialized;
    t.compileWallMs += msSince(start);
  }
  Launched launched;
  if (Status s = launchAndWrite(*module, run, onGpu, launched, t); !s)
    return fail(s.message());
  if (showTiming)
    printTiming(*compiledForRun, onGpu, t);
  if (benchRuns > 0)
    if (Status s = runBench(*module, run, launched.args, onGpu, *flushMode, options); !s)
      return fail(s.message());
  return 0;
}
