//===- ApplyCPUStrategy.cpp - nerve-apply-cpu-strategy --------------------===//
//
// Applies each outermost parallel loop's #cpumap.strategy (chosen by
// nerve-cpu-select-strategy): what stays an scf.parallel is one loop of
// tasks per strategy, which upstream's convert-scf-to-openmp runs on
// threads; everything inside a task runs in order.
//
//===----------------------------------------------------------------------===//

#include "nerve/Transforms/Passes.h"

#include "CPUTasks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace nerve {
#define GEN_PASS_DEF_APPLYCPUSTRATEGY
#include "nerve/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;
using namespace nerve::cpumap;

namespace {

Value ceilDiv(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::CeilDivUIOp::create(b, loc, x, y);
}

/// Iterations of dimension `d` of `loop`.
Value tripCount(OpBuilder &b, scf::ParallelOp loop, unsigned d) {
  return nerve::cpu_tasks::iterationCount(b, loop.getLoc(), loop.getLowerBound()[d],
                                          loop.getUpperBound()[d], loop.getStep()[d]);
}

/// The value of dimension `d`'s induction variable at its iteration `k`.
Value ivAt(OpBuilder &b, scf::ParallelOp loop, IRMapping &map, unsigned d, Value k) {
  Location loc = loop.getLoc();
  Value scaled = arith::MulIOp::create(b, loc, k, map.lookupOrDefault(loop.getStep()[d]));
  return arith::AddIOp::create(b, loc, map.lookupOrDefault(loop.getLowerBound()[d]), scaled);
}

/// Folds `values` into `acc` with `loop`'s reduction regions, in place of
/// its scf.reduce.
SmallVector<Value> combine(OpBuilder &b, scf::ReduceOp reduce, ValueRange acc, ValueRange values) {
  SmallVector<Value> out;
  for (auto [region, a, v] : llvm::zip(reduce.getReductions(), acc, values)) {
    Block &block = region.front();
    IRMapping map;
    map.map(block.getArgument(0), a);
    map.map(block.getArgument(1), v);
    for (Operation &op : block.without_terminator())
      b.clone(op, map);
    out.push_back(map.lookup(block.getTerminator()->getOperand(0)));
  }
  return out;
}

/// Clones `loop`'s body (with `map` binding its induction variables) and
/// folds what its scf.reduce hands over into `acc`.
SmallVector<Value> cloneIteration(OpBuilder &b, scf::ParallelOp loop, IRMapping &map,
                                  ValueRange acc) {
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, map);
  auto reduce = cast<scf::ReduceOp>(loop.getBody()->getTerminator());
  SmallVector<Value> values =
      llvm::map_to_vector(reduce.getOperands(), [&](Value v) { return map.lookupOrDefault(v); });
  return combine(b, reduce, acc, values);
}

/// Runs dimensions `first..` of `loop` as nested scf.for from `b`'s
/// position, folding into `inits`; `map` binds the dimensions before.
SmallVector<Value> nestedFors(OpBuilder &b, scf::ParallelOp loop, IRMapping map, unsigned first,
                              ValueRange inits) {
  auto dims = [&](OperandRange r) {
    return llvm::map_to_vector(r.drop_front(first), [&](Value v) { return map.lookupOrDefault(v); });
  };
  scf::LoopNest nest = scf::buildLoopNest(
      b, loop.getLoc(), dims(loop.getLowerBound()), dims(loop.getUpperBound()),
      dims(loop.getStep()), inits,
      [&](OpBuilder &nb, Location, ValueRange ivs, ValueRange acc) -> scf::ValueVector {
        for (auto [iv, v] : llvm::zip(ValueRange(loop.getInductionVars()).drop_front(first), ivs))
          map.map(iv, v);
        return cloneIteration(nb, loop, map, acc);
      });
  if (inits.empty())
    for (scf::ForOp f : nest.loops)
      nerve::cpu_tasks::markParallel(f);
  return nest.results;
}

/// Replaces `loop` by nested scf.for run in order; returns the outermost.
Operation *makeSequential(scf::ParallelOp loop) {
  OpBuilder b(loop);
  Operation *before = loop->getPrevNode();
  SmallVector<Value> results = nestedFors(b, loop, IRMapping(), 0, loop.getInitVals());
  // What was built: from after `before` to the loop.
  Operation *first = before ? before->getNextNode() : &loop->getBlock()->front();
  while (first != loop.getOperation() && !isa<scf::ForOp>(first))
    first = first->getNextNode();
  loop.replaceAllUsesWith(results);
  loop.erase();
  return isa<scf::ForOp>(first) ? first : nullptr;
}

/// The outermost dimension in parallel, the others in order inside.
Operation *applyThreads(scf::ParallelOp loop) {
  if (loop.getNumLoops() == 1)
    return loop;
  OpBuilder b(loop);
  auto outer = scf::ParallelOp::create(
      b, loop.getLoc(), loop.getLowerBound().take_front(1), loop.getUpperBound().take_front(1),
      loop.getStep().take_front(1), [&](OpBuilder &pb, Location, ValueRange ivs) {
        IRMapping map;
        map.map(loop.getInductionVars()[0], ivs[0]);
        nestedFors(pb, loop, map, 1, {});
      });
  loop.erase();
  return outer;
}

/// The loops of a row group as one loop over their outermost dimension,
/// each task running its rows through every loop in turn.
Operation *fuseRows(SmallVectorImpl<scf::ParallelOp> &group) {
  scf::ParallelOp first = group.front();
  // What stands between the loops moves before the first (rowGroupFrom
  // checked it may).
  for (Operation *op = first->getNextNode(); op != group.back().getOperation();) {
    Operation *next = op->getNextNode();
    if (!isa<scf::ParallelOp>(op) || !llvm::is_contained(group, cast<scf::ParallelOp>(op)))
      op->moveBefore(first);
    op = next;
  }
  OpBuilder b(first);
  auto fusedLoop = scf::ParallelOp::create(
      b, first.getLoc(), first.getLowerBound().take_front(1), first.getUpperBound().take_front(1),
      first.getStep().take_front(1), [&](OpBuilder &pb, Location, ValueRange ivs) {
        for (scf::ParallelOp loop : group) {
          IRMapping map;
          map.map(loop.getInductionVars()[0], ivs[0]);
          nestedFors(pb, loop, map, 1, {});
        }
      });
  for (scf::ParallelOp loop : group)
    loop.erase();
  return fusedLoop;
}

Operation *applyWholeReduction(scf::ParallelOp loop, int64_t chunk);
Operation *applyTimeChunks(scf::ParallelOp loop, int64_t chunk);

/// Splits the folds of the task loop `tasks` into `lanes` partials.
void splitFolds(Operation *tasks, int64_t lanes) {
  if (!tasks || lanes == 0)
    return;
  SmallVector<scf::ForOp> folds;
  tasks->walk([&](scf::ForOp f) {
    if (nerve::cpu_tasks::isLaneFold(f))
      folds.push_back(f);
  });
  for (scf::ForOp f : folds)
    nerve::cpu_tasks::splitIntoLanes(f, lanes);
}

/// The parallel loops inside `loop` run in order inside a task, innermost
/// first.
void runInnerInOrder(scf::ParallelOp loop) {
  SmallVector<scf::ParallelOp> inner;
  loop.getBody()->walk<WalkOrder::PostOrder>([&](scf::ParallelOp p) { inner.push_back(p); });
  for (scf::ParallelOp p : inner)
    makeSequential(p);
}

struct ApplyCPUStrategy : nerve::impl::ApplyCPUStrategyBase<ApplyCPUStrategy> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>())
        outermost.push_back(loop);
    });
    DenseSet<Operation *> fused;
    for (scf::ParallelOp loop : outermost) {
      if (fused.contains(loop))
        continue;
      StrategyAttr strategy = strategyOf(loop);
      if (!strategy) {
        loop.emitError("an outermost scf.parallel without a #cpumap.strategy: run "
                       "nerve-cpu-select-strategy first");
        return signalPassFailure();
      }
      loop->removeAttr(CPUMapDialect::kStrategyAttrName);
      if (strategy.getLoops() > 1) {
        SmallVector<scf::ParallelOp> group = nerve::cpu_tasks::rowGroupFrom(loop);
        if (group.size() < static_cast<size_t>(strategy.getLoops())) {
          loop.emitError() << "the strategy runs " << strategy.getLoops()
                           << " loops in the same tasks, but only " << group.size()
                           << " from this one may share them";
          return signalPassFailure();
        }
        group.resize(strategy.getLoops());
        for (scf::ParallelOp member : group) {
          runInnerInOrder(member);
          fused.insert(member);
        }
        splitFolds(fuseRows(group), strategy.getLanes());
        continue;
      }
      runInnerInOrder(loop);
      Operation *tasks = nullptr;
      switch (strategy.getKind()) {
      case StrategyKind::sequential: tasks = makeSequential(loop); break;
      case StrategyKind::threads: tasks = applyThreads(loop); break;
      case StrategyKind::time_chunks: tasks = applyTimeChunks(loop, strategy.getChunk()); break;
      case StrategyKind::whole_reduction:
        tasks = applyWholeReduction(loop, strategy.getChunk());
        break;
      }
      splitFolds(tasks, strategy.getLanes());
    }
  }
};

/// Blocks of whole rows of the outermost dimension, each at least `chunk`
/// iterations, reduced in parallel into partials, then combined in order.
Operation *applyWholeReduction(scf::ParallelOp loop, int64_t chunk) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value inner = one;
  for (unsigned d = 1; d < loop.getNumLoops(); ++d)
    inner = arith::MulIOp::create(b, loc, inner, tripCount(b, loop, d));
  Value rowsPer = ceilDiv(b, loc, arith::ConstantIndexOp::create(b, loc, chunk),
                          arith::MaxUIOp::create(b, loc, inner, one));
  Value rows = tripCount(b, loop, 0);
  Value blocks = ceilDiv(b, loc, rows, rowsPer);
  SmallVector<Value> partials;
  for (Type t : loop.getResultTypes())
    partials.push_back(memref::AllocOp::create(b, loc, MemRefType::get({ShapedType::kDynamic}, t),
                                               ValueRange{blocks}));
  auto tasks = scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{blocks}, ValueRange{one},
      [&](OpBuilder &pb, Location, ValueRange ivs) {
        Value first = arith::MulIOp::create(pb, loc, ivs[0], rowsPer);
        Value last = arith::MinUIOp::create(pb, loc, arith::AddIOp::create(pb, loc, first, rowsPer),
                                            rows);
        auto rowLoop = scf::ForOp::create(
            pb, loc, first, last, one, loop.getInitVals(),
            [&](OpBuilder &fb, Location, Value row, ValueRange acc) {
              IRMapping map;
              map.map(loop.getInductionVars()[0], ivAt(fb, loop, map, 0, row));
              scf::YieldOp::create(fb, loc, nestedFors(fb, loop, map, 1, acc));
            });
        for (auto [partial, value] : llvm::zip(partials, rowLoop.getResults()))
          memref::StoreOp::create(pb, loc, value, partial, ivs[0]);
      });
  auto reduce = cast<scf::ReduceOp>(loop.getBody()->getTerminator());
  auto combined = scf::ForOp::create(
      b, loc, zero, blocks, one, loop.getInitVals(),
      [&](OpBuilder &fb, Location, Value k, ValueRange acc) {
        SmallVector<Value> values = llvm::map_to_vector(
            partials, [&](Value p) -> Value { return memref::LoadOp::create(fb, loc, p, k); });
        scf::YieldOp::create(fb, loc, combine(fb, reduce, acc, values));
      });
  for (Value p : partials)
    memref::DeallocOp::create(b, loc, p);
  loop.replaceAllUsesWith(combined.getResults());
  loop.erase();
  return tasks;
}

/// One task of a time_chunks loop: `chunk` iterations of the innermost
/// dimension from `base`, `len` of them in range.
struct TimeChunkTask {
  scf::ParallelOp loop;
  const nerve::cpu_tasks::IterationParts &parts;
  IRMapping task; // outer induction variables and the uniform ops
  Value base, len;
  DenseMap<Value, Value> scratch; // crossing value or carried value -> buffer

  /// A loop over the chunk's iterations binding the innermost induction
  /// variable; `body` fills it given the mapping.
  void overChunk(OpBuilder &b, function_ref<void(OpBuilder &, IRMapping &, Value)> body) {
    Location loc = loop.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto chunkLoop = scf::ForOp::create(b, loc, zero, len, one, ValueRange{},
                       [&](OpBuilder &fb, Location, Value i, ValueRange) {
                         IRMapping map = task;
                         unsigned d = loop.getNumLoops() - 1;
                         Value k = arith::AddIOp::create(fb, loc, base, i);
                         map.map(loop.getInductionVars()[d], ivAt(fb, loop, map, d, k));
                         body(fb, map, i);
                         scf::YieldOp::create(fb, loc);
                       });
    nerve::cpu_tasks::markParallel(chunkLoop);
  }
  void store(OpBuilder &b, Value key, Value value, Value i) {
    memref::StoreOp::create(b, loop.getLoc(), value, scratch.lookup(key), i);
  }
  Value load(OpBuilder &b, Value key, Value i) {
    return memref::LoadOp::create(b, loop.getLoc(), scratch.lookup(key), i);
  }
  void loadCrossing(OpBuilder &b, IRMapping &map, Value i) {
    for (Value v : parts.crossing)
      map.map(v, load(b, v, i));
  }

  void build(OpBuilder &b, int64_t chunk) {
    Location loc = loop.getLoc();
    scf::ForOp rec = parts.recurrence;
    for (Value v : parts.crossing)
      scratch[v] = memref::AllocaOp::create(b, loc, MemRefType::get({chunk}, v.getType()));
    for (Value r : rec.getResults())
      scratch[r] = memref::AllocaOp::create(b, loc, MemRefType::get({chunk}, r.getType()));
    overChunk(b, [&](OpBuilder &fb, IRMapping &map, Value i) {
      for (Operation *op : parts.before)
        fb.clone(*op, map);
      for (Value v : parts.crossing)
        store(fb, v, map.lookup(v), i);
      for (auto [r, init] : llvm::zip(rec.getResults(), rec.getInitArgs()))
        store(fb, r, map.lookupOrDefault(init), i);
    });
    scf::ForOp::create(b, loc, task.lookupOrDefault(rec.getLowerBound()),
                       task.lookupOrDefault(rec.getUpperBound()),
                       task.lookupOrDefault(rec.getStep()), ValueRange{},
                       [&](OpBuilder &tb, Location, Value t, ValueRange) {
                         overChunk(tb, [&](OpBuilder &fb, IRMapping &map, Value i) {
                           loadCrossing(fb, map, i);
                           map.map(rec.getInductionVar(), t);
                           for (auto [arg, r] : llvm::zip(rec.getRegionIterArgs(), rec.getResults()))
                             map.map(arg, load(fb, r, i));
                           for (Operation &op : rec.getBody()->without_terminator())
                             fb.clone(op, map);
                           auto yield = cast<scf::YieldOp>(rec.getBody()->getTerminator());
                           for (auto [v, r] : llvm::zip(yield.getOperands(), rec.getResults()))
                             store(fb, r, map.lookupOrDefault(v), i);
                         });
                         scf::YieldOp::create(tb, loc);
                       });
    overChunk(b, [&](OpBuilder &fb, IRMapping &map, Value i) {
      loadCrossing(fb, map, i);
      for (Value r : rec.getResults())
        map.map(r, load(fb, r, i));
      for (Operation *op : parts.after)
        fb.clone(*op, map);
    });
  }
};

/// The OpenMP runtime's threads for the parallel loops that follow (what
/// nerve's runtime set for this launch).
Value launchThreads(OpBuilder &b, Operation *anchor) {
  auto module = anchor->getParentOfType<ModuleOp>();
  constexpr StringLiteral kName = "omp_get_max_threads";
  auto fnType = b.getFunctionType({}, {b.getI32Type()});
  if (!module.lookupSymbol<func::FuncOp>(kName)) {
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    func::FuncOp::create(mb, anchor->getLoc(), kName, fnType).setPrivate();
  }
  Value threads = func::CallOp::create(b, anchor->getLoc(), kName, fnType.getResults(),
                                       ValueRange{}).getResult(0);
  return arith::IndexCastOp::create(b, anchor->getLoc(), b.getIndexType(), threads);
}

/// Iterations a task of a time_chunks loop takes: `chunk` (its scratch's
/// size), or fewer so that each thread gets a task: the threads' share
/// rounded up to 8. A chunk's iterations compute as they would in any
/// other chunk, so results do not depend on it.
Value taskChunk(OpBuilder &b, scf::ParallelOp loop, Value count, int64_t chunk) {
  Location loc = loop.getLoc();
  Value eight = arith::ConstantIndexOp::create(b, loc, 8);
  Value share = ceilDiv(b, loc, count, arith::MaxUIOp::create(b, loc, launchThreads(b, loop),
                                                              arith::ConstantIndexOp::create(b, loc, 1)));
  Value rounded = arith::MulIOp::create(b, loc, ceilDiv(b, loc, share, eight), eight);
  Value bounded = arith::MaxUIOp::create(b, loc, rounded, eight);
  return arith::MinUIOp::create(b, loc, bounded, arith::ConstantIndexOp::create(b, loc, chunk));
}

/// The innermost dimension in chunks, each a task running the recurrence
/// outside the chunk's iterations; the outer dimensions in parallel too.
Operation *applyTimeChunks(scf::ParallelOp loop, int64_t chunk) {
  std::optional<nerve::cpu_tasks::IterationParts> parts = nerve::cpu_tasks::iterationParts(loop);
  if (!parts) // the verifier checked the loop's form
    return nullptr;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  unsigned d = loop.getNumLoops() - 1;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value count = tripCount(b, loop, d);
  Value chunkSize = taskChunk(b, loop, count, chunk);
  Value chunks = ceilDiv(b, loc, count, chunkSize);
  SmallVector<Value> lbs(loop.getLowerBound().take_front(d)), ubs(loop.getUpperBound().take_front(d)),
      steps(loop.getStep().take_front(d));
  lbs.push_back(zero);
  ubs.push_back(chunks);
  steps.push_back(one);
  auto tasks =
      scf::ParallelOp::create(b, loc, lbs, ubs, steps, [&](OpBuilder &pb, Location, ValueRange ivs) {
    TimeChunkTask task{loop, *parts, IRMapping(), Value(), Value(), DenseMap<Value, Value>()};
    for (unsigned k = 0; k < d; ++k)
      task.task.map(loop.getInductionVars()[k], ivs[k]);
    for (Operation *op : parts->uniform)
      pb.clone(*op, task.task);
    task.base = arith::MulIOp::create(pb, loc, ivs[d], chunkSize);
    task.len = arith::MinUIOp::create(pb, loc, chunkSize,
                                      arith::SubIOp::create(pb, loc, count, task.base));
    task.build(pb, chunk);
  });
  loop.erase();
  return tasks;
}

} // namespace
