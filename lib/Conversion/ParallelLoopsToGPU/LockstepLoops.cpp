//===- LockstepLoops.cpp - a block's threads walk a sequential loop together -===//
//
// A thread per iteration whose body walks a sequential loop, each step
// loading and storing a row's element (a neuron's time loop: step t reads
// x[t, n] and writes spike[t, n], v_seq[t, n], the threads of a block on
// neighbouring n), leaves every warp to run at its own pace: a block's warps
// drift apart by steps, and each row's segment of a block (1 KiB for 256 f32
// neurons) is reached 128 bytes at a time at different moments instead of
// all at once. With a barrier after each iteration of the walk (a time
// block: 16 steps), the warps stay on the same steps; thread-per-neuron LIF
// inference at 1024 x 65536 f32 moved 83% of the copy bandwidth on an H200
// without it and 90% with it (same kernel otherwise, hand-written probes,
// docs/decisions.md).
//
// The mapping: blocks take the iterations a block at a time, so every thread
// of a block runs the same number of them and reaches every barrier; a
// thread past the end repeats the last iteration, storing the values that
// iteration stores to the same places (so the body may read back what it
// stores only as readsWhatItWrites allows); the body's top-level
// sequential loops whose bounds are the same for every iteration, and
// whose accesses all walk rows along the innermost parallel index, end
// each of their iterations with a gpu.barrier. A reduction over
// such a loop (a neuron's parameter gradient, FuseReductions.cpp) walks the
// same way in its first kernel, each thread folding its own iterations.
//
//===----------------------------------------------------------------------===//

#include "LoopMapping.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace nerve::loop_mapping {

/// Whether every load and store in `op` with indices indexes its buffer's
/// contiguous dimension, its last, by `innermost` (and one of them does):
/// a block's threads then touch neighbouring elements of one row a step.
static bool walksRows(Operation *op, Value innermost) {
  bool any = false;
  WalkResult walk = op->walk([&](Operation *inner) {
    Value memref = memrefOf(inner);
    if (!memref)
      return WalkResult::advance();
    ValueRange indices = indicesOf(inner);
    if (indices.empty()) // a 0-d value every thread reads (a parameter)
      return isa<memref::LoadOp>(inner) ? WalkResult::advance() : WalkResult::interrupt();
    auto type = cast<MemRefType>(memref.getType());
    if (indices.back() != innermost || contiguousDim(type) != type.getRank() - 1)
      return WalkResult::interrupt();
    any = true;
    return WalkResult::advance();
  });
  return any && !walk.wasInterrupted();
}

Value rootBuffer(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

std::optional<OwnElements> ownElementsOf(scf::ParallelOp loop, Value root) {
  std::optional<OwnElements> own;
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    Value memref = memrefOf(op);
    if (!memref || rootBuffer(memref) != root)
      return WalkResult::advance();
    ValueRange indices = indicesOf(op);
    OwnElements here{memref, {}};
    for (Value iv : loop.getInductionVars()) {
      auto at = llvm::find(indices, iv);
      if (at == indices.end())
        return WalkResult::interrupt();
      here.positions.push_back(static_cast<unsigned>(std::distance(indices.begin(), at)));
    }
    if (own && (own->memref != here.memref || own->positions != here.positions))
      return WalkResult::interrupt();
    own = std::move(here);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return own;
}

/// Whether `loop`'s body loads from a buffer it stores to, unless each
/// iteration touches only its own elements of that buffer (ownElementsOf)
/// and every store to it comes in a top-level op of the body before every
/// load of it: a neuron's forward storing h_seq, then its backward reading
/// it back (FuseLockstepWalks.cpp). A thread repeating the last iteration
/// (buildWalk) then stores what that iteration's own thread stores, the same
/// values, before either reads any of them.
static bool readsWhatItWrites(scf::ParallelOp loop) {
  // Per buffer: the last top-level op storing to it, the first loading it.
  llvm::DenseMap<Value, unsigned> lastStore, firstLoad;
  unsigned position = 0;
  for (Operation &top : loop.getBody()->without_terminator()) {
    top.walk([&](Operation *op) {
      if (Value memref = memrefOf(op)) {
        Value root = rootBuffer(memref);
        if (isa<memref::LoadOp>(op))
          firstLoad.try_emplace(root, position);
        else
          lastStore[root] = position;
      }
    });
    ++position;
  }
  return llvm::any_of(lastStore, [&](auto stored) {
    auto load = firstLoad.find(stored.first);
    return load != firstLoad.end() &&
           (stored.second >= load->second || !ownElementsOf(loop, stored.first));
  });
}

/// The top-level sequential loops of `loop`'s body to run in lockstep;
/// empty when there are none or the body does anything but compute, load,
/// store and branch (a barrier must not be skipped by any thread).
static SmallVector<scf::ForOp> lockstepLoops(scf::ParallelOp loop) {
  SmallVector<scf::ForOp> loops;
  auto allowed = [](Operation *op) {
    if (isa<memref::LoadOp, memref::StoreOp, scf::ForOp, scf::IfOp, scf::YieldOp>(op) ||
        (op->getNumRegions() == 0 && isMemoryEffectFree(op)))
      return WalkResult::advance();
    return WalkResult::interrupt();
  };
  // The terminator (scf.reduce) is not run per iteration: the mapping folds.
  for (Operation &op : loop.getBody()->without_terminator())
    if (op.walk(allowed).wasInterrupted())
      return {};
  if (readsWhatItWrites(loop))
    return {};
  Value innermost = loop.getInductionVars().back();
  for (auto inner : loop.getBody()->getOps<scf::ForOp>()) {
    bool uniform = isInvariantIn(inner.getLowerBound(), loop) &&
                   isInvariantIn(inner.getUpperBound(), loop) &&
                   isInvariantIn(inner.getStep(), loop);
    if (uniform && walksRows(inner, innermost))
      loops.push_back(inner);
  }
  return loops;
}

bool walksInLockstep(scf::ParallelOp loop) { return !lockstepLoops(loop).empty(); }

/// The walk of `loop`'s iterations inside `launch` (blocks of `block`
/// threads): a block takes `block` consecutive iterations a time, striding
/// over the grid, so all its threads run the body as many times, and a
/// barrier ends each iteration of the `walks`' copies. A thread past the
/// end repeats the last iteration: it loads what that iteration loads and
/// stores the same values to the same places (lockstepLoops checks that the
/// body reads no buffer it stores to before it has stored all of it).
/// Guarding its stores instead measured 216 registers against 48 for f32 LIF
/// inference (LLVM then gives each store its own pointer increment), and a
/// second, guarded copy of the body for a last, partial block made cold
/// compiles 30-50% slower. `fold` gives the values carried to the next
/// iteration (from `inits`) from the body's copy, and whether the iteration
/// is the thread's own.
static ValueRange buildWalk(
    OpBuilder &ib, gpu::LaunchOp launch, scf::ParallelOp loop, ArrayRef<scf::ForOp> walks,
    ArrayRef<Value> counts, Value total, Value block, ValueRange inits,
    function_ref<SmallVector<Value>(OpBuilder &, IRMapping &, Value, ValueRange)> fold) {
  Location loc = loop.getLoc();
  Value first = arith::MulIOp::create(ib, loc, launch.getBlockIds().x, block);
  Value stride = arith::MulIOp::create(ib, loc, launch.getGridSize().x, block);
  Value last = arith::SubIOp::create(ib, loc, total, indexConstant(ib, loc, 1));
  auto blocks = scf::ForOp::create(ib, loc, first, total, stride, inits);
  OpBuilder lb = OpBuilder::atBlockBegin(blocks.getBody());
  Value linear = arith::AddIOp::create(lb, loc, blocks.getInductionVar(),
                                       launch.getThreadIds().x);
  Value own = inits.empty() ? Value()
                            : arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ult, linear,
                                                    total).getResult();
  IRMapping mapping;
  mapping.map(loop.getInductionVars(),
              delinearize(lb, loc, loop, counts, arith::MinUIOp::create(lb, loc, linear, last)));
  for (Operation &op : loop.getBody()->without_terminator())
    lb.clone(op, mapping);
  for (scf::ForOp walk : walks) {
    auto copy = cast<scf::ForOp>(mapping.lookup(walk.getOperation()));
    OpBuilder end = OpBuilder::atBlockTerminator(copy.getBody());
    gpu::BarrierOp::create(end, loc);
  }
  // With values to carry, the loop was built without a terminator.
  if (!inits.empty())
    scf::YieldOp::create(lb, loc, fold(lb, mapping, own, blocks.getRegionIterArgs()));
  return blocks.getResults();
}

/// Threads of a block that walks 16-bit rows. Such a neuron's forward
/// kernel takes 96 registers a thread (its pipelined time blocks of 32
/// steps), two blocks of 256 an SM: at 1024 x 65536 on an H200, 16-bit
/// inference moved 84.6-85.6% of the copy bandwidth with blocks of 128
/// against 83.5-84.5% with 256 (IF, LIF, PLIF; f16 and bf16), IF and LIF
/// training 81.0-82.8% against 80.4-80.9%, PLIF training 75.3-75.7%
/// against 76.2-76.3%; 64 and 512 threads were slower
/// (docs/decisions.md). PLIF's backward, whose kernel also folds `grad_w`,
/// went from 66.1% to 68.4-68.9% of the copy bandwidth (nerve-run's byte
/// count) with 128 threads against 256; 64 measured the same as 128.
constexpr int64_t kHalfRowThreads = 128;

/// Whether every floating-point element `loop`'s body loads or stores in
/// rows is 16-bit (and there is one); a 0-d parameter (PLIF's weight) is
/// not a row.
static bool walksHalfRows(scf::ParallelOp loop) {
  bool any = false;
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    Value memref = memrefOf(op);
    if (!memref || indicesOf(op).empty())
      return WalkResult::advance();
    Type element = cast<MemRefType>(memref.getType()).getElementType();
    if (!isa<FloatType>(element))
      return WalkResult::advance();
    any = true;
    return element.getIntOrFloatBitWidth() <= 16 ? WalkResult::advance()
                                                 : WalkResult::interrupt();
  });
  return any && !walk.wasInterrupted();
}

/// The threads a block of `loop`'s walks takes, at most `threads`.
static int64_t walkThreads(scf::ParallelOp loop, int64_t threads) {
  return walksHalfRows(loop) ? std::min(threads, kHalfRowThreads) : threads;
}

int64_t lockstepThreads(scf::ParallelOp loop, int64_t threads) {
  return walksInLockstep(loop) ? walkThreads(loop, threads) : threads;
}

bool mapLockstep(OpBuilder &b, scf::ParallelOp loop, ArrayRef<Value> counts, Value total,
                 int64_t threads) {
  SmallVector<scf::ForOp> walks = lockstepLoops(loop);
  if (walks.empty())
    return false;
  threads = walkThreads(loop, threads); // the walks are known: no lockstepThreads lookup
  Location loc = loop.getLoc();
  Value block = indexConstant(b, loc, threads);
  buildLaunchOver(b, loc, total, block, block, [&](OpBuilder &ib, gpu::LaunchOp launch) {
    buildWalk(ib, launch, loop, walks, counts, total, block, {}, {});
  });
  return true;
}

std::optional<SmallVector<Value>> foldInLockstep(OpBuilder &ib, gpu::LaunchOp launch,
                                                 scf::ParallelOp loop, ArrayRef<Value> counts,
                                                 Value total, Value block) {
  SmallVector<scf::ForOp> walks = lockstepLoops(loop);
  if (walks.empty() || loop.getNumResults() == 0)
    return std::nullopt;
  auto reduce = cast<scf::ReduceOp>(loop.getBody()->getTerminator());
  ValueRange partials = buildWalk(
      ib, launch, loop, walks, counts, total, block, loop.getInitVals(),
      [&](OpBuilder &lb, IRMapping &mapping, Value own, ValueRange carried) {
        SmallVector<Value> folded =
            combineEach(lb, reduce, carried, mapped(mapping, reduce.getOperands()));
        return llvm::map_to_vector(llvm::zip(folded, carried), [&](auto pair) -> Value {
          return arith::SelectOp::create(lb, loop.getLoc(), own, std::get<0>(pair),
                                         std::get<1>(pair));
        });
      });
  return SmallVector<Value>(partials);
}

} // namespace nerve::loop_mapping
