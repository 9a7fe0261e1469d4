//===- CPUTasks.cpp - facts the CPU strategies share ----------------------===//

#include "CPUTasks.h"

#include "nerve/Dialect/CPUMap/IR/CPUMap.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace nerve::cpu_tasks;

std::optional<IterationParts> nerve::cpu_tasks::iterationParts(scf::ParallelOp loop) {
  auto recurrence = llvm::dyn_cast_or_null<scf::ForOp>(cpumap::recurrenceOf(loop));
  if (!recurrence)
    return std::nullopt;
  IterationParts parts;
  parts.recurrence = recurrence;
  bool afterRecurrence = false;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (&op == recurrence.getOperation()) {
      afterRecurrence = true;
      continue;
    }
    bool uniform = op.getNumRegions() == 0 && op.getNumResults() != 0 &&
                   llvm::all_of(op.getResults(),
                                [&](Value r) { return cpumap::isUniformIn(r, loop); });
    if (uniform)
      parts.uniform.push_back(&op);
    else
      (afterRecurrence ? parts.after : parts.before).push_back(&op);
  }
  for (Operation *op : parts.before)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *user) {
            // The recurrence's initial values are read where they are made.
            if (recurrence->isProperAncestor(user))
              return true;
            Operation *top = loop.getBody()->findAncestorOpInBlock(*user);
            return llvm::is_contained(parts.after, top);
          }))
        parts.crossing.push_back(r);
  return parts;
}

static int64_t bytesOf(Type t) {
  if (t.isIndex())
    return 8;
  return std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
}

int64_t nerve::cpu_tasks::scratchBytes(const IterationParts &parts) {
  int64_t bytes = 0;
  for (Value v : parts.crossing)
    bytes += bytesOf(v.getType());
  for (Type t : const_cast<mlir::scf::ForOp &>(parts.recurrence).getResultTypes())
    bytes += bytesOf(t);
  return bytes;
}

/// The op combining carried value `i` of `loop` with what the iteration
/// computes, when it is one op with a neutral element.
static Operation *combinerOf(scf::ForOp loop, unsigned i) {
  SmallVector<BlockArgument> carried(loop.getRegionIterArgs());
  SmallVector<Operation *> combiners;
  if (!matchReduction(carried, i, combiners) || combiners.size() != 1)
    return nullptr;
  Operation *op = combiners.front();
  if (op->getNumOperands() != 2 || !arith::getNeutralElement(op))
    return nullptr;
  return op;
}

bool nerve::cpu_tasks::isLaneFold(scf::ForOp loop) {
  if (loop.getNumResults() == 0)
    return false;
  for (unsigned i = 0; i < loop.getNumResults(); ++i)
    if (!combinerOf(loop, i))
      return false;
  WalkResult writes = loop.getBody()->walk([](Operation *op) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ? WalkResult::advance()
                                                                 : WalkResult::interrupt();
    return effects.hasEffect<MemoryEffects::Write>() || effects.hasEffect<MemoryEffects::Allocate>()
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return !writes.wasInterrupted();
}

namespace {
/// One lane fold being split.
struct LaneSplit {
  scf::ForOp loop;
  SmallVector<Operation *> combiners;
  OpBuilder &b;
  Location loc;

  /// Clones the loop's body for iteration `j`, returning what each
  /// combiner takes besides the carried value.
  SmallVector<Value> iterationValues(OpBuilder &ib, Value j) {
    IRMapping map;
    map.map(loop.getInductionVar(), j);
    for (Operation &op : loop.getBody()->without_terminator())
      if (!llvm::is_contained(combiners, &op))
        ib.clone(op, map);
    SmallVector<Value> values;
    for (auto [i, c] : llvm::enumerate(combiners)) {
      Value other = c->getOperand(0) == loop.getRegionIterArgs()[i] ? c->getOperand(1)
                                                                     : c->getOperand(0);
      values.push_back(map.lookupOrDefault(other));
    }
    return values;
  }
  /// `combiners[i]` applied to (acc, value).
  Value combine(OpBuilder &ib, unsigned i, Value acc, Value value) {
    IRMapping map;
    map.map(combiners[i]->getOperand(0), acc);
    map.map(combiners[i]->getOperand(1), value);
    return ib.clone(*combiners[i], map)->getResult(0);
  }
  Value iterationAt(OpBuilder &ib, Value k) {
    Value scaled = arith::MulIOp::create(ib, loc, k, loop.getStep());
    return arith::AddIOp::create(ib, loc, loop.getLowerBound(), scaled);
  }
};
} // namespace

void nerve::cpu_tasks::splitIntoLanes(scf::ForOp loop, int64_t lanes) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  LaneSplit split{loop, {}, b, loc};
  for (unsigned i = 0; i < loop.getNumResults(); ++i)
    split.combiners.push_back(combinerOf(loop, i));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value laneCount = arith::ConstantIndexOp::create(b, loc, lanes);
  Value count = iterationCount(b, loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
  Value full = arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, count, laneCount),
                                     laneCount);
  // The partials' scratch is allocated once per task (or per call), not
  // each time the fold runs: a fold may run once per row of a task.
  OpBuilder top(loop.getContext());
  if (auto task = loop->getParentOfType<scf::ParallelOp>())
    top.setInsertionPointToStart(task.getBody());
  else
    top.setInsertionPointToStart(&loop->getParentOfType<func::FuncOp>().getBody().front());
  SmallVector<Value> partials;
  for (auto [i, t] : llvm::enumerate(loop.getResultTypes())) {
    Value buffer = memref::AllocaOp::create(top, loc, MemRefType::get({lanes}, t));
    TypedAttr neutral = *arith::getNeutralElement(split.combiners[i]);
    Value identity = arith::ConstantOp::create(b, loc, neutral);
    auto fill = scf::ForOp::create(b, loc, zero, laneCount, one, ValueRange{},
                                   [&](OpBuilder &fb, Location, Value k, ValueRange) {
                                     memref::StoreOp::create(fb, loc, identity, buffer, k);
                                     scf::YieldOp::create(fb, loc);
                                   });
    (void)fill;
    partials.push_back(buffer);
  }
  scf::ForOp::create(b, loc, zero, full, laneCount, ValueRange{},
                     [&](OpBuilder &bb, Location, Value block, ValueRange) {
                       auto inner = scf::ForOp::create(
                           bb, loc, zero, laneCount, one, ValueRange{},
                           [&](OpBuilder &ib, Location, Value k, ValueRange) {
                             Value j = split.iterationAt(ib, arith::AddIOp::create(ib, loc, block, k));
                             SmallVector<Value> values = split.iterationValues(ib, j);
                             for (auto [i, v] : llvm::enumerate(values)) {
                               Value acc = memref::LoadOp::create(ib, loc, partials[i], k);
                               memref::StoreOp::create(ib, loc, split.combine(ib, i, acc, v),
                                                       partials[i], k);
                             }
                             scf::YieldOp::create(ib, loc);
                           });
                       // Kept a loop for LLVM's vectoriser: fully unrolled
                       // first (32 constant iterations), its partials would
                       // stay scalars.
                       markParallel(inner, /*keepLoop=*/true);
                       scf::YieldOp::create(bb, loc);
                     });
  auto gathered = scf::ForOp::create(
      b, loc, zero, laneCount, one, loop.getInitArgs(),
      [&](OpBuilder &gb, Location, Value k, ValueRange acc) {
        SmallVector<Value> next;
        for (auto [i, a] : llvm::enumerate(acc))
          next.push_back(split.combine(gb, i, a, memref::LoadOp::create(gb, loc, partials[i], k)));
        scf::YieldOp::create(gb, loc, next);
      });
  auto rest = scf::ForOp::create(
      b, loc, full, count, one, gathered.getResults(),
      [&](OpBuilder &rb, Location, Value k, ValueRange acc) {
        SmallVector<Value> values = split.iterationValues(rb, split.iterationAt(rb, k));
        SmallVector<Value> next;
        for (auto [i, v] : llvm::enumerate(values))
          next.push_back(split.combine(rb, i, acc[i], v));
        scf::YieldOp::create(rb, loc, next);
      });
  loop.replaceAllUsesWith(rest.getResults());
  loop.erase();
}

namespace {
/// The buffers `loop` reads and writes, with the first index of each
/// access (null for a rank-0 buffer).
struct Accesses {
  SmallVector<std::pair<Value, Value>> reads, writes;
};

Accesses accessesOf(scf::ParallelOp loop) {
  Accesses a;
  loop.walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op))
      a.reads.push_back({load.getMemRef(), load.getIndices().empty() ? Value()
                                                                     : load.getIndices().front()});
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      a.writes.push_back({store.getMemRef(), store.getIndices().empty()
                                                 ? Value()
                                                 : store.getIndices().front()});
  });
  return a;
}

bool sameRange(scf::ParallelOp a, scf::ParallelOp b) {
  return a.getLowerBound().front() == b.getLowerBound().front() &&
         a.getUpperBound().front() == b.getUpperBound().front() &&
         a.getStep().front() == b.getStep().front();
}

/// Whether an op between two loops of a group may move before the first.
bool movable(Operation *op, scf::ParallelOp first) {
  if (op->getNumRegions() != 0)
    return false;
  if (!isPure(op) && !isa<memref::AllocOp>(op))
    return false;
  return llvm::all_of(op->getOperands(), [&](Value v) {
    Operation *def = v.getDefiningOp();
    return !def || def->getBlock() != first->getBlock() || def->isBeforeInBlock(first);
  });
}
} // namespace

SmallVector<scf::ParallelOp> nerve::cpu_tasks::rowGroupFrom(scf::ParallelOp first) {
  SmallVector<scf::ParallelOp> group{first};
  if (first.getNumResults() != 0)
    return group;
  SmallVector<Accesses> accesses{accessesOf(first)};
  SmallVector<Operation *> between;
  for (Operation *op = first->getNextNode(); op; op = op->getNextNode()) {
    auto next = dyn_cast<scf::ParallelOp>(op);
    if (!next) {
      if (!movable(op, first))
        break;
      between.push_back(op);
      continue;
    }
    if (next.getNumResults() != 0 || !sameRange(first, next))
      break;
    // Ops between must not use what is between later loops either.
    for (Operation *b : between)
      if (!movable(b, first))
        return group;
    Accesses nextAccesses = accessesOf(next);
    SmallVector<Accesses> all(accesses);
    all.push_back(nextAccesses);
    // Buffers written by one loop of the group and accessed by another.
    auto rowLocal = [&](Value buffer) {
      for (auto [k, acc] : llvm::enumerate(all)) {
        scf::ParallelOp loop = k < group.size() ? group[k] : next;
        Value row = loop.getInductionVars().front();
        for (auto *list : {&acc.reads, &acc.writes})
          for (auto [m, index] : *list)
            if (m == buffer && index != row)
              return false;
      }
      return true;
    };
    auto touches = [](const Accesses &a, Value buffer) {
      auto has = [&](const SmallVector<std::pair<Value, Value>> &l) {
        return llvm::any_of(l, [&](auto &p) { return p.first == buffer; });
      };
      return has(a.reads) || has(a.writes);
    };
    bool legal = true;
    for (auto [k, acc] : llvm::enumerate(all))
      for (auto [buffer, index] : acc.writes)
        for (auto [j, other] : llvm::enumerate(all))
          if (j != k && touches(other, buffer) && !rowLocal(buffer))
            legal = false;
    if (!legal)
      break;
    group.push_back(next);
    accesses.push_back(std::move(nextAccesses));
  }
  return group;
}

void nerve::cpu_tasks::markParallel(scf::ForOp loop, bool keepLoop) {
  MLIRContext *ctx = loop.getContext();
  LLVM::LoopUnrollAttr unroll;
  if (keepLoop)
    unroll = LLVM::LoopUnrollAttr::get(ctx, BoolAttr::get(ctx, true), {}, {}, {}, {}, {}, {});
  auto annotation = LLVM::LoopAnnotationAttr::get(ctx, {}, {}, {}, unroll, {}, {}, {}, {}, {}, {},
                                                  {}, {}, {}, {},
                                                  ArrayRef(LLVM::AccessGroupAttr::get(ctx)));
  loop->setAttr("llvm.loop_annotation", annotation);
}

Value nerve::cpu_tasks::iterationCount(OpBuilder &b, Location loc, Value lb, Value ub, Value step) {
  Value span = arith::SubIOp::create(b, loc, ub, lb);
  Value nonNegative = arith::MaxSIOp::create(b, loc, span, arith::ConstantIndexOp::create(b, loc, 0));
  return arith::CeilDivUIOp::create(b, loc, nonNegative, step);
}
