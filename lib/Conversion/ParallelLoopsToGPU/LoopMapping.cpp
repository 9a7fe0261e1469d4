//===- LoopMapping.cpp - pieces shared by the GPU loop mappings ----------===//

#include "LoopMapping.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>

using namespace mlir;

namespace nerve::loop_mapping {

Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

std::optional<unsigned> contiguousDim(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (type.getRank() == 0 || failed(type.getStridesAndOffset(strides, offset)))
    return std::nullopt;
  for (int d = static_cast<int>(strides.size()) - 1; d >= 0; --d)
    if (strides[d] == 1)
      return d;
  return std::nullopt;
}

AffineMap swapWithLastMap(unsigned rank, unsigned d, MLIRContext *ctx) {
  SmallVector<unsigned> order = llvm::to_vector(llvm::seq<unsigned>(0, rank));
  std::swap(order[d], order.back());
  return AffineMap::getPermutationMap(order, ctx);
}

MemRefType transposedType(MemRefType type, unsigned d) {
  SmallVector<int64_t> strides;
  int64_t offset;
  (void)type.getStridesAndOffset(strides, offset); // known strided by contiguousDim
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[d], shape.back());
  std::swap(strides[d], strides.back());
  return MemRefType::get(shape, type.getElementType(),
                         StridedLayoutAttr::get(type.getContext(), offset, strides),
                         type.getMemorySpace());
}

int64_t elementBytes(Value memref) {
  return llvm::divideCeil(cast<MemRefType>(memref.getType()).getElementTypeBitWidth(), 8);
}

static int64_t sharedArrayBytes(const SharedArray &array) {
  return llvm::alignTo(array.second * llvm::divideCeil(array.first.getIntOrFloatBitWidth(), 8),
                       16);
}

SmallVector<Value> sharedArrays(OpBuilder &b, Location loc, ArrayRef<SharedArray> arrays) {
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value raw = gpu::DynamicSharedMemoryOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(),
                              workgroup));
  SmallVector<Value> views;
  int64_t offset = 0;
  for (const SharedArray &array : arrays) {
    auto type = MemRefType::get({array.second}, array.first, MemRefLayoutAttrInterface(),
                                workgroup);
    views.push_back(
        memref::ViewOp::create(b, loc, type, raw, indexConstant(b, loc, offset), ValueRange{}));
    offset += sharedArrayBytes(array);
  }
  return views;
}

int64_t sharedArraysBytes(ArrayRef<SharedArray> arrays) {
  int64_t bytes = 0;
  for (const SharedArray &array : arrays)
    bytes += sharedArrayBytes(array);
  return bytes;
}

/// A gpu.launch of `grid` x `block` threads (1-D) whose body `fn` builds.
void buildLaunch(OpBuilder &b, Location loc, Value grid, Value block,
                 function_ref<void(OpBuilder &, gpu::LaunchOp)> fn, Value sharedBytes,
                 Value cluster) {
  Value one = indexConstant(b, loc, 1);
  auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, block, one, one, sharedBytes,
                                      /*asyncTokenType=*/nullptr,
                                      /*asyncDependencies=*/ValueRange(),
                                      /*workgroupAttributions=*/TypeRange(),
                                      /*privateAttributions=*/TypeRange(), cluster,
                                      cluster ? one : Value(), cluster ? one : Value());
  OpBuilder::InsertionGuard guard(b);
  Block *body = &launch.getBody().front();
  // The builder leaves out the region's cluster ids and sizes, which the
  // parser, printer, attributions and outlining expect after the first 12
  // arguments when the launch has clusters.
  if (cluster)
    for (unsigned i = 0; i < 6; ++i)
      body->insertArgument(gpu::LaunchOp::kNumConfigRegionAttributes + i, b.getIndexType(),
                           loc);
  b.setInsertionPointToStart(body);
  fn(b, launch);
  b.setInsertionPointToEnd(body);
  gpu::TerminatorOp::create(b, loc);
}

/// A launch of blocks of `block` threads covering `work` items, `perBlock`
/// per block (the grid capped at the hardware's limit: the body strides over
/// the rest), built only when there is work.
void buildLaunchOver(OpBuilder &b, Location loc, Value work, Value perBlock, Value block,
                     function_ref<void(OpBuilder &, gpu::LaunchOp)> fn, Value sharedBytes) {
  Value grid = arith::CeilDivUIOp::create(b, loc, work, perBlock);
  grid = arith::MinUIOp::create(b, loc, grid, indexConstant(b, loc, (int64_t(1) << 31) - 1));
  Value nonEmpty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, work,
                                         indexConstant(b, loc, 0));
  auto guard = scf::IfOp::create(b, loc, nonEmpty, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard insertion(b);
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  buildLaunch(b, loc, grid, block, fn, sharedBytes);
}

void buildVectorsIfFit(OpBuilder &b, Location loc, Value fits, int64_t lanes,
                       function_ref<void(OpBuilder &, int64_t)> build) {
  if (lanes <= 1) {
    build(b, 1);
    return;
  }
  auto choice = scf::IfOp::create(b, loc, fits, /*withElseRegion=*/true);
  OpBuilder vb = OpBuilder::atBlockBegin(&choice.getThenRegion().front());
  build(vb, lanes);
  OpBuilder sb = OpBuilder::atBlockBegin(&choice.getElseRegion().front());
  build(sb, 1);
}

/// Whether iterations of `body` can be interleaved op by op: straight-line


/// The identity of `combine`'s kind, or null when it has no shuffle-friendly
/// one (kinds other than sums, minima and maxima; types other than f32, i32).
Value reductionIdentity(OpBuilder &b, Location loc, Operation *combine) {
  Type t = combine->getResult(0).getType();
  if (t.isF32()) {
    auto f = [&](float v) {
      return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)).getResult();
    };
    if (isa<arith::AddFOp>(combine))
      return f(0.0f);
    if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine))
      return f(-std::numeric_limits<float>::infinity());
    if (isa<arith::MinimumFOp, arith::MinNumFOp>(combine))
      return f(std::numeric_limits<float>::infinity());
    return {};
  }
  if (t.isInteger(32)) {
    auto i = [&](int64_t v) {
      return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v)).getResult();
    };
    if (isa<arith::AddIOp>(combine))
      return i(0);
    if (isa<arith::MaxSIOp>(combine))
      return i(std::numeric_limits<int32_t>::min());
    if (isa<arith::MinSIOp>(combine))
      return i(std::numeric_limits<int32_t>::max());
    return {};
  }
  return {};
}

FoldLoop FoldLoop::dynCast(Operation *op) {
  if (auto loop = dyn_cast_or_null<scf::ForOp>(op))
    return loop;
  if (auto loop = dyn_cast_or_null<fold::ForOp>(op))
    return loop;
  return {};
}

/// `f` applied to whichever kind of loop `loop` is.
template <typename Fn>
static auto visitLoop(Operation *loop, Fn f) {
  if (auto fold = dyn_cast<fold::ForOp>(loop))
    return f(fold);
  return f(cast<scf::ForOp>(loop));
}

Value FoldLoop::getLowerBound() const {
  return visitLoop(op, [](auto l) -> Value { return l.getLowerBound(); });
}
Value FoldLoop::getUpperBound() const {
  return visitLoop(op, [](auto l) -> Value { return l.getUpperBound(); });
}
Value FoldLoop::getStep() const {
  return visitLoop(op, [](auto l) -> Value { return l.getStep(); });
}
Value FoldLoop::getInductionVar() const {
  return visitLoop(op, [](auto l) -> Value { return l.getInductionVar(); });
}
Block *FoldLoop::getBody() const { return &op->getRegion(0).front(); }
Block::BlockArgListType FoldLoop::getRegionIterArgs() const {
  return getBody()->getArguments().drop_front();
}
OperandRange FoldLoop::getInitArgs() const {
  return visitLoop(op, [](auto l) -> OperandRange { return l.getInitArgs(); });
}

/// Whether `loop` can be a fold: accumulators, a positive constant step,
/// iterations independent but for the accumulators (no writes, no
/// regions).
static bool foldsIndependently(FoldLoop loop) {
  if (loop.getNumResults() == 0 || !getConstantIntValue(loop.getStep()))
    return false;
  if (*getConstantIntValue(loop.getStep()) <= 0)
    return false;
  for (Operation &op : loop.getBody()->without_terminator())
    if (op.getNumRegions() != 0 || !(isa<memref::LoadOp>(op) || isMemoryEffectFree(&op)))
      return false;
  return true;
}

std::optional<LaneReduction> matchCarriedFold(FoldLoop loop, fold::ForOp stating) {
  if (!foldsIndependently(loop))
    return std::nullopt;
  // The step is every op that depends on an accumulator; each
  // accumulator's next value comes from it.
  Operation *yield = loop.getBody()->getTerminator();
  LaneReduction r;
  r.loop = loop;
  r.merge = &stating.getMerge();
  llvm::SmallPtrSet<Operation *, 8> inStep;
  auto fromStep = [&](Value v) {
    return llvm::is_contained(loop.getRegionIterArgs(), v) || inStep.contains(v.getDefiningOp());
  };
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (!llvm::any_of(op.getOperands(), fromStep))
      continue;
    if (isa<memref::LoadOp>(op))
      return std::nullopt; // an address computed from an accumulator
    inStep.insert(&op);
    r.step.push_back(&op);
  }
  for (Value v : yield->getOperands())
    if (!inStep.contains(v.getDefiningOp()))
      return std::nullopt;
  for (Operation *op : r.step)
    for (Value v : op->getOperands())
      if (!fromStep(v) && !llvm::is_contained(r.stepInputs, v))
        r.stepInputs.push_back(v);
  // The value of a maximum-and-sum-of-exp fold: the other operand of the
  // step's maximum of m.
  Value m = loop.getRegionIterArgs()[0];
  if (stating.getMaxSumExp() && loop.getOperation() == stating.getOperation()) {
    auto isMaxOfM = [&](Operation *op) {
      return isa<arith::MaximumFOp>(op) && llvm::is_contained(op->getOperands(), m);
    };
    if (auto max = llvm::find_if(r.step, isMaxOfM); max != r.step.end()) {
      Value v = (*max)->getOperand(0) == m ? (*max)->getOperand(1) : (*max)->getOperand(0);
      if (auto at = llvm::find(r.stepInputs, v); at != r.stepInputs.end())
        r.maxSumExpValue = at - r.stepInputs.begin();
    }
  }
  return r;
}

std::optional<LaneReduction> matchFold(FoldLoop loop) {
  if (fold::ForOp carried = loop.getFoldFor()) {
    // The init values (the identities) are constants.
    std::optional<LaneReduction> r = matchCarriedFold(loop, carried);
    if (!r || !llvm::all_of(loop.getInitArgs(), [](Value init) {
          return static_cast<bool>(init.getDefiningOp<arith::ConstantOp>());
        }))
      return std::nullopt;
    return r;
  }
  if (!foldsIndependently(loop))
    return std::nullopt;
  Operation *yield = loop.getBody()->getTerminator();

  if (loop.getNumResults() != 1)
    return std::nullopt;
  Value acc = loop.getRegionIterArgs()[0];
  Value yielded = yield->getOperand(0);
  Operation *combine = yielded.getDefiningOp();
  if (!combine || combine->getBlock() != loop.getBody() || combine->getNumOperands() != 2 ||
      !acc.hasOneUse() || *acc.getUsers().begin() != combine || !yielded.hasOneUse())
    return std::nullopt;
  OpBuilder probe(loop->getContext());
  auto scratch = ModuleOp::create(probe, loop.getLoc());
  probe.setInsertionPointToStart(scratch.getBody());
  bool known = static_cast<bool>(reductionIdentity(probe, loop.getLoc(), combine));
  scratch->erase();
  if (!known)
    return std::nullopt;
  unsigned accOperand = combine->getOperand(0) == acc ? 0u : 1u;
  LaneReduction r;
  r.loop = loop;
  r.combine = combine;
  r.accOperand = accOperand;
  r.step.push_back(combine);
  r.stepInputs.push_back(combine->getOperand(1 - accOperand));
  return r;
}

SmallVector<Value> identitiesOf(OpBuilder &b, Location loc, const LaneReduction &r) {
  if (r.combine)
    return {reductionIdentity(b, loc, r.combine)};
  return llvm::map_to_vector(r.loop.getInitArgs(), [&](Value init) -> Value {
    return b.clone(*init.getDefiningOp())->getResult(0);
  });
}

std::optional<LaneReduction> matchLaneReduction(scf::ForOp loop) {
  std::optional<LaneReduction> fold = matchFold(loop);
  if (!fold || !fold->combine)
    return std::nullopt;
  // Lanes must read neighbouring addresses: the loop walks the contiguous
  // (last, unit-stride) dimension of what it loads and no other. A column
  // reduction is split by chunks of rows instead (SplitReductions.cpp).
  Value iv = loop.getInductionVar();
  auto variesInLoop = [&](Value v) {
    return v == iv || (v.getDefiningOp() && v.getDefiningOp()->getBlock() == loop.getBody());
  };
  bool contiguous = false;
  for (auto load : loop.getBody()->getOps<memref::LoadOp>()) {
    auto indices = load.getIndices();
    if (indices.empty())
      continue;
    for (Value index : indices.drop_back())
      if (variesInLoop(index))
        return std::nullopt;
    if (!variesInLoop(indices.back()))
      continue;
    auto [strides, offset] = load.getMemRefType().getStridesAndOffset();
    if (indices.back() != iv || strides.empty() || strides.back() != 1)
      return std::nullopt;
    contiguous = true;
  }
  if (!contiguous)
    return std::nullopt;
  return fold;
}

Value memrefOf(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return load.getMemRef();
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return store.getMemRef();
  return {};
}

ValueRange indicesOf(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return load.getIndices();
  return llvm::cast<memref::StoreOp>(op).getIndices();
}

bool isInvariantIn(Value v, Operation *loop) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return !loop->isAncestor(llvm::cast<BlockArgument>(v).getOwner()->getParentOp());
  if (!loop->isAncestor(def))
    return true;
  if (def->getNumRegions() != 0 || !isMemoryEffectFree(def))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value o) { return isInvariantIn(o, loop); });
}

/// Clones (recorded in `m`) of the ops inside `loop` that compute `v`,
/// which isInvariantIn has accepted.
static Value cloneInvariant(OpBuilder &host, Value v, Operation *loop, IRMapping &m) {
  if (Value done = m.lookupOrNull(v))
    return done;
  Operation *def = v.getDefiningOp();
  if (!def || !loop->isAncestor(def))
    return v;
  for (Value operand : def->getOperands())
    cloneInvariant(host, operand, loop, m);
  Operation *clone = host.clone(*def, m);
  return clone->getResult(llvm::cast<OpResult>(v).getResultNumber());
}

Value hoistOutOf(OpBuilder &host, Value v, Operation *loop, IRMapping &m) {
  if (Value done = m.lookupOrNull(v))
    return done;
  return isInvariantIn(v, loop) ? cloneInvariant(host, v, loop, m) : Value();
}

/// The trip count of each dimension of `loop` (0 when empty), built as
/// host code before it, and their product.
std::pair<SmallVector<Value>, Value> tripCounts(OpBuilder &b, scf::ParallelOp loop) {
  return tripCounts(b, loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
}

std::pair<SmallVector<Value>, Value> tripCounts(OpBuilder &b, Location loc, ValueRange lbs,
                                                ValueRange ubs, ValueRange steps) {
  SmallVector<Value> counts;
  // Folded as built, so a static trip count stays visible.
  Value total = indexConstant(b, loc, 1);
  Value zero = indexConstant(b, loc, 0);
  for (auto [lb, ub, step] : llvm::zip(lbs, ubs, steps)) {
    Value span = b.createOrFold<arith::SubIOp>(loc, ub, lb);
    Value count = b.createOrFold<arith::CeilDivUIOp>(loc, span, step);
    // An upper bound below the lower one is an empty loop.
    Value empty = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::ule, ub, lb);
    count = b.createOrFold<arith::SelectOp>(loc, empty, zero, count);
    counts.push_back(count);
    total = b.createOrFold<arith::MulIOp>(loc, total, count);
  }
  return {counts, total};
}

SmallVector<Value> delinearize(OpBuilder &b, Location loc, scf::ParallelOp loop,
                               ArrayRef<Value> counts, Value linear, unsigned leading) {
  unsigned rank = leading ? leading : loop.getNumLoops();
  Value rest = linear;
  SmallVector<Value> ivs(rank);
  for (int i = static_cast<int>(rank) - 1; i >= 0; --i) {
    Value k = i == 0 ? rest : arith::RemUIOp::create(b, loc, rest, counts[i]).getResult();
    if (i > 0)
      rest = arith::DivUIOp::create(b, loc, rest, counts[i]);
    ivs[i] = arith::AddIOp::create(b, loc, loop.getLowerBound()[i],
                                   arith::MulIOp::create(b, loc, k, loop.getStep()[i]));
  }
  return ivs;
}

bool equivalent(Value a, Value b, int depth) {
  if (a == b)
    return true;
  if (auto ca = getConstantIntValue(a), cb = getConstantIntValue(b); ca && cb)
    return *ca == *cb;
  Operation *oa = a.getDefiningOp(), *ob = b.getDefiningOp();
  if (depth == 0 || !oa || !ob || oa->getName() != ob->getName() ||
      oa->getAttrDictionary() != ob->getAttrDictionary() ||
      oa->getNumOperands() != ob->getNumOperands() || oa->getNumRegions() != 0 ||
      ob->getNumRegions() != 0 || !isMemoryEffectFree(oa) ||
      llvm::cast<OpResult>(a).getResultNumber() != llvm::cast<OpResult>(b).getResultNumber())
    return false;
  for (auto [x, y] : llvm::zip(oa->getOperands(), ob->getOperands()))
    if (!equivalent(x, y, depth - 1))
      return false;
  return true;
}

bool sameBounds(scf::ParallelOp a, scf::ParallelOp b, unsigned rank) {
  if (a.getNumLoops() < rank || b.getNumLoops() < rank)
    return false;
  for (unsigned i = 0; i < rank; ++i)
    if (!equivalent(a.getLowerBound()[i], b.getLowerBound()[i]) ||
        !equivalent(a.getUpperBound()[i], b.getUpperBound()[i]) ||
        !equivalent(a.getStep()[i], b.getStep()[i]))
      return false;
  return true;
}

scf::ParallelOp nextLoopOverSameIterations(scf::ParallelOp loop, bool pastAllocations) {
  Operation *next = loop->getNextNode();
  while (next && !isa<scf::ParallelOp>(next) &&
         (isMemoryEffectFree(next) || (pastAllocations && isa<memref::AllocOp>(next))))
    next = next->getNextNode();
  auto following = dyn_cast_or_null<scf::ParallelOp>(next);
  unsigned rank = loop.getNumLoops();
  if (!following || following.getNumLoops() != rank || !sameBounds(loop, following, rank))
    return {};
  return following;
}

void prependBody(scf::ParallelOp producer, scf::ParallelOp consumer) {
  for (auto [from, to] : llvm::zip(producer.getInductionVars(), consumer.getInductionVars()))
    from.replaceAllUsesWith(to);
  Block *body = consumer.getBody();
  Block *moved = producer.getBody();
  body->getOperations().splice(body->begin(), moved->getOperations(), moved->begin(),
                               std::prev(moved->end()));
  producer.erase();
}

/// The ops of `block` cloned with its arguments bound to `args`: the values
/// its terminator returns.
static SmallVector<Value> cloneBody(OpBuilder &b, Block &block, ValueRange args) {
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    b.clone(op, mapping);
  return mapped(mapping, block.getTerminator()->getOperands());
}

Value combineWith(OpBuilder &b, Region &combine, Value lhs, Value rhs) {
  return cloneBody(b, combine.front(), {lhs, rhs}).front();
}

SmallVector<Value> combineEach(OpBuilder &b, scf::ReduceOp reduce, ValueRange acc,
                               ValueRange values) {
  SmallVector<Value> next;
  for (auto [k, pair] : llvm::enumerate(llvm::zip(acc, values)))
    next.push_back(
        combineWith(b, reduce.getReductions()[k], std::get<0>(pair), std::get<1>(pair)));
  return next;
}

/// `reduction.combine` applied to (`acc`, `value`), as the loop applies it.
Value combineAs(OpBuilder &b, const LaneReduction &r, Value acc, Value value) {
  IRMapping m;
  m.map(r.combine->getOperand(r.accOperand), acc);
  m.map(r.combine->getOperand(1 - r.accOperand), value);
  return b.clone(*r.combine, m)->getResult(0);
}

SmallVector<Value> stepAs(OpBuilder &b, const LaneReduction &r, ValueRange acc,
                          ValueRange inputs) {
  IRMapping m;
  m.map(r.loop.getRegionIterArgs(), acc);
  m.map(r.stepInputs, inputs);
  for (Operation *op : r.step)
    b.clone(*op, m);
  return mapped(m, r.loop.getBody()->getTerminator()->getOperands());
}

SmallVector<Value> mergePartials(OpBuilder &b, const LaneReduction &r, ValueRange lhs,
                                 ValueRange rhs) {
  if (r.combine)
    return {combineAs(b, r, lhs[0], rhs[0])};
  SmallVector<Value> args(lhs);
  llvm::append_range(args, rhs);
  return cloneBody(b, r.merge->front(), args);
}

/// Iterations of the `inFlight` loaded together that a maximum-and-sum-of-
/// exp fold takes as one block, given the folds a thread runs side by side
/// (`width`). Measured on an H200 against the step-by-step fold (f16
/// softmax over dim 0 and f32 softmax of a column-major view, three
/// shapes each): 16-bit vectors (eight folds) in blocks of 8 rows 5-11%
/// faster, of 4 between 3% slower and 6% faster, of 2 3-8% faster; f32
/// vectors (four folds) in blocks of 4 rows 1-2% faster, of 8 5-6% slower
/// (74 registers against 48).
static int64_t maxSumExpBlockRows(int64_t width, int64_t inFlight) {
  return width >= 8 ? inFlight : std::min<int64_t>(inFlight, 4);
}

/// `values` combined pairwise, level by level: a dependence chain of
/// log2(their count) ops.
static Value pairwise(SmallVector<Value> level, function_ref<Value(Value, Value)> combine) {
  while (level.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2)
      next.push_back(combine(level[i], level[i + 1]));
    if (level.size() % 2)
      next.push_back(level.back());
    level = std::move(next);
  }
  return level.front();
}

void foldMaxSumExpBlock(OpBuilder &b, Location loc, MutableArrayRef<Value> acc,
                        ArrayRef<Value> values) {
  Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
  Value blockMax = pairwise(SmallVector<Value>(values), [&](Value x, Value y) -> Value {
    return arith::MaximumFOp::create(b, loc, x, y);
  });
  Value max = arith::MaximumFOp::create(b, loc, acc[0], blockMax);
  // exp(x - max), 1 where x equals it (both infinite included), as the
  // online merge takes it.
  auto scaled = [&](Value x) -> Value {
    Value same = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, max);
    Value e = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, max));
    return arith::SelectOp::create(b, loc, same, one, e);
  };
  Value blockSum = pairwise(llvm::map_to_vector(values, scaled), [&](Value x, Value y) -> Value {
    return arith::AddFOp::create(b, loc, x, y);
  });
  Value rescaled = arith::MulFOp::create(b, loc, acc[1], scaled(acc[0]));
  acc[1] = arith::AddFOp::create(b, loc, rescaled, blockSum);
  acc[0] = max;
}

SmallVector<Value> stridedPartials(OpBuilder &b, Location loc, const LaneReduction &r, Value lb,
                                   Value ub, Value step, Value lane, Value lanes, int64_t width,
                                   function_ref<SmallVector<Value>(OpBuilder &, Value)> valuesAt,
                                   int64_t kUnroll, bool inOrder, FoldOf of) {
  // Fold j's tuple of n accumulators is at j * n (partial u's at
  // (u * width + j) * n); its values at j * in.
  size_t n = r.numAccumulators();
  size_t in = of == FoldOf::Partials ? n : r.stepInputs.size();
  auto fold = [&](OpBuilder &fb, MutableArrayRef<Value> acc, ArrayRef<Value> values) {
    SmallVector<Value> next =
        of == FoldOf::Partials ? mergePartials(fb, r, acc, values) : stepAs(fb, r, acc, values);
    llvm::copy(next, acc.begin());
  };
  SmallVector<Value> identity = identitiesOf(b, loc, r);
  Value zero = indexConstant(b, loc, 0), one = indexConstant(b, loc, 1);
  Value span = arith::SubIOp::create(b, loc, arith::MaxSIOp::create(b, loc, ub, lb), lb);
  Value laneStep = arith::MulIOp::create(b, loc, step, lanes);
  Value chunk = arith::MulIOp::create(b, loc, laneStep, indexConstant(b, loc, kUnroll));
  Value full = arith::DivUIOp::create(b, loc, span, chunk);
  Value laneOffset = arith::MulIOp::create(b, loc, lane, step);

  // Whole chunks, no bounds checks: kUnroll independent partials per fold,
  // or with `inOrder` one, which takes the chunk's iterations in order once
  // all their values are loaded.
  int64_t partialsPerFold = inOrder ? 1 : kUnroll;
  SmallVector<Value> inits;
  for (int64_t p = 0; p < partialsPerFold * width; ++p)
    inits.append(identity);
  auto main = scf::ForOp::create(b, loc, zero, full, one, inits);
  {
    OpBuilder mb = OpBuilder::atBlockBegin(main.getBody());
    Value base = arith::AddIOp::create(
        mb, loc, lb,
        arith::AddIOp::create(mb, loc, arith::MulIOp::create(mb, loc, main.getInductionVar(), chunk),
                              laneOffset));
    SmallVector<Value> next(main.getRegionIterArgs());
    SmallVector<SmallVector<Value>> values;
    auto combineIteration = [&](int64_t u) {
      for (int64_t j = 0; j < width; ++j)
        fold(mb, MutableArrayRef<Value>(next).slice(((u % partialsPerFold) * width + j) * n, n),
             ArrayRef<Value>(values[u]).slice(j * in, in));
    };
    for (int64_t u = 0; u < kUnroll; ++u) {
      Value iv = u == 0 ? base
                        : arith::AddIOp::create(
                              mb, loc, base,
                              arith::MulIOp::create(mb, loc, laneStep, indexConstant(mb, loc, u)))
                              .getResult();
      values.push_back(valuesAt(mb, iv));
      if (!inOrder)
        combineIteration(u);
    }
    if (inOrder && r.maxSumExpValue && of == FoldOf::Inputs) {
      int64_t blockRows = maxSumExpBlockRows(width, kUnroll);
      for (int64_t j = 0; j < width; ++j) {
        for (int64_t u0 = 0; u0 < kUnroll; u0 += blockRows) {
          SmallVector<Value> block;
          for (int64_t u = u0; u < std::min(kUnroll, u0 + blockRows); ++u)
            block.push_back(values[u][j * in + *r.maxSumExpValue]);
          foldMaxSumExpBlock(mb, loc, MutableArrayRef<Value>(next).slice(j * n, n), block);
        }
      }
    } else if (inOrder) {
      for (int64_t u = 0; u < kUnroll; ++u)
        combineIteration(u);
    }
    scf::YieldOp::create(mb, loc, next);
  }
  // The tail, one iteration at a time.
  Value tailStart = arith::AddIOp::create(
      b, loc, lb,
      arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, full, chunk), laneOffset));
  auto tail = scf::ForOp::create(b, loc, tailStart, ub, laneStep,
                                 main.getResults().take_front(width * n));
  {
    OpBuilder tb = OpBuilder::atBlockBegin(tail.getBody());
    SmallVector<Value> values = valuesAt(tb, tail.getInductionVar());
    SmallVector<Value> next(tail.getRegionIterArgs());
    for (int64_t j = 0; j < width; ++j)
      fold(tb, MutableArrayRef<Value>(next).slice(j * n, n),
           ArrayRef<Value>(values).slice(j * in, in));
    scf::YieldOp::create(tb, loc, next);
  }
  SmallVector<Value> partials(tail.getResults());
  for (int64_t u = 1; u < partialsPerFold; ++u)
    for (int64_t j = 0; j < width; ++j) {
      MutableArrayRef<Value> acc = MutableArrayRef<Value>(partials).slice(j * n, n);
      llvm::copy(mergePartials(b, r, acc, main.getResults().slice((u * width + j) * n, n)),
                 acc.begin());
    }
  return partials;
}

Value stridedPartial(OpBuilder &b, Location loc, const LaneReduction &r, Value lb, Value ub,
                     Value step, Value lane, Value lanes,
                     function_ref<Value(OpBuilder &, Value)> valueAt, int64_t kUnroll) {
  return stridedPartials(
      b, loc, r, lb, ub, step, lane, lanes, 1,
      [&](OpBuilder &vb, Value iv) { return SmallVector<Value>{valueAt(vb, iv)}; }, kUnroll)[0];
}

Value warpButterfly(OpBuilder &b, Location loc, const LaneReduction &r, Value partial,
                    Value groupLanes) {
  for (int32_t offset = kWarpSize / 2; offset >= 1; offset /= 2) {
    Value other = gpu::ShuffleOp::create(b, loc, partial, offset, kWarpSize, gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    Value combined = combineAs(b, r, partial, other);
    if (groupLanes)
      combined =
          arith::SelectOp::create(b, loc,
                                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                                        indexConstant(b, loc, offset), groupLanes),
                                  combined, partial);
    partial = combined;
  }
  return partial;
}

Value workgroupArray(gpu::LaunchOp launch, Type element, int64_t length, Location loc) {
  auto workgroup = gpu::AddressSpaceAttr::get(element.getContext(), gpu::AddressSpace::Workgroup);
  return launch.addWorkgroupAttribution(
      MemRefType::get({length}, element, MemRefLayoutAttrInterface(), workgroup), loc);
}

Value blockCombine(OpBuilder &b, Location loc, const LaneReduction &r, Value partial,
                   Value scratch, Value warp, Value isLaneZero, Value warps) {
  auto leader = scf::IfOp::create(b, loc, isLaneZero, /*withElseRegion=*/false);
  {
    OpBuilder lb = OpBuilder::atBlockBegin(&leader.getThenRegion().front());
    memref::StoreOp::create(lb, loc, partial, scratch, ValueRange{warp});
  }
  gpu::BarrierOp::create(b, loc);
  Value one = indexConstant(b, loc, 1);
  Value total = memref::LoadOp::create(b, loc, scratch, ValueRange{indexConstant(b, loc, 0)});
  auto fold = scf::ForOp::create(b, loc, one, warps, one, ValueRange{total});
  {
    OpBuilder fb = OpBuilder::atBlockBegin(fold.getBody());
    Value v = memref::LoadOp::create(fb, loc, scratch, ValueRange{fold.getInductionVar()});
    scf::YieldOp::create(fb, loc, combineAs(fb, r, fold.getRegionIterArgs()[0], v));
  }
  gpu::BarrierOp::create(b, loc);
  return fold.getResult(0);
}

bool tripCountHoistable(FoldLoop inner, Operation *loop) {
  return isInvariantIn(inner.getLowerBound(), loop) && isInvariantIn(inner.getUpperBound(), loop) &&
         isInvariantIn(inner.getStep(), loop);
}

Value hostTripCount(OpBuilder &host, FoldLoop inner, Operation *loop, IRMapping &m) {
  Value lb = hoistOutOf(host, inner.getLowerBound(), loop, m);
  Value ub = hoistOutOf(host, inner.getUpperBound(), loop, m);
  Value step = hoistOutOf(host, inner.getStep(), loop, m);
  if (!lb || !ub || !step)
    return {};
  Location loc = inner.getLoc();
  Value span = arith::SubIOp::create(host, loc, arith::MaxSIOp::create(host, loc, ub, lb), lb);
  return arith::CeilDivUIOp::create(host, loc, span, step);
}

scf::ParallelOp collapseNested(scf::ParallelOp outer) {
  while (outer.getNumResults() == 0) {
    Block *body = outer.getBody();
    scf::ParallelOp inner;
    SmallVector<Operation *> prefix;
    for (Operation &op : body->without_terminator()) {
      auto nested = dyn_cast<scf::ParallelOp>(op);
      if (nested && !inner) {
        inner = nested;
        continue;
      }
      if (inner || op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
        return outer;
      for (Value v : op.getOperands())
        if (llvm::is_contained(outer.getInductionVars(), v))
          return outer;
      prefix.push_back(&op);
    }
    if (!inner || inner.getNumResults() != 0)
      return outer;
    auto outside = [&](Value v) { return !outer->isAncestor(v.getParentBlock()->getParentOp()) ||
                                         llvm::any_of(prefix, [&](Operation *op) {
                                           return v.getDefiningOp() == op;
                                         }); };
    for (ValueRange bounds : {inner.getLowerBound(), inner.getUpperBound(), inner.getStep()})
      if (!llvm::all_of(bounds, outside))
        return outer;
    for (Operation *op : prefix)
      op->moveBefore(outer);
    OpBuilder b(outer);
    auto concat = [](ValueRange a, ValueRange c) {
      SmallVector<Value> all(a);
      all.append(c.begin(), c.end());
      return all;
    };
    auto merged = scf::ParallelOp::create(
        b, outer.getLoc(), concat(outer.getLowerBound(), inner.getLowerBound()),
        concat(outer.getUpperBound(), inner.getUpperBound()),
        concat(outer.getStep(), inner.getStep()));
    Block *mergedBody = merged.getBody();
    unsigned outerRank = outer.getNumLoops();
    for (auto [i, iv] : llvm::enumerate(outer.getInductionVars()))
      iv.replaceAllUsesWith(mergedBody->getArgument(i));
    for (auto [i, iv] : llvm::enumerate(inner.getInductionVars()))
      iv.replaceAllUsesWith(mergedBody->getArgument(outerRank + i));
    Block *innerBody = inner.getBody();
    mergedBody->getOperations().splice(mergedBody->getTerminator()->getIterator(),
                                       innerBody->getOperations(), innerBody->begin(),
                                       std::prev(innerBody->end()));
    outer.erase();
    outer = merged;
  }
  return outer;
}

bool staysOnHost(Operation *op) {
  if (isa<memref::AllocOp, memref::DeallocOp, func::ReturnOp>(op))
    return true;
  return isMemoryEffectFree(op);
}

} // namespace nerve::loop_mapping
