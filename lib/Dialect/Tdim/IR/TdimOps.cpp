//===- TdimOps.cpp - tdim operations: kernels, indices, loops ------------===//
//
// The ops' definitions (generated), and the syntax, verifiers and folds of
// the kernel, typed indices and tdim.for. Memory ops and views are in
// TdimMemoryOps.cpp, whole-tensor ops in TdimTensorOps.cpp.
//
//===----------------------------------------------------------------------===//

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


/// A contraction's `t carry [v0 : f32, ...]` after `scan` (an optional
/// group, present when `scan` is: the format prints no space for it
/// otherwise).
static ParseResult parseScan(OpAsmParser &parser, DimAttr &scan, ArrayAttr &carry) {
  if (parseDim(parser, scan) || parser.parseKeyword("carry") || parser.parseAttribute(carry))
    return failure();
  return success();
}

static void printScan(OpAsmPrinter &p, Operation *op, DimAttr scan, ArrayAttr carry) {
  printDim(p, scan);
  p << " carry ";
  p.printAttribute(carry ? carry : ArrayAttr::get(op->getContext(), {}));
}

#define GET_OP_CLASSES
#include "nerve/Dialect/Tdim/IR/TdimOps.cpp.inc"
