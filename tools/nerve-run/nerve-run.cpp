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
#include "nerve/Support/Version.h"
#include "nerve/nerve.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
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
static cl::opt<bool> saveInputs("save-inputs",
                                cl::desc("Also write the inputs (random ones included) as NAME.npy"),
                                cl::cat(category));
static cl::opt<unsigned> benchRuns("bench", cl::desc("Time N launches after warm-up"),
                                   cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<std::string> chip("chip", cl::desc("GPU architecture (sm_80, sm_89, sm_90, sm_100)"),
                                 cl::init("sm_90"), cl::cat(category));
static cl::opt<unsigned> optLevel("opt-level", cl::desc("Optimisation level 0-3"), cl::init(3),
                                  cl::cat(category));

static int fail(const std::string &message) {
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

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(nerve::printVersion);
  cl::ParseCommandLineOptions(argc, argv, "nerve-run: compile a nerve spec and run a kernel\n");

  CompileOptions options;
  if (targetName == "cuda")
    options.target = Target::CUDA;
  else if (targetName == "cpu")
    options.target = Target::CPU;
  else if (targetName != "auto")
    return fail("unknown target '" + targetName + "'; use cuda, cpu or auto");
  options.chip = chip;
  options.optLevel = static_cast<int>(optLevel);

  std::string why;
  if (options.target == Target::Auto && !cudaAvailable(&why))
    llvm::outs() << "nerve-run: no usable GPU (" << why << "); running on the CPU\n";

  Result<std::shared_ptr<Module>> compiled = compileFile(specPath, options);
  if (!compiled)
    return fail(compiled.message());
  std::shared_ptr<Module> module = compiled.take();

  const EntryInfo *entry = nullptr;
  if (entryName.empty()) {
    if (module->entries().size() != 1) {
      std::string names;
      for (const EntryInfo &e : module->entries())
        names += (names.empty() ? "@" : ", @") + e.name;
      return fail("the spec has kernels " + names + "; choose one with --entry");
    }
    entry = &module->entries().front();
  } else if (!(entry = module->findEntry(entryName))) {
    return fail("the spec has no kernel @" + entryName);
  }

  // --input and --dim by name.
  std::map<std::string, std::string> given;
  for (const std::string &text : inputs) {
    std::string name, value;
    if (!splitAssignment(text, name, value))
      return fail("--input expects NAME=FILE.npy or NAME=VALUE, not '" + text + "'");
    auto it = std::find_if(entry->args.begin(), entry->args.end(),
                           [&](const ArgInfo &a) { return a.name == name; });
    if (it == entry->args.end())
      return fail("kernel @" + entry->name + " has no argument `" + name + "` (it takes " +
                  argNames(*entry) + ")");
    if (it->isOutput)
      return fail("`" + name + "` is an output of @" + entry->name + "; it is written, not read");
    given[name] = value;
  }
  DimBinding binding;
  for (const std::string &text : dims) {
    std::string name, value;
    char *end = nullptr;
    if (!splitAssignment(text, name, value))
      return fail("--dim expects NAME=SIZE, not '" + text + "'");
    long long size = std::strtoll(value.c_str(), &end, 10);
    if (*end || size < 0)
      return fail("--dim " + name + " needs a non-negative integer size, not '" + value + "'");
    binding[name] = size;
  }

  // Inputs from files first: they bind the sizes of dynamic dimensions.
  std::vector<std::optional<ArgBuffer>> buffers(entry->args.size());
  std::vector<Arg> args(entry->args.size());
  std::vector<std::optional<HostArray>> loaded(entry->args.size());
  for (size_t i = 0; i < entry->args.size(); ++i) {
    const ArgInfo &a = entry->args[i];
    auto it = given.find(a.name);
    if (a.isOutput || it == given.end())
      continue;
    if (!a.isTensor) {
      char *end = nullptr;
      double v = std::strtod(it->second.c_str(), &end);
      if (end == it->second.c_str() || *end)
        return fail("scalar %" + a.name + " needs a number, not '" + it->second + "'");
      args[i] = Arg::scalar(v);
      continue;
    }
    Result<HostArray> array = readNpy(it->second);
    if (!array)
      return fail(array.message());
    if (array->dtype != a.dtype && !(a.dtype == DType::BF16 && array->dtype == DType::F32))
      return fail(it->second + " holds " + toString(array->dtype) + " but argument %" +
                  a.name + " is " + toString(a.dtype));
    if (a.dtype == DType::BF16 && array->dtype == DType::F32) {
      HostArray rounded = HostArray::zeros(DType::BF16, array->shape);
      for (int64_t e = 0; e < array->numElements(); ++e)
        rounded.setDouble(e, array->getDouble(e));
      *array = std::move(rounded);
    }
    if (Status s = bindShape(a, array->shape, binding); !s)
      return fail(s.message());
    loaded[i] = array.take();
  }
  std::mt19937_64 rng(static_cast<uint64_t>(randomSeed < 0 ? 0 : randomSeed.getValue()));
  for (size_t i = 0; i < entry->args.size(); ++i) {
    const ArgInfo &a = entry->args[i];
    if (a.isOutput || loaded[i] || given.count(a.name))
      continue;
    if (randomSeed < 0)
      return fail("argument %" + a.name + " has no value: pass --input " + a.name +
                  "=FILE.npy or --random SEED");
    if (!a.isTensor) {
      HostArray v = randomArray(a.dtype, {}, rng);
      args[i] = Arg::scalar(v.getDouble(0));
      continue;
    }
    Result<std::vector<int64_t>> sizes = sizesFor(a, binding);
    if (!sizes)
      return fail(sizes.message());
    loaded[i] = randomArray(a.dtype, *sizes, rng);
    if (Status s = bindShape(a, loaded[i]->shape, binding); !s)
      return fail(s.message());
  }

  std::error_code ec = llvm::sys::fs::create_directories(outputDir);
  if (ec)
    return fail("cannot create " + outputDir + ": " + ec.message());
  auto outputPath = [&](const std::string &name) {
    llvm::SmallString<256> path(outputDir.getValue());
    llvm::sys::path::append(path, name + ".npy");
    return std::string(path.str());
  };

  int64_t bytesMoved = 0;
  for (size_t i = 0; i < entry->args.size(); ++i) {
    const ArgInfo &a = entry->args[i];
    if (!a.isTensor) {
      if (saveInputs) {
        HostArray v = HostArray::zeros(a.dtype, {});
        v.setDouble(0, args[i].floatValue);
        if (Status s = writeNpy(outputPath(a.name), v); !s)
          return fail(s.message());
      }
      continue;
    }
    Result<std::vector<int64_t>> sizes = sizesFor(a, binding);
    if (!sizes)
      return fail(sizes.message());
    Result<ArgBuffer> buffer = makeArgBuffer(a, *sizes);
    if (!buffer)
      return fail(buffer.message());
    if (loaded[i]) {
      if (Status s = scatter(*loaded[i], *buffer); !s)
        return fail("argument %" + a.name + ": " + s.message());
      if (saveInputs)
        if (Status s = writeNpy(outputPath(a.name), *loaded[i]); !s)
          return fail(s.message());
    }
    bytesMoved += buffer->numElements() * byteWidth(a.dtype);
    buffers[i] = buffer.take();
    args[i] = buffers[i]->asArg();
  }

  if (saveInputs) {
    // The signature beside the arrays, so a checker can align them by name.
    std::error_code ec;
    llvm::raw_fd_ostream json(outputPath("entry").replace(outputPath("entry").size() - 4, 4,
                                                          ".json"),
                              ec);
    if (ec)
      return fail("cannot write entry.json: " + ec.message());
    json << "{\"name\": \"" << entry->name << "\", \"args\": [";
    for (size_t i = 0; i < entry->args.size(); ++i) {
      const ArgInfo &a = entry->args[i];
      json << (i ? ", " : "") << "{\"name\": \"" << a.name << "\", \"output\": "
           << (a.isOutput ? "true" : "false") << ", \"tensor\": " << (a.isTensor ? "true" : "false")
           << ", \"dtype\": \"" << toString(a.dtype) << "\", \"dims\": [";
      for (size_t d = 0; d < a.dims.size(); ++d)
        json << (d ? ", " : "") << "\"" << a.dims[d] << "\"";
      json << "]}";
    }
    json << "]}\n";
  }

  llvm::outs() << "nerve-run: @" << entry->name << " on "
               << (module->target() == Target::CUDA ? "the GPU" : "the CPU") << "\n";
  if (Status s = module->launch(entry->name, args); !s)
    return fail(s.message());

  for (size_t i = 0; i < entry->args.size(); ++i) {
    const ArgInfo &a = entry->args[i];
    if (!a.isOutput)
      continue;
    std::string path = outputPath(a.name);
    if (Status s = writeNpy(path, gather(*buffers[i])); !s)
      return fail(s.message());
    llvm::outs() << "nerve-run: wrote " << path << "\n";
  }

  if (benchRuns > 0) {
    std::vector<double> times;
    for (unsigned r = 0; r < benchRuns; ++r) {
      auto start = std::chrono::steady_clock::now();
      (void)module->launch(entry->name, args);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    double median = medianOf(times);
    double best = *std::min_element(times.begin(), times.end());
    double copy = hostCopyBandwidth();
    double gbs = bytesMoved / median / 1e9;
    llvm::outs() << llvm::format("nerve-run: bench %u runs on the CPU: median %.4f ms, min %.4f ms, "
                                 "%lld bytes, %.2f GB/s, %.1f%% of host copy bandwidth (%.1f GB/s)\n",
                                 benchRuns.getValue(), median * 1e3, best * 1e3,
                                 static_cast<long long>(bytesMoved), gbs, 100 * gbs / (copy / 1e9),
                                 copy / 1e9);
  }
  return 0;
}
