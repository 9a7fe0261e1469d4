//===- TdimOps.cpp - tdim operations: syntax, verifiers, folds ----------===//

#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "nerve/Dialect/Tdim/IR/TdimVerifyUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace nerve::tdim;

static constexpr int64_t kDynamic = ShapedType::kDynamic;

static TdimIndexType indexTypeOf(DimAttr dim) {
  return TdimIndexType::get(dim.getContext(), dim);
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  if (parser.parseSymbolName(name, SymbolTable::getSymbolAttrName(),
                             result.attributes))
    return failure();
  SmallVector<OpAsmParser::Argument> inputs, outputs;
  if (parser.parseArgumentList(inputs, AsmParser::Delimiter::Paren,
                               /*allowType=*/true, /*allowAttrs=*/false))
    return failure();
  if (succeeded(parser.parseOptionalArrow()) &&
      parser.parseArgumentList(outputs, AsmParser::Delimiter::Paren,
                               /*allowType=*/true, /*allowAttrs=*/false))
    return failure();
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();

  SmallVector<OpAsmParser::Argument> args(inputs);
  args.append(outputs);
  SmallVector<Type> types;
  SmallVector<Attribute> names;
  Builder &b = parser.getBuilder();
  for (auto [i, arg] : llvm::enumerate(args)) {
    types.push_back(arg.type);
    StringRef ssa = arg.ssaName.name.drop_front(); // drop the '%'
    // `%0` and friends carry no name a user would recognise.
    std::string argName = (!ssa.empty() && !llvm::isDigit(ssa.front()))
                              ? ssa.str()
                              : "arg" + std::to_string(i);
    names.push_back(b.getStringAttr(argName));
  }
  result.addAttribute(getFunctionTypeAttrName(result.name),
                      TypeAttr::get(b.getFunctionType(types, {})));
  result.addAttribute(getArgNamesAttrName(result.name), b.getArrayAttr(names));
  result.addAttribute(getNumOutputsAttrName(result.name),
                      b.getI64IntegerAttr(outputs.size()));
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, args, /*enableNameShadowing=*/false))
    return failure();
  // The axes the body concatenates along may have several sizes.
  SmallVector<Attribute> variable;
  if (auto given = result.attributes.get(getVariableDimsAttrName(result.name)))
    llvm::append_range(variable, llvm::cast<ArrayAttr>(given));
  body->walk([&](ConcatOp concat) {
    if (!llvm::is_contained(variable, concat.getDim()))
      variable.push_back(concat.getDim());
  });
  if (!variable.empty())
    result.attributes.set(getVariableDimsAttrName(result.name), b.getArrayAttr(variable));
  return success();
}

void KernelOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printSymbolName(getSymName());
  Block &entry = getEntryBlock();
  auto printArgs = [&](unsigned begin, unsigned end) {
    p << "(";
    for (unsigned i = begin; i < end; ++i) {
      if (i != begin)
        p << ", ";
      p.printRegionArgument(entry.getArgument(i));
    }
    p << ")";
  };
  printArgs(0, getNumInputs());
  if (getNumOutputs() > 0) {
    p << " -> ";
    printArgs(getNumInputs(), entry.getNumArguments());
  }
  // variable_dims is printed only when the body no longer shows it.
  SmallVector<StringRef> elided = {getSymNameAttrName(), getFunctionTypeAttrName(),
                                   getArgNamesAttrName(), getNumOutputsAttrName()};
  SmallVector<Attribute> implied;
  getBody().walk([&](ConcatOp concat) {
    if (!llvm::is_contained(implied, concat.getDim()))
      implied.push_back(concat.getDim());
  });
  if (getVariableDimsAttr() &&
      llvm::equal(getVariableDimsAttr().getValue(), ArrayRef<Attribute>(implied)))
    elided.push_back(getVariableDimsAttrName());
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), elided);
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

void KernelOp::getAsmBlockArgumentNames(Region &region,
                                        OpAsmSetValueNameFn setNameFn) {
  if (region.empty())
    return;
  for (auto [arg, name] : llvm::zip(region.front().getArguments(), getArgNames()))
    setNameFn(arg, llvm::cast<StringAttr>(name).getValue());
}

LogicalResult KernelOp::verify() {
  FunctionType type = getFunctionType();
  if (type.getNumResults() != 0)
    return emitOpError("returns values; a kernel writes its outputs instead");
  if (getArgNames().size() != type.getNumInputs())
    return emitOpError() << "has " << type.getNumInputs() << " arguments but "
                         << getArgNames().size() << " argument names";
  if (getNumOutputs() < 0 ||
      static_cast<uint64_t>(getNumOutputs()) > type.getNumInputs())
    return emitOpError() << "declares " << getNumOutputs()
                         << " outputs but has " << type.getNumInputs()
                         << " arguments";
  llvm::SmallSet<StringRef, 8> seen;
  SmallVector<NamedTensor> tensors;
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    StringRef name = getArgName(i);
    if (!seen.insert(name).second)
      return emitOpError() << "has two arguments named `" << name << "`";
    if (auto tensor = llvm::dyn_cast<TdimTensorType>(t)) {
      tensors.push_back({"argument %" + name.str(), tensor});
      continue;
    }
    if (isOutput(i))
      return emitOpError() << "output %" << name << " has type " << t
                           << "; outputs are tdim tensors";
    if (!isValidElementType(t) && !llvm::isa<mlir::IndexType>(t))
      return emitOpError() << "argument %" << name << " has type " << t
                           << "; inputs are tdim tensors or scalars (f32, f16, "
                              "bf16, f64, i1, i8, i32, i64, index)";
  }
  return checkConsistentSizes(*this, tensors, getVariableDimList());
}

SmallVector<DimAttr> KernelOp::getVariableDimList() {
  SmallVector<DimAttr> dims;
  if (ArrayAttr variable = getVariableDimsAttr())
    for (Attribute a : variable)
      dims.push_back(llvm::cast<DimAttr>(a));
  return dims;
}

LogicalResult KernelOp::verifyRegions() {
  Block &entry = getEntryBlock();
  if (entry.getArgumentTypes() != getFunctionType().getInputs())
    return emitOpError("entry block arguments do not match the signature");
  return success();
}

//===----------------------------------------------------------------------===//
// Index values
//===----------------------------------------------------------------------===//

LogicalResult ConstOp::verify() {
  if (getValueAttr().getInt() < 0)
    return emitOpError() << "index value " << getValueAttr().getInt()
                         << " is negative; indices count from 0";
  return success();
}

OpFoldResult ConstOp::fold(FoldAdaptor) { return getValueAttr(); }

LogicalResult SizeOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  types.push_back(indexTypeOf(adaptor.getDim()));
  return success();
}

LogicalResult SizeOp::verify() {
  auto type = llvm::cast<TdimTensorType>(getTensor().getType());
  if (!type.hasDim(getDim()))
    return emitOpError() << "tensor has no dimension `" << getDim().str()
                         << "` (it has " << type.describeDims() << ")";
  return success();
}

OpFoldResult SizeOp::fold(FoldAdaptor) {
  auto type = llvm::cast<TdimTensorType>(getTensor().getType());
  int64_t size = type.getSize(getDim());
  if (size == kDynamic)
    return {};
  return IntegerAttr::get(IntegerType::get(getContext(), 64), size);
}

/// `%a, %b : T` or, when the operand types differ, `%a, %b : T1, T2`.
static ParseResult parseIndexBinary(OpAsmParser &parser, OperationState &result,
                                    bool resultIsOperandType) {
  OpAsmParser::UnresolvedOperand lhs, rhs;
  Type lhsType, rhsType;
  if (parser.parseOperand(lhs) || parser.parseComma() ||
      parser.parseOperand(rhs) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(lhsType))
    return failure();
  rhsType = lhsType;
  if (succeeded(parser.parseOptionalComma()) && parser.parseType(rhsType))
    return failure();
  if (parser.resolveOperand(lhs, lhsType, result.operands) ||
      parser.resolveOperand(rhs, rhsType, result.operands))
    return failure();
  if (resultIsOperandType)
    result.addTypes(lhsType);
  return success();
}

static void printIndexBinary(OpAsmPrinter &p, Operation *op,
                             ArrayRef<StringRef> elided = {}) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  p << " " << lhs << ", " << rhs;
  p.printOptionalAttrDict(op->getAttrs(), elided);
  p << " : " << lhs.getType();
  if (rhs.getType() != lhs.getType())
    p << ", " << rhs.getType();
}

static LogicalResult verifySameDimension(Operation *op, StringRef verb) {
  auto lhs = llvm::cast<TdimIndexType>(op->getOperand(0).getType());
  auto rhs = llvm::cast<TdimIndexType>(op->getOperand(1).getType());
  if (lhs != rhs)
    return op->emitOpError()
           << verb << " an index of `" << lhs.getDim().str()
           << "` and an index of `" << rhs.getDim().str()
           << "`; convert one first with tdim.cast, tdim.fold or tdim.unfold";
  if (op->getNumResults() == 1 && llvm::isa<TdimIndexType>(op->getResult(0).getType()) &&
      op->getResult(0).getType() != lhs)
    return op->emitOpError() << "result must be an index of `" << lhs.getDim().str()
                             << "` like its operands";
  return success();
}

ParseResult AddOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseIndexBinary(parser, result, true);
}
void AddOp::print(OpAsmPrinter &p) { printIndexBinary(p, *this); }
LogicalResult AddOp::verify() { return verifySameDimension(*this, "adds"); }

ParseResult SubOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseIndexBinary(parser, result, true);
}
void SubOp::print(OpAsmPrinter &p) { printIndexBinary(p, *this); }
LogicalResult SubOp::verify() { return verifySameDimension(*this, "subtracts"); }

static std::optional<int64_t> constantOf(Attribute a) {
  if (auto i = llvm::dyn_cast_or_null<IntegerAttr>(a))
    return i.getInt();
  return std::nullopt;
}

static Attribute indexAttr(MLIRContext *ctx, int64_t v) {
  return IntegerAttr::get(IntegerType::get(ctx, 64), v);
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  auto l = constantOf(adaptor.getLhs()), r = constantOf(adaptor.getRhs());
  if (r && *r == 0 && getLhs().getType() == getType())
    return getLhs();
  if (l && *l == 0 && getRhs().getType() == getType())
    return getRhs();
  if (l && r)
    return indexAttr(getContext(), *l + *r);
  return {};
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  auto l = constantOf(adaptor.getLhs()), r = constantOf(adaptor.getRhs());
  if (r && *r == 0 && getLhs().getType() == getType())
    return getLhs();
  if (l && r && *l >= *r)
    return indexAttr(getContext(), *l - *r);
  return {};
}

ParseResult CmpOp::parse(OpAsmParser &parser, OperationState &result) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword) || parser.parseComma())
    return failure();
  std::optional<CmpPredicate> predicate = symbolizeCmpPredicate(keyword);
  if (!predicate)
    return parser.emitError(loc) << "unknown comparison `" << keyword
                                 << "`; expected eq, ne, lt, le, gt or ge";
  result.getOrAddProperties<Properties>().predicate =
      CmpPredicateAttr::get(parser.getContext(), *predicate);
  if (parseIndexBinary(parser, result, false))
    return failure();
  result.addTypes(parser.getBuilder().getI1Type());
  return success();
}

void CmpOp::print(OpAsmPrinter &p) {
  p << " " << stringifyCmpPredicate(getPredicate()) << ",";
  printIndexBinary(p, *this, {getPredicateAttrName()});
}

LogicalResult CmpOp::verify() { return verifySameDimension(*this, "compares"); }

LogicalResult FoldOp::verify() {
  DimAttr in = llvm::cast<TdimIndexType>(getInput().getType()).getDim();
  DimAttr out = llvm::cast<TdimIndexType>(getType()).getDim();
  if (!in.sameAxis(out))
    return emitOpError() << "folds `" << in.str() << "` into `" << out.str()
                         << "`, which is not a fold of it; use tdim.cast to "
                            "change dimension";
  if (out.getFactor() <= in.getFactor() || out.getFactor() % in.getFactor() != 0)
    return emitOpError() << "`" << out.str() << "` is not a coarser fold of `"
                         << in.str() << "`";
  return success();
}

OpFoldResult FoldOp::fold(FoldAdaptor adaptor) {
  auto v = constantOf(adaptor.getInput());
  if (!v)
    return {};
  int64_t ratio = llvm::cast<TdimIndexType>(getType()).getDim().getFactor() /
                  llvm::cast<TdimIndexType>(getInput().getType()).getDim().getFactor();
  return indexAttr(getContext(), *v / ratio);
}

LogicalResult UnfoldOp::verify() {
  DimAttr in = llvm::cast<TdimIndexType>(getInput().getType()).getDim();
  DimAttr out = llvm::cast<TdimIndexType>(getType()).getDim();
  if (!in.sameAxis(out))
    return emitOpError() << "unfolds `" << in.str() << "` into `" << out.str()
                         << "`, which it is not a fold of; use tdim.cast to "
                            "change dimension";
  if (in.getFactor() <= out.getFactor() || in.getFactor() % out.getFactor() != 0)
    return emitOpError() << "`" << in.str() << "` is not a coarser fold of `"
                         << out.str() << "`";
  return success();
}

OpFoldResult UnfoldOp::fold(FoldAdaptor adaptor) {
  auto v = constantOf(adaptor.getInput());
  if (!v)
    return {};
  int64_t ratio = llvm::cast<TdimIndexType>(getInput().getType()).getDim().getFactor() /
                  llvm::cast<TdimIndexType>(getType()).getDim().getFactor();
  return indexAttr(getContext(), *v * ratio);
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto v = constantOf(adaptor.getInput()))
    return indexAttr(getContext(), *v);
  return {};
}

//===----------------------------------------------------------------------===//
// ForOp
//===----------------------------------------------------------------------===//

void ForOp::build(OpBuilder &builder, OperationState &result, Value lowerBound,
                  Value upperBound, ValueRange inits, bool parallel,
                  bool reverse) {
  result.addOperands({lowerBound, upperBound});
  result.addOperands(inits);
  Properties &props = result.getOrAddProperties<Properties>();
  props.step = builder.getI64IntegerAttr(1);
  if (parallel)
    props.parallel = builder.getUnitAttr();
  if (reverse)
    props.reverse = builder.getUnitAttr();
  result.addTypes(inits.getTypes());
  Region *body = result.addRegion();
  Block *block = new Block();
  body->push_back(block);
  block->addArgument(lowerBound.getType(), result.location);
  for (Value init : inits)
    block->addArgument(init.getType(), result.location);
  if (inits.empty()) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block);
    YieldOp::create(builder, result.location);
  }
}

ParseResult ForOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::Argument iv;
  OpAsmParser::UnresolvedOperand lb, ub;
  DimAttr dim;
  if (parser.parseArgument(iv) || parser.parseKeyword("over") ||
      parseDim(parser, dim) || parser.parseKeyword("from") ||
      parser.parseOperand(lb) || parser.parseKeyword("to") ||
      parser.parseOperand(ub))
    return failure();
  Builder &b = parser.getBuilder();
  Properties &props = result.getOrAddProperties<Properties>();
  props.step = b.getI64IntegerAttr(1);
  if (succeeded(parser.parseOptionalKeyword("step"))) {
    int64_t step;
    if (parser.parseInteger(step))
      return failure();
    props.step = b.getI64IntegerAttr(step);
  }
  if (succeeded(parser.parseOptionalKeyword("parallel")))
    props.parallel = b.getUnitAttr();
  if (succeeded(parser.parseOptionalKeyword("reverse")))
    props.reverse = b.getUnitAttr();

  SmallVector<OpAsmParser::Argument> regionArgs;
  SmallVector<OpAsmParser::UnresolvedOperand> inits;
  SmallVector<Type> types;
  if (succeeded(parser.parseOptionalKeyword("iter_args"))) {
    if (parser.parseAssignmentList(regionArgs, inits) || parser.parseArrow() ||
        parser.parseLParen() || parser.parseTypeList(types) || parser.parseRParen())
      return failure();
    if (types.size() != inits.size())
      return parser.emitError(parser.getCurrentLocation())
             << "iter_args has " << inits.size() << " values but "
             << types.size() << " types";
  }
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Type ivType = indexTypeOf(dim);
  iv.type = ivType;
  if (parser.resolveOperand(lb, ivType, result.operands) ||
      parser.resolveOperand(ub, ivType, result.operands) ||
      parser.resolveOperands(inits, types, parser.getCurrentLocation(),
                             result.operands))
    return failure();
  result.addTypes(types);
  for (auto [arg, type] : llvm::zip(regionArgs, types))
    arg.type = type;
  SmallVector<OpAsmParser::Argument> args{iv};
  args.append(regionArgs);
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, args))
    return failure();
  ForOp::ensureTerminator(*body, b, result.location);
  return success();
}

void ForOp::print(OpAsmPrinter &p) {
  p << " " << getInductionVar() << " over ";
  printDim(p, llvm::cast<TdimIndexType>(getLowerBound().getType()).getDim());
  p << " from " << getLowerBound() << " to " << getUpperBound();
  if (getStepAttr().getInt() != 1)
    p << " step " << getStepAttr().getInt();
  if (getParallel())
    p << " parallel";
  if (getReverse())
    p << " reverse";
  if (!getInits().empty()) {
    p << " iter_args(";
    llvm::interleaveComma(llvm::zip(getRegionIterArgs(), getInits()), p,
                          [&](auto pair) {
                            p << std::get<0>(pair) << " = " << std::get<1>(pair);
                          });
    p << ") -> (" << getInits().getTypes() << ")";
  }
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(),
                          {getStepAttrName(), getParallelAttrName(),
                           getReverseAttrName()});
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/!getInits().empty());
}

LogicalResult ForOp::verify() {
  if (getLowerBound().getType() != getUpperBound().getType())
    return emitOpError() << "bounds index different dimensions ("
                         << getLowerBound().getType() << " and "
                         << getUpperBound().getType() << ")";
  if (getStepAttr().getInt() < 1)
    return emitOpError() << "step " << getStepAttr().getInt() << " is not positive";
  if (getParallel() && getReverse())
    return emitOpError("cannot be both parallel and reverse");
  if (getParallel() && !getInits().empty())
    return emitOpError("is parallel but carries values from one iteration to "
                       "the next; parallel loops carry none");
  return success();
}

LogicalResult ForOp::verifyRegions() {
  Block *body = getBodyBlock();
  if (body->getNumArguments() != 1 + getInits().size())
    return emitOpError() << "body takes " << body->getNumArguments()
                         << " arguments; expected the induction variable and "
                         << getInits().size() << " carried values";
  if (getInductionVar().getType() != getLowerBound().getType())
    return emitOpError("induction variable must have the type of the bounds");
  for (auto [arg, init] : llvm::zip(getRegionIterArgs(), getInits()))
    if (arg.getType() != init.getType())
      return emitOpError("carried value types do not match iter_args");
  auto yield = llvm::cast<YieldOp>(body->getTerminator());
  if (yield.getValues().getTypes() != getInits().getTypes())
    return yield.emitOpError() << "yields " << yield.getValues().size()
                               << " values of types (" << yield.getValues().getTypes()
                               << ") but the loop carries (" << getInits().getTypes()
                               << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Loads and stores
//===----------------------------------------------------------------------===//

/// `%t[i = %a, k = %b]`: the index types follow from the names.
static ParseResult
parseNamedIndices(OpAsmParser &parser,
                  SmallVectorImpl<OpAsmParser::UnresolvedOperand> &indices,
                  SmallVectorImpl<Type> &types) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
    DimAttr dim;
    OpAsmParser::UnresolvedOperand index;
    if (parseDim(parser, dim) || parser.parseEqual() || parser.parseOperand(index))
      return failure();
    indices.push_back(index);
    types.push_back(indexTypeOf(dim));
    return success();
  });
}

static void printNamedIndices(OpAsmPrinter &p, ValueRange indices) {
  p << "[";
  llvm::interleaveComma(indices, p, [&](Value index) {
    printDim(p, llvm::cast<TdimIndexType>(index.getType()).getDim());
    p << " = " << index;
  });
  p << "]";
}

/// Every dimension of the tensor is indexed exactly once.
static LogicalResult verifyNamedIndices(Operation *op, TdimTensorType type,
                                        ValueRange indices) {
  SmallVector<DimAttr> seen;
  for (Value index : indices) {
    DimAttr dim = llvm::cast<TdimIndexType>(index.getType()).getDim();
    if (!type.hasDim(dim))
      return op->emitOpError() << "tensor has no dimension `" << dim.str()
                               << "` (it has " << type.describeDims() << ")";
    if (llvm::is_contained(seen, dim))
      return op->emitOpError() << "indexes dimension `" << dim.str() << "` twice";
    seen.push_back(dim);
  }
  for (DimAttr dim : type.getDims())
    if (!llvm::is_contained(seen, dim))
      return op->emitOpError() << "does not index dimension `" << dim.str()
                               << "` of the tensor (it has " << type.describeDims()
                               << ")";
  return success();
}

ParseResult LoadOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand tensor;
  SmallVector<OpAsmParser::UnresolvedOperand> indices;
  SmallVector<Type> indexTypes;
  Type type;
  if (parser.parseOperand(tensor) || parseNamedIndices(parser, indices, indexTypes) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(type))
    return failure();
  auto tensorType = llvm::dyn_cast<TdimTensorType>(type);
  if (!tensorType)
    return parser.emitError(parser.getCurrentLocation(), "expected a !tdim.tensor type");
  if (parser.resolveOperand(tensor, type, result.operands) ||
      parser.resolveOperands(indices, indexTypes, parser.getCurrentLocation(),
                             result.operands))
    return failure();
  result.addTypes(tensorType.getElementType());
  return success();
}

void LoadOp::print(OpAsmPrinter &p) {
  p << " " << getTensor();
  printNamedIndices(p, getIndices());
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : " << getTensor().getType();
}

LogicalResult LoadOp::verify() {
  auto type = llvm::cast<TdimTensorType>(getTensor().getType());
  if (getType() != type.getElementType())
    return emitOpError() << "result type " << getType()
                         << " is not the tensor's element type "
                         << type.getElementType();
  return verifyNamedIndices(*this, type, getIndices());
}

ParseResult StoreOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand value, tensor;
  SmallVector<OpAsmParser::UnresolvedOperand> indices;
  SmallVector<Type> indexTypes;
  Type type;
  if (parser.parseOperand(value) || parser.parseComma() ||
      parser.parseOperand(tensor) || parseNamedIndices(parser, indices, indexTypes) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(type))
    return failure();
  auto tensorType = llvm::dyn_cast<TdimTensorType>(type);
  if (!tensorType)
    return parser.emitError(parser.getCurrentLocation(), "expected a !tdim.tensor type");
  if (parser.resolveOperand(value, tensorType.getElementType(), result.operands) ||
      parser.resolveOperand(tensor, type, result.operands) ||
      parser.resolveOperands(indices, indexTypes, parser.getCurrentLocation(),
                             result.operands))
    return failure();
  return success();
}

void StoreOp::print(OpAsmPrinter &p) {
  p << " " << getValue() << ", " << getTensor();
  printNamedIndices(p, getIndices());
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : " << getTensor().getType();
}

LogicalResult StoreOp::verify() {
  auto type = llvm::cast<TdimTensorType>(getTensor().getType());
  if (getValue().getType() != type.getElementType())
    return emitOpError() << "stores a " << getValue().getType() << " into a tensor of "
                         << type.getElementType();
  return verifyNamedIndices(*this, type, getIndices());
}

ParseResult AllocOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand> sizes;
  Type type;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseOperandList(sizes, AsmParser::Delimiter::Paren) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(type))
    return failure();
  auto tensor = llvm::dyn_cast<TdimTensorType>(type);
  if (!tensor)
    return parser.emitError(loc, "expected a !tdim.tensor type");
  // Each size is an index of the dynamic dimension it sizes, in list order.
  SmallVector<Type> sizeTypes;
  for (auto [d, s] : llvm::zip(tensor.getDims(), tensor.getSizes()))
    if (s == kDynamic)
      sizeTypes.push_back(indexTypeOf(d));
  if (sizeTypes.size() != sizes.size())
    return parser.emitError(loc) << "tdim.alloc needs " << sizeTypes.size()
                                 << " sizes, one per dynamic dimension, but has "
                                 << sizes.size();
  if (parser.resolveOperands(sizes, sizeTypes, loc, result.operands))
    return failure();
  result.addTypes(type);
  return success();
}

void AllocOp::print(OpAsmPrinter &p) {
  p << "(" << getDynamicSizes() << ")";
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : " << getType();
}

LogicalResult AllocOp::verify() {
  auto type = llvm::cast<TdimTensorType>(getType());
  if (!llvm::isa<KernelOp>((*this)->getParentOp()))
    return emitOpError("must be at the top level of a kernel (it lives until "
                       "the kernel returns)");
  if (!type.getStrides().empty() || type.getOffset() != 0)
    return emitOpError("makes row-major tensors; write the layout as the order "
                       "of the dimensions, or take a tdim.view of the result");
  SmallVector<DimAttr> dynamic;
  for (auto [d, s] : llvm::zip(type.getDims(), type.getSizes()))
    if (s == kDynamic)
      dynamic.push_back(d);
  if (dynamic.size() != getDynamicSizes().size())
    return emitOpError() << "needs " << dynamic.size()
                         << " sizes, one per dynamic dimension, but has "
                         << getDynamicSizes().size();
  for (auto [d, v] : llvm::zip(dynamic, getDynamicSizes()))
    if (llvm::cast<TdimIndexType>(v.getType()).getDim() != d)
      return emitOpError() << "size of dimension `" << d.str()
                           << "` is given by an index of `"
                           << llvm::cast<TdimIndexType>(v.getType()).getDim().str()
                           << "`";
  return success();
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

static TdimTensorType viewType(TdimTensorType source, ArrayRef<DimAttr> dims,
                               ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
                               int64_t offset) {
  return TdimTensorType::get(dims, sizes, source.getElementType(), strides, offset);
}

ParseResult SliceOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand source, start, length;
  DimAttr dim;
  Type type;
  bool dynamicLength = false;
  int64_t staticLength = 0;
  if (parser.parseOperand(source) || parser.parseKeyword("along") ||
      parseDim(parser, dim) || parser.parseKeyword("from") ||
      parser.parseOperand(start) || parser.parseKeyword("length"))
    return failure();
  OptionalParseResult lengthInt = parser.parseOptionalInteger(staticLength);
  if (!lengthInt.has_value()) {
    if (parser.parseOperand(length))
      return failure();
    dynamicLength = true;
  } else if (failed(*lengthInt)) {
    return failure();
  }
  if (parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(type))
    return failure();
  Properties &props = result.getOrAddProperties<Properties>();
  props.dim = dim;
  if (!dynamicLength)
    props.staticLength = parser.getBuilder().getI64IntegerAttr(staticLength);
  if (parser.resolveOperand(source, type, result.operands) ||
      parser.resolveOperand(start, indexTypeOf(dim), result.operands) ||
      (dynamicLength &&
       parser.resolveOperand(length, indexTypeOf(dim), result.operands)))
    return failure();
  SmallVector<Type> types;
  if (failed(inferReturnTypes(parser.getContext(), result.location,
                              result.operands, result.attributes.getDictionary(parser.getContext()),
                              result.getRawProperties(), result.regions, types)))
    return failure();
  result.addTypes(types);
  return success();
}

void SliceOp::print(OpAsmPrinter &p) {
  p << " " << getSource() << " along ";
  printDim(p, getDim());
  p << " from " << getStart() << " length ";
  if (getDynamicLength())
    p << getDynamicLength();
  else
    p << *getStaticLength();
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {getDimAttrName(), getStaticLengthAttrName()});
  p << " : " << getSource().getType();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto source = llvm::dyn_cast<TdimTensorType>(adaptor.getSource().getType());
  DimAttr dim = adaptor.getDim();
  if (!source || !dim)
    return failure();
  std::optional<unsigned> pos = source.getPosition(dim);
  if (!pos)
    return emitOptionalError(loc, "'tdim.slice' op tensor has no dimension `",
                             dim.str(), "` (it has ", source.describeDims(), ")");
  SmallVector<int64_t> sizes(source.getSizes());
  sizes[*pos] = adaptor.getStaticLengthAttr() ? adaptor.getStaticLengthAttr().getInt() : kDynamic;
  types.push_back(viewType(source, source.getDims(), sizes,
                           source.getEffectiveStrides(), kDynamic));
  return success();
}

LogicalResult SliceOp::verify() {
  auto source = llvm::cast<TdimTensorType>(getSource().getType());
  if (!getDynamicLength() == !getStaticLength())
    return emitOpError("needs exactly one length, a constant or an index value");
  if (llvm::cast<TdimIndexType>(getStart().getType()).getDim() != getDim())
    return emitOpError() << "start must be an index of `" << getDim().str() << "`";
  if (getStaticLength()) {
    int64_t length = static_cast<int64_t>(*getStaticLength());
    int64_t size = source.getSize(getDim());
    if (length < 0)
      return emitOpError() << "length " << length << " is negative";
    if (size != kDynamic && length > size)
      return emitOpError() << "slice of length " << length << " along `"
                           << getDim().str() << "` exceeds its size " << size;
  }
  return success();
}

ParseResult SelectOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand source;
  SmallVector<OpAsmParser::UnresolvedOperand> indices;
  SmallVector<Type> indexTypes;
  Type type;
  if (parser.parseOperand(source) || parseNamedIndices(parser, indices, indexTypes) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(type))
    return failure();
  if (indices.size() != 1)
    return parser.emitError(parser.getCurrentLocation(),
                            "tdim.select picks exactly one dimension");
  if (parser.resolveOperand(source, type, result.operands) ||
      parser.resolveOperands(indices, indexTypes, parser.getCurrentLocation(),
                             result.operands))
    return failure();
  SmallVector<Type> types;
  if (failed(inferReturnTypes(parser.getContext(), result.location, result.operands,
                              result.attributes.getDictionary(parser.getContext()),
                              result.getRawProperties(), result.regions, types)))
    return failure();
  result.addTypes(types);
  return success();
}

void SelectOp::print(OpAsmPrinter &p) {
  p << " " << getSource();
  printNamedIndices(p, getIndex());
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : " << getSource().getType();
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto source = llvm::dyn_cast<TdimTensorType>(adaptor.getSource().getType());
  auto index = llvm::dyn_cast<TdimIndexType>(adaptor.getIndex().getType());
  if (!source || !index)
    return failure();
  std::optional<unsigned> pos = source.getPosition(index.getDim());
  if (!pos)
    return emitOptionalError(loc, "'tdim.select' op tensor has no dimension `",
                             index.getDim().str(), "` (it has ",
                             source.describeDims(), ")");
  SmallVector<DimAttr> dims(source.getDims());
  SmallVector<int64_t> sizes(source.getSizes());
  SmallVector<int64_t> strides = source.getEffectiveStrides();
  dims.erase(dims.begin() + *pos);
  sizes.erase(sizes.begin() + *pos);
  strides.erase(strides.begin() + *pos);
  types.push_back(viewType(source, dims, sizes, strides, kDynamic));
  return success();
}

LogicalResult SelectOp::verify() { return success(); }

LogicalResult ViewOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto source = llvm::dyn_cast<TdimTensorType>(adaptor.getSource().getType());
  ArrayAttr order = adaptor.getOrder();
  if (!source || !order)
    return failure();
  if (order.size() != source.getRank())
    return emitOptionalError(loc, "'tdim.view' op lists ", order.size(),
                             " dimensions but the tensor has ", source.getRank(),
                             " (", source.describeDims(), ")");
  SmallVector<DimAttr> dims;
  SmallVector<int64_t> sizes, strides;
  SmallVector<int64_t> sourceStrides = source.getEffectiveStrides();
  for (Attribute a : order) {
    auto dim = llvm::dyn_cast<DimAttr>(a);
    std::optional<unsigned> pos = dim ? source.getPosition(dim) : std::nullopt;
    if (!pos)
      return emitOptionalError(loc, "'tdim.view' op tensor has no dimension `",
                               dim ? dim.str() : "?", "` (it has ",
                               source.describeDims(), ")");
    if (llvm::is_contained(dims, dim))
      return emitOptionalError(loc, "'tdim.view' op lists dimension `", dim.str(),
                               "` twice");
    dims.push_back(dim);
    sizes.push_back(source.getSizes()[*pos]);
    strides.push_back(sourceStrides[*pos]);
  }
  types.push_back(viewType(source, dims, sizes, strides, source.getOffset()));
  return success();
}

LogicalResult ViewOp::verify() { return success(); }

OpFoldResult ViewOp::fold(FoldAdaptor) {
  if (getSource().getType() == getType())
    return getSource();
  return {};
}

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
  return checkConsistentSizes(*this, namedTensors(getOperation()->getOperands()));
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

#define GET_OP_CLASSES
#include "nerve/Dialect/Tdim/IR/TdimOps.cpp.inc"
