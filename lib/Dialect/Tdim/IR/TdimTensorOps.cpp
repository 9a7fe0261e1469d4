//===- TdimTensorOps.cpp - tdim whole-tensor operations: verifiers --------===//
//
// map, reduce, broadcast, relayout, concat, contract, softmax, log_softmax
// and layer_norm: the checks that their dimensions, regions and types agree.
// The ops themselves are defined in TdimOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "nerve/Dialect/Tdim/IR/TdimVerifyUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace nerve::tdim;

static constexpr int64_t kDynamic = ShapedType::kDynamic;

//===----------------------------------------------------------------------===//
// Whole-tensor operations
//===----------------------------------------------------------------------===//

/// The outputs of a map or reduce all have the same dimensions.
static LogicalResult verifyOutputsAgree(Operation *op, ValueRange outputs) {
  if (outputs.empty())
    return op->emitOpError("has no outputs");
  auto first = llvm::cast<TdimTensorType>(outputs.front().getType());
  for (auto [i, out] : llvm::enumerate(outputs.drop_front())) {
    auto type = llvm::cast<TdimTensorType>(out.getType());
    if (!haveSameDims(first, type))
      return op->emitOpError() << "outputs have different dimensions: output #0 has "
                               << first.describeDims() << ", output #" << i + 1
                               << " has " << type.describeDims();
  }
  return success();
}

static SmallVector<NamedTensor> namedTensors(ValueRange values,
                                             StringRef prefix = "operand #",
                                             unsigned first = 0) {
  SmallVector<NamedTensor> tensors;
  for (auto [i, v] : llvm::enumerate(values))
    if (auto t = llvm::dyn_cast<TdimTensorType>(v.getType()))
      tensors.push_back({prefix.str() + std::to_string(first + i), t});
  return tensors;
}

LogicalResult MapOp::verify() {
  if (failed(verifyOutputsAgree(*this, getOutputs())))
    return failure();
  auto space = llvm::cast<TdimTensorType>(getOutputs().front().getType());
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    auto type = llvm::dyn_cast<TdimTensorType>(in.getType());
    if (!type) {
      if (!isValidElementType(in.getType()) && !llvm::isa<mlir::IndexType>(in.getType()))
        return emitOpError() << "operand #" << i << " has type " << in.getType()
                             << "; inputs are tdim tensors or scalars";
      continue;
    }
    SmallVector<DimAttr> extra = dimsMissingFrom(type, space);
    if (!extra.empty())
      return emitOpError() << "operand #" << i << " has dimension `" << extra.front().str()
                           << "`, which the outputs lack (they have "
                           << space.describeDims()
                           << "); a map cannot reduce, use tdim.reduce";
  }
  SmallVector<NamedTensor> tensors = namedTensors(getOperation()->getOperands());
  return checkConsistentSizes(*this, tensors);
}

LogicalResult MapOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "region takes " << body.getNumArguments()
                         << " arguments but the map has " << getInputs().size()
                         << " inputs";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(body.getArguments(), getInputs()))) {
    auto [arg, in] = pair;
    Type element = in.getType();
    if (auto t = llvm::dyn_cast<TdimTensorType>(element))
      element = t.getElementType();
    if (!isCompatibleElementValue(arg.getType(), element))
      return emitOpError() << "region argument #" << i << " has type " << arg.getType()
                           << " but input #" << i << " holds " << element;
  }
  auto yield = llvm::dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("region must end with tdim.yield");
  if (yield.getValues().size() != getOutputs().size())
    return yield.emitOpError() << "yields " << yield.getValues().size()
                               << " values but the map has " << getOutputs().size()
                               << " outputs";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(yield.getValues(), getOutputs()))) {
    auto [v, out] = pair;
    Type element = llvm::cast<TdimTensorType>(out.getType()).getElementType();
    if (!isCompatibleElementValue(v.getType(), element))
      return yield.emitOpError() << "yields " << v.getType() << " for output #" << i
                                 << ", which holds " << element;
  }
  return success();
}

SmallVector<Type> ReduceOp::getAccumulatorTypes() {
  SmallVector<Type> types;
  for (Attribute a : getInit())
    types.push_back(llvm::cast<TypedAttr>(a).getType());
  return types;
}

LogicalResult ReduceOp::verify() {
  if (failed(verifyOutputsAgree(*this, getOutputs())))
    return failure();
  if (getInputs().empty())
    return emitOpError("has no inputs");
  if (getInit().empty())
    return emitOpError("needs an identity (`init`) for each accumulator");
  for (auto [i, a] : llvm::enumerate(getInit()))
    if (!llvm::isa<TypedAttr>(a))
      return emitOpError() << "identity #" << i << " has no type; write e.g. `0.0 : f32`";
  auto outType = llvm::cast<TdimTensorType>(getOutputs().front().getType());
  SmallVector<DimAttr> over;
  for (Attribute a : getOver()) {
    auto d = llvm::cast<DimAttr>(a);
    if (llvm::is_contained(over, d))
      return emitOpError() << "reduces over `" << d.str() << "` twice";
    if (outType.hasDim(d))
      return emitOpError() << "reduces over `" << d.str()
                           << "`, which the outputs keep (they have "
                           << outType.describeDims() << ")";
    over.push_back(d);
  }
  if (over.empty())
    return emitOpError("reduces over no dimension; list them in `over [...]`");
  if (getMaxSumExp() &&
      (getInit().size() != 2 || !llvm::all_of(getInit(), [](Attribute a) {
        return llvm::cast<TypedAttr>(a).getType().isF32();
      })))
    return emitOpError("max_sum_exp needs two f32 accumulators (the maximum and the sum)");
  for (DimAttr d : over) {
    bool found = llvm::any_of(getInputs(), [&](Value v) {
      return llvm::cast<TdimTensorType>(v.getType()).hasDim(d);
    });
    if (!found) {
      auto first = llvm::cast<TdimTensorType>(getInputs().front().getType());
      return emitOpError() << "reduces over `" << d.str() << "`, which no input has"
                           << " (operand #0 has " << first.describeDims() << ")";
    }
  }
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    auto type = llvm::cast<TdimTensorType>(in.getType());
    for (DimAttr d : type.getDims())
      if (!outType.hasDim(d) && !llvm::is_contained(over, d))
        return emitOpError() << "operand #" << i << " has dimension `" << d.str()
                             << "`, which is neither kept by the outputs ("
                             << outType.describeDims() << ") nor listed in `over`";
  }
  return checkConsistentSizes(*this, namedTensors(getOperation()->getOperands()));
}

static LogicalResult verifyYield(Operation *op, Region &region, StringRef name,
                                 ArrayRef<Type> expected,
                                 bool allowWider = false) {
  auto yield = llvm::dyn_cast<YieldOp>(region.front().getTerminator());
  if (!yield)
    return op->emitOpError() << "`" << name << "` region must end with tdim.yield";
  if (yield.getValues().size() != expected.size())
    return yield.emitOpError() << "in `" << name << "` yields "
                               << yield.getValues().size() << " values; expected "
                               << expected.size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(yield.getValues(), expected))) {
    auto [v, t] = pair;
    bool ok = allowWider ? isCompatibleElementValue(v.getType(), t) : v.getType() == t;
    if (!ok)
      return yield.emitOpError() << "in `" << name << "` yields " << v.getType()
                                 << " as value #" << i << "; expected " << t;
  }
  return success();
}

LogicalResult ReduceOp::verifyRegions() {
  SmallVector<Type> acc = getAccumulatorTypes();
  unsigned n = acc.size();
  unsigned numIns = getInputs().size();
  auto inputElement = [&](unsigned i) {
    return llvm::cast<TdimTensorType>(getInputs()[i].getType()).getElementType();
  };
  if (!getMap().empty()) {
    Block &b = getMap().front();
    unsigned withIndices = numIns + getOver().size();
    if (b.getNumArguments() != numIns && b.getNumArguments() != withIndices)
      return emitOpError() << "`map` takes " << b.getNumArguments()
                           << " arguments; expected " << numIns
                           << " (one per input), optionally followed by "
                           << getOver().size() << " `index` positions";
    for (unsigned i = 0; i < numIns; ++i)
      if (!isCompatibleElementValue(b.getArgument(i).getType(), inputElement(i)))
        return emitOpError() << "`map` argument #" << i << " has type "
                             << b.getArgument(i).getType() << " but input #" << i
                             << " holds " << inputElement(i);
    for (unsigned i = numIns; i < b.getNumArguments(); ++i)
      if (!llvm::isa<mlir::IndexType>(b.getArgument(i).getType()))
        return emitOpError() << "`map` argument #" << i
                             << " is a position along a reduced dimension and must be `index`";
    if (failed(verifyYield(*this, getMap(), "map", acc)))
      return failure();
  } else {
    if (numIns != n)
      return emitOpError() << "has " << numIns << " inputs and " << n
                           << " accumulators; without a `map` region they must match";
    for (unsigned i = 0; i < n; ++i)
      if (!isCompatibleElementValue(acc[i], inputElement(i)))
        return emitOpError() << "accumulator #" << i << " has type " << acc[i]
                             << " but input #" << i << " holds " << inputElement(i)
                             << "; add a `map` region to convert";
  }
  Block &c = getCombine().front();
  if (c.getNumArguments() != 2 * n)
    return emitOpError() << "`combine` takes " << c.getNumArguments()
                         << " arguments; expected " << 2 * n
                         << " (two of each accumulator)";
  for (unsigned i = 0; i < 2 * n; ++i)
    if (c.getArgument(i).getType() != acc[i % n])
      return emitOpError() << "`combine` argument #" << i << " has type "
                           << c.getArgument(i).getType() << "; expected " << acc[i % n];
  if (failed(verifyYield(*this, getCombine(), "combine", acc)))
    return failure();
  SmallVector<Type> outElements;
  for (Value out : getOutputs())
    outElements.push_back(llvm::cast<TdimTensorType>(out.getType()).getElementType());
  if (!getPost().empty()) {
    Block &b = getPost().front();
    if (b.getNumArguments() != n + 1)
      return emitOpError() << "`post` takes " << b.getNumArguments()
                           << " arguments; expected the " << n
                           << " accumulators and the `index` count";
    for (unsigned i = 0; i < n; ++i)
      if (b.getArgument(i).getType() != acc[i])
        return emitOpError() << "`post` argument #" << i << " has type "
                             << b.getArgument(i).getType() << "; expected " << acc[i];
    if (!llvm::isa<mlir::IndexType>(b.getArgument(n).getType()))
      return emitOpError("the last `post` argument is the element count, an `index`");
    return verifyYield(*this, getPost(), "post", outElements, /*allowWider=*/true);
  }
  if (n != getOutputs().size())
    return emitOpError() << "has " << n << " accumulators and " << getOutputs().size()
                         << " outputs; without a `post` region they must match";
  for (unsigned i = 0; i < n; ++i)
    if (!isCompatibleElementValue(acc[i], outElements[i]))
      return emitOpError() << "accumulator #" << i << " has type " << acc[i]
                           << " but output #" << i << " holds " << outElements[i];
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto in = llvm::cast<TdimTensorType>(getInput().getType());
  auto out = llvm::cast<TdimTensorType>(getOutput().getType());
  SmallVector<DimAttr> extra = dimsMissingFrom(in, out);
  if (!extra.empty())
    return emitOpError() << "input has dimension `" << extra.front().str()
                         << "`, which the output lacks (it has " << out.describeDims()
                         << ")";
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "copies " << in.getElementType() << " into a tensor of "
                         << out.getElementType() << "; convert with tdim.map";
  return checkConsistentSizes(*this, namedTensors(getOperation()->getOperands()));
}

LogicalResult RelayoutOp::verify() {
  auto in = llvm::cast<TdimTensorType>(getInput().getType());
  auto out = llvm::cast<TdimTensorType>(getOutput().getType());
  if (!haveSameDims(in, out))
    return emitOpError() << "input has " << in.describeDims() << " but output has "
                         << out.describeDims() << "; a relayout keeps the dimensions";
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "copies " << in.getElementType() << " into a tensor of "
                         << out.getElementType() << "; convert with tdim.map";
  return checkConsistentSizes(*this, namedTensors(getOperation()->getOperands()));
}

LogicalResult ConcatOp::verify() {
  auto out = llvm::cast<TdimTensorType>(getOutput().getType());
  if (getInputs().empty())
    return emitOpError("has no inputs");
  if (!out.hasDim(getDim()))
    return emitOpError() << "output has no dimension `" << getDim().str() << "` (it has "
                         << out.describeDims() << ")";
  int64_t total = 0;
  bool allStatic = true;
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    auto type = llvm::cast<TdimTensorType>(in.getType());
    if (!haveSameDims(type, out))
      return emitOpError() << "operand #" << i << " has " << type.describeDims()
                           << " but the output has " << out.describeDims();
    if (type.getElementType() != out.getElementType())
      return emitOpError() << "operand #" << i << " holds " << type.getElementType()
                           << " but the output holds " << out.getElementType();
    int64_t s = type.getSize(getDim());
    if (s == kDynamic)
      allStatic = false;
    else
      total += s;
  }
  int64_t outSize = out.getSize(getDim());
  if (allStatic && outSize != kDynamic && total != outSize)
    return emitOpError() << "inputs add up to " << total << " along `" << getDim().str()
                         << "` but the output has " << outSize;
  return checkConsistentSizes(*this, namedTensors(getOperation()->getOperands()),
                              {getDim()});
}

static bool isFloat(Type t) { return llvm::isa<FloatType>(t); }

LogicalResult ContractOp::verify() {
  auto lhs = llvm::cast<TdimTensorType>(getLhs().getType());
  auto rhs = llvm::cast<TdimTensorType>(getRhs().getType());
  auto out = llvm::cast<TdimTensorType>(getOutput().getType());
  for (DimAttr d : out.getDims())
    if (!lhs.hasDim(d) && !rhs.hasDim(d))
      return emitOpError() << "output dimension `" << d.str()
                           << "` is in neither operand (they have " << lhs.describeDims()
                           << " and " << rhs.describeDims() << ")";
  for (auto [which, a, b] : {std::tuple{"operand #0", lhs, rhs}, std::tuple{"operand #1", rhs, lhs}})
    for (DimAttr d : a.getDims())
      if (!out.hasDim(d) && !b.hasDim(d))
        return emitOpError() << "contracted dimension `" << d.str() << "` of " << which
                             << " must appear in both operands (the other has "
                             << b.describeDims() << ")";
  Type e = out.getElementType();
  if (!isFloat(e) || lhs.getElementType() != e || rhs.getElementType() != e)
    return emitOpError() << "operands and output must hold one float type; they hold "
                         << lhs.getElementType() << ", " << rhs.getElementType()
                         << " and " << e;
  for (auto [i, in] : llvm::enumerate(getWith())) {
    auto type = llvm::dyn_cast<TdimTensorType>(in.getType());
    if (!type) {
      if (!isValidElementType(in.getType()))
        return emitOpError() << "`with` input #" << i << " has type " << in.getType()
                             << "; they are tdim tensors or scalars";
      continue;
    }
    SmallVector<DimAttr> extra = dimsMissingFrom(type, out);
    if (!extra.empty())
      return emitOpError() << "`with` input #" << i << " has dimension `"
                           << extra.front().str() << "`, which the output lacks (it has "
                           << out.describeDims() << ")";
  }
  if (!getWith().empty() && getEpilogue().empty())
    return emitOpError("has `with` inputs but no epilogue to use them");
  if (getScan()) {
    if (!out.hasDim(*getScan()))
      return emitOpError() << "scans `" << getScan()->str() << "`, which the output lacks (it has "
                           << out.describeDims() << ")";
    if (getEpilogue().empty() || getAccumulate())
      return emitOpError("a scan needs an epilogue, and does not accumulate");
    ArrayAttr carry = getCarryAttr() ? getCarryAttr() : ArrayAttr::get(getContext(), {});
    for (auto [i, a] : llvm::enumerate(carry))
      if (!llvm::isa<FloatAttr>(a))
        return emitOpError() << "carried state #" << i << " starts from " << a
                             << "; write a float, e.g. `0.0 : f32`";
  } else if (getCarry()) {
    return emitOpError("carries states but scans no dimension");
  }
  return checkConsistentSizes(*this, namedTensors(getOperation()->getOperands()));
}

LogicalResult ContractOp::verifyRegions() {
  if (getEpilogue().empty())
    return success();
  Block &body = getEpilogue().front();
  Type outElement = llvm::cast<TdimTensorType>(getOutput().getType()).getElementType();
  Type sumType = getComputeType(outElement);
  unsigned carried = getNumCarried();
  if (body.getNumArguments() != getWith().size() + 1 + carried)
    return emitOpError() << "epilogue takes " << body.getNumArguments()
                         << " arguments but needs " << getWith().size() + 1 + carried
                         << " (the sum, then one per `with` input"
                         << (carried ? ", then one per carried state)" : ")");
  for (unsigned i = 0; i < carried; ++i) {
    Type want = llvm::cast<FloatAttr>(getCarryAttr()[i]).getType();
    Type arg = body.getArgument(1 + getWith().size() + i).getType();
    if (arg != want)
      return emitOpError() << "epilogue argument for carried state #" << i << " has type "
                           << arg << " but the state is " << want;
  }
  if (body.getArgument(0).getType() != sumType)
    return emitOpError() << "epilogue argument #0 (the sum) has type "
                         << body.getArgument(0).getType() << " but the sum is " << sumType;
  for (auto [i, in] : llvm::enumerate(getWith())) {
    Type element = in.getType();
    if (auto t = llvm::dyn_cast<TdimTensorType>(element))
      element = t.getElementType();
    Type arg = body.getArgument(i + 1).getType();
    if (!isCompatibleElementValue(arg, element))
      return emitOpError() << "epilogue argument #" << i + 1 << " has type " << arg
                           << " but `with` input #" << i << " holds " << element;
  }
  auto yield = llvm::dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("epilogue must end with tdim.yield");
  if (yield.getValues().size() != 1 + carried)
    return yield.emitOpError() << "yields " << yield.getValues().size() << " values but needs "
                               << 1 + carried << " (the output's"
                               << (carried ? ", then each carried state's)" : ")");
  if (!isCompatibleElementValue(yield.getValues()[0].getType(), outElement))
    return yield.emitOpError() << "yields " << yield.getValues()[0].getType()
                               << " for an output holding " << outElement;
  for (unsigned i = 0; i < carried; ++i)
    if (yield.getValues()[1 + i].getType() != body.getArgument(1 + getWith().size() + i).getType())
      return yield.emitOpError() << "yields " << yield.getValues()[1 + i].getType()
                                 << " for carried state #" << i << ", which is "
                                 << body.getArgument(1 + getWith().size() + i).getType();
  return success();
}

/// Softmax and friends: float tensors with the same dimensions, `dim` among them.
static LogicalResult verifyNormalize(Operation *op, Value input, Value output,
                                     ArrayRef<DimAttr> over) {
  auto in = llvm::cast<TdimTensorType>(input.getType());
  auto out = llvm::cast<TdimTensorType>(output.getType());
  if (!haveSameDims(in, out))
    return op->emitOpError() << "input has " << in.describeDims() << " but output has "
                             << out.describeDims();
  for (DimAttr d : over)
    if (!in.hasDim(d))
      return op->emitOpError() << "normalizes over `" << d.str()
                               << "`, which the input lacks (it has "
                               << in.describeDims() << ")";
  if (!isFloat(in.getElementType()) || !isFloat(out.getElementType()))
    return op->emitOpError() << "needs float tensors; they hold " << in.getElementType()
                             << " and " << out.getElementType();
  return checkConsistentSizes(op, namedTensors(op->getOperands()));
}

LogicalResult SoftmaxOp::verify() {
  return verifyNormalize(*this, getInput(), getOutput(), {getDim()});
}

LogicalResult LogSoftmaxOp::verify() {
  return verifyNormalize(*this, getInput(), getOutput(), {getDim()});
}

LogicalResult LayerNormOp::verify() {
  SmallVector<DimAttr> over;
  for (Attribute a : getOver())
    over.push_back(llvm::cast<DimAttr>(a));
  if (over.empty())
    return emitOpError("normalizes over no dimension");
  if (failed(verifyNormalize(*this, getInput(), getOutput(), over)))
    return failure();
  double eps = getEps().convertToDouble();
  if (!(eps > 0) || std::isinf(eps))
    return emitOpError() << "eps must be a positive finite number, not " << eps;
  for (auto [name, v] : {std::pair{"weight", getWeight()}, std::pair{"bias", getBias()}}) {
    if (!v)
      continue;
    auto type = llvm::cast<TdimTensorType>(v.getType());
    for (DimAttr d : type.getDims())
      if (!llvm::is_contained(over, d))
        return emitOpError() << name << " has dimension `" << d.str()
                             << "`, which is not normalized over";
    if (!isFloat(type.getElementType()))
      return emitOpError() << name << " must hold floats, not " << type.getElementType();
  }
  return success();
}
