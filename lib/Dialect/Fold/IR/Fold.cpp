//===- Fold.cpp - the fold dialect: fold.for and fold.yield --------------===//
//
// Registration, fold.for's scf.for-like syntax, and the checks that make its
// merge region a statement a mapping can rely on: of the accumulators'
// types, computing only, from its arguments and constants.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/Fold/IR/Fold.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace nerve::fold;

#include "nerve/Dialect/Fold/IR/FoldDialect.cpp.inc"

void FoldDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "nerve/Dialect/Fold/IR/FoldOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "nerve/Dialect/Fold/IR/FoldOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Syntax: fold.for %i = %lb to %ub step %s iter_args(%a = %x, ...) -> (T, ...)
//         { body } merge [max_sum_exp] { ^bb0(lhs..., rhs...): ... }
//===----------------------------------------------------------------------===//

ParseResult ForOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &b = parser.getBuilder();
  Type index = b.getIndexType();
  OpAsmParser::Argument iv;
  iv.type = index;
  OpAsmParser::UnresolvedOperand lb, ub, step;
  if (parser.parseArgument(iv) || parser.parseEqual() || parser.parseOperand(lb) ||
      parser.parseKeyword("to") || parser.parseOperand(ub) || parser.parseKeyword("step") ||
      parser.parseOperand(step) ||
      parser.resolveOperands({lb, ub, step}, index, result.operands))
    return failure();

  SmallVector<OpAsmParser::Argument> args{iv};
  SmallVector<OpAsmParser::Argument> accs;
  SmallVector<OpAsmParser::UnresolvedOperand> inits;
  llvm::SMLoc initsLoc = parser.getCurrentLocation();
  if (parser.parseKeyword("iter_args") || parser.parseAssignmentList(accs, inits) ||
      parser.parseArrowTypeList(result.types))
    return failure();
  if (accs.size() != result.types.size())
    return parser.emitError(initsLoc, "expected as many result types as iter_args");
  for (auto [acc, type] : llvm::zip(accs, result.types)) {
    acc.type = type;
    args.push_back(acc);
  }
  if (parser.resolveOperands(inits, result.types, initsLoc, result.operands))
    return failure();

  Region *body = result.addRegion();
  Region *merge = result.addRegion();
  if (parser.parseRegion(*body, args) || parser.parseKeyword("merge"))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("max_sum_exp")))
    result.getOrAddProperties<Properties>().max_sum_exp = b.getUnitAttr();
  if (parser.parseRegion(*merge) || parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  return success();
}

void ForOp::print(OpAsmPrinter &p) {
  p << " " << getInductionVar() << " = " << getLowerBound() << " to " << getUpperBound()
    << " step " << getStep() << " iter_args(";
  llvm::interleaveComma(llvm::zip(getRegionIterArgs(), getInitArgs()), p, [&](auto pair) {
    p << std::get<0>(pair) << " = " << std::get<1>(pair);
  });
  p << ") -> (" << getResultTypes() << ") ";
  p.printRegion(getRegion(), /*printEntryBlockArgs=*/false);
  p << " merge ";
  if (getMaxSumExp())
    p << "max_sum_exp ";
  p.printRegion(getMerge(), /*printEntryBlockArgs=*/true);
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), {getMaxSumExpAttrName()});
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

/// Whether `block`'s arguments have the types `types`.
static bool hasArgumentTypes(Block &block, TypeRange types) {
  return TypeRange(block.getArgumentTypes()) == types;
}

/// The merge region's checks: 2N arguments and N yielded values of the
/// accumulators' types, computing only, nothing from outside but constants.
static LogicalResult verifyMerge(ForOp op) {
  Block &merge = op.getMerge().front();
  SmallVector<Type> twice(op.getResultTypes());
  llvm::append_range(twice, op.getResultTypes());
  if (!hasArgumentTypes(merge, twice))
    return op.emitOpError("merge region must take two tuples of the accumulators' types (")
           << twice.size() << " arguments)";
  if (TypeRange(merge.getTerminator()->getOperandTypes()) != op.getResultTypes())
    return op.emitOpError("merge region must yield one tuple of the accumulators' types");
  for (Operation &inner : merge.without_terminator())
    if (inner.getNumRegions() != 0 || !isMemoryEffectFree(&inner))
      return inner.emitOpError("may not be in a fold.for's merge region: it only computes "
                               "(no memory effects, no regions)");
  llvm::SetVector<Value> outside;
  getUsedValuesDefinedAbove(op.getMerge(), outside);
  for (Value v : outside)
    if (!matchPattern(v, m_Constant()))
      return op.emitOpError("merge region may use only its arguments and constants from "
                            "outside it");
  return success();
}

LogicalResult ForOp::verifyRegions() {
  if (getNumResults() == 0)
    return emitOpError("must carry at least one accumulator");
  if (TypeRange(getInitArgs().getTypes()) != getResultTypes())
    return emitOpError("iter_args must have the types of the results");
  Block *body = getBody();
  SmallVector<Type> bodyTypes{IndexType::get(getContext())};
  llvm::append_range(bodyTypes, getResultTypes());
  if (!hasArgumentTypes(*body, bodyTypes))
    return emitOpError("body must take the index and the accumulators");
  if (TypeRange(body->getTerminator()->getOperandTypes()) != getResultTypes())
    return emitOpError("body must yield the accumulators' next values");
  if (failed(verifyMerge(*this)))
    return failure();
  if (getMaxSumExp() &&
      (getNumResults() != 2 || !llvm::all_of(getResultTypes(), [](Type t) { return t.isF32(); })))
    return emitOpError("max_sum_exp needs two f32 accumulators (the maximum and the sum)");
  return success();
}
