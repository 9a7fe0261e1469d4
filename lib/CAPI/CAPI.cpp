//===- CAPI.cpp - nerve's C API over its C++ API ------------------------===//
//
// Each handle wraps one C++ object: a NerveModule owns a
// std::shared_ptr<nerve::Module>, a NerveEntry and a NerveArgInfo point at
// the module's EntryInfo and ArgInfo, a NerveStatus owns its message. No
// function here lets a C++ exception or an abort cross the boundary: bad
// handles and bad arguments come back as statuses.
//
//===----------------------------------------------------------------------===//

#include "nerve-c/nerve.h"

#include "nerve/Builders.h"
#include "nerve/Target/ChipProfile.h"
#include "nerve/nerve.h"

#include <cstdio>
#include <cstring>

using namespace nerve;

namespace {
using ModuleRef = std::shared_ptr<Module>;

NerveStatus wrap(const Status &status) {
  if (status.ok())
    return {nullptr};
  return {new std::string(status.message())};
}
NerveStatus error(std::string message) { return {new std::string(std::move(message))}; }

NerveStringRef wrap(const std::string &s) { return {s.data(), s.size()}; }
std::string unwrap(NerveStringRef s) { return s.data ? std::string(s.data, s.length) : ""; }

CompileOptions *unwrap(NerveCompileOptions o) { return static_cast<CompileOptions *>(o.ptr); }
const ModuleRef *unwrap(NerveModule m) { return static_cast<const ModuleRef *>(m.ptr); }
const EntryInfo *unwrap(NerveEntry e) { return static_cast<const EntryInfo *>(e.ptr); }
const ArgInfo *unwrap(NerveArgInfo a) { return static_cast<const ArgInfo *>(a.ptr); }
PreparedLaunch *unwrap(NerveLaunchPlan p) { return static_cast<PreparedLaunch *>(p.ptr); }

/// The options a possibly-null handle stands for.
CompileOptions optionsOf(NerveCompileOptions o) { return o.ptr ? *unwrap(o) : CompileOptions(); }

NerveStatus compiled(Result<std::shared_ptr<Module>> module, NerveModule *result) {
  if (!module)
    return wrap(module.status());
  if (result)
    *result = {new ModuleRef(module.take())};
  return {nullptr};
}

/// Hands `text` (or the error) to the caller's callback.
NerveStatus deliver(const Result<std::string> &text, NerveStringCallback callback,
                    void *userData) {
  if (!text)
    return wrap(text.status());
  if (!callback)
    return error("no callback was given to receive the result");
  callback(wrap(text.value()), userData);
  return {nullptr};
}

/// The C++ arguments of a launch, checking what C cannot.
Result<std::vector<Arg>> unwrapArgs(const EntryInfo &entry, const NerveArgValue *args,
                                    intptr_t numArgs) {
  if (numArgs < 0 || (numArgs > 0 && !args))
    return Status::error("kernel @" + entry.name + ": no arguments were given");
  std::vector<Arg> out;
  out.reserve(numArgs);
  for (intptr_t i = 0; i < numArgs; ++i) {
    const NerveArgValue &v = args[i];
    auto name = [&] { // for messages only: launches build no strings
      return i < static_cast<intptr_t>(entry.args.size()) ? "argument %" + entry.args[i].name
                                                          : "argument #" + std::to_string(i);
    };
    switch (v.kind) {
    case NerveArgKindFloat: out.push_back(Arg::scalar(v.floatValue)); break;
    case NerveArgKindInt: out.push_back(Arg::scalarInt(v.intValue)); break;
    case NerveArgKindTensor: {
      if (v.rank < 0 || (v.rank > 0 && !v.sizes))
        return Status::error(name() + " was given " + std::to_string(v.rank) +
                             " sizes but no size array");
      std::vector<int64_t> sizes(v.sizes, v.sizes + v.rank);
      std::vector<int64_t> strides;
      if (v.strides)
        strides.assign(v.strides, v.strides + v.rank);
      out.push_back(Arg::tensor(v.data, std::move(sizes), std::move(strides)));
      break;
    }
    default:
      return Status::error(name() + " has an unknown kind " + std::to_string(v.kind));
    }
  }
  return out;
}

/// The C++ arguments of a launch of `entry` of `module`, after checking
/// the handles.
Result<std::vector<Arg>> launchArgs(NerveModule module, NerveEntry entry,
                                    const NerveArgValue *args, intptr_t numArgs) {
  if (!module.ptr)
    return Status::error("no module was given (a null handle)");
  if (!entry.ptr)
    return Status::error("no kernel was given (a null entry handle)");
  return unwrapArgs(*unwrap(entry), args, numArgs);
}
} // namespace

//===----------------------------------------------------------------------===//
// Strings, errors, versions
//===----------------------------------------------------------------------===//

NerveStringRef nerveStatusGetMessage(NerveStatus status) {
  static const std::string none;
  return wrap(status.ptr ? *static_cast<std::string *>(status.ptr) : none);
}

void nerveStatusDestroy(NerveStatus status) { delete static_cast<std::string *>(status.ptr); }

int nerveGetCAPIVersion(void) { return NERVE_C_API_VERSION; }

NerveStringRef nerveGetVersion(void) {
  static const std::string version = versionString();
  return wrap(version);
}

//===----------------------------------------------------------------------===//
// Compile options
//===----------------------------------------------------------------------===//

NerveCompileOptions nerveCompileOptionsCreate(void) { return {new CompileOptions()}; }
void nerveCompileOptionsDestroy(NerveCompileOptions o) { delete unwrap(o); }

void nerveCompileOptionsSetTarget(NerveCompileOptions o, NerveTarget target) {
  switch (target) {
  case NerveTargetCPU: unwrap(o)->target = Target::CPU; break;
  case NerveTargetCUDA: unwrap(o)->target = Target::CUDA; break;
  default: unwrap(o)->target = Target::Auto; break;
  }
}
void nerveCompileOptionsSetChip(NerveCompileOptions o, NerveStringRef chip) {
  unwrap(o)->chip = unwrap(chip);
}
void nerveCompileOptionsSetOptLevel(NerveCompileOptions o, int level) {
  unwrap(o)->optLevel = level;
}
void nerveCompileOptionsSetFastMath(NerveCompileOptions o, bool fastMath) {
  unwrap(o)->fastMath = fastMath;
}

void nerveCompileOptionsSetLazyKernels(NerveCompileOptions o, bool lazyKernels) {
  unwrap(o)->lazyKernels = lazyKernels;
}

void nerveCompileOptionsSetSpecializeSizes(NerveCompileOptions o, bool specializeSizes) {
  unwrap(o)->specializeSizes = specializeSizes;
}

void nerveCompileOptionsSetStaticSize(NerveCompileOptions o, NerveStringRef name, int64_t size) {
  std::vector<std::pair<std::string, int64_t>> &sizes = unwrap(o)->staticSizes;
  std::string dim = unwrap(name);
  for (auto &[d, s] : sizes)
    if (d == dim) {
      s = size;
      return;
    }
  sizes.push_back({dim, size});
}

void nerveCompileOptionsSetEntry(NerveCompileOptions o, NerveStringRef entry) {
  unwrap(o)->entry = unwrap(entry);
}

void nerveCompileOptionsSetExactMath(NerveCompileOptions o, bool exactMath) {
  unwrap(o)->exactMath = exactMath;
}
void nerveCompileOptionsSetTensorCores(NerveCompileOptions o, bool tensorCores) {
  unwrap(o)->tensorCores = tensorCores;
}
void nerveCompileOptionsSetTF32(NerveCompileOptions o, bool tf32) { unwrap(o)->tf32 = tf32; }
void nerveCompileOptionsSetLibdevice(NerveCompileOptions o, NerveStringRef path) {
  unwrap(o)->libdevice = unwrap(path);
}
void nerveCompileOptionsSetNeuronTimeBlock(NerveCompileOptions o, int steps) {
  unwrap(o)->neuronTimeBlock = steps;
}
void nerveCompileOptionsSetCpuThreads(NerveCompileOptions o, int threads) {
  unwrap(o)->cpuThreads = threads;
}
void nerveCompileOptionsSetSourceName(NerveCompileOptions o, NerveStringRef name) {
  unwrap(o)->sourceName = unwrap(name);
}
void nerveCompileOptionsSetCache(NerveCompileOptions o, bool enabled) {
  unwrap(o)->cache = enabled;
}
void nerveCompileOptionsSetCacheDir(NerveCompileOptions o, NerveStringRef dir) {
  unwrap(o)->cacheDir = unwrap(dir);
}
void nerveCompileOptionsSetCacheMaxBytes(NerveCompileOptions o, int64_t bytes) {
  unwrap(o)->cacheMaxBytes = bytes;
}

//===----------------------------------------------------------------------===//
// Compiling and modules
//===----------------------------------------------------------------------===//

NerveStatus nerveCompile(NerveStringRef spec, NerveCompileOptions options,
                         NerveModule *result) {
  return compiled(compile(unwrap(spec), optionsOf(options)), result);
}

NerveStatus nerveCompileFile(NerveStringRef path, NerveCompileOptions options,
                             NerveModule *result) {
  return compiled(compileFile(unwrap(path), optionsOf(options)), result);
}

void nerveModuleDestroy(NerveModule module) { delete unwrap(module); }

NerveTarget nerveModuleGetTarget(NerveModule module) {
  return (*unwrap(module))->target() == Target::CUDA ? NerveTargetCUDA : NerveTargetCPU;
}

intptr_t nerveModuleGetNumEntries(NerveModule module) {
  return static_cast<intptr_t>((*unwrap(module))->entries().size());
}

NerveEntry nerveModuleGetEntry(NerveModule module, intptr_t pos) {
  const std::vector<EntryInfo> &entries = (*unwrap(module))->entries();
  if (pos < 0 || pos >= static_cast<intptr_t>(entries.size()))
    return {nullptr};
  return {&entries[pos]};
}

NerveEntry nerveModuleLookupEntry(NerveModule module, NerveStringRef name) {
  return {(*unwrap(module))->findEntry(unwrap(name))};
}

NerveStringRef nerveModuleGetPTX(NerveModule module) { return wrap((*unwrap(module))->ptx()); }

NerveStringRef nerveModuleGetLLVMIR(NerveModule module) {
  return wrap((*unwrap(module))->llvmIR());
}

intptr_t nerveModuleGetNumCompileTimes(NerveModule module) {
  return static_cast<intptr_t>((*unwrap(module))->compileTimes().size());
}

void nerveModuleGetCompileTime(NerveModule module, intptr_t pos, NerveStringRef *stage,
                               double *milliseconds) {
  const auto &times = (*unwrap(module))->compileTimes();
  if (pos < 0 || pos >= static_cast<intptr_t>(times.size()))
    return;
  if (stage)
    *stage = wrap(times[pos].first);
  if (milliseconds)
    *milliseconds = times[pos].second;
}

//===----------------------------------------------------------------------===//
// Entries and their arguments
//===----------------------------------------------------------------------===//

NerveStringRef nerveEntryGetName(NerveEntry entry) { return wrap(unwrap(entry)->name); }

intptr_t nerveEntryGetNumArgs(NerveEntry entry) {
  return static_cast<intptr_t>(unwrap(entry)->args.size());
}

NerveArgInfo nerveEntryGetArg(NerveEntry entry, intptr_t pos) {
  const std::vector<ArgInfo> &args = unwrap(entry)->args;
  if (pos < 0 || pos >= static_cast<intptr_t>(args.size()))
    return {nullptr};
  return {&args[pos]};
}

intptr_t nerveEntryGetNumVariableDims(NerveEntry entry) {
  return static_cast<intptr_t>(unwrap(entry)->variableDims.size());
}

NerveStringRef nerveEntryGetVariableDim(NerveEntry entry, intptr_t pos) {
  const std::vector<std::string> &dims = unwrap(entry)->variableDims;
  static const std::string none;
  if (pos < 0 || pos >= static_cast<intptr_t>(dims.size()))
    return wrap(none);
  return wrap(dims[pos]);
}

NerveStringRef nerveArgInfoGetName(NerveArgInfo arg) { return wrap(unwrap(arg)->name); }
bool nerveArgInfoIsOutput(NerveArgInfo arg) { return unwrap(arg)->isOutput; }
bool nerveArgInfoIsTensor(NerveArgInfo arg) { return unwrap(arg)->isTensor; }
NerveDType nerveArgInfoGetDType(NerveArgInfo arg) {
  return static_cast<NerveDType>(unwrap(arg)->dtype);
}
intptr_t nerveArgInfoGetRank(NerveArgInfo arg) {
  return static_cast<intptr_t>(unwrap(arg)->dims.size());
}

NerveStringRef nerveArgInfoGetDimName(NerveArgInfo arg, intptr_t pos) {
  const ArgInfo *a = unwrap(arg);
  static const std::string none;
  if (pos < 0 || pos >= static_cast<intptr_t>(a->dims.size()))
    return wrap(none);
  return wrap(a->dims[pos]);
}

int64_t nerveArgInfoGetStaticSize(NerveArgInfo arg, intptr_t pos) {
  const ArgInfo *a = unwrap(arg);
  if (pos < 0 || pos >= static_cast<intptr_t>(a->sizes.size()))
    return -1;
  return a->sizes[pos];
}

bool nerveArgInfoHasStrides(NerveArgInfo arg) { return !unwrap(arg)->strides.empty(); }

int64_t nerveArgInfoGetStride(NerveArgInfo arg, intptr_t pos) {
  const ArgInfo *a = unwrap(arg);
  if (pos < 0 || pos >= static_cast<intptr_t>(a->strides.size()))
    return -1;
  return a->strides[pos];
}

int64_t nerveArgInfoGetOffset(NerveArgInfo arg) { return unwrap(arg)->offset; }

//===----------------------------------------------------------------------===//
// Launching
//===----------------------------------------------------------------------===//

/// Checks a launch's handles and arguments, then runs `go` on the module,
/// the entry's name and the C++ arguments.
template <typename Go>
static NerveStatus withArgs(NerveModule module, NerveEntry entry, const NerveArgValue *args,
                            intptr_t numArgs, Go go) {
  Result<std::vector<Arg>> cxxArgs = launchArgs(module, entry, args, numArgs);
  if (!cxxArgs)
    return wrap(cxxArgs.status());
  return wrap(go(**unwrap(module), unwrap(entry)->name, *cxxArgs));
}

NerveStatus nerveEntryLaunch(NerveModule module, NerveEntry entry, const NerveArgValue *args,
                             intptr_t numArgs, void *stream) {
  return withArgs(module, entry, args, numArgs,
                  [&](const Module &m, const std::string &name, const std::vector<Arg> &a) {
                    return m.launch(name, a, stream);
                  });
}

NerveStatus nerveEntryRun(NerveModule module, NerveEntry entry, const NerveArgValue *args,
                          intptr_t numArgs) {
  return withArgs(module, entry, args, numArgs,
                  [](const Module &m, const std::string &name, const std::vector<Arg> &a) {
                    return m.run(name, a);
                  });
}

NerveStatus nerveLaunchPlanCreate(NerveModule module, NerveEntry entry, const NerveArgValue *args,
                                  intptr_t numArgs, NerveLaunchPlan *plan) {
  Result<std::vector<Arg>> cxxArgs = launchArgs(module, entry, args, numArgs);
  if (!cxxArgs)
    return wrap(cxxArgs.status());
  if (!plan)
    return error("no place for the plan was given");
  Result<std::unique_ptr<PreparedLaunch>> prepared =
      prepareLaunch(*unwrap(module), unwrap(entry)->name, *cxxArgs);
  if (!prepared)
    return wrap(prepared.status());
  *plan = {prepared.take().release()};
  return {nullptr};
}

intptr_t nerveLaunchPlanGetNumTensors(NerveLaunchPlan plan) {
  return plan.ptr ? static_cast<intptr_t>(unwrap(plan)->tensorCount()) : 0;
}

NerveStatus nerveLaunchPlanLaunch(NerveLaunchPlan plan, void *const *data, intptr_t numData,
                                  void *stream) {
  if (!plan.ptr)
    return error("no launch plan was given (a null handle)");
  if (numData < 0)
    return error("a negative number of data pointers was given");
  return wrap(unwrap(plan)->launch(data, static_cast<size_t>(numData), stream));
}

void nerveLaunchPlanDestroy(NerveLaunchPlan plan) { delete unwrap(plan); }

//===----------------------------------------------------------------------===//
// Layouts and builders
//===----------------------------------------------------------------------===//

NerveStatus nerveSpecializeLayouts(NerveStringRef spec, NerveStringRef entry,
                                   const NerveArgLayout *layouts, intptr_t numLayouts,
                                   NerveStringCallback callback, void *userData) {
  if (numLayouts < 0 || (numLayouts > 0 && !layouts))
    return error("no layouts were given");
  std::vector<std::optional<ArgLayout>> cxxLayouts(numLayouts);
  for (intptr_t i = 0; i < numLayouts; ++i) {
    if (!layouts[i].order)
      continue;
    if (layouts[i].rank < 0)
      return error("layout #" + std::to_string(i) + " has a negative rank");
    cxxLayouts[i] = ArgLayout{
        std::vector<int>(layouts[i].order, layouts[i].order + layouts[i].rank),
        layouts[i].unitInnermost};
  }
  return deliver(specializeLayouts(unwrap(spec), unwrap(entry), cxxLayouts), callback,
                 userData);
}

NerveStatus nerveElementwiseSpec(NerveStringRef name, NerveStringRef inputs,
                                 NerveStringRef outputs, NerveStringRef body,
                                 NerveStringCallback callback, void *userData) {
  return deliver(elementwiseSpec(unwrap(name), unwrap(inputs), unwrap(outputs), unwrap(body)),
                 callback, userData);
}

NerveStatus nerveReductionSpec(NerveStringRef name, NerveStringRef inputs, NerveStringRef output,
                               NerveStringRef map, NerveStringRef combine,
                               NerveStringRef identity, NerveStringRef post,
                               NerveStringCallback callback, void *userData) {
  ReductionKernelSpec r{unwrap(name),    unwrap(inputs),   unwrap(output), unwrap(map),
                        unwrap(combine), unwrap(identity), unwrap(post)};
  if (r.post.empty())
    r.post = "a";
  return deliver(reductionSpec(r), callback, userData);
}

//===----------------------------------------------------------------------===//
// Neuron models
//===----------------------------------------------------------------------===//

namespace {

/// "a, b" as its trimmed, non-empty items.
std::vector<std::string> items(const std::string &text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(start, end - start);
    size_t b = item.find_first_not_of(" \t\n"), e = item.find_last_not_of(" \t\n");
    if (b != std::string::npos)
      out.push_back(item.substr(b, e - b + 1));
    start = end + 1;
  }
  return out;
}

/// "a = 1.0, b = 2" as names and numbers.
Result<std::vector<std::pair<std::string, double>>> namedNumbers(const std::string &text,
                                                                  const char *what) {
  std::vector<std::pair<std::string, double>> out;
  for (const std::string &item : items(text)) {
    size_t eq = item.find('=');
    std::string name = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    name.erase(name.find_last_not_of(" \t") + 1);
    char *end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (eq == std::string::npos || end == value.c_str() ||
        value.find_first_not_of(" \t", end - value.c_str()) != std::string::npos)
      return Status::error(std::string(what) + ": '" + item + "' is not `name = number`");
    out.push_back({name, v});
  }
  return out;
}

} // namespace

NerveStatus nerveNeuronModelSpec(NerveStringRef name, NerveStringRef computeType,
                                 NerveStringRef states, NerveStringRef inputs,
                                 NerveStringRef params, NerveStringRef charge,
                                 NerveStringRef threshold, NerveStringRef resets,
                                 NerveStringCallback callback, void *userData) {
  NeuronModelDef def;
  def.name = unwrap(name);
  def.computeType = unwrap(computeType);
  Result<std::vector<std::pair<std::string, double>>> s = namedNumbers(unwrap(states), "states");
  if (!s)
    return wrap(s.status());
  Result<std::vector<std::pair<std::string, double>>> p = namedNumbers(unwrap(params), "params");
  if (!p)
    return wrap(p.status());
  def.states = *s;
  def.params = *p;
  def.inputs = items(unwrap(inputs));
  def.charge = unwrap(charge);
  def.threshold = unwrap(threshold);
  def.resets = items(unwrap(resets));
  return deliver(neuronModelSpec(def), callback, userData);
}

NerveStatus nerveBuiltinNeuronDef(NerveStringRef kind, NerveStringRef params, double vThreshold,
                                  bool hardReset, double vReset, NerveStringCallback callback,
                                  void *userData) {
  BuiltinNeuron neuron;
  neuron.kind = unwrap(kind);
  Result<std::vector<std::pair<std::string, double>>> p = namedNumbers(unwrap(params), "params");
  if (!p)
    return wrap(p.status());
  for (const auto &[n, v] : *p)
    neuron.params[n] = v;
  neuron.vThreshold = vThreshold;
  neuron.vReset = hardReset ? std::optional<double>(vReset) : std::nullopt;
  Result<NeuronModelDef> def = builtinNeuronModel(neuron);
  if (!def)
    return wrap(def.status());
  auto numbers = [](const std::vector<std::pair<std::string, double>> &list) {
    std::string text;
    char value[40];
    for (const auto &[n, v] : list) {
      std::snprintf(value, sizeof(value), "%.17g", v);
      text += (text.empty() ? "" : ", ") + n + " = " + value;
    }
    return text;
  };
  auto joined = [](const std::vector<std::string> &list) {
    std::string text;
    for (const std::string &s : list)
      text += (text.empty() ? "" : ", ") + s;
    return text;
  };
  std::string text = "states: " + numbers(def->states) + "\ninputs: " + joined(def->inputs) +
                     "\nparams: " + numbers(def->params) + "\ncharge: " + def->charge +
                     "\nthreshold: " + def->threshold + "\nresets: " + joined(def->resets) +
                     "\n";
  return deliver(text, callback, userData);
}

NerveStatus nerveNeuronModelSaves(NerveStringRef modelSpec, NerveStringRef model,
                                  NerveStringRef gradInputs, NerveStringRef gradParams,
                                  NerveStringRef surrogate, bool detachReset,
                                  bool detachThreshold, NerveStringCallback callback,
                                  void *userData) {
  NeuronModelGrads grads{items(unwrap(gradInputs)), items(unwrap(gradParams)),
                         unwrap(surrogate), detachReset, detachThreshold};
  if (grads.surrogate.empty())
    grads.surrogate = "#neuron.surrogate<sigmoid>";
  Result<NeuronModelSaves> saves = neuronModelSaves(unwrap(modelSpec), unwrap(model), grads);
  if (!saves)
    return wrap(saves.status());
  auto line = [](const char *key, const std::vector<std::string> &names) {
    std::string text = std::string(key) + ":";
    for (size_t i = 0; i < names.size(); ++i)
      text += (i ? ", " : " ") + names[i];
    return text + "\n";
  };
  return deliver(line("h_seq", saves->hSeq) + line("seq", saves->seq) +
                     line("ins", saves->inputs),
                 callback, userData);
}

//===----------------------------------------------------------------------===//
// Caches and the GPU
//===----------------------------------------------------------------------===//

NerveCacheStats nerveCacheGetStats(void) {
  CacheStats s = cacheStats();
  return {s.memoryHits, s.diskHits, s.misses, s.stores, s.discarded};
}

void nerveCacheClearMemory(void) { clearMemoryCache(); }

void nerveCacheGetDirectory(NerveCompileOptions options, NerveStringCallback callback,
                            void *userData) {
  if (callback)
    callback(wrap(cacheDirectory(optionsOf(options))), userData);
}

bool nerveCacheIsDiskEnabled(NerveCompileOptions options) {
  return diskCacheEnabled(optionsOf(options));
}

NerveStatus nerveCacheClearDisk(NerveCompileOptions options, int64_t *removed) {
  Result<int64_t> n = clearDiskCache(optionsOf(options));
  if (!n)
    return wrap(n.status());
  if (removed)
    *removed = *n;
  return {nullptr};
}

NerveStatus nerveCudaGetDevice(NerveCudaDeviceInfo *info) {
  Result<CudaDeviceInfo> device = cudaDevice();
  if (!device)
    return wrap(device.status());
  if (info) {
    info->ordinal = device->ordinal;
    info->computeCapability = device->computeCapability;
    info->multiprocessors = device->multiprocessors;
    info->driverVersion = device->driverVersion;
    std::memset(info->name, 0, sizeof(info->name));
    std::strncpy(info->name, device->name.c_str(), sizeof(info->name) - 1);
  }
  return {nullptr};
}

NerveStatus nerveCudaSelectDevice(int ordinal) { return wrap(selectCudaDevice(ordinal)); }

int nerveGetCpuThreads(void) { return cpuThreads(); }

NerveStatus nerveSetCpuThreads(int threads) { return wrap(setCpuThreads(threads)); }

NerveStringRef nerveChipForComputeCapability(int computeCapability) {
  std::optional<GpuChip> chip = chipForComputeCapability(computeCapability);
  if (!chip)
    return {"", 0};
  llvm::StringRef name = chipProfile(*chip).name;
  return {name.data(), name.size()};
}
