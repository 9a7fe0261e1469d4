//===- Expressions.h - the builders' expression language ---------*- C++ -*-===//
//
// C-like expressions written out as arith / math ops of a region body, and
// the statements `name = expression` that bind names in order: shared by
// the kernel builders (Builders.cpp) and the neuron-model builder
// (NeuronModelSpec.cpp). Errors throw a Failure, caught at the builders'
// entry points; the files including this one are built with exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_API_EXPRESSIONS_H
#define NERVE_LIB_API_EXPRESSIONS_H

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace nerve::expr {

/// Parse errors carry the part of the kernel they are in.
struct Failure {
  std::string message;
};

inline bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
inline bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

inline std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

inline bool isIdentifier(const std::string &s) {
  if (s.empty() || !isIdentStart(s[0]))
    return false;
  for (char c : s)
    if (!isIdentChar(c))
      return false;
  return true;
}

/// An MLIR float attribute literal for `v` in `type`.
inline std::string floatLiteral(double v, const std::string &type) {
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

inline void checkName(const std::string &name, const std::string &what) {
  if (!isIdentifier(name))
    throw Failure{what + ": '" + name + "' is not a kernel name"};
}

inline std::string indent(const std::vector<std::string> &lines, const char *pad) {
  std::string s;
  for (const std::string &l : lines)
    s += pad + l + "\n";
  return s;
}

/// Runs `body`, statements `name = expression` separated by `;` or new
/// lines, in order: each binds its name in `e` (later statements read the
/// new value). `readOnly` names cannot be assigned; `assigned` sees each
/// assignment.
inline void runStatements(ExprEmitter &e, const std::string &part, const std::string &body,
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

} // namespace nerve::expr

#endif // NERVE_LIB_API_EXPRESSIONS_H
