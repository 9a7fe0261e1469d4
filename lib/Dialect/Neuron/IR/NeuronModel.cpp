//===- NeuronModel.cpp - neuron.model and the ops that use it -----------===//
//
// A model is written once (states, inputs, parameters, one charge region,
// the threshold, the resets) and used by name from neuron.forward and
// neuron.backward, whose operands come in named groups. The checks that
// need the model run as symbol-use verification, once the module is whole.
//
//===----------------------------------------------------------------------===//

#include "NeuronChecker.h"
#include "nerve/Dialect/Neuron/IR/NeuronOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace nerve;
using namespace nerve::neuron;
using checks::NeuronChecker;
using checks::num;
using tdim::DimAttr;
using tdim::TdimTensorType;

bool nerve::neuron::isDifferentiable(Operation *op) {
  // Logic on comparisons (i1) carries no gradient; floor and ceil have
  // derivative zero wherever they have one, as in PyTorch.
  if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op))
    return op->getResult(0).getType().isInteger(1);
  return isa<arith::ConstantOp, arith::AddFOp, arith::SubFOp, arith::NegFOp, arith::MulFOp,
             arith::DivFOp, arith::SelectOp, arith::CmpFOp, arith::MaximumFOp, arith::MinimumFOp,
             arith::MaxNumFOp, arith::MinNumFOp, arith::ExtFOp, arith::TruncFOp, math::FmaOp,
             math::ExpOp, math::LogOp, math::SqrtOp, math::RsqrtOp, math::TanhOp, math::AbsFOp,
             math::PowFOp, math::FloorOp, math::CeilOp>(op);
}

//===----------------------------------------------------------------------===//
// neuron.model: syntax
//===----------------------------------------------------------------------===//

/// `(a = 1.0, b)`: names and their values (a unit where none is written,
/// when `allowMissing`).
static ParseResult parseNamedConstants(OpAsmParser &parser, ArrayAttr &names,
                                       ArrayAttr &values, bool allowMissing) {
  Builder &b = parser.getBuilder();
  SmallVector<Attribute> n, v;
  auto entry = [&]() -> ParseResult {
    std::string name;
    if (parser.parseKeywordOrString(&name))
      return failure();
    n.push_back(b.getStringAttr(name));
    if (failed(parser.parseOptionalEqual())) {
      if (!allowMissing)
        return parser.emitError(parser.getCurrentLocation())
               << "expected `= value` after `" << name << "`";
      v.push_back(b.getUnitAttr());
      return success();
    }
    double value;
    if (parseNumber(parser, value))
      return failure();
    v.push_back(b.getF64FloatAttr(value));
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, entry))
    return failure();
  names = b.getArrayAttr(n);
  values = b.getArrayAttr(v);
  return success();
}

static void printNamedConstants(OpAsmPrinter &p, ArrayAttr names, ArrayAttr values) {
  p << "(";
  for (auto [i, name] : llvm::enumerate(names.getAsValueRange<StringAttr>())) {
    p << (i ? ", " : "");
    p.printKeywordOrString(name);
    if (auto f = llvm::dyn_cast<FloatAttr>(values[i])) {
      p << " = ";
      p.printFloat(f.getValue());
    }
  }
  p << ")";
}

ParseResult ModelOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &b = parser.getBuilder();
  StringAttr name;
  ArrayAttr states, inits, params, values;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name), result.attributes) ||
      parser.parseKeyword("states") ||
      parseNamedConstants(parser, states, inits, /*allowMissing=*/true) ||
      parser.parseKeyword("inputs"))
    return failure();
  SmallVector<Attribute> inputNames;
  auto input = [&]() -> ParseResult {
    std::string n;
    if (parser.parseKeywordOrString(&n))
      return failure();
    inputNames.push_back(b.getStringAttr(n));
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, input))
    return failure();
  params = values = b.getArrayAttr({});
  if (succeeded(parser.parseOptionalKeyword("params")) &&
      parseNamedConstants(parser, params, values, /*allowMissing=*/false))
    return failure();
  Region *charge = result.addRegion();
  Region *threshold = result.addRegion();
  if (parser.parseKeyword("threshold"))
    return failure();
  if (succeeded(parser.parseOptionalLParen())) {
    double v;
    if (parseNumber(parser, v) || parser.parseRParen())
      return failure();
    result.addAttribute(getVThresholdAttrName(result.name), b.getF64FloatAttr(v));
  } else if (parser.parseRegion(*threshold)) {
    return failure();
  }
  SmallVector<Attribute> resets;
  if (succeeded(parser.parseOptionalKeyword("reset"))) {
    auto reset = [&]() -> ParseResult {
      FailureOr<ResetAttr> r = ResetAttr::parseBody(parser);
      if (failed(r))
        return failure();
      resets.push_back(*r);
      return success();
    };
    if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, reset))
      return failure();
  }
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes) ||
      parser.parseKeyword("charge") || parser.parseRegion(*charge))
    return failure();
  result.addAttribute(getStatesAttrName(result.name), states);
  result.addAttribute(getStateInitsAttrName(result.name), inits);
  result.addAttribute(getInputsAttrName(result.name), b.getArrayAttr(inputNames));
  result.addAttribute(getParamsAttrName(result.name), params);
  result.addAttribute(getParamValuesAttrName(result.name), values);
  result.addAttribute(getResetsAttrName(result.name), b.getArrayAttr(resets));
  return success();
}

void ModelOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printSymbolName(getSymName());
  p << " states";
  printNamedConstants(p, getStates(), getStateInits());
  p << " inputs(";
  llvm::interleaveComma(getInputs().getAsValueRange<StringAttr>(), p,
                        [&](StringRef n) { p.printKeywordOrString(n); });
  p << ")";
  if (!getParams().empty()) {
    p << " params";
    printNamedConstants(p, getParams(), getParamValues());
  }
  p << " threshold";
  if (getVThreshold()) {
    p << "(";
    p.printFloat(*getVThreshold());
    p << ")";
  } else {
    p << " ";
    p.printRegion(getThreshold());
  }
  if (!getResets().empty()) {
    p << " reset(";
    llvm::interleaveComma(getResets().getAsRange<ResetAttr>(), p,
                          [&](ResetAttr r) { r.printBody(p); });
    p << ")";
  }
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(), {getSymNameAttrName(), getStatesAttrName(), getStateInitsAttrName(),
                            getInputsAttrName(), getParamsAttrName(), getParamValuesAttrName(),
                            getVThresholdAttrName(), getResetsAttrName()});
  p << " charge ";
  p.printRegion(getCharge());
}

//===----------------------------------------------------------------------===//
// neuron.model: queries and verification
//===----------------------------------------------------------------------===//

static std::optional<unsigned> indexIn(ArrayAttr names, StringRef name) {
  for (auto [i, n] : llvm::enumerate(names.getAsValueRange<StringAttr>()))
    if (n == name)
      return i;
  return std::nullopt;
}

FloatType ModelOp::getComputeType() {
  Block &body = getCharge().front();
  if (body.getNumArguments() == 0)
    return {};
  return llvm::dyn_cast<FloatType>(body.getArgument(0).getType());
}

std::optional<unsigned> ModelOp::stateIndex(StringRef name) { return indexIn(getStates(), name); }
std::optional<unsigned> ModelOp::inputIndex(StringRef name) { return indexIn(getInputs(), name); }
std::optional<unsigned> ModelOp::paramIndex(StringRef name) { return indexIn(getParams(), name); }

ResetAttr ModelOp::resetOf(unsigned i) {
  StringRef state = llvm::cast<StringAttr>(getStates()[i]).getValue();
  for (ResetAttr r : getResets().getAsRange<ResetAttr>())
    if (r.getState().getValue() == state)
      return r;
  return {};
}

double ModelOp::stateInit(unsigned i) {
  return llvm::cast<FloatAttr>(getStateInits()[i]).getValueAsDouble();
}

double ModelOp::paramValue(unsigned i) {
  return llvm::cast<FloatAttr>(getParamValues()[i]).getValueAsDouble();
}

/// Names are unique across states, inputs and parameters.
static LogicalResult verifyNames(ModelOp op) {
  llvm::StringMap<StringRef> seen;
  for (auto [what, names] : {std::pair<StringRef, ArrayAttr>{"state", op.getStates()},
                             {"input", op.getInputs()},
                             {"parameter", op.getParams()}})
    for (StringRef n : names.getAsValueRange<StringAttr>()) {
      auto [it, inserted] = seen.try_emplace(n, what);
      if (!inserted)
        return op.emitOpError() << "names `" << n << "` twice (as " << it->second << " and as "
                                << what << ")";
    }
  if (op.getStates().empty())
    return op.emitOpError("has no states; a neuron needs at least its potential");
  for (auto [i, init] : llvm::enumerate(op.getStateInits()))
    if (!llvm::isa<FloatAttr>(init))
      return op.emitOpError() << "state `"
                              << llvm::cast<StringAttr>(op.getStates()[i]).getValue()
                              << "` has no initial value; write it as `"
                              << llvm::cast<StringAttr>(op.getStates()[i]).getValue()
                              << " = 0.0`";
  return success();
}

/// A region of the model: arguments of `type` named by `argNames`, each op
/// differentiable, `numYields` values yielded.
static LogicalResult verifyModelRegion(ModelOp op, Region &region, StringRef what,
                                       StringRef argNames, unsigned numArgs,
                                       unsigned numYields, Type type) {
  Block &body = region.front();
  if (body.getNumArguments() != numArgs)
    return op.emitOpError() << what << " region takes " << body.getNumArguments()
                            << " arguments; expected " << numArgs << " (" << argNames << ")";
  for (BlockArgument a : body.getArguments())
    if (a.getType() != type)
      return op.emitOpError() << what << " region arguments must all have type " << type
                              << "; argument #" << a.getArgNumber() << " has " << a.getType();
  for (Operation &o : body.without_terminator()) {
    if (!isDifferentiable(&o) || o.getNumRegions() != 0)
      return o.emitOpError() << "cannot be differentiated in a neuron model's " << what
                             << " region (nerve differentiates arith constant, addf, subf, "
                                "mulf, divf, negf, select, cmpf, min/max, extf, truncf, logic "
                                "on i1 and math exp, log, sqrt, rsqrt, tanh, absf, fma, powf, "
                                "floor, ceil)";
  }
  auto yield = llvm::dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().size() != numYields ||
      llvm::any_of(yield.getValues(), [&](Value v) { return v.getType() != type; }))
    return op.emitOpError() << what << " region must yield " << numYields << " value"
                            << (numYields == 1 ? "" : "s") << " of type " << type;
  return success();
}

/// Each reset names a state, at most once, and an add's parameter exists.
static LogicalResult verifyResets(ModelOp op) {
  llvm::StringSet<> reset;
  for (ResetAttr r : op.getResets().getAsRange<ResetAttr>()) {
    StringRef state = r.getState().getValue();
    if (!op.stateIndex(state))
      return op.emitOpError() << "resets `" << state << "`, which is not one of its states";
    if (!reset.insert(state).second)
      return op.emitOpError() << "resets state `" << state << "` twice";
    if (r.getParam() && !op.paramIndex(r.getParam().getValue()))
      return op.emitOpError() << "the reset of `" << state << "` adds parameter `"
                              << r.getParam().getValue() << "`, which it does not have";
    if (r.getValue() && !std::isfinite(r.getValue().getValueAsDouble()))
      return op.emitOpError() << "the reset of `" << state << "` is "
                              << num(r.getValue().getValueAsDouble()) << "; it must be finite";
  }
  return success();
}

LogicalResult ModelOp::verifyRegions() {
  if (failed(verifyNames(*this)) || failed(verifyResets(*this)))
    return failure();
  FloatType type = getComputeType();
  if (!type)
    return emitOpError("charge region must take its arguments as floats (the type it "
                       "computes in)");
  unsigned numStates = getStates().size(), numParams = getParams().size();
  if (failed(verifyModelRegion(*this, getCharge(), "charge", "the states, inputs and parameters",
                               numStates + getInputs().size() + numParams, numStates, type)))
    return failure();
  if (getVThreshold().has_value() == !getThreshold().empty())
    return emitOpError("needs its threshold either as a number, `threshold(1.0)`, or as a "
                       "region, not both");
  if (getVThreshold() && !std::isfinite(getVThreshold()->convertToDouble()))
    return emitOpError() << "threshold is " << num(getVThreshold()->convertToDouble())
                         << "; it must be finite";
  if (!getThreshold().empty())
    return verifyModelRegion(*this, getThreshold(), "threshold", "the states and parameters",
                             numStates + numParams, 1, type);
  return success();
}

//===----------------------------------------------------------------------===//
// neuron.forward / neuron.backward: named operand groups
//===----------------------------------------------------------------------===//

namespace {

/// What a group's names refer to.
enum class GroupKind { Input, State, Param, Single };

struct GroupInfo {
  StringRef name;
  GroupKind kind;
  bool writes;
};

constexpr GroupInfo kForwardGroups[] = {
    {"ins", GroupKind::Input, false},   {"init", GroupKind::State, false},
    {"params", GroupKind::Param, false}, {"outs", GroupKind::Single, true},
    {"seq", GroupKind::State, true},    {"h_seq", GroupKind::State, true},
    {"last", GroupKind::State, true}};

constexpr GroupInfo kBackwardGroups[] = {
    {"ins", GroupKind::Input, false},       {"init", GroupKind::State, false},
    {"params", GroupKind::Param, false},    {"h_seq", GroupKind::State, false},
    {"seq", GroupKind::State, false},       {"grad_spike", GroupKind::Single, false},
    {"grad_seq", GroupKind::State, false},  {"grad_last", GroupKind::State, false},
    {"grad_ins", GroupKind::Input, true},
    {"grad_init", GroupKind::State, true},  {"grad_params", GroupKind::Param, true}};

std::pair<StringRef, StringRef> splitRole(Attribute role) {
  return llvm::cast<StringAttr>(role).getValue().split(':');
}

ParseResult parseUse(OpAsmParser &parser, OperationState &result, StringRef modelName,
                     StringRef rolesName, StringRef timeName) {
  Builder &b = parser.getBuilder();
  FlatSymbolRefAttr model;
  if (parser.parseAttribute(model, modelName, result.attributes))
    return failure();
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  SmallVector<Type> types;
  SmallVector<Attribute> roles;
  StringRef group;
  while (succeeded(parser.parseOptionalKeyword(&group)) && group != "time") {
    auto entry = [&]() -> ParseResult {
      std::string name;
      OpAsmParser::UnresolvedOperand operand;
      Type type;
      OptionalParseResult direct = parser.parseOptionalOperand(operand);
      if (!direct.has_value()) {
        if (parser.parseKeywordOrString(&name) || parser.parseEqual() ||
            parser.parseOperand(operand))
          return failure();
      } else if (failed(*direct)) {
        return failure();
      }
      if (parser.parseColonType(type))
        return failure();
      operands.push_back(operand);
      types.push_back(type);
      roles.push_back(b.getStringAttr(name.empty() ? group.str() : (group + ":" + name).str()));
      return success();
    };
    if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, entry))
      return failure();
  }
  if (group != "time")
    return parser.emitError(parser.getCurrentLocation(), "expected `time` and its dimension");
  DimAttr time;
  if (tdim::parseDim(parser, time) || parser.parseOptionalAttrDict(result.attributes))
    return failure();
  result.addAttribute(rolesName, b.getArrayAttr(roles));
  result.addAttribute(timeName, time);
  return parser.resolveOperands(operands, types, parser.getCurrentLocation(), result.operands);
}

void printUse(OpAsmPrinter &p, Operation *op, FlatSymbolRefAttr model, ArrayAttr roles,
              DimAttr time, ArrayRef<StringRef> elided) {
  p << " " << model;
  StringRef open;
  for (auto [i, role] : llvm::enumerate(roles)) {
    auto [group, name] = splitRole(role);
    if (group != open) {
      p << (open.empty() ? " " : ") ") << group << "(";
      open = group;
    } else {
      p << ", ";
    }
    if (!name.empty()) {
      p.printKeywordOrString(name);
      p << " = ";
    }
    p << op->getOperand(i) << " : " << op->getOperand(i).getType();
  }
  if (!open.empty())
    p << ")";
  p << " time ";
  tdim::printDim(p, time);
  p.printOptionalAttrDict(op->getAttrs(), elided);
}

Value lookupRole(Operation *op, ArrayAttr roles, StringRef group, StringRef name) {
  for (auto [i, role] : llvm::enumerate(roles)) {
    auto [g, n] = splitRole(role);
    if (g == group && n == name)
      return op->getOperand(i);
  }
  return {};
}

void collectEffects(Operation *op, ArrayAttr roles, ArrayRef<GroupInfo> groups,
                    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  for (auto [i, role] : llvm::enumerate(roles)) {
    StringRef group = splitRole(role).first;
    const GroupInfo *g = llvm::find_if(groups, [&](const GroupInfo &k) { return k.name == group; });
    bool writes = g != groups.end() && g->writes;
    OpOperand *operand = &op->getOpOperand(i);
    if (writes)
      effects.emplace_back(MemoryEffects::Write::get(), operand,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), operand,
                           SideEffects::DefaultResource::get());
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// neuron.forward / neuron.backward: verification against the model
//===----------------------------------------------------------------------===//

namespace {

/// Checks one use of a model: its groups, names and tensor types.
class UseChecker {
public:
  UseChecker(Operation *op, ModelOp model, ArrayAttr roles, ArrayRef<GroupInfo> groups,
             DimAttr time)
      : op(op), model(model), roles(roles), groups(groups), time(time), checker(op, time) {}

  LogicalResult check(ArrayRef<StringRef> referenceGroups) {
    if (failed(checkRoles()) || failed(pickReference(referenceGroups)))
      return failure();
    for (auto [i, role] : llvm::enumerate(roles))
      if (failed(checkOperand(i, role)))
        return failure();
    return checker.sizes();
  }

  /// The operand of `group` named `name`, or null.
  Value get(StringRef group, StringRef name = "") { return lookupRole(op, roles, group, name); }

  InFlightDiagnostic error() { return op->emitOpError(); }

private:
  const GroupInfo *groupOf(StringRef name) {
    const GroupInfo *g = llvm::find_if(groups, [&](const GroupInfo &k) { return k.name == name; });
    return g == groups.end() ? nullptr : g;
  }

  ArrayAttr namesOf(GroupKind kind) {
    switch (kind) {
    case GroupKind::Input: return model.getInputs();
    case GroupKind::State: return model.getStates();
    case GroupKind::Param: return model.getParams();
    case GroupKind::Single: break;
    }
    return {};
  }

  static StringRef kindName(GroupKind kind) {
    switch (kind) {
    case GroupKind::Input: return "input";
    case GroupKind::State: return "state";
    case GroupKind::Param: return "parameter";
    case GroupKind::Single: break;
    }
    return "";
  }

  LogicalResult checkRoles() {
    llvm::StringSet<> seen;
    for (Attribute role : roles) {
      auto [group, name] = splitRole(role);
      const GroupInfo *g = groupOf(group);
      if (!g) {
        std::string all;
        for (const GroupInfo &k : groups)
          all += (all.empty() ? "" : ", ") + k.name.str();
        return error() << "has no operand group `" << group << "` (it takes " << all << ")";
      }
      if (g->kind == GroupKind::Single && !name.empty())
        return error() << "`" << group << "` takes one unnamed tensor, not `" << name << " = `";
      if (g->kind != GroupKind::Single) {
        ArrayAttr names = namesOf(g->kind);
        if (name.empty())
          return error() << "`" << group << "` names each tensor by its " << kindName(g->kind)
                         << ": `" << group << "(name = %t : type)`";
        if (!indexIn(names, name)) {
          std::string all;
          for (StringRef n : names.getAsValueRange<StringAttr>())
            all += (all.empty() ? "" : ", ") + n.str();
          return error() << "`" << group << "(" << name << ")`: @" << model.getSymName()
                         << " has no " << kindName(g->kind) << " `" << name << "` (its "
                         << kindName(g->kind) << "s: " << (all.empty() ? "none" : all) << ")";
        }
      }
      if (!seen.insert(llvm::cast<StringAttr>(role).getValue()).second)
        return error() << "gives `" << group << (name.empty() ? "" : "(" + name.str() + ")")
                       << "` twice";
    }
    return success();
  }

  /// The first operand of the first of `referenceGroups` that has one
  /// fixes the neurons' dimensions and the time dimension.
  LogicalResult pickReference(ArrayRef<StringRef> referenceGroups) {
    for (StringRef group : referenceGroups)
      for (auto [i, role] : llvm::enumerate(roles))
        if (splitRole(role).first == group) {
          referenceIndex = i;
          return checker.reference(op->getOperand(i), describe(role));
        }
    std::string all;
    for (StringRef g : referenceGroups)
      all += (all.empty() ? "`" : "`, `") + g.str();
    return error() << "needs a sequence in one of " << all << "`";
  }

  static std::string describe(Attribute role) {
    auto [group, name] = splitRole(role);
    return name.empty() ? group.str() : (group + "(" + name + ")").str();
  }

  /// The tensor holds a float no wider than the model computes in.
  LogicalResult checkComputeType(unsigned i, Attribute role) {
    auto type = llvm::cast<TdimTensorType>(op->getOperand(i).getType());
    auto element = llvm::dyn_cast<FloatType>(type.getElementType());
    FloatType compute = model.getComputeType();
    if (element && compute && element.getWidth() > compute.getWidth())
      return error() << "`" << describe(role) << "` holds " << element << " but @"
                     << model.getSymName() << " computes in " << compute
                     << " (f64 tensors need a model in f64)";
    return success();
  }

  /// A parameter tensor: over some of the neurons' dimensions.
  LogicalResult checkParam(unsigned i, Attribute role) {
    auto type = llvm::cast<TdimTensorType>(op->getOperand(i).getType());
    auto ref = llvm::cast<TdimTensorType>(op->getOperand(referenceIndex).getType());
    for (DimAttr d : type.getDims())
      if (d == time || !ref.hasDim(d))
        return error() << "`" << describe(role)
                       << "` must be 0-d or over some of the neurons' dimensions ("
                       << tdim::describeDims(tdim::dimsWithout(ref, {time}))
                       << "), not over `" << d.str() << "`";
    if (!llvm::isa<FloatType>(type.getElementType()))
      return error() << "`" << describe(role) << "` holds " << type.getElementType()
                     << "; expected a float type";
    return checker.extra({"`" + describe(role) + "`", type});
  }

  LogicalResult checkOperand(unsigned i, Attribute role) {
    if (i == referenceIndex)
      return checkComputeType(i, role);
    StringRef group = splitRole(role).first;
    Value v = op->getOperand(i);
    std::string what = describe(role);
    LogicalResult shape = success();
    if (group == "params" || group == "grad_params")
      shape = checkParam(i, role);
    else if (group == "init" || group == "last" || group == "grad_init" ||
             group == "grad_last")
      shape = checker.perNeuron(v, what);
    else
      shape = checker.sequence(v, what, /*allowInt=*/group == "outs");
    if (failed(shape))
      return failure();
    if (auto f = llvm::dyn_cast<FloatType>(
            llvm::cast<TdimTensorType>(v.getType()).getElementType());
        !f)
      return success();
    return checkComputeType(i, role);
  }

  Operation *op;
  ModelOp model;
  ArrayAttr roles;
  ArrayRef<GroupInfo> groups;
  DimAttr time;
  NeuronChecker checker;
  unsigned referenceIndex = ~0u;
};

template <typename OpTy>
FailureOr<ModelOp> resolveModel(OpTy op, SymbolTableCollection &tables) {
  auto model = tables.lookupNearestSymbolFrom<ModelOp>(op, op.getModelAttr());
  if (!model)
    return op.emitOpError() << "`" << op.getModelAttr() << "` does not name a neuron.model";
  return model;
}

} // namespace

ModelOp ForwardOp::getModelOp() {
  return SymbolTable::lookupNearestSymbolFrom<ModelOp>(*this, getModelAttr());
}

ModelOp BackwardOp::getModelOp() {
  return SymbolTable::lookupNearestSymbolFrom<ModelOp>(*this, getModelAttr());
}

Value ForwardOp::lookup(StringRef group, StringRef name) {
  return lookupRole(*this, getRoles(), group, name);
}

Value BackwardOp::lookup(StringRef group, StringRef name) {
  return lookupRole(*this, getRoles(), group, name);
}

ParseResult ForwardOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseUse(parser, result, getModelAttrName(result.name),
                  getRolesAttrName(result.name), getTimeAttrName(result.name));
}

void ForwardOp::print(OpAsmPrinter &p) {
  printUse(p, *this, getModelAttr(), getRoles(), getTime(),
           {getModelAttrName(), getRolesAttrName(), getTimeAttrName()});
}

ParseResult BackwardOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseUse(parser, result, getModelAttrName(result.name),
                  getRolesAttrName(result.name), getTimeAttrName(result.name));
}

void BackwardOp::print(OpAsmPrinter &p) {
  printUse(p, *this, getModelAttr(), getRoles(), getTime(),
           {getModelAttrName(), getRolesAttrName(), getTimeAttrName()});
}

void ForwardOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  collectEffects(*this, getRoles(), kForwardGroups, effects);
}

void BackwardOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  collectEffects(*this, getRoles(), kBackwardGroups, effects);
}

LogicalResult ForwardOp::verifySymbolUses(SymbolTableCollection &tables) {
  FailureOr<ModelOp> model = resolveModel(*this, tables);
  if (failed(model))
    return failure();
  UseChecker c(*this, *model, getRoles(), kForwardGroups, getTime());
  if (failed(c.check({"ins"})))
    return failure();
  for (StringRef input : model->getInputs().getAsValueRange<StringAttr>())
    if (!c.get("ins", input))
      return emitOpError() << "lacks input `" << input << "` of @" << model->getSymName()
                           << ": pass it as `ins(" << input << " = %t : type)`";
  if (!c.get("outs"))
    return emitOpError("needs the spikes' tensor: `outs(%spikes : type)`");
  return success();
}

LogicalResult BackwardOp::verifySymbolUses(SymbolTableCollection &tables) {
  FailureOr<ModelOp> model = resolveModel(*this, tables);
  if (failed(model))
    return failure();
  UseChecker c(*this, *model, getRoles(), kBackwardGroups, getTime());
  if (failed(c.check({"h_seq", "seq", "ins", "grad_spike", "grad_seq", "grad_ins"})))
    return failure();
  for (Attribute role : getRoles()) {
    auto [group, name] = splitRole(role);
    if (group == "grad_params" && !c.get("params", name))
      return emitOpError() << "`grad_params(" << name << ")`: parameter `" << name
                           << "` is not bound to a tensor in `params(...)`, so it has no "
                              "gradient";
  }
  return success();
}
