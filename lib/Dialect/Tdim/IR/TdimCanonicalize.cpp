//===- TdimCanonicalize.cpp - tdim canonicalizations and fusion ---------===//
//
// Rewrites that simplify tdim programs without changing what they compute:
// fusing elementwise producers into their consumers (a map of a map), a
// relayout of a relayout, and writes to intermediate tensors nobody reads.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace nerve::tdim;

/// Whether any op strictly between `first` and `last` (same block) may write
/// memory, which would make reordering reads across it unsafe.
static bool writesBetween(Operation *first, Operation *last) {
  for (Operation *op = first->getNextNode(); op && op != last; op = op->getNextNode()) {
    if (isMemoryEffectFree(op) || llvm::isa<AllocOp>(op))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || effects.hasEffect<MemoryEffects::Write>())
      return true;
  }
  return false;
}

/// The single op writing `tensor` (a tdim.alloc) before `reader`, when the
/// only other use of `tensor` is `reader` itself.
static Operation *soleWriterBefore(Value tensor, Operation *reader) {
  if (!tensor.getDefiningOp<AllocOp>())
    return nullptr;
  Operation *writer = nullptr;
  for (Operation *user : tensor.getUsers()) {
    if (user == reader)
      continue;
    if (writer)
      return nullptr;
    writer = user;
  }
  if (!writer || writer->getBlock() != reader->getBlock() ||
      !writer->isBeforeInBlock(reader))
    return nullptr;
  return writer;
}

/// Converts `v` to `type` the way a store and a load would: rounding down to
/// a narrower float, extending to a wider one.
static Value convertElement(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  auto from = llvm::cast<FloatType>(v.getType());
  auto to = llvm::cast<FloatType>(type);
  if (to.getWidth() < from.getWidth())
    return arith::TruncFOp::create(b, loc, to, v);
  return arith::ExtFOp::create(b, loc, to, v);
}

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
    produced = convertElement(b, loc, produced, midElement);
    produced = convertElement(b, loc, produced, oldBlock.getArgument(k).getType());
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
    // Producer inputs broadcast inside a reduce only where the tensor has
    // every dimension of the iteration space, like any other reduce input.
    for (Value v : producer.getInputs())
      if (!llvm::isa<TdimTensorType>(v.getType()))
        return; // scalars cannot be reduce inputs; leave unfused
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

/// relayout(%a -> %t = tdim.alloc) ; relayout(%t -> %b)  ->  relayout(%a -> %b)
struct RelayoutOfRelayout : OpRewritePattern<RelayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RelayoutOp op, PatternRewriter &rewriter) const override {
    auto first = llvm::dyn_cast_or_null<RelayoutOp>(soleWriterBefore(op.getInput(), op));
    if (!first || writesBetween(first, op) || first.getInput() == op.getOutput())
      return failure();
    Value mid = op.getInput();
    RelayoutOp::create(rewriter, op.getLoc(), first.getInput(), op.getOutput());
    rewriter.eraseOp(op);
    rewriter.eraseOp(first);
    if (mid.use_empty())
      rewriter.eraseOp(mid.getDefiningOp());
    return success();
  }
};

/// A tdim.alloc that is only ever written: drop the writes and the alloc.
struct EraseWriteOnlyAlloc : OpRewritePattern<AllocOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllocOp alloc, PatternRewriter &rewriter) const override {
    SmallVector<Operation *> writers;
    for (OpOperand &use : alloc->getUses()) {
      Operation *user = use.getOwner();
      bool writeOnly = false;
      if (auto m = dyn_cast<MapOp>(user))
        writeOnly = use.getOperandNumber() >= m.getInputs().size() &&
                    !llvm::is_contained(m.getInputs(), alloc.getResult());
      else if (auto s = dyn_cast<StoreOp>(user))
        writeOnly = use.getOperandNumber() == 1;
      else if (isa<RelayoutOp, BroadcastOp, SoftmaxOp, LogSoftmaxOp>(user))
        writeOnly = user->getOperand(1) == alloc.getResult() &&
                    user->getOperand(0) != alloc.getResult();
      if (!writeOnly)
        return failure();
      // A map with several outputs still writes the others.
      if (auto m = dyn_cast<MapOp>(user); m && m.getOutputs().size() != 1)
        return failure();
      writers.push_back(user);
    }
    for (Operation *w : writers)
      rewriter.eraseOp(w);
    rewriter.eraseOp(alloc);
    return success();
  }
};

} // namespace

void nerve::tdim::populateElementwiseFusionPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<FuseProducerMap>(ctx, MapOp::getOperationName());
  patterns.add<FuseProducerMap>(ctx, ReduceOp::getOperationName());
}

void MapOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<FuseProducerMap>(ctx, MapOp::getOperationName());
}

void ReduceOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<FuseProducerMap>(ctx, ReduceOp::getOperationName());
}

void RelayoutOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *ctx) {
  results.add<RelayoutOfRelayout>(ctx);
}

void AllocOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<EraseWriteOnlyAlloc>(ctx);
}
