//===- FuseContractEpilogue.cpp - tdim-fuse-contract-epilogue -------------===//
//
// Elementwise work around a tdim.contract moves into its epilogue, so the
// product is stored once, already finished:
//
//   map(%b -> %y) ; contract(%x, %w -> %y) accumulate      (a bias)
//     -> contract(%x, %w) with(%b) -> %y epilogue { sum + map(b) }
//   contract(%x, %w -> %t = tdim.alloc) ; map(..., %t, ... -> %y)
//     -> contract(%x, %w) with(...) -> %y epilogue { map's body on the sum }
//
// Rounding is kept: the bias as %y holds it, the product as %t holds it.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/Tdim/Transforms/Passes.h"

#include "nerve/Dialect/Tdim/IR/TdimBuilders.h"
#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nerve::tdim {
#define GEN_PASS_DEF_TDIMFUSECONTRACTEPILOGUE
#include "nerve/Dialect/Tdim/Transforms/Passes.h.inc"
} // namespace nerve::tdim

using namespace mlir;
using namespace nerve::tdim;

static Type elementOf(Value tensor) {
  return llvm::cast<TdimTensorType>(tensor.getType()).getElementType();
}

/// A contraction writing `output` from `op`'s operands with `with` inputs,
/// at the rewriter's insertion point, its epilogue block created with
/// argument types `argTypes` (the sum's first).
static std::pair<ContractOp, Block *> createFused(PatternRewriter &rewriter, ContractOp op,
                                                  ValueRange with, Value output,
                                                  bool accumulate, ArrayRef<Type> argTypes) {
  Location loc = op.getLoc();
  auto fused = ContractOp::create(rewriter, loc, op.getLhs(), op.getRhs(), with, output,
                                  accumulate, /*scan=*/DimAttr(), /*carry=*/ArrayAttr());
  fused->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  Block *body = rewriter.createBlock(&fused.getEpilogue(), {}, argTypes,
                                     SmallVector<Location>(argTypes.size(), loc));
  return {fused, body};
}

/// `op`'s epilogue (or the identity) on the arguments `args` of a block
/// being built (the sum, then `op`'s `with` values): the value it yields.
static Value applyEpilogue(OpBuilder &b, ContractOp op, ValueRange args) {
  if (op.getEpilogue().empty())
    return args.front();
  Block &body = op.getEpilogue().front();
  IRMapping mapping;
  mapping.map(body.getArguments(), args.take_front(body.getNumArguments()));
  for (Operation &inner : body.without_terminator())
    b.clone(inner, mapping);
  return mapping.lookupOrDefault(llvm::cast<YieldOp>(body.getTerminator()).getValues()[0]);
}

namespace {

/// map(... -> %y) ; contract(%x, %w -> %y) accumulate (a bias, which
/// tdim-decompose wrote as a map): the map's value, rounded as %y holds
/// it, added to each sum instead of summed onto.
struct FuseInitMap : OpRewritePattern<ContractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ContractOp op, PatternRewriter &rewriter) const override {
    if (!op.getAccumulate() || !op.getEpilogue().empty() || op.getScan())
      return failure();
    Value out = op.getOutput();
    MapOp init;
    for (Operation *prev = op->getPrevNode(); prev && !init; prev = prev->getPrevNode()) {
      auto map = dyn_cast<MapOp>(prev);
      if (map && map.getOutputs().size() == 1 && map.getOutputs().front() == out)
        init = map;
      else if (llvm::is_contained(prev->getOperands(), out))
        return failure();
    }
    if (!init || writesBetween(init, op) || llvm::is_contained(init.getInputs(), out) ||
        op.getLhs() == out || op.getRhs() == out)
      return failure();
    Location loc = op.getLoc();
    Block &initBody = init.getBody().front();
    Type sumType = getComputeType(elementOf(out));
    SmallVector<Type> argTypes{sumType};
    llvm::append_range(argTypes, initBody.getArgumentTypes());
    rewriter.setInsertionPoint(op);
    auto [fused, body] = createFused(rewriter, op, init.getInputs(), out, false, argTypes);
    IRMapping mapping;
    mapping.map(initBody.getArguments(), body->getArguments().drop_front());
    for (Operation &inner : initBody.without_terminator())
      rewriter.clone(inner, mapping);
    Value value = mapping.lookupOrDefault(
        llvm::cast<YieldOp>(initBody.getTerminator()).getValues()[0]);
    // As the output held it, then widened to the sum's type.
    value = buildElementConversion(rewriter, loc, buildElementConversion(rewriter, loc, value, elementOf(out)), sumType);
    Value sum = arith::AddFOp::create(rewriter, loc, body->getArgument(0), value);
    YieldOp::create(rewriter, loc, ValueRange{sum});
    rewriter.eraseOp(op);
    rewriter.eraseOp(init);
    return success();
  }
};

/// contract(-> %t = tdim.alloc) ; map(..., %t, ...) with %t read by that
/// map alone, over its whole iteration space: the map's body applied to
/// each sum, its other inputs the contraction's `with` inputs.
struct FuseConsumerMap : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MapOp map, PatternRewriter &rewriter) const override {
    if (map.getOutputs().size() != 1)
      return failure();
    Value out = map.getOutputs().front();
    for (auto [k, input] : llvm::enumerate(map.getInputs())) {
      auto producer = llvm::dyn_cast_or_null<ContractOp>(soleWriterBefore(input, map));
      if (!producer || producer.getAccumulate() || producer.getScan() ||
          llvm::count(map.getInputs(), input) != 1 ||
          writesBetween(producer, map))
        continue;
      auto mid = llvm::cast<TdimTensorType>(input.getType());
      if (mid.getRank() != llvm::cast<TdimTensorType>(out.getType()).getRank() ||
          elementOf(out) != elementOf(producer.getLhs()))
        continue;
      SmallVector<Value> reads{producer.getLhs(), producer.getRhs()};
      llvm::append_range(reads, producer.getWith());
      if (llvm::is_contained(reads, out))
        continue;
      rewrite(rewriter, map, producer, k);
      return success();
    }
    return failure();
  }

  static void rewrite(PatternRewriter &rewriter, MapOp map, ContractOp producer, unsigned k) {
    Location loc = map.getLoc();
    Value mid = map.getInputs()[k];
    Block &mapBody = map.getBody().front();
    // Inputs: the producer's, then the map's others; arguments alike.
    SmallVector<Value> with(producer.getWith());
    SmallVector<Type> argTypes{getComputeType(elementOf(producer.getOutput()))};
    if (!producer.getEpilogue().empty())
      for (BlockArgument arg : producer.getEpilogue().front().getArguments().drop_front())
        argTypes.push_back(arg.getType());
    for (auto [i, in] : llvm::enumerate(map.getInputs()))
      if (i != k) {
        with.push_back(in);
        argTypes.push_back(mapBody.getArgument(i).getType());
      }
    rewriter.setInsertionPoint(map);
    auto [fused, body] = createFused(rewriter, producer, with, map.getOutputs().front(), false,
                                     argTypes);
    unsigned numProducer = producer.getWith().size() + 1;
    Value produced = applyEpilogue(rewriter, producer, body->getArguments());
    // The product as the intermediate tensor would have held it.
    produced = buildElementConversion(rewriter, loc, produced, elementOf(mid));
    produced = buildElementConversion(rewriter, loc, produced, mapBody.getArgument(k).getType());
    IRMapping mapping;
    for (unsigned i = 0, next = numProducer; i < mapBody.getNumArguments(); ++i)
      mapping.map(mapBody.getArgument(i), i == k ? produced : body->getArgument(next++));
    for (Operation &inner : mapBody)
      rewriter.clone(inner, mapping);
    Operation *alloc = mid.getDefiningOp();
    rewriter.eraseOp(map);
    rewriter.eraseOp(producer);
    if (alloc->use_empty())
      rewriter.eraseOp(alloc);
  }
};

struct TdimFuseContractEpiloguePass
    : nerve::tdim::impl::TdimFuseContractEpilogueBase<TdimFuseContractEpiloguePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseInitMap, FuseConsumerMap>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
