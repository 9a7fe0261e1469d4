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

namespace {

/// One declared argument.
struct Decl {
  std::string type; // f32, f16, bf16, f64
  std::string name;
  bool isTensor = false;
  std::vector<std::pair<std::string, std::string>> dims; // name, size ("?" or N)
};

/// Parse errors carry the part of the kernel they are in.
struct Failure {
  std::string message;
};

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

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

bool isIdentifier(const std::string &s) {
  if (s.empty() || !isIdentStart(s[0]))
    return false;
  for (char c : s)
    if (!isIdentChar(c))
      return false;
  return true;
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

/// An MLIR float attribute literal for `v` in `type`.
std::string floatLiteral(double v, const std::string &type) {
  if (std::isfinite(v)) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos)
      s += ".0";
    return s;
  }
  // Infinities and NaN in hexadecimal, as MLIR spells them.
  bool neg = std::signbit(v);
  const char *hex = nullptr;
  if (type == "f64")
    hex = std::isnan(v) ? "0x7FF8000000000000" : neg ? "0xFFF0000000000000" : "0x7FF0000000000000";
  else if (type == "f32")
    hex = std::isnan(v) ? "0x7FC00000" : neg ? "0xFF800000" : "0x7F800000";
  else if (type == "f16")
    hex = std::isnan(v) ? "0x7E00" : neg ? "0xFC00" : "0x7C00";
  else
    hex = std::isnan(v) ? "0x7FC0" : neg ? "0xFF80" : "0x7F80";
  return hex;
}

/// Writes the ops of expressions into a region body. Values are SSA names
/// of the compute type (`ft`) or i1.
class ExprEmitter {
public:
  ExprEmitter(std::string part, std::string ft, std::vector<std::string> &lines)
      : part(std::move(part)), ft(std::move(ft)), lines(lines) {}

  struct Value {
    std::string ssa;
    bool isBool = false;
  };

  /// Names expressions may read.
  std::map<std::string, Value> names;

  Value parse(const std::string &expression) {
    text = expression;
    pos = 0;
    Value v = ternary();
    skipSpace();
    if (pos < text.size())
      fail("unexpected '" + text.substr(pos, 1) + "'");
    return v;
  }

  std::string fresh() { return "%v" + std::to_string(counter++); }
  std::string constant(double v) {
    std::string r = fresh();
    lines.push_back(r + " = arith.constant " + floatLiteral(v, ft) + " : " + ft);
    return r;
  }

private:
  [[noreturn]] void fail(const std::string &what) {
    throw Failure{part + ": " + what + " at column " + std::to_string(pos + 1) + " of '" +
                  text + "'"};
  }
  void skipSpace() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool accept(const char *token) {
    skipSpace();
    size_t n = std::strlen(token);
    if (text.compare(pos, n, token) != 0)
      return false;
    // "<" must not eat "<=", "!" must not eat "!=", and so on.
    if (n == 1 && pos + 1 < text.size() && text[pos + 1] == '=' &&
        std::strchr("<>!=", token[0]))
      return false;
    pos += n;
    return true;
  }
  void expect(const char *token) {
    if (!accept(token))
      fail(std::string("expected '") + token + "'");
  }
  std::string emit(const std::string &rhs) {
    std::string r = fresh();
    lines.push_back(r + " = " + rhs);
    return r;
  }
  Value number(const Value &v, const char *op) {
    if (v.isBool)
      fail(std::string("'") + op + "' needs a number, not a comparison");
    return v;
  }
  Value boolean(const Value &v, const char *op) {
    if (!v.isBool)
      fail(std::string("'") + op + "' needs a comparison or a logical value");
    return v;
  }

  Value ternary() {
    Value c = logicalOr();
    if (!accept("?"))
      return c;
    boolean(c, "?");
    Value a = ternary();
    expect(":");
    Value b = ternary();
    if (a.isBool != b.isBool)
      fail("the two branches of '?' have different kinds");
    return {emit("arith.select " + c.ssa + ", " + a.ssa + ", " + b.ssa + " : " +
                 (a.isBool ? "i1" : ft)),
            a.isBool};
  }
  Value logicalOr() {
    Value l = logicalAnd();
    while (accept("||")) {
      boolean(l, "||");
      Value r = boolean(logicalAnd(), "||");
      l = {emit("arith.ori " + l.ssa + ", " + r.ssa + " : i1"), true};
    }
    return l;
  }
  Value logicalAnd() {
    Value l = comparison();
    while (accept("&&")) {
      boolean(l, "&&");
      Value r = boolean(comparison(), "&&");
      l = {emit("arith.andi " + l.ssa + ", " + r.ssa + " : i1"), true};
    }
    return l;
  }
  Value comparison() {
    Value l = additive();
    static const std::pair<const char *, const char *> ops[] = {
        {"<=", "ole"}, {">=", "oge"}, {"==", "oeq"}, {"!=", "une"}, {"<", "olt"}, {">", "ogt"}};
    for (auto [token, predicate] : ops)
      if (accept(token)) {
        number(l, token);
        Value r = number(additive(), token);
        return {emit(std::string("arith.cmpf ") + predicate + ", " + l.ssa + ", " + r.ssa +
                     " : " + ft),
                true};
      }
    return l;
  }
  Value additive() {
    Value l = multiplicative();
    while (true) {
      const char *op = accept("+") ? "arith.addf" : accept("-") ? "arith.subf" : nullptr;
      if (!op)
        return l;
      number(l, "+");
      Value r = number(multiplicative(), "+");
      l = {emit(std::string(op) + " " + l.ssa + ", " + r.ssa + " : " + ft)};
    }
  }
  Value multiplicative() {
    Value l = unary();
    while (true) {
      const char *op = accept("*") ? "arith.mulf" : accept("/") ? "arith.divf" : nullptr;
      if (!op)
        return l;
      number(l, "*");
      Value r = number(unary(), "*");
      l = {emit(std::string(op) + " " + l.ssa + ", " + r.ssa + " : " + ft)};
    }
  }
  Value unary() {
    if (accept("-")) {
      Value v = number(unary(), "-");
      return {emit("arith.negf " + v.ssa + " : " + ft)};
    }
    if (accept("!")) {
      Value v = boolean(unary(), "!");
      std::string one = emit("arith.constant true");
      return {emit("arith.xori " + v.ssa + ", " + one + " : i1"), true};
    }
    return primary();
  }
  Value call(const std::string &fn, const std::vector<Value> &args) {
    auto arity = [&](size_t n) {
      if (args.size() != n)
        fail(fn + " takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") + ", not " +
             std::to_string(args.size()));
    };
    static const std::map<std::string, std::string> unaryMath = {
        {"exp", "math.exp"},     {"log", "math.log"},   {"sqrt", "math.sqrt"},
        {"rsqrt", "math.rsqrt"}, {"tanh", "math.tanh"}, {"abs", "math.absf"},
        {"floor", "math.floor"}, {"ceil", "math.ceil"}};
    if (auto it = unaryMath.find(fn); it != unaryMath.end()) {
      arity(1);
      number(args[0], fn.c_str());
      return {emit(it->second + " " + args[0].ssa + " : " + ft)};
    }
    if (fn == "sigmoid") {
      arity(1);
      number(args[0], "sigmoid");
      std::string neg = emit("arith.negf " + args[0].ssa + " : " + ft);
      std::string e = emit("math.exp " + neg + " : " + ft);
      std::string one = constant(1.0);
      std::string d = emit("arith.addf " + one + ", " + e + " : " + ft);
      return {emit("arith.divf " + one + ", " + d + " : " + ft)};
    }
    if (fn == "min" || fn == "max" || fn == "pow") {
      arity(2);
      number(args[0], fn.c_str());
      number(args[1], fn.c_str());
      const char *op = fn == "min" ? "arith.minimumf" : fn == "max" ? "arith.maximumf" : "math.powf";
      return {emit(std::string(op) + " " + args[0].ssa + ", " + args[1].ssa + " : " + ft)};
    }
    if (fn == "where") {
      arity(3);
      boolean(args[0], "where");
      if (args[1].isBool != args[2].isBool)
        fail("the two values of where() have different kinds");
      return {emit("arith.select " + args[0].ssa + ", " + args[1].ssa + ", " + args[2].ssa +
                   " : " + (args[1].isBool ? "i1" : ft)),
              args[1].isBool};
    }
    fail("unknown function '" + fn +
         "' (exp log sqrt rsqrt tanh sigmoid abs floor ceil min max pow where)");
  }
  Value primary() {
    skipSpace();
    if (pos >= text.size())
      fail("an expression is missing");
    char c = text[pos];
    if (accept("(")) {
      Value v = ternary();
      expect(")");
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const char *start = text.c_str() + pos;
      char *end = nullptr;
      double v = std::strtod(start, &end);
      if (end == start)
        fail("a malformed number");
      pos += end - start;
      // C-style suffixes are accepted and ignored: the compute type rules.
      if (pos < text.size() && (text[pos] == 'f' || text[pos] == 'F'))
        ++pos;
      return {constant(v)};
    }
    if (!isIdentStart(c))
      fail("unexpected '" + std::string(1, c) + "'");
    size_t start = pos;
    while (pos < text.size() && isIdentChar(text[pos]))
      ++pos;
    std::string name = text.substr(start, pos - start);
    if (accept("(")) {
      std::vector<Value> args;
      if (!accept(")")) {
        do
          args.push_back(ternary());
        while (accept(","));
        expect(")");
      }
      return call(name, args);
    }
    if (name == "inf")
      return {constant(INFINITY)};
    if (name == "nan")
      return {constant(NAN)};
    auto it = names.find(name);
    if (it == names.end()) {
      pos = start;
      std::string known;
      for (auto &[n, v] : names)
        known += (known.empty() ? "" : ", ") + n;
      fail("unknown name '" + name + "' (known: " + known + ")");
    }
    return it->second;
  }

  std::string part;
  std::string ft;
  std::vector<std::string> &lines;
  std::string text;
  size_t pos = 0;
  int counter = 0;
};

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

void checkName(const std::string &name, const std::string &what) {
  if (!isIdentifier(name))
    throw Failure{what + ": '" + name + "' is not a kernel name"};
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

std::string indent(const std::vector<std::string> &lines, const char *pad) {
  std::string s;
  for (const std::string &l : lines)
    s += pad + l + "\n";
  return s;
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

/// Runs `body`, statements `name = expression` separated by `;` or new
/// lines, in order: each binds its name in `e` (later statements read the
/// new value). `readOnly` names cannot be assigned; `assigned` sees each
/// assignment.
void runStatements(ExprEmitter &e, const std::string &part, const std::string &body,
                   const std::set<std::string> &readOnly,
                   const std::function<void(const std::string &, const std::string &)> &assigned) {
  std::string statements = body;
  for (char &c : statements)
    if (c == '\n')
      c = ';';
  std::stringstream ss(statements);
  std::string statement;
  while (std::getline(ss, statement, ';')) {
    statement = trim(statement);
    if (statement.empty())
      continue;
    size_t eq = statement.find('=');
    if (eq == std::string::npos || eq == 0 || statement[eq + 1] == '=' ||
        std::strchr("<>!", statement[eq - 1]))
      throw Failure{part + ": '" + statement + "' is not an assignment 'name = expression'"};
    std::string target = trim(statement.substr(0, eq));
    if (!isIdentifier(target))
      throw Failure{part + ": '" + target + "' cannot be assigned to"};
    if (readOnly.count(target))
      throw Failure{part + ": '" + target + "' is an input and cannot be assigned to"};
    ExprEmitter::Value v = e.parse(statement.substr(eq + 1));
    if (v.isBool)
      throw Failure{part + ": '" + target +
                    "' is given a comparison; use where(c, 1, 0) for a number"};
    e.names[target] = v;
    assigned(target, v.ssa);
  }
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

/// A number as the neuron.model syntax reads it (always with an exponent).
std::string modelNumber(double v) {
  if (!std::isfinite(v))
    throw Failure{"values must be finite, not " + std::to_string(v)};
  char text[40];
  std::snprintf(text, sizeof(text), "%.17e", v);
  return text;
}

/// `(a = 1.0, b = 2.0)` or `(x, y)`.
std::string namedList(const std::vector<std::pair<std::string, double>> &entries) {
  std::string s;
  for (const auto &[name, value] : entries)
    s += (s.empty() ? "" : ", ") + name + " = " + modelNumber(value);
  return "(" + s + ")";
}

/// The threshold: `threshold(1.0)` for a number, else a region of the
/// states and parameters.
std::string thresholdText(const NeuronModelDef &m) {
  std::string text = trim(m.threshold);
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (!text.empty() && end && *end == '\0')
    return "threshold(" + modelNumber(value) + ")";
  std::vector<std::string> lines;
  ExprEmitter e("threshold", m.computeType, lines);
  std::string args;
  for (const auto *list : {&m.states, &m.params})
    for (const auto &[name, value] : *list) {
      std::string arg = "%t_" + name;
      args += (args.empty() ? "" : ", ") + arg + ": " + m.computeType;
      e.names[name] = {arg};
    }
  ExprEmitter::Value v = e.parse(text);
  if (v.isBool)
    throw Failure{"threshold: '" + text + "' is a comparison, not a number"};
  lines.push_back("neuron.yield " + v.ssa + " : " + m.computeType);
  return "threshold {\n  ^bb0(" + args + "):\n" + indent(lines, "    ") + "  }";
}

std::string neuronModelSpecOrThrow(const NeuronModelDef &m) {
  checkName(m.name, "neuron model");
  if (m.computeType != "f32" && m.computeType != "f64")
    throw Failure{"compute type '" + m.computeType + "': a model computes in f32 or f64"};
  if (m.states.empty())
    throw Failure{"states: a neuron needs at least one state, its potential"};
  std::set<std::string> seen, readOnly;
  auto declare = [&](const std::string &name, const char *what) {
    if (!isIdentifier(name))
      throw Failure{std::string(what) + ": '" + name + "' is not a name"};
    if (!seen.insert(name).second)
      throw Failure{"'" + name + "' is declared twice"};
  };
  std::vector<std::string> lines;
  ExprEmitter e("charge", m.computeType, lines);
  std::string args;
  auto bind = [&](const std::string &name, const char *prefix) {
    std::string arg = std::string("%") + prefix + name;
    args += (args.empty() ? "" : ", ") + arg + ": " + m.computeType;
    e.names[name] = {arg};
  };
  for (const auto &[name, value] : m.states)
    declare(name, "states"), bind(name, "s_");
  for (const std::string &name : m.inputs)
    declare(name, "inputs"), bind(name, "i_"), readOnly.insert(name);
  for (const auto &[name, value] : m.params)
    declare(name, "params"), bind(name, "p_"), readOnly.insert(name);
  runStatements(e, "charge", m.charge, readOnly, [](const std::string &, const std::string &) {});
  std::string yields, types;
  for (const auto &[name, value] : m.states) {
    yields += (yields.empty() ? "" : ", ") + e.names[name].ssa;
    types += (types.empty() ? "" : ", ") + m.computeType;
  }
  lines.push_back("neuron.yield " + yields + " : " + types);

  std::string spec = "neuron.model @" + m.name + " states" + namedList(m.states) + " inputs(";
  for (size_t i = 0; i < m.inputs.size(); ++i)
    spec += (i ? ", " : "") + m.inputs[i];
  spec += ")";
  if (!m.params.empty())
    spec += " params" + namedList(m.params);
  spec += "\n    " + thresholdText(m);
  if (!m.resets.empty()) {
    spec += " reset(";
    for (size_t i = 0; i < m.resets.size(); ++i)
      spec += (i ? ", " : "") + trim(m.resets[i]);
    spec += ")";
  }
  spec += " charge {\n^bb0(" + args + "):\n" + indent(lines, "  ") + "}\n";
  return spec;
}

} // namespace

Result<std::string> nerve::neuronModelSpec(const NeuronModelDef &model) {
  try {
    return neuronModelSpecOrThrow(model);
  } catch (const Failure &f) {
    return Status::error("neuron model '" + model.name + "': " + f.message);
  }
}

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
