//===- FuseElementwise.cpp - one pass over memory for elementwise chains -===//
//
// A tdim.map writing a tdim.alloc'ed tensor that exactly one later tdim.map
// or tdim.reduce reads is inlined into that consumer, keeping the rounding
// the intermediate tensor would have applied; the tensor disappears.
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
#define GEN_PASS_DEF_TDIMFUSEELEMENTWISE
#include "nerve/Dialect/Tdim/Transforms/Passes.h.inc"
} // namespace nerve::tdim

using namespace mlir;
using namespace nerve::tdim;

namespace {

/// map(ins: a..., outs: %t = tdim.alloc) ; consumer(ins: ..., %t, ...)
///   -> consumer(ins: ..., a..., ...) with the map's body inlined.
struct FuseProducerMap : RewritePattern {
  FuseProducerMap(MLIRContext *ctx, StringRef consumerName)
      : RewritePattern(consumerName, /*benefit=*/2, ctx) {}

  LogicalResult matchAndRewrite(Operation *consumer,
                                PatternRewriter &rewriter) const override {
    auto map = dyn_cast<MapOp>(consumer);
    auto reduce = dyn_cast<ReduceOp>(consumer);
    OperandRange inputs = map ? map.getInputs() : reduce.getInputs();
    for (auto [k, input] : llvm::enumerate(inputs)) {
      auto producer = llvm::dyn_cast_or_null<MapOp>(soleWriterBefore(input, consumer));
      if (!producer || producer.getOutputs().size() != 1 ||
          llvm::count(inputs, input) != 1 || writesBetween(producer, consumer))
        continue;
      // The intermediate must cover the consumer's whole iteration space, or
      // the producer's body would run once per broadcast copy.
      auto mid = llvm::cast<TdimTensorType>(input.getType());
      auto space = llvm::cast<TdimTensorType>(
          (map ? map.getOutputs() : reduce.getOutputs()).front().getType());
      unsigned spaceRank = space.getRank() + (reduce ? reduce.getOver().size() : 0);
      if (mid.getRank() != spaceRank)
        continue;
      // The consumer must not overwrite what the producer reads.
      OperandRange outs = map ? map.getOutputs() : reduce.getOutputs();
      if (llvm::any_of(producer.getInputs(),
                       [&](Value v) { return llvm::is_contained(outs, v); }))
        continue;
      // A reduce's inputs are tensors over its whole iteration space: a
      // producer with a scalar input stays unfused.
      if (reduce && llvm::any_of(producer.getInputs(), [](Value v) {
            return !llvm::isa<TdimTensorType>(v.getType());
          }))
        continue;
      if (map)
        rewriteMap(rewriter, map, producer, k);
      else
        rewriteReduce(rewriter, reduce, producer, k);
      return success();
    }
    return failure();
  }

  /// Inlines `producer`'s body in place of argument `k` of `block`, which is
  /// being rebuilt into `newBlock`; returns the mapping of old arguments.
  static void inlineProducer(OpBuilder &b, Location loc, MapOp producer,
                             Block &oldBlock, unsigned k, Block &newBlock,
                             IRMapping &mapping, Type midElement) {
    unsigned numProducerIns = producer.getInputs().size();
    for (unsigned i = 0; i < oldBlock.getNumArguments(); ++i) {
      if (i < k)
        mapping.map(oldBlock.getArgument(i), newBlock.getArgument(i));
      else if (i > k)
        mapping.map(oldBlock.getArgument(i),
                    newBlock.getArgument(i - 1 + numProducerIns));
    }
    Block &pBody = producer.getBody().front();
    IRMapping pMapping;
    for (unsigned i = 0; i < numProducerIns; ++i)
      pMapping.map(pBody.getArgument(i), newBlock.getArgument(k + i));
    for (Operation &op : pBody.without_terminator())
      b.clone(op, pMapping);
    Value produced =
        pMapping.lookup(llvm::cast<YieldOp>(pBody.getTerminator()).getValues()[0]);
    // Keep the rounding the intermediate tensor would have applied.
    produced = buildElementConversion(b, loc, produced, midElement);
    produced = buildElementConversion(b, loc, produced, oldBlock.getArgument(k).getType());
    mapping.map(oldBlock.getArgument(k), produced);
  }

  static SmallVector<Value> spliceInputs(OperandRange inputs, unsigned k,
                                         MapOp producer) {
    SmallVector<Value> result(inputs.take_front(k));
    llvm::append_range(result, producer.getInputs());
    llvm::append_range(result, inputs.drop_front(k + 1));
    return result;
  }

  static SmallVector<Type> spliceArgTypes(Block &block, unsigned k, MapOp producer) {
    SmallVector<Type> old = llvm::to_vector(block.getArgumentTypes());
    SmallVector<Type> types(ArrayRef<Type>(old).take_front(k));
    llvm::append_range(types, producer.getBody().front().getArgumentTypes());
    llvm::append_range(types, ArrayRef<Type>(old).drop_front(k + 1));
    return types;
  }

  static void eraseProducer(PatternRewriter &rewriter, MapOp producer, Value mid) {
    Operation *alloc = mid.getDefiningOp();
    rewriter.eraseOp(producer);
    if (alloc->use_empty())
      rewriter.eraseOp(alloc);
  }

  void rewriteMap(PatternRewriter &rewriter, MapOp consumer, MapOp producer,
                  unsigned k) const {
    Location loc = consumer.getLoc();
    Value mid = consumer.getInputs()[k];
    Type midElement = llvm::cast<TdimTensorType>(mid.getType()).getElementType();
    Block &oldBlock = consumer.getBody().front();
    SmallVector<Value> newInputs = spliceInputs(consumer.getInputs(), k, producer);
    auto fused = MapOp::create(rewriter, loc, newInputs, consumer.getOutputs());
    fused->setDiscardableAttrs(consumer->getDiscardableAttrDictionary());
    SmallVector<Type> argTypes = spliceArgTypes(oldBlock, k, producer);
    Block *newBlock = rewriter.createBlock(&fused.getBody(), {}, argTypes,
                                           SmallVector<Location>(argTypes.size(), loc));
    IRMapping mapping;
    inlineProducer(rewriter, loc, producer, oldBlock, k, *newBlock, mapping, midElement);
    for (Operation &op : oldBlock)
      rewriter.clone(op, mapping);
    rewriter.eraseOp(consumer);
    eraseProducer(rewriter, producer, mid);
  }

  void rewriteReduce(PatternRewriter &rewriter, ReduceOp consumer, MapOp producer,
                     unsigned k) const {
    Location loc = consumer.getLoc();
    Value mid = consumer.getInputs()[k];
    Type midElement = llvm::cast<TdimTensorType>(mid.getType()).getElementType();
    SmallVector<Value> newInputs = spliceInputs(consumer.getInputs(), k, producer);
    auto fused = ReduceOp::create(rewriter, loc, newInputs, consumer.getOutputs(),
                                  consumer.getOver(), consumer.getInit());
    fused->setDiscardableAttrs(consumer->getDiscardableAttrDictionary());
    rewriter.cloneRegionBefore(consumer.getCombine(), fused.getCombine(),
                               fused.getCombine().end());
    // (Cloning an empty region with a listener attached is not safe in MLIR
    // 22, and there is nothing to clone anyway.)
    if (!consumer.getPost().empty())
      rewriter.cloneRegionBefore(consumer.getPost(), fused.getPost(), fused.getPost().end());

    // Build the fused map region: the consumer's map, or the identity.
    unsigned numIns = consumer.getInputs().size();
    SmallVector<Type> oldArgTypes;
    Block *oldBlock = nullptr;
    Block identity;
    if (!consumer.getMap().empty()) {
      oldBlock = &consumer.getMap().front();
    } else {
      SmallVector<Type> acc = consumer.getAccumulatorTypes();
      for (unsigned i = 0; i < numIns; ++i)
        identity.addArgument(acc[i], loc);
      // A detached block: the builder takes its context from the rewriter.
      OpBuilder ib(rewriter.getContext());
      ib.setInsertionPointToEnd(&identity);
      YieldOp::create(ib, loc, llvm::to_vector_of<Value>(identity.getArguments()));
      oldBlock = &identity;
    }
    SmallVector<Type> argTypes = spliceArgTypes(*oldBlock, k, producer);
    Block *newBlock = rewriter.createBlock(&fused.getMap(), {}, argTypes,
                                           SmallVector<Location>(argTypes.size(), loc));
    IRMapping mapping;
    inlineProducer(rewriter, loc, producer, *oldBlock, k, *newBlock, mapping, midElement);
    for (Operation &op : *oldBlock)
      rewriter.clone(op, mapping);
    rewriter.eraseOp(consumer);
    eraseProducer(rewriter, producer, mid);
  }
};

struct TdimFuseElementwisePass
    : nerve::tdim::impl::TdimFuseElementwiseBase<TdimFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateElementwiseFusionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void nerve::tdim::populateElementwiseFusionPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<FuseProducerMap>(ctx, MapOp::getOperationName());
  patterns.add<FuseProducerMap>(ctx, ReduceOp::getOperationName());
}
