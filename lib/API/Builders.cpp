//===- Builders.cpp - kernels from declarations and expressions ---------===//
//
// Declarations and expressions are parsed here and written out as a tdim
// spec (a tdim.map or tdim.reduce whose regions hold the arith / math ops
// of the expressions); everything else, checking included, is the
// compiler's. Errors name the builder's part ("inputs", "body", ...) and a
// column.
//
// The recursive-descent parser reports an error by throwing a Failure,
// caught at the two entry points below and returned as a Status: this one
// file is built with exceptions (see CMakeLists.txt); none leaves it.
//
//===----------------------------------------------------------------------===//

#include "Expressions.h"

#include "nerve/Builders.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>

using namespace nerve;
using namespace nerve::expr;

namespace {

/// One declared argument.
struct Decl {
  std::string type; // f32, f16, bf16, f64
  std::string name;
  bool isTensor = false;
  std::vector<std::pair<std::string, std::string>> dims; // name, size ("?" or N)
};

/// Splits at top-level commas (not inside brackets).
std::vector<std::string> splitTopLevel(const std::string &s) {
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '[' || c == '(')
      ++depth;
    if (c == ']' || c == ')')
      --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!trim(cur).empty() || !parts.empty())
    parts.push_back(trim(cur));
  return parts;
}

std::vector<Decl> parseDecls(const std::string &what, const std::string &text) {
  std::vector<Decl> decls;
  for (const std::string &part : splitTopLevel(text)) {
    if (part.empty())
      throw Failure{what + ": an empty declaration (a stray comma?)"};
    Decl d;
    size_t space = part.find_first_of(" \t");
    if (space == std::string::npos)
      throw Failure{what + ": '" + part + "' needs a type and a name, as in 'f32 x[n]'"};
    d.type = part.substr(0, space);
    if (d.type != "f32" && d.type != "f16" && d.type != "bf16" && d.type != "f64")
      throw Failure{what + ": '" + d.type + "' in '" + part +
                    "' is not an element type builders take (f32, f16, bf16, f64)"};
    std::string rest = trim(part.substr(space));
    size_t bracket = rest.find('[');
    d.name = trim(rest.substr(0, bracket));
    if (!isIdentifier(d.name))
      throw Failure{what + ": '" + d.name + "' in '" + part + "' is not a name"};
    if (bracket != std::string::npos) {
      d.isTensor = true;
      if (rest.back() != ']')
        throw Failure{what + ": '" + part + "' does not end with ']'"};
      std::string inner = rest.substr(bracket + 1, rest.size() - bracket - 2);
      std::set<std::string> seen;
      for (const std::string &dim : splitTopLevel(inner)) {
        std::string dimName = trim(dim.substr(0, dim.find(':')));
        std::string size = "?";
        if (dim.find(':') != std::string::npos) {
          size = trim(dim.substr(dim.find(':') + 1));
          if (size.empty() || size.find_first_not_of("0123456789") != std::string::npos)
            throw Failure{what + ": the size of dimension '" + dimName + "' in '" + part +
                          "' is not a number"};
        }
        if (!isIdentifier(dimName))
          throw Failure{what + ": '" + dim + "' in '" + part + "' is not a dimension name"};
        if (!seen.insert(dimName).second)
          throw Failure{what + ": dimension '" + dimName + "' appears twice in '" + part + "'"};
        d.dims.push_back({dimName, size});
      }
    }
    decls.push_back(std::move(d));
  }
  return decls;
}

std::string tensorType(const Decl &d) {
  std::string s = "!tdim.tensor<[";
  for (size_t i = 0; i < d.dims.size(); ++i)
    s += (i ? ", " : "") + d.dims[i].first + ": " + d.dims[i].second;
  return s + "], " + d.type + ">";
}

/// f64 if any argument is f64, else f32.
std::string computeType(const std::vector<Decl> &a, const std::vector<Decl> &b) {
  for (const auto *list : {&a, &b})
    for (const Decl &d : *list)
      if (d.type == "f64")
        return "f64";
  return "f32";
}

/// A value of `from` as `to` (both float types).
std::string convert(ExprEmitter &e, std::vector<std::string> &lines, const std::string &value,
                    const std::string &from, const std::string &to) {
  if (from == to)
    return value;
  auto width = [](const std::string &t) { return t == "f64" ? 64 : t == "f32" ? 32 : 16; };
  std::string r = e.fresh();
  lines.push_back(r + " = arith." + (width(from) < width(to) ? "extf " : "truncf ") + value +
                  " : " + from + " to " + to);
  return r;
}

void checkUnique(const std::vector<Decl> &ins, const std::vector<Decl> &outs) {
  std::set<std::string> seen;
  for (const auto *list : {&ins, &outs})
    for (const Decl &d : *list)
      if (!seen.insert(d.name).second)
        throw Failure{"'" + d.name + "' is declared twice"};
}

std::string signature(const std::string &name, const std::vector<Decl> &ins,
                      const std::vector<Decl> &outs) {
  std::string s = "tdim.kernel @" + name + "(";
  for (size_t i = 0; i < ins.size(); ++i)
    s += (i ? ", %" : "%") + ins[i].name + ": " +
         (ins[i].isTensor ? tensorType(ins[i]) : ins[i].type);
  s += ") -> (";
  for (size_t i = 0; i < outs.size(); ++i)
    s += (i ? ", %" : "%") + outs[i].name + ": " + tensorType(outs[i]);
  return s + ") {\n";
}

/// `ins(%a, %b : ta, tb)` for the tensors among `decls`.
std::string operandList(const char *keyword, const std::vector<const Decl *> &decls) {
  std::string names, types;
  for (size_t i = 0; i < decls.size(); ++i) {
    names += (i ? ", %" : "%") + decls[i]->name;
    types += (i ? ", " : "") + tensorType(*decls[i]);
  }
  return std::string(keyword) + "(" + names + " : " + types + ")";
}

/// Makes the scalar arguments readable (converted to the compute type).
void bindScalars(ExprEmitter &e, std::vector<std::string> &lines, const std::vector<Decl> &ins,
                 const std::string &ft) {
  for (const Decl &d : ins)
    if (!d.isTensor)
      e.names[d.name] = {convert(e, lines, "%" + d.name, d.type, ft)};
}

/// The block arguments of a region reading `tensors`, and their binding.
std::string blockArgs(ExprEmitter &e, std::vector<std::string> &lines,
                      const std::vector<const Decl *> &tensors, const std::string &ft) {
  std::string args;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string arg = "%e_" + tensors[i]->name;
    args += (i ? ", " : "") + arg + ": " + tensors[i]->type;
    e.names[tensors[i]->name] = {convert(e, lines, arg, tensors[i]->type, ft)};
  }
  return args;
}

std::string elementwiseSpecOrThrow(const std::string &name, const std::string &inputs,
                                   const std::string &outputs, const std::string &body) {
  checkName(name, "elementwise kernel");
  std::vector<Decl> ins = parseDecls("inputs", inputs);
  std::vector<Decl> outs = parseDecls("outputs", outputs);
  if (outs.empty())
    throw Failure{"outputs: an elementwise kernel needs at least one output"};
  for (const Decl &d : outs)
    if (!d.isTensor)
      throw Failure{"outputs: '" + d.name + "' is a scalar; outputs are tensors, as in 'f32 " +
                    d.name + "[n]'"};
  checkUnique(ins, outs);
  std::string ft = computeType(ins, outs);

  std::vector<const Decl *> tensorIns, tensorOuts;
  for (const Decl &d : ins)
    if (d.isTensor)
      tensorIns.push_back(&d);
  for (const Decl &d : outs)
    tensorOuts.push_back(&d);

  std::vector<std::string> lines;
  ExprEmitter e("body", ft, lines);
  bindScalars(e, lines, ins, ft);
  std::string args = blockArgs(e, lines, tensorIns, ft);

  std::set<std::string> outputNames, inputNames;
  for (const Decl &d : outs)
    outputNames.insert(d.name);
  for (const Decl &d : ins)
    inputNames.insert(d.name);
  std::map<std::string, std::string> assigned;
  runStatements(e, "body", body, inputNames, [&](const std::string &target, const std::string &v) {
    if (outputNames.count(target))
      assigned[target] = v;
  });
  std::string yieldValues, yieldTypes;
  for (size_t i = 0; i < outs.size(); ++i) {
    auto it = assigned.find(outs[i].name);
    if (it == assigned.end())
      throw Failure{"body: output '" + outs[i].name + "' is never assigned"};
    std::string v = convert(e, lines, it->second, ft, outs[i].type);
    yieldValues += (i ? ", " : "") + v;
    yieldTypes += (i ? ", " : "") + outs[i].type;
  }
  lines.push_back("tdim.yield " + yieldValues + " : " + yieldTypes);

  std::string spec = "// Built by nerve::elementwiseKernel.\n" + signature(name, ins, outs);
  spec += "  tdim.map " + (tensorIns.empty() ? std::string() : operandList("ins", tensorIns) + " ") +
          operandList("outs", tensorOuts) + " {\n";
  spec += "  ^bb0(" + args + "):\n" + indent(lines, "    ") + "  }\n  tdim.return\n}\n";
  return spec;
}

/// The dimensions a reduction folds: those of its tensor inputs that its
/// output does not keep, in order of appearance.
static std::vector<std::string> reducedDims(const std::vector<const Decl *> &tensorIns,
                                            const Decl &out) {
  std::vector<std::string> over;
  for (const Decl *d : tensorIns)
    for (auto &dim : d->dims) {
      bool kept = false;
      for (auto &o : out.dims)
        kept |= o.first == dim.first;
      if (!kept && std::find(over.begin(), over.end(), dim.first) == over.end())
        over.push_back(dim.first);
    }
  for (auto &o : out.dims) {
    bool found = false;
    for (const Decl *d : tensorIns)
      for (auto &dim : d->dims)
        found |= dim.first == o.first;
    if (!found)
      throw Failure{"output: dimension '" + o.first + "' is in no input"};
  }
  if (over.empty())
    throw Failure{"output: keeps every input dimension, so nothing is reduced"};
  return over;
}

/// A reduction's identity: a number, inf, -inf or nan.
static double parseIdentity(const std::string &text) {
  if (trim(text).empty())
    throw Failure{"identity: missing (the value combine leaves unchanged: 0 for a sum)"};
  std::string id = trim(text);
  bool neg = !id.empty() && id[0] == '-';
  std::string magnitude = trim(neg ? id.substr(1) : id);
  double identity = 0;
  if (magnitude == "inf") {
    identity = INFINITY;
  } else if (magnitude == "nan") {
    identity = NAN;
  } else {
    char *end = nullptr;
    identity = std::strtod(magnitude.c_str(), &end);
    if (magnitude.empty() || *end != '\0')
      throw Failure{"identity: '" + text + "' is not a number (or inf, -inf)"};
  }
  return neg ? -identity : identity;
}

/// What a reduction's regions see: its inputs, its compute type.
struct ReductionRegions {
  const ReductionKernelSpec &r;
  const std::vector<Decl> &ins;
  const std::vector<const Decl *> &tensorIns;
  const Decl &out;
  std::string ft;

  /// The map region: the value each element contributes.
  std::string map() const {
    std::vector<std::string> lines;
    ExprEmitter e("map", ft, lines);
    bindScalars(e, lines, ins, ft);
    std::string args = blockArgs(e, lines, tensorIns, ft);
    ExprEmitter::Value v = e.parse(r.map);
    if (v.isBool)
      throw Failure{"map: gives a comparison; use where(c, 1, 0) for a number"};
    lines.push_back("tdim.yield " + v.ssa + " : " + ft);
    return "    map {\n    ^bb0(" + args + "):\n" + indent(lines, "      ") + "    }\n";
  }

  /// The combine region: two partial values merged.
  std::string combine() const {
    std::vector<std::string> lines;
    ExprEmitter e("combine", ft, lines);
    bindScalars(e, lines, ins, ft);
    e.names["a"] = {"%a"};
    e.names["b"] = {"%b"};
    ExprEmitter::Value v = e.parse(r.combine);
    if (v.isBool)
      throw Failure{"combine: gives a comparison, not a value"};
    lines.push_back("tdim.yield " + v.ssa + " : " + ft);
    return "    combine {\n    ^bb0(%a: " + ft + ", %b: " + ft + "):\n" +
           indent(lines, "      ") + "    }\n";
  }

  /// The post region: the total (and the count) to the output's value.
  std::string post() const {
    std::vector<std::string> lines;
    ExprEmitter e("post", ft, lines);
    bindScalars(e, lines, ins, ft);
    e.names["a"] = {"%a"};
    std::string n = e.fresh(), f = e.fresh();
    lines.push_back(n + " = arith.index_cast %count : index to i64");
    lines.push_back(f + " = arith.uitofp " + n + " : i64 to " + ft);
    e.names["count"] = {f};
    ExprEmitter::Value v = e.parse(r.post.empty() ? "a" : r.post);
    if (v.isBool)
      throw Failure{"post: gives a comparison, not a value"};
    std::string result = convert(e, lines, v.ssa, ft, out.type);
    lines.push_back("tdim.yield " + result + " : " + out.type);
    return "    post {\n    ^bb0(%a: " + ft + ", %count: index):\n" +
           indent(lines, "      ") + "    }\n";
  }
};

std::string reductionSpecOrThrow(const ReductionKernelSpec &r) {
  checkName(r.name, "reduction kernel");
  std::vector<Decl> ins = parseDecls("inputs", r.inputs);
  std::vector<Decl> outs = parseDecls("output", r.output);
  if (outs.size() != 1 || !outs[0].isTensor)
    throw Failure{"output: a reduction kernel has one tensor output, as in 'f32 y[b]' (or "
                  "'f32 y[]' for one value)"};
  checkUnique(ins, outs);
  for (const char *reserved : {"a", "b", "count"})
    for (const Decl &d : ins)
      if (d.name == reserved)
        throw Failure{std::string("inputs: '") + reserved +
                      "' is reserved in reductions (combine reads a and b, post a and count)"};
  const Decl &out = outs[0];
  std::string ft = computeType(ins, outs);
  std::vector<const Decl *> tensorIns;
  for (const Decl &d : ins)
    if (d.isTensor)
      tensorIns.push_back(&d);
  if (tensorIns.empty())
    throw Failure{"inputs: a reduction needs a tensor input"};
  std::vector<std::string> over = reducedDims(tensorIns, out);
  double identity = parseIdentity(r.identity);

  std::string spec = "// Built by nerve::reductionKernel.\n" + signature(r.name, ins, outs);
  spec += "  tdim.reduce " + operandList("ins", tensorIns) + " " +
          operandList("outs", {&out}) + " over [";
  for (size_t i = 0; i < over.size(); ++i)
    spec += (i ? ", " : "") + over[i];
  spec += "] init [" + floatLiteral(identity, ft) + " : " + ft + "]\n";
  ReductionRegions regions{r, ins, tensorIns, out, ft};
  spec += regions.map();
  spec += regions.combine();
  spec += regions.post();
  spec += "  tdim.return\n}\n";
  return spec;
}

} // namespace

Result<std::string> nerve::elementwiseSpec(const std::string &name, const std::string &inputs,
                                           const std::string &outputs, const std::string &body) {
  try {
    return elementwiseSpecOrThrow(name, inputs, outputs, body);
  } catch (const Failure &f) {
    return Status::error("elementwise kernel '" + name + "': " + f.message);
  }
}

Result<std::string> nerve::reductionSpec(const ReductionKernelSpec &reduction) {
  try {
    return reductionSpecOrThrow(reduction);
  } catch (const Failure &f) {
    return Status::error("reduction kernel '" + reduction.name + "': " + f.message);
  }
}

Result<std::shared_ptr<Module>> nerve::elementwiseKernel(const std::string &name,
                                                         const std::string &inputs,
                                                         const std::string &outputs,
                                                         const std::string &body,
                                                         const CompileOptions &options) {
  Result<std::string> spec = elementwiseSpec(name, inputs, outputs, body);
  if (!spec)
    return spec.status();
  CompileOptions named = options;
  named.sourceName = "elementwise kernel '" + name + "'";
  return compile(*spec, named);
}

Result<std::shared_ptr<Module>> nerve::reductionKernel(const ReductionKernelSpec &reduction,
                                                       const CompileOptions &options) {
  Result<std::string> spec = reductionSpec(reduction);
  if (!spec)
    return spec.status();
  CompileOptions named = options;
  named.sourceName = "reduction kernel '" + reduction.name + "'";
  return compile(*spec, named);
}
