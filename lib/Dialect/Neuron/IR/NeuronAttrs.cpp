//===- NeuronAttrs.cpp - surrogate gradients ----------------------------===//

#include "nerve/Dialect/Neuron/IR/NeuronAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <limits>

using namespace mlir;
using namespace nerve::neuron;

#include "nerve/Dialect/Neuron/IR/NeuronEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "nerve/Dialect/Neuron/IR/NeuronAttrs.cpp.inc"

void NeuronDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "nerve/Dialect/Neuron/IR/NeuronAttrs.cpp.inc"
      >();
}

/// A number as a user would write it: 2, 0.5, 1e-05, inf.
static std::string formatNumber(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

static constexpr double kAny = std::numeric_limits<double>::quiet_NaN();

ArrayRef<SurrogateParam> nerve::neuron::getSurrogateParams(SurrogateKind kind) {
  // Defaults are SpikingJelly's. Lower bounds keep each formula defined:
  // alpha divides (1/alpha) or scales a positive slope; q_pseudo_spike
  // divides by alpha - 1.
  static const SurrogateParam sigmoid[] = {{"alpha", 4.0, 0.0}};
  static const SurrogateParam atan[] = {{"alpha", 2.0, 0.0}};
  static const SurrogateParam plr[] = {{"w", 1.0, 0.0}, {"c", 0.01, kAny}};
  static const SurrogateParam s2nn[] = {{"alpha", 4.0, 0.0}, {"beta", 1.0, kAny}};
  static const SurrogateParam qps[] = {{"alpha", 2.0, 1.0}};
  static const SurrogateParam lkr[] = {{"leak", 0.0, kAny}, {"k", 1.0, kAny}};
  static const SurrogateParam fng[] = {{"alpha", 0.3, 0.0}};
  static const SurrogateParam ltr[] = {{"alpha", 0.0, kAny}};
  static const SurrogateParam pq[] = {{"alpha", 1.0, 0.0}};
  static const SurrogateParam pe[] = {{"alpha", 1.0, 0.0}};
  static const SurrogateParam ss[] = {{"alpha", 2.0, 0.0}};
  static const SurrogateParam sup[] = {{"alpha", 1.0, 0.0}};
  static const SurrogateParam erf[] = {{"alpha", 2.0, 0.0}};
  switch (kind) {
  case SurrogateKind::sigmoid: return sigmoid;
  case SurrogateKind::atan: return atan;
  case SurrogateKind::piecewise_leaky_relu: return plr;
  case SurrogateKind::s2nn: return s2nn;
  case SurrogateKind::q_pseudo_spike: return qps;
  case SurrogateKind::leaky_k_relu: return lkr;
  case SurrogateKind::fake_numerical_gradient: return fng;
  case SurrogateKind::log_tailed_relu: return ltr;
  case SurrogateKind::piecewise_quadratic: return pq;
  case SurrogateKind::piecewise_exp: return pe;
  case SurrogateKind::soft_sign: return ss;
  case SurrogateKind::super_spike: return sup;
  case SurrogateKind::erf: return erf;
  }
  return {};
}

double SurrogateAttr::getParam(StringRef name) const {
  if (auto v = llvm::dyn_cast_or_null<FloatAttr>(getParams().get(name)))
    return v.getValueAsDouble();
  for (const SurrogateParam &p : getSurrogateParams(getKind()))
    if (name == p.name)
      return p.defaultValue;
  return kAny;
}

static std::string paramList(SurrogateKind kind) {
  std::string s;
  for (const SurrogateParam &p : getSurrogateParams(kind))
    s += (s.empty() ? "`" : ", `") + std::string(p.name) + "`";
  return s.empty() ? "none" : s;
}

LogicalResult SurrogateAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                    SurrogateKind kind, DictionaryAttr params) {
  ArrayRef<SurrogateParam> known = getSurrogateParams(kind);
  for (NamedAttribute entry : params) {
    StringRef name = entry.getName().getValue();
    const SurrogateParam *p = llvm::find_if(known, [&](const SurrogateParam &k) {
      return name == k.name;
    });
    if (p == known.end())
      return emitError() << "surrogate `" << stringifySurrogateKind(kind)
                         << "` takes no parameter `" << name << "` (it takes "
                         << paramList(kind) << ")";
    auto value = llvm::dyn_cast<FloatAttr>(entry.getValue());
    if (!value)
      return emitError() << "surrogate parameter `" << name << "` must be a number";
    double v = value.getValueAsDouble();
    if (!std::isfinite(v))
      return emitError() << "surrogate parameter `" << name << "` is "
                         << formatNumber(v) << "; it must be finite";
    if (!std::isnan(p->lowerBound) && !(v > p->lowerBound))
      return emitError() << "surrogate `" << stringifySurrogateKind(kind) << "` needs `"
                         << name << "` > " << formatNumber(p->lowerBound)
                         << ", not " << formatNumber(v);
  }
  return success();
}

Attribute SurrogateAttr::parse(AsmParser &parser, Type) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<SurrogateKind> kind = symbolizeSurrogateKind(keyword);
  if (!kind) {
    std::string all;
    for (int i = 0; i <= 12; ++i)
      all += (i ? ", " : "") + stringifySurrogateKind(static_cast<SurrogateKind>(i)).str();
    parser.emitError(loc) << "unknown surrogate `" << keyword << "`; expected one of " << all;
    return {};
  }
  Builder &b = parser.getBuilder();
  NamedAttrList given;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef name;
    double value;
    SMLoc valueLoc;
    if (parser.parseKeyword(&name) || parser.parseEqual())
      return {};
    valueLoc = parser.getCurrentLocation();
    if (parser.parseFloat(value))
      return {};
    if (given.get(name)) {
      parser.emitError(valueLoc) << "surrogate parameter `" << name << "` given twice";
      return {};
    }
    given.append(name, b.getF64FloatAttr(value));
  }
  if (parser.parseGreater())
    return {};
  // The canonical form names every parameter, defaults included.
  for (const SurrogateParam &p : getSurrogateParams(*kind))
    if (!given.get(p.name))
      given.append(p.name, b.getF64FloatAttr(p.defaultValue));
  return SurrogateAttr::getChecked([&] { return parser.emitError(loc); },
                                   parser.getContext(), *kind,
                                   given.getDictionary(parser.getContext()));
}

void SurrogateAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifySurrogateKind(getKind());
  for (const SurrogateParam &p : getSurrogateParams(getKind())) {
    printer << ", " << p.name << " = ";
    printer.printFloat(llvm::APFloat(getParam(p.name)));
  }
  printer << ">";
}

//===----------------------------------------------------------------------===//
// Resets
//===----------------------------------------------------------------------===//

ParseResult nerve::neuron::parseNumber(AsmParser &parser, double &value) {
  bool negative = succeeded(parser.parseOptionalMinus());
  uint64_t integer;
  OptionalParseResult asInteger = parser.parseOptionalInteger(integer);
  if (asInteger.has_value()) {
    if (failed(*asInteger))
      return failure();
    value = static_cast<double>(integer);
  } else if (parser.parseFloat(value)) {
    return failure();
  }
  if (negative)
    value = -value;
  return success();
}

FailureOr<ResetAttr> ResetAttr::parseBody(AsmParser &parser) {
  std::string state;
  StringRef keyword;
  if (parser.parseKeywordOrString(&state) || parser.parseEqual())
    return failure();
  SMLoc kindLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<ResetKind> kind = symbolizeResetKind(keyword);
  if (!kind)
    return parser.emitError(kindLoc) << "unknown reset `" << keyword
                                     << "`; expected hard, soft or add";
  Builder &b = parser.getBuilder();
  FloatAttr value;
  StringAttr param;
  bool valueGrad = false;
  if (*kind != ResetKind::soft) {
    double v;
    std::string name;
    if (*kind == ResetKind::add && succeeded(parser.parseOptionalKeywordOrString(&name))) {
      param = b.getStringAttr(name);
    } else {
      SMLoc at = parser.getCurrentLocation();
      if (failed(parseNumber(parser, v)))
        return parser.emitError(at)
               << (*kind == ResetKind::hard ? "a hard reset needs the value it resets to"
                                            : "an add reset needs an amount: a number or a "
                                              "parameter's name");
      value = b.getF64FloatAttr(v);
    }
    if (*kind == ResetKind::hard)
      valueGrad = succeeded(parser.parseOptionalKeyword("value_grad"));
  }
  return ResetAttr::get(parser.getContext(), b.getStringAttr(state), *kind, value, param,
                        valueGrad);
}

void ResetAttr::printBody(AsmPrinter &printer) const {
  printer << getState().getValue() << " = " << stringifyResetKind(getKind());
  if (getValue()) {
    printer << " ";
    printer.printFloat(getValue().getValue());
  }
  if (getParam())
    printer << " " << getParam().getValue();
  if (getValueGrad())
    printer << " value_grad";
}

Attribute ResetAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  FailureOr<ResetAttr> reset = parseBody(parser);
  if (failed(reset) || parser.parseGreater())
    return {};
  return *reset;
}

void ResetAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printBody(printer);
  printer << ">";
}
