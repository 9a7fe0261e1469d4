//===- TimeLoops.cpp - the loops every neuron lowering builds -----------===//
//
// The per-neuron time loop runs in blocks of steps whose loads are issued
// together: the recurrence is sequential, its inputs are not, and a GPU
// thread needs several loads in flight to approach the memory bandwidth.
//
//===----------------------------------------------------------------------===//

#include "TimeLoops.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace nerve;

/// The dimensions of `seq` other than `time`, in its layout order.
SmallVector<DimAttr> nerve::neuronDims(Value seq, DimAttr time) {
  return tdim::dimsWithout(llvm::cast<TdimTensorType>(seq.getType()), {time});
}

/// Nested parallel tdim.for loops over `dims` (extents from `source`); `body`
/// runs in the innermost with the index of each dimension.
void nerve::buildParallelNest(OpBuilder &b, Location loc, Value source, ArrayRef<DimAttr> dims,
                       function_ref<void(OpBuilder &, ValueRange)> body,
                       SmallVector<Value> ivs) {
  if (ivs.size() == dims.size()) {
    body(b, ivs);
    return;
  }
  DimAttr d = dims[ivs.size()];
  auto indexType = tdim::TdimIndexType::get(b.getContext(), d);
  Value zero = tdim::ConstOp::create(b, loc, indexType, b.getI64IntegerAttr(0));
  Value size = tdim::buildSize(b, loc, source, d);
  auto loop = tdim::ForOp::create(b, loc, zero, size, ValueRange{}, /*parallel=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBodyBlock()->getTerminator());
  ivs.push_back(loop.getInductionVar());
  buildParallelNest(b, loc, source, dims, body, ivs);
}

SmallVector<Value> nerve::withTime(ValueRange neuron, Value t) {
  SmallVector<Value> indices(neuron);
  indices.push_back(t);
  return indices;
}

SmallVector<Value> nerve::buildTimeLoop(OpBuilder &b, Location loc, DimAttr time, Value steps,
                                 ValueRange inits, int64_t block, bool reverse, LoadFn load,
                                 ComputeFn compute, bool pipeline) {
  MLIRContext *ctx = b.getContext();
  auto timeType = tdim::TdimIndexType::get(ctx, time);
  auto timeConst = [&](OpBuilder &b, int64_t v) -> Value {
    return tdim::ConstOp::create(b, loc, timeType, b.getI64IntegerAttr(v));
  };
  Value zero = timeConst(b, 0);

  // `cond ? a : b` for two indices of `time` (selected as plain indices).
  auto selectIndex = [&](OpBuilder &b, Value cond, Value x, Value y) -> Value {
    Value a = tdim::ToIndexOp::create(b, loc, x);
    Value other = tdim::ToIndexOp::create(b, loc, y);
    Value picked = arith::SelectOp::create(b, loc, cond, a, other);
    return tdim::FromIndexOp::create(b, loc, timeType, picked);
  };

  auto stepLoop = [&](Value lo, Value hi, ValueRange carried) -> SmallVector<Value> {
    auto loop = tdim::ForOp::create(b, loc, lo, hi, carried, /*parallel=*/false, reverse);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBodyBlock());
    Value t = loop.getInductionVar();
    StepValues loaded = load(b, t);
    tdim::YieldOp::create(
        b, loc, compute(b, t, loaded, nullptr, /*mayBeFirst=*/true, loop.getRegionIterArgs()));
    return SmallVector<Value>(loop.getResults());
  };
  if (block <= 1)
    return stepLoop(zero, steps, inits);

  auto blockType = tdim::TdimIndexType::get(
      ctx, DimAttr::get(ctx, time.getName().getValue(), time.getFactor() * block));
  Value blocks = tdim::FoldOp::create(b, loc, blockType, steps);
  Value wholeEnd = tdim::UnfoldOp::create(b, loc, timeType, blocks);

  // The loads of the block starting at `base`, flattened step by step.
  unsigned perStep = 0;
  auto loadBlock = [&](OpBuilder &b, Value base) {
    SmallVector<Value> flat;
    SmallVector<StepValues> perK(block);
    for (int64_t i = 0; i < block; ++i) {
      int64_t k = reverse ? block - 1 - i : i;
      Value t = k ? tdim::AddOp::create(b, loc, timeType, base, timeConst(b, k)).getResult()
                  : base;
      perK[k] = load(b, t);
      perStep = perK[k].size();
    }
    for (const StepValues &v : perK)
      flat.append(v.begin(), v.end());
    return flat;
  };
  auto unflatten = [&](ValueRange flat, int64_t k) {
    return StepValues(flat.slice(k * perStep, perStep));
  };

  // Without pipelining: each block loads its own steps, then computes.
  auto plainBlockLoop = [&](ValueRange carried) -> SmallVector<Value> {
    auto loop = tdim::ForOp::create(b, loc, zero, wholeEnd, carried, /*parallel=*/false, reverse);
    loop.setStep(block);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBodyBlock());
    Value tb = loop.getInductionVar();
    SmallVector<Value> loaded = loadBlock(b, tb);
    SmallVector<Value> state(loop.getRegionIterArgs());
    for (int64_t i = 0; i < block; ++i) {
      int64_t k = reverse ? block - 1 - i : i;
      Value t = k ? tdim::AddOp::create(b, loc, timeType, tb, timeConst(b, k)).getResult() : tb;
      StepValues before;
      if (k > 0)
        before = unflatten(loaded, k - 1);
      state = compute(b, t, unflatten(loaded, k), k > 0 ? &before : nullptr,
                      /*mayBeFirst=*/k == 0, state);
    }
    tdim::YieldOp::create(b, loc, state);
    return SmallVector<Value>(loop.getResults());
  };

  auto pipelinedBlockLoop = [&](ValueRange carried) -> SmallVector<Value> {
    // Prologue: the first block's loads, when there is a whole block.
    Value hasBlocks = tdim::CmpOp::create(b, loc, tdim::CmpPredicate::gt, wholeEnd, zero);
    Value firstBase =
        reverse ? tdim::SubOp::create(b, loc, timeType, wholeEnd, timeConst(b, block)).getResult()
                : zero;
    // Built without results first: their number is known once the loads are.
    auto prologue = scf::IfOp::create(b, loc, hasBlocks, /*withElseRegion=*/true);
    Block *thenBlock = &prologue.getThenRegion().front();
    Block *elseBlock = &prologue.getElseRegion().front();
    thenBlock->getTerminator()->erase();
    elseBlock->getTerminator()->erase();
    SmallVector<Value> first;
    SmallVector<Type> types;
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(thenBlock);
      first = loadBlock(b, firstBase);
      scf::YieldOp::create(b, loc, first);
      b.setInsertionPointToEnd(elseBlock);
      SmallVector<Value> zeros;
      for (Value v : first) {
        types.push_back(v.getType());
        zeros.push_back(arith::ConstantOp::create(b, loc, b.getZeroAttr(v.getType())));
      }
      scf::YieldOp::create(b, loc, zeros);
    }
    auto typedPrologue = scf::IfOp::create(b, loc, types, hasBlocks, /*withElseRegion=*/true);
    typedPrologue.getThenRegion().takeBody(prologue.getThenRegion());
    typedPrologue.getElseRegion().takeBody(prologue.getElseRegion());
    prologue.erase();

    SmallVector<Value> inits(carried);
    llvm::append_range(inits, typedPrologue.getResults());
    auto loop = tdim::ForOp::create(b, loc, zero, wholeEnd, inits, /*parallel=*/false, reverse);
    loop.setStep(block);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBodyBlock());
    Value tb = loop.getInductionVar();
    unsigned numState = carried.size();
    ValueRange args = loop.getRegionIterArgs();
    ValueRange current = args.drop_front(numState);
    // The next block in walking order, or this one again after the last.
    Value nextBase;
    if (reverse) {
      Value more = tdim::CmpOp::create(b, loc, tdim::CmpPredicate::gt, tb, zero);
      Value before = tdim::SubOp::create(b, loc, timeType, tb, timeConst(b, block));
      nextBase = selectIndex(b, more, before, tb);
    } else {
      Value after = tdim::AddOp::create(b, loc, timeType, tb, timeConst(b, block));
      Value more = tdim::CmpOp::create(b, loc, tdim::CmpPredicate::lt, after, wholeEnd);
      nextBase = selectIndex(b, more, after, tb);
    }
    SmallVector<Value> next = loadBlock(b, nextBase);

    SmallVector<Value> state(args.take_front(numState));
    for (int64_t i = 0; i < block; ++i) {
      int64_t k = reverse ? block - 1 - i : i;
      Value t = k ? tdim::AddOp::create(b, loc, timeType, tb, timeConst(b, k)).getResult() : tb;
      StepValues here = unflatten(current, k);
      StepValues before;
      const StepValues *previous = nullptr;
      bool mayBeFirst = false;
      if (k > 0) {
        before = unflatten(current, k - 1);
        previous = &before;
      } else if (reverse) {
        // Step tb - 1 is the last of the next block (stale when tb = 0).
        before = unflatten(next, block - 1);
        previous = &before;
        mayBeFirst = true;
      } else {
        mayBeFirst = true;
      }
      state = compute(b, t, here, previous, mayBeFirst, state);
    }
    llvm::append_range(state, next);
    tdim::YieldOp::create(b, loc, state);
    return SmallVector<Value>(loop.getResults().take_front(numState));
  };
  auto blockLoop = [&](ValueRange carried) {
    return pipeline ? pipelinedBlockLoop(carried) : plainBlockLoop(carried);
  };
  if (reverse)
    return blockLoop(stepLoop(wholeEnd, steps, inits));
  return stepLoop(wholeEnd, steps, blockLoop(inits));
}


/// Bytes of an element of the tensor `seq`.
int64_t nerve::elementBytes(Value seq) {
  Type element = llvm::cast<TdimTensorType>(seq.getType()).getElementType();
  return std::max<int64_t>(llvm::divideCeil(element.getIntOrFloatBitWidth(), 8), 1);
}

/// Whether time is the contiguous dimension of `seq` (time-minor layouts).
/// Each thread then walks its own contiguous row, and the GPU mapping stages
/// the blocks of that walk through shared memory so that a block's threads
/// load and store them together, along rows (TransposedStaging.cpp); it
/// needs every block to load its own steps, so such loops are not
/// pipelined.
static bool timeIsContiguous(Value seq, DimAttr time) {
  auto type = llvm::cast<TdimTensorType>(seq.getType());
  std::optional<unsigned> position = type.getPosition(time);
  return position && type.getEffectiveStrides()[*position] == 1;
}

/// The facts of `seq`'s type a time block is chosen from.
SequenceFacts nerve::sequenceFacts(Value seq, DimAttr time) {
  SequenceFacts facts;
  facts.elementBytes = elementBytes(seq);
  facts.timeContiguous = timeIsContiguous(seq, time);
  auto type = llvm::cast<TdimTensorType>(seq.getType());
  if (int64_t size = type.getSize(time); !ShapedType::isDynamic(size))
    facts.steps = size;
  return facts;
}

bool nerve::pipelineBlocks(const SequenceFacts &facts, int64_t block, int64_t values,
                          int64_t maxValues) {
  if (facts.timeContiguous || values > maxValues)
    return false;
  return !facts.steps || *facts.steps > block;
}

/// Blocks of a time-contiguous walk span 256 bytes of each row (64 f32
/// steps, 128 f16). Each block of a row is read and written while every
/// other thread reads its own rows, a row apart: the more contiguous bytes
/// a row gives at once, the fewer DRAM pages each access opens. Measured
/// on an H200 (LIF f32 inference, [n, t], 1024 x 65536): 51% of the copy
/// bandwidth with 64-byte rows, 75% with 128 bytes, 85% with 256.
constexpr int64_t kContiguousBlockBytes = 256;

/// `automatic`, or the whole sequence when its type fixes it shorter: one
/// block then loads every step together. Steps after the last whole block
/// run one at a time with one load in flight a thread, so a short sequence
/// (SEW-ResNet's T = 4 under blocks of 16) would otherwise run entirely
/// that way.
static int64_t wholeShortSequence(int64_t automatic, const SequenceFacts &facts) {
  if (facts.steps && *facts.steps > 0 && *facts.steps < automatic)
    return *facts.steps;
  return automatic;
}

static int64_t contiguousBlock(const SequenceFacts &facts) {
  return std::clamp<int64_t>(kContiguousBlockBytes / facts.elementBytes, 1, kMaxTimeBlock);
}

/// The forward time block for `requested` (0: automatic). Automatic aims at
/// 64 bytes of loads of `x` in flight per thread, which measured best on an
/// H200 for f32 and f16 forward (one stream), pipelined.
int64_t nerve::chooseForwardBlock(int64_t requested, const SequenceFacts &facts) {
  if (requested > 0)
    return requested;
  int64_t block = facts.timeContiguous
                      ? contiguousBlock(facts)
                      : std::clamp<int64_t>(
                            llvm::PowerOf2Ceil(llvm::divideCeil(64, facts.elementBytes)), 1, 32);
  return wholeShortSequence(block, facts);
}

/// Backward loads up to four values a step (h, the two upstream gradients,
/// x when the derivatives need it). Automatic: blocks that load 64 bytes of
/// each of them, each block loading its own steps first, at most 96 loads
/// in flight per thread: f32 blocks of 16 steps (48-64 loads, 110-116
/// registers on sm_90, so 65536 neurons fit the H200 in one wave), 16-bit
/// ones of 32 steps when three streams are loaded (IF, LIF), of 16 with
/// four (PLIF). Measured on an H200 at 1024 x 65536: 16-step blocks against
/// 8 loaded one block ahead (the earlier choice): IF f32 training 82% of
/// the copy bandwidth against 77%; PLIF f16 69% against 50% (its
/// look-ahead took 212 registers, two waves); 32-step blocks for LIF f16:
/// 77.6% against 74.0% with 16, but f32 80% against 86%. Pipelining
/// 16-step blocks needs 206-255 registers; small blocks (at most 16 values)
/// are pipelined.
constexpr int64_t kBackwardStreamBytes = 64;
constexpr int64_t kBackwardLoads = 96;

int64_t nerve::chooseBackwardBlock(int64_t requested, const SequenceFacts &facts,
                                   int64_t streams) {
  if (requested > 0)
    return requested;
  uint64_t perStream = llvm::bit_floor(uint64_t(kBackwardStreamBytes / facts.elementBytes));
  uint64_t byLoads = llvm::bit_floor(uint64_t(kBackwardLoads / streams));
  int64_t block = facts.timeContiguous
                      ? contiguousBlock(facts)
                      : std::clamp<int64_t>(std::min(perStream, byLoads), 1, 64);
  return wholeShortSequence(block, facts);
}

tdim::ContractOp nerve::productFeeding(Value x, Operation *reader, Value spike) {
  auto product = llvm::dyn_cast_or_null<tdim::ContractOp>(tdim::soleWriterBefore(x, reader));
  if (!product || product.getAccumulate() || !product.getEpilogue().empty() ||
      tdim::writesBetween(product, reader))
    return {};
  if (llvm::cast<TdimTensorType>(spike.getType()).getElementType() !=
          llvm::cast<TdimTensorType>(x.getType()).getElementType() ||
      spike == product.getLhs() || spike == product.getRhs())
    return {};
  return product;
}
