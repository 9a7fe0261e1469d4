//===- nerve-golden.cpp - conformance runner for the golden neuron data -===//
//
//   nerve-golden DIR [--target cpu|cuda|auto] [--dtype f64|f32|f16|bf16]
//
// For every case folder under DIR (case.json plus float64 .npy arrays, the
// format of shared/golden/README.md) builds the case's spec -- the named
// neuron op forward and its backward -- runs it on the target, compares
// each array the folder holds, prints one line per case and a closing
// `N passed, M failed`. Exits non-zero if any case fails.
//
//===----------------------------------------------------------------------===//

#include "nerve/Builders.h"
#include "nerve/Runtime/ArgBuffer.h"
#include "nerve/Support/Version.h"
#include "nerve/nerve.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

using namespace nerve;
namespace cl = llvm::cl;

static cl::OptionCategory category("nerve-golden options");
static cl::opt<std::string> casesDir(cl::Positional, cl::desc("<directory of case folders>"),
                                     cl::Required, cl::cat(category));
static cl::opt<std::string> targetName("target", cl::desc("cpu, cuda or auto (default)"),
                                       cl::init("auto"), cl::cat(category));
static cl::opt<std::string> dtypeName(
    "dtype",
    cl::desc("Storage type of every tensor: f64, f32 (default), f16 or bf16. Arrays are compared\n"
             "with the golden float64 ones by max |actual - expected| / max |expected|:\n"
             "  f64   1e-10, spikes exact\n"
             "  f32   1e-5, spikes exact\n"
             "  f16   1e-2. A spike may differ only where |h - v_threshold| <= 2e-3 (4\n"
             "        units of f16 rounding): that neuron's later steps are then left out.\n"
             "        Backward recomputes spikes from the saved h_seq, rounded to f16, so\n"
             "        neurons with any |h - v_threshold| <= 2e-3 are left out of the\n"
             "        gradients (as are those near a jump of the surrogate: |u| = w for\n"
             "        piecewise_leaky_relu); grad_w, a sum over every neuron, is then\n"
             "        compared without their share (derived from grad_x and v_seq)\n"
             "  bf16  5e-2, likewise with a band of 1.6e-2 (4 units of bf16 rounding)"),
    cl::init("f32"), cl::cat(category));
static cl::opt<std::string> caseFilter("filter", cl::desc("Only cases whose name contains this"),
                                       cl::cat(category));
static cl::opt<int> timeBlock("time-block",
                             cl::desc("Time steps of a neuron whose loads are issued together (0: automatic)"),
                             cl::init(0), cl::cat(category));
static cl::opt<bool> verbose("v", cl::desc("Print the spec of each case"), cl::cat(category));

namespace {

struct Tolerance {
  DType dtype;
  double relative;
  /// Spikes may differ where |h - v_threshold| is at most this (0: exact).
  double flipBand;
};

struct Case {
  std::string name, dir, neuron;
  double vThreshold = 1.0;
  std::optional<double> vReset;
  bool detachReset = false, decayInput = true;
  double tau = 2.0, w = 0.0;
  std::string surrogate;
  std::map<std::string, double> surrogateParams;
  std::map<std::string, HostArray> arrays;
  /// Multi-state cases (golden/multistate): a built-in neuron model with
  /// every parameter learnable, in the model's order, and dL/d each.
  bool multistate = false;
  std::vector<std::pair<std::string, double>> params;
  std::map<std::string, double> paramGrads;
};

/// The arrays a case folder may hold.
const char *const kArrays[] = {
    "x",      "v_init", "w_init",      "a_init",      "grad_spike",  "grad_v_seq", "grad_w_seq",
    "grad_a_seq", "spike", "v_seq",    "h_seq",       "w_seq",       "a_seq",      "theta",
    "grad_x", "grad_v_init", "grad_w_init", "grad_a_init", "grad_w"};

/// The threshold step `i` (flat) fired against: the case's `theta` array
/// for an adaptive threshold, else v_threshold.
double thresholdAt(const Case &c, int64_t i) {
  auto theta = c.arrays.find("theta");
  return theta != c.arrays.end() ? theta->second.getDouble(i) : c.vThreshold;
}

std::string number(double v) {
  std::string s = llvm::formatv("{0:e16}", v).str();
  return s;
}

Result<Case> loadCase(const std::string &dir) {
  Case c;
  c.dir = dir;
  c.name = llvm::sys::path::filename(dir).str();
  llvm::SmallString<256> jsonPath(dir);
  llvm::sys::path::append(jsonPath, "case.json");
  auto buffer = llvm::MemoryBuffer::getFile(jsonPath);
  if (!buffer)
    return Status::error(std::string(jsonPath.str()) + ": cannot read");
  llvm::Expected<llvm::json::Value> json = llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    std::string message = llvm::toString(json.takeError());
    return Status::error(std::string(jsonPath.str()) + ": " + message);
  }
  const llvm::json::Object *o = json->getAsObject();
  if (!o)
    return Status::error(std::string(jsonPath.str()) + ": not a JSON object");
  auto str = [&](llvm::StringRef key) { return o->getString(key).value_or("").str(); };
  if (auto n = o->getString("name"))
    c.name = n->str();
  c.neuron = str("neuron");
  if (c.neuron != "if" && c.neuron != "lif" && c.neuron != "plif") {
    Result<std::vector<std::pair<std::string, double>>> known = builtinNeuronParams(c.neuron);
    if (!known)
      return Status::error(c.name + ": unknown neuron '" + c.neuron + "'");
    c.multistate = true;
    const llvm::json::Object *params = o->getObject("params");
    const llvm::json::Object *grads = o->getObject("param_grads");
    for (const auto &[name, value] : *known) {
      std::optional<double> given = params ? params->getNumber(name) : std::nullopt;
      c.params.push_back({name, given.value_or(value)});
      if (std::optional<double> g = grads ? grads->getNumber(name) : std::nullopt)
        c.paramGrads[name] = *g;
    }
  }
  c.vThreshold = o->getNumber("v_threshold").value_or(1.0);
  if (auto r = o->getNumber("v_reset"))
    c.vReset = *r;
  c.detachReset = o->getBoolean("detach_reset").value_or(false);
  c.decayInput = o->getBoolean("decay_input").value_or(true);
  c.tau = o->getNumber("tau").value_or(2.0);
  c.w = o->getNumber("w").value_or(0.0);
  if (const llvm::json::Object *s = o->getObject("surrogate")) {
    c.surrogate = s->getString("name").value_or("sigmoid").str();
    if (const llvm::json::Object *p = s->getObject("params"))
      for (const auto &kv : *p)
        if (auto v = kv.second.getAsNumber())
          c.surrogateParams[kv.first.str()] = *v;
  } else {
    c.surrogate = "sigmoid";
  }
  for (const char *name : kArrays) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, std::string(name) + ".npy");
    if (!llvm::sys::fs::exists(path))
      continue;
    Result<HostArray> a = readNpy(std::string(path.str()));
    if (!a)
      return a.status();
    c.arrays[name] = a.take();
  }
  if (!c.arrays.count("x"))
    return Status::error(c.name + ": no x.npy");
  if (c.arrays["x"].shape.empty())
    return Status::error(c.name + ": x.npy has no time axis");
  return c;
}

/// The spec of a multi-state case: the built-in model, then its forward
/// and backward in one kernel, every parameter a 0-d tensor of the compute
/// type with its gradient.
Result<std::string> buildModelSpec(const Case &c, DType dtype) {
  std::string t = toString(dtype), ct = dtype == DType::F64 ? "f64" : "f32";
  BuiltinNeuron neuron{c.neuron, "golden_" + c.neuron, ct, {}, c.vThreshold, c.vReset};
  for (const auto &[name, value] : c.params)
    neuron.params[name] = value;
  Result<NeuronModelDef> def = builtinNeuronModel(neuron);
  if (!def)
    return def.status();
  Result<std::string> model = neuronModelSpec(*def);
  if (!model)
    return model.status();
  size_t rank = c.arrays.at("x").shape.size();
  std::string dims = "t: ?", neuronDims;
  for (size_t d = 1; d < rank; ++d) {
    dims += ", d" + std::to_string(d) + ": ?";
    neuronDims += std::string(d > 1 ? ", " : "") + "d" + std::to_string(d) + ": ?";
  }
  std::string spec = *model + "!seq = !tdim.tensor<[" + dims + "], " + t + ">\n" +
                     "!vec = !tdim.tensor<[" + neuronDims + "], " + t + ">\n" +
                     "!one = !tdim.tensor<[], " + ct + ">\n";
  std::vector<std::string> states;
  for (const auto &s : def->states)
    states.push_back(s.first);
  // Named operand groups: `group(name = %prefix_name : type, ...)`.
  auto group = [&](const std::string &g, const std::vector<std::string> &names,
                   const std::string &prefix, const std::string &suffix, const char *type) {
    std::string text;
    for (const std::string &n : names)
      text += (text.empty() ? "" : ", ") + n + " = %" + prefix + n + suffix + " : " + type;
    return text.empty() ? "" : " " + g + "(" + text + ")";
  };
  std::vector<std::string> params;
  for (const auto &p : c.params)
    params.push_back(p.first);
  std::string args = "%x: !seq", results = "%spike: !seq";
  for (const std::string &s : states)
    args += ", %" + s + "_init: !vec";
  for (const std::string &p : params)
    args += ", %p_" + p + ": !one";
  args += ", %grad_spike: !seq";
  for (const std::string &s : states)
    args += ", %grad_" + s + "_seq: !seq";
  for (const std::string &s : states)
    results += ", %" + s + "_seq: !seq";
  results += ", %h_seq: !seq, %grad_x: !seq";
  for (const std::string &s : states)
    results += ", %grad_" + s + "_init: !vec";
  for (const std::string &p : params)
    results += ", %grad_" + p + ": !one";
  std::string surrogate = "#neuron.surrogate<" + c.surrogate;
  for (const auto &[k, v] : c.surrogateParams)
    surrogate += ", " + k + " = " + number(v);
  surrogate += ">";
  // Backward is given what nerve's planner says it reads (forward writes
  // every state's sequence and the firing state's charged values).
  Result<NeuronModelSaves> saves =
      neuronModelSaves(*model, neuron.name, {{"x"}, params, surrogate, c.detachReset, false});
  if (!saves)
    return saves.status();
  for (const std::string &h : saves->hSeq)
    if (h != states.front())
      return Status::error("backward reads the charged values of state `" + h +
                           "`, which nerve-golden does not save");
  std::string m = "@" + neuron.name;
  spec += "tdim.kernel @golden(" + args + ") -> (" + results + ") {\n";
  spec += "  neuron.forward " + m + " ins(x = %x : !seq)" + group("init", states, "", "_init", "!vec") +
          group("params", params, "p_", "", "!one") + " outs(%spike : !seq)" +
          group("seq", states, "", "_seq", "!seq") + " h_seq(v = %h_seq : !seq) time t\n";
  spec += "  neuron.backward " + m + " h_seq(v = %h_seq : !seq)" +
          group("seq", saves->seq, "", "_seq", "!seq") +
          (saves->inputs.empty() ? "" : " ins(x = %x : !seq)") +
          group("init", states, "", "_init", "!vec") + group("params", params, "p_", "", "!one") +
          " grad_spike(%grad_spike : !seq)" + group("grad_seq", states, "grad_", "_seq", "!seq") +
          " grad_ins(x = %grad_x : !seq)" + group("grad_init", states, "grad_", "_init", "!vec") +
          group("grad_params", params, "grad_", "", "!one") + " time t {surrogate = " +
          surrogate + (c.detachReset ? ", detach_reset" : "") + "}\n";
  spec += "  tdim.return\n}\n";
  return spec;
}

/// The spec of a case: forward and backward in one kernel.
std::string buildSpec(const Case &c, DType dtype) {
  size_t rank = c.arrays.at("x").shape.size();
  std::string dims = "t: ?", neuronDims;
  for (size_t d = 1; d < rank; ++d) {
    dims += ", d" + std::to_string(d) + ": ?";
    neuronDims += std::string(d > 1 ? ", " : "") + "d" + std::to_string(d) + ": ?";
  }
  std::string t = toString(dtype);
  std::string spec = "!seq = !tdim.tensor<[" + dims + "], " + t + ">\n" +
                     "!vec = !tdim.tensor<[" + neuronDims + "], " + t + ">\n" +
                     "!one = !tdim.tensor<[], " + t + ">\n";
  bool plif = c.neuron == "plif";
  bool hasInit = c.arrays.count("v_init");
  std::string attrs = "v_threshold = " + number(c.vThreshold);
  if (c.vReset)
    attrs += ", v_reset = " + number(*c.vReset);
  if (c.neuron == "lif")
    attrs += ", tau = " + number(c.tau);
  if (c.neuron != "if")
    attrs += std::string(", decay_input = ") + (c.decayInput ? "true" : "false");
  std::string surrogate = "#neuron.surrogate<" + c.surrogate;
  for (const auto &[k, v] : c.surrogateParams)
    surrogate += ", " + k + " = " + number(v);
  surrogate += ">";
  std::string gradAttrs = attrs + ", surrogate = " + surrogate;
  if (c.detachReset)
    gradAttrs += ", detach_reset";

  spec += "tdim.kernel @golden(%x: !seq" + std::string(hasInit ? ", %v_init: !vec" : "") +
          (plif ? ", %w: !one" : "") + ", %grad_spike: !seq, %grad_v_seq: !seq)\n" +
          "    -> (%spike: !seq, %v_seq: !seq, %h_seq: !seq, %grad_x: !seq, %grad_v_init: !vec" +
          (plif ? ", %grad_w: !one" : "") + ") {\n";
  spec += "  neuron." + c.neuron + " ins(%x : !seq)" +
          (hasInit ? " init(%v_init : !vec)" : "") + (plif ? " w(%w : !one)" : "") +
          " outs(%spike : !seq) v_seq(%v_seq : !seq) h_seq(%h_seq : !seq)\n" +
          "      time t {" + attrs + "}\n";
  spec += "  neuron." + c.neuron + "_grad ins(%h_seq : !seq)" +
          (plif ? std::string(hasInit ? " init(%v_init : !vec)" : "") + " w(%w : !one)" : "") +
          " grad_spike(%grad_spike : !seq) grad_v_seq(%grad_v_seq : !seq)\n" +
          "      outs(%grad_x : !seq) grad_v_init(%grad_v_init : !vec)" +
          (plif ? " grad_w(%grad_w : !one)" : "") + "\n      time t {" + gradAttrs + "}\n";
  spec += "  tdim.return\n}\n";
  return spec;
}

HostArray convertTo(const HostArray &a, DType dtype) {
  HostArray out = HostArray::zeros(dtype, a.shape);
  for (int64_t i = 0; i < a.numElements(); ++i)
    out.setDouble(i, a.getDouble(i));
  return out;
}

/// max |a - b| / max |b| over the elements `keep` admits.
template <typename Keep>
double relativeError(const HostArray &actual, const HostArray &expected, Keep keep) {
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    if (!keep(i))
      continue;
    double e = expected.getDouble(i), a = actual.getDouble(i);
    scale = std::max(scale, std::abs(e));
    double d = std::abs(a - e);
    if (std::isnan(a) != std::isnan(e) || std::isnan(d))
      d = INFINITY;
    worst = std::max(worst, d);
  }
  return scale > 0 ? worst / scale : worst;
}

/// One run's PLIF dL/dw in parts: the charge's derivatives are known in
/// closed form (with decay_input, h = v + (x - (v - v_reset)) r, so dh/dx =
/// r and dh/dw = (x - (v - v_reset)) r'; without it h = v - (v - v_reset) r
/// + x), so dL/dh = grad_x / (dh/dx) and dL/dw sums dL/dh dh/dw. Soft reset
/// charges towards 0.
struct GradWParts {
  double all = 0;        ///< the sum over every neuron
  double near = 0;       ///< over the neurons at the threshold
  double magnitudes = 0; ///< of the other neurons' terms, |term| summed
};

GradWParts plifGradW(const Case &c, const HostArray &gradX, const HostArray &vSeq,
                     const std::vector<bool> &near) {
  double r = 1 / (1 + std::exp(-c.w)), dr = r * (1 - r), vr = c.vReset.value_or(0.0);
  const HostArray &x = c.arrays.at("x"), &vInit = c.arrays.at("v_init");
  int64_t neurons = vInit.numElements(), steps = x.numElements() / std::max<int64_t>(neurons, 1);
  GradWParts parts;
  for (int64_t t = 0; t < steps; ++t)
    for (int64_t n = 0; n < neurons; ++n) {
      int64_t i = t * neurons + n;
      double vPrev = t ? vSeq.getDouble(i - neurons) : vInit.getDouble(n);
      double gradH = gradX.getDouble(i) / (c.decayInput ? r : 1.0);
      double term = gradH * (c.decayInput ? x.getDouble(i) - (vPrev - vr) : -(vPrev - vr)) * dr;
      parts.all += term;
      if (near[n])
        parts.near += term;
      else
        parts.magnitudes += std::abs(term);
    }
  return parts;
}

struct GradWCheck {
  bool ok;
  std::string report;
};

/// grad_w where some neurons sit at the threshold (their spikes, recomputed
/// from a rounded h, may differ): the kernel's grad_w less those neurons'
/// share (from its own grad_x and v_seq) against the golden grad_w less
/// theirs (from the golden arrays). The identity behind the shares is
/// checked first on the golden arrays, over every neuron.
GradWCheck compareGradW(const Case &c, std::map<std::string, HostArray> &got,
                        const std::vector<bool> &near, double tolerance) {
  if (!c.arrays.count("v_init") || !c.arrays.count("v_seq") || !got.count("grad_x") ||
      !got.count("v_seq"))
    return {false, ", grad_w: its neurons at the threshold cannot be set apart (no v_init, "
                   "v_seq or grad_x)"};
  GradWParts want = plifGradW(c, c.arrays.at("grad_x"), c.arrays.at("v_seq"), near);
  double golden = c.arrays.at("grad_w").getDouble(0);
  if (std::abs(want.all - golden) > 1e-9 * std::max(1.0, std::abs(golden)))
    return {false, ", grad_w: the golden arrays do not sum to grad_w (" + number(want.all) +
                       " against " + number(golden) + ")"};
  double wantRest = golden - want.near;
  double gotNear = plifGradW(c, got["grad_x"], got["v_seq"], near).near;
  double gotRest = got["grad_w"].getDouble(0) - gotNear;
  // Relative to the terms' magnitudes (a sum that cancels to near zero
  // keeps the rounding of its terms), as the arrays are to their largest
  // element.
  double scale = std::max({std::abs(wantRest), want.magnitudes, 1e-30});
  double err = std::abs(gotRest - wantRest) / scale;
  if (std::isnan(gotRest))
    err = INFINITY;
  return {err <= tolerance,
          ", grad_w " + llvm::formatv("{0:e2}", err).str() +
              " (without the neurons at the threshold)"};
}

/// The kernel's outputs for case `c`, its inputs converted to the storage
/// type.
Result<std::map<std::string, HostArray>> runCase(Case &c, Module &module, DType dtype) {
  const EntryInfo &entry = module.entries().front();
  // Bind inputs (converted to the storage type) and size the outputs.
  DimBinding binding;
  std::vector<ArgBuffer> buffers(entry.args.size());
  std::vector<Arg> args(entry.args.size());
  for (size_t i = 0; i < entry.args.size(); ++i) {
    const ArgInfo &a = entry.args[i];
    if (a.isOutput)
      continue;
    HostArray input;
    auto param = std::find_if(c.params.begin(), c.params.end(),
                              [&](const auto &p) { return "p_" + p.first == a.name; });
    if (a.name == "w") {
      input = HostArray::zeros(dtype, {});
      input.setDouble(0, c.w);
    } else if (param != c.params.end()) {
      input = HostArray::zeros(a.dtype, {});
      input.setDouble(0, param->second);
    } else if (c.arrays.count(a.name)) {
      input = convertTo(c.arrays[a.name], dtype);
    } else if (a.name == "grad_spike" || a.name == "grad_v_seq" || a.name == "grad_w_seq" ||
               a.name == "grad_a_seq") {
      input = HostArray::zeros(dtype, c.arrays["x"].shape);
    } else {
      return Status::error("no " + a.name + ".npy");
    }
    if (Status s = bindShape(a, input.shape, binding); !s)
      return s;
    Result<ArgBuffer> b = makeArgBuffer(a, input.shape);
    if (!b)
      return b.status();
    buffers[i] = b.take();
    if (Status s = scatter(input, buffers[i]); !s)
      return s;
    args[i] = buffers[i].asArg();
  }
  for (size_t i = 0; i < entry.args.size(); ++i) {
    const ArgInfo &a = entry.args[i];
    if (!a.isOutput)
      continue;
    Result<std::vector<int64_t>> sizes = sizesFor(a, binding);
    if (!sizes)
      return sizes.status();
    Result<ArgBuffer> b = makeArgBuffer(a, *sizes);
    if (!b)
      return b.status();
    buffers[i] = b.take();
    args[i] = buffers[i].asArg();
  }
  if (Status s = module.run(entry.name, args); !s)
    return s;
  std::map<std::string, HostArray> got;
  for (size_t i = 0; i < entry.args.size(); ++i)
    if (entry.args[i].isOutput)
      got[entry.args[i].name] = gather(buffers[i]);
  return got;
}

/// How a case's outputs compare: whether they pass, and the report line.
struct Verdict {
  bool ok = true;
  std::string report;
};

/// What the comparisons of one case leave out: neurons whose saved h may
/// round across a step of backward's math (the threshold, where backward
/// recomputes the spike, or a jump of the surrogate: piecewise_leaky_relu
/// jumps at |u| = w), and each neuron's first excused spike flip.
struct Exclusions {
  int64_t steps = 0, neurons = 0;
  std::vector<int64_t> firstFlip;
  std::vector<bool> nearThreshold;
  unsigned nearNeurons = 0;
};

Exclusions exclusionsOf(Case &c, const Tolerance &tol) {
  Exclusions e;
  const std::vector<int64_t> &shape = c.arrays["x"].shape;
  e.steps = shape[0];
  e.neurons = c.arrays["x"].numElements() / std::max<int64_t>(e.steps, 1);
  e.firstFlip.assign(e.neurons, e.steps);
  e.nearThreshold.assign(e.neurons, false);
  std::vector<double> jumps = {0.0};
  if (c.surrogate == "piecewise_leaky_relu") {
    double w = c.surrogateParams.count("w") ? c.surrogateParams["w"] : 1.0;
    jumps.push_back(w);
    jumps.push_back(-w);
  }
  if (tol.flipBand > 0 && c.arrays.count("h_seq"))
    for (int64_t i = 0; i < c.arrays["h_seq"].numElements(); ++i) {
      double u = c.arrays["h_seq"].getDouble(i) - thresholdAt(c, i);
      bool near = llvm::any_of(jumps, [&](double j) { return std::abs(u - j) <= tol.flipBand; });
      if (near && !e.nearThreshold[i % e.neurons]) {
        e.nearThreshold[i % e.neurons] = true;
        ++e.nearNeurons;
      }
    }
  return e;
}

/// Spikes: flips allowed only inside the band, and their neuron is then
/// left out of the comparisons from that step on (forward) or entirely
/// (backward).
void compareSpikes(Case &c, std::map<std::string, HostArray> &got, const Tolerance &tol,
                   Exclusions &e, Verdict &v) {
  const HostArray &want = c.arrays["spike"], &h = c.arrays["h_seq"];
  unsigned flips = 0, excused = 0;
  for (int64_t t = 0; t < e.steps; ++t)
    for (int64_t n = 0; n < e.neurons; ++n) {
      int64_t i = t * e.neurons + n;
      if (t >= e.firstFlip[n] || got["spike"].getDouble(i) == want.getDouble(i))
        continue;
      ++flips;
      bool excusable =
          c.arrays.count("h_seq") && std::abs(h.getDouble(i) - thresholdAt(c, i)) <= tol.flipBand;
      if (excusable) {
        ++excused;
        e.firstFlip[n] = t;
      } else {
        v.ok = false;
      }
    }
  v.report += " spike " + std::to_string(flips - excused) + " flips";
  if (excused)
    v.report += " (+" + std::to_string(excused) + " at the threshold)";
}

/// Every other expected output against the kernel's, within the
/// tolerance, leaving out what `e` excludes.
void compareArrays(Case &c, std::map<std::string, HostArray> &got, const Tolerance &tol,
                   const Exclusions &e, Verdict &v) {
  for (const char *name : {"v_seq", "h_seq", "w_seq", "a_seq", "grad_x", "grad_v_init",
                           "grad_w_init", "grad_a_init", "grad_w"}) {
    if (!c.arrays.count(name))
      continue;
    if (!got.count(name)) {
      v.ok = false;
      v.report += std::string(", ") + name + " expected but not produced";
      continue;
    }
    std::string n = name;
    bool perNeuron = n == "grad_v_init" || n == "grad_w_init" || n == "grad_a_init";
    bool backward = n.rfind("grad", 0) == 0;
    if (n == "grad_w" && c.multistate)
      continue; // a multi-state case's w is a state: grad_w_init, w_seq
    if (n == "grad_w" && e.nearNeurons) {
      GradWCheck check = compareGradW(c, got, e.nearThreshold, tol.relative);
      v.ok &= check.ok;
      v.report += check.report;
      continue;
    }
    double err = relativeError(got[n], c.arrays[n], [&](int64_t i) {
      if (n == "grad_w")
        return true;
      int64_t neuron = perNeuron ? i : i % e.neurons;
      int64_t t = perNeuron ? 0 : i / e.neurons;
      return backward ? e.firstFlip[neuron] == e.steps && !e.nearThreshold[neuron]
                      : t < e.firstFlip[neuron];
    });
    v.ok &= err <= tol.relative;
    v.report += ", " + n + " " + llvm::formatv("{0:e2}", err).str();
  }
}

/// A multi-state case's parameter gradients, compared as one array: max
/// |actual - expected| over the parameters / max |expected| (a gradient
/// that is a sum cancelling to near zero keeps its terms' rounding). They
/// sum over every neuron, so where neurons sit at the threshold (their
/// spikes, recomputed from a rounded h, may differ) they are not compared.
void compareParamGrads(Case &c, std::map<std::string, HostArray> &got, const Tolerance &tol,
                       const Exclusions &e, Verdict &v) {
  if (c.paramGrads.empty())
    return;
  if (e.nearNeurons) {
    v.report += ", parameter gradients not compared (neurons at the threshold)";
    return;
  }
  double worst = 0, scale = 0;
  std::string worstName;
  for (const auto &[name, want] : c.paramGrads) {
    auto it = got.find("grad_" + name);
    if (it == got.end()) {
      v.ok = false;
      v.report += ", grad_" + name + " expected but not produced";
      return;
    }
    double g = it->second.getDouble(0);
    double err = std::isnan(g) ? INFINITY : std::abs(g - want);
    scale = std::max(scale, std::abs(want));
    if (err >= worst)
      worst = err, worstName = name;
  }
  double relative = scale > 0 ? worst / scale : worst;
  v.ok &= relative <= tol.relative;
  v.report += ", params " + llvm::formatv("{0:e2}", relative).str() + " (" + worstName + ")";
}

/// The case's outputs against its expected arrays.
Verdict compareCase(Case &c, std::map<std::string, HostArray> &got, const Tolerance &tol) {
  Exclusions e = exclusionsOf(c, tol);
  Verdict v;
  if (c.arrays.count("spike"))
    compareSpikes(c, got, tol, e, v);
  compareArrays(c, got, tol, e, v);
  compareParamGrads(c, got, tol, e, v);
  if (e.nearNeurons)
    v.report += "; " + std::to_string(e.nearNeurons) +
                " neurons at the threshold left out of the gradients";
  return v;
}

} // namespace

static int fail(const std::string &message) {
  llvm::errs() << "nerve-golden: error: " << message << "\n";
  return 1;
}

/// The case folders under the directory (those with a case.json), sorted.
static Result<std::vector<std::string>> findCases() {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(casesDir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::SmallString<256> json(it->path());
    llvm::sys::path::append(json, "case.json");
    if (llvm::sys::fs::exists(json))
      dirs.push_back(it->path());
  }
  if (ec)
    return Status::error(casesDir + ": " + ec.message());
  if (dirs.empty())
    return Status::error(casesDir + " holds no case folders (folders with a case.json)");
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

/// The tolerance of --dtype.
static Result<Tolerance> toleranceOf(const std::string &name) {
  std::map<std::string, Tolerance> tolerances = {
      {"f64", {DType::F64, 1e-10, 0}},
      {"f32", {DType::F32, 1e-5, 0}},
      {"f16", {DType::F16, 1e-2, 2e-3}},
      {"bf16", {DType::BF16, 5e-2, 1.6e-2}}};
  auto it = tolerances.find(name);
  if (it == tolerances.end())
    return Status::error("unknown dtype '" + name + "'; use f64, f32, f16 or bf16");
  return it->second;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(nerve::printVersion);
  cl::ParseCommandLineOptions(argc, argv, "nerve-golden: run golden neuron cases\n");

  Result<Tolerance> tolerance = toleranceOf(dtypeName);
  if (!tolerance)
    return fail(tolerance.message());
  Tolerance tol = *tolerance;
  CompileOptions options;
  options.neuronTimeBlock = timeBlock;
  if (targetName == "cpu")
    options.target = Target::CPU;
  else if (targetName == "cuda")
    options.target = Target::CUDA;
  else if (targetName != "auto")
    return fail("unknown target '" + targetName + "'; use cpu, cuda or auto");
  Result<std::vector<std::string>> dirs = findCases();
  if (!dirs)
    return fail(dirs.message());

  std::map<std::string, std::shared_ptr<Module>> compiled;
  unsigned passed = 0, failed = 0;
  for (const std::string &dir : *dirs) {
    Result<Case> loaded = loadCase(dir);
    if (!loaded) {
      llvm::outs() << llvm::sys::path::filename(dir) << "  FAIL  " << loaded.message() << "\n";
      ++failed;
      continue;
    }
    Case &c = *loaded;
    if (!caseFilter.empty() && c.name.find(caseFilter) == std::string::npos)
      continue;
    std::string spec;
    if (c.multistate) {
      Result<std::string> built = buildModelSpec(c, tol.dtype);
      if (!built) {
        llvm::outs() << c.name << "  FAIL  " << built.message() << "\n";
        ++failed;
        continue;
      }
      spec = *built;
    } else {
      spec = buildSpec(c, tol.dtype);
    }
    if (verbose)
      llvm::outs() << spec;
    std::shared_ptr<Module> &module = compiled[spec];
    if (!module) {
      Result<std::shared_ptr<Module>> m = compile(spec, options);
      if (!m) {
        llvm::outs() << c.name << "  FAIL  compile: " << m.message() << "\n";
        ++failed;
        compiled.erase(spec);
        continue;
      }
      module = m.take();
    }
    Result<std::map<std::string, HostArray>> got = runCase(c, *module, tol.dtype);
    if (!got) {
      llvm::outs() << c.name << "  FAIL  " << got.message() << "\n";
      ++failed;
      continue;
    }
    Verdict v = compareCase(c, *got, tol);
    llvm::outs() << c.name << "  " << (v.ok ? "pass" : "FAIL") << " " << v.report << "\n";
    (v.ok ? passed : failed)++;
  }
  llvm::outs() << passed << " passed, " << failed << " failed\n";
  return failed ? 1 : 0;
}
