//===- RowGroups.cpp - the loops a row program fuses ----------------------===//
//
// A row program's loops: reductions of rows into row buffers, then an
// elementwise pass reading them (RowPrograms.cpp says what the kernel does
// with them). Matched here, with what to stage and the vector form.
//
//===----------------------------------------------------------------------===//

#include "RowGroups.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace nerve::loop_mapping;

ValueRange nerve::loop_mapping::ivsOf(scf::ParallelOp loop) {
  return loop.getBody()->getArguments();
}

bool nerve::loop_mapping::isZeroToUnitStep(Value lb, Value step) {
  auto l = getConstantIntValue(lb), s = getConstantIntValue(step);
  return l && s && *l == 0 && *s == 1;
}

bool nerve::loop_mapping::indexesRow(ValueRange indices, ValueRange ivs, Value col) {
  if (indices.size() != ivs.size() + (col ? 1 : 0))
    return false;
  if (!llvm::equal(indices.take_front(ivs.size()), ivs))
    return false;
  return !col || indices.back() == col;
}

/// Whether `loop` reduces each row into row buffers: its body holds lane
/// reductions, pure ops, loads, and stores of values at the row into
/// buffers the function allocates.
static bool matchStats(scf::ParallelOp loop, RowGroup &g) {
  if (loop.getNumResults() != 0)
    return false;
  bool any = false;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto inner = dyn_cast<scf::ForOp>(op)) {
      std::optional<LaneReduction> r = matchLaneReduction(inner);
      if (!r)
        return false;
      for (Value v : {inner.getLowerBound(), inner.getUpperBound(), inner.getStep()})
        if (Operation *def = v.getDefiningOp(); def && loop->isAncestor(def) &&
                                               (def->getBlock() != loop.getBody() ||
                                                !isMemoryEffectFree(def)))
          return false;
      auto lb = getConstantIntValue(inner.getLowerBound());
      auto ub = getConstantIntValue(inner.getUpperBound());
      if (lb && ub && (*ub - *lb) / *getConstantIntValue(inner.getStep()) < kMinStaticTrip)
        return false;
      g.reductions[&op] = *r;
      any = true;
      continue;
    }
    if (op.getNumRegions() != 0)
      return false;
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (!store.getMemref().getDefiningOp<memref::AllocOp>() ||
          !indexesRow(store.getIndices(), ivsOf(loop)))
        return false;
      continue;
    }
    if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(&op))
      return false;
  }
  return any;
}

/// The vector form of `g`, if it has one: every column loop walks the first
/// reduction's columns, and every access that varies with the column has it
/// as its last index, over a buffer whose innermost stride is 1.
void nerve::loop_mapping::chooseLanes(RowGroup &g) {
  int64_t lanes = 0;
  llvm::SetVector<Value> buffers;
  auto walk = [&](Block *body, Value col) {
    DenseSet<Value> varies = {col};
    auto varying = [&](Value v) { return varies.contains(v); };
    for (Operation &op : body->without_terminator()) {
      if (op.getNumRegions() != 0)
        return false;
      Value memref;
      ValueRange indices;
      if (auto load = dyn_cast<memref::LoadOp>(op))
        memref = load.getMemref(), indices = load.getIndices();
      else if (auto store = dyn_cast<memref::StoreOp>(op))
        memref = store.getMemref(), indices = store.getIndices();
      if (memref && !g.buffers.contains(memref) && llvm::any_of(indices, varying)) {
        auto type = llvm::dyn_cast<MemRefType>(memref.getType());
        int64_t memrefLanes = type ? vectorLanesOf(type) : 0;
        if (!memrefLanes || indices.back() != col ||
            llvm::any_of(indices.drop_back(), varying))
          return false;
        buffers.insert(memref);
        lanes = std::max(lanes, memrefLanes);
      } else if (memref && isa<memref::StoreOp>(op)) {
        return false;
      }
      if (llvm::any_of(op.getOperands(), varying))
        for (Value r : op.getResults())
          varies.insert(r);
    }
    return true;
  };
  for (scf::ParallelOp s : g.stats)
    for (Operation &op : s.getBody()->without_terminator())
      if (auto it = g.reductions.find(&op); it != g.reductions.end()) {
        FoldLoop loop = it->second.loop;
        if (!g.sameColumns(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()) ||
            !walk(loop.getBody(), loop.getInductionVar()))
          return;
      }
  if (g.final) {
    ValueRange ivs = ivsOf(g.final);
    if (!g.sameColumns(g.final.getLowerBound().back(), g.final.getUpperBound().back(),
                       g.final.getStep().back()) ||
        !walk(g.final.getBody(), ivs.back()))
      return;
  }
  if (buffers.empty())
    return;
  g.lanes = std::min(lanes, kMaxVectorLanes);
  g.vectorBuffers = buffers.takeVector();
}

/// Finds the row program that starts at `first`, if any.
/// The loops of the program that starts at `first` (whose statistics
/// matchStats has taken): more statistics loops over the same rows, then
/// the elementwise pass, with only allocations and pure host ops between.
static bool collectLoops(scf::ParallelOp first, RowGroup &g) {
  g.stats.push_back(first);
  for (Operation *op = first->getNextNode(); op; op = op->getNextNode()) {
    auto loop = dyn_cast<scf::ParallelOp>(op);
    if (!loop) {
      // Buffers and sizes of later loops move before the program.
      if (op->getNumRegions() != 0 || !(isa<memref::AllocOp>(op) || isMemoryEffectFree(op)))
        break;
      g.between.push_back(op);
      continue;
    }
    if (loop.getNumLoops() == g.rank && sameBounds(first, loop, g.rank) && matchStats(loop, g)) {
      g.stats.push_back(loop);
      continue;
    }
    if (loop.getNumLoops() == g.rank + 1 && loop.getNumResults() == 0 &&
        sameBounds(first, loop, g.rank) &&
        llvm::all_of(loop.getBody()->without_terminator(), [](Operation &o) {
          return o.getNumRegions() == 0 &&
                 (isa<memref::LoadOp, memref::StoreOp>(o) || isMemoryEffectFree(&o));
        }))
      g.final = loop;
    break;
  }
  // Host ops after the last loop stay where they are.
  Operation *last = g.final ? g.final.getOperation() : g.stats.back().getOperation();
  llvm::erase_if(g.between, [&](Operation *op) { return last->isBeforeInBlock(op); });
  if (g.numLoops() < 2)
    return false;
  for (Operation *op : g.between)
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp();
          def && def->getBlock() == first->getBlock() && first->isBeforeInBlock(def) &&
          !llvm::is_contained(g.between, def))
        return false;

  return true;
}

/// Whether each row buffer is read only at its row, after the loop that
/// stores it, and the elementwise pass writes neither the row buffers nor
/// what the reductions read.
static bool rowBuffersReadAtRow(RowGroup &g) {
  // Row buffers: read only at the row, after the pass that stores them.
  for (scf::ParallelOp s : g.stats)
    for (auto st : s.getBody()->getOps<memref::StoreOp>())
      g.buffers.insert(st.getMemref());
  DenseSet<Value> stored;
  DenseSet<Value> loadedByStats;
  auto checkLoads = [&](scf::ParallelOp loop, bool isFinal) {
    bool ok = true;
    loop.getBody()->walk([&](memref::LoadOp load) {
      Value m = load.getMemref();
      if (!isFinal)
        loadedByStats.insert(m);
      if (g.buffers.contains(m) &&
          (!stored.contains(m) ||
           !indexesRow(load.getIndices(), ivsOf(loop).take_front(g.rank))))
        ok = false;
    });
    return ok;
  };
  for (scf::ParallelOp s : g.stats) {
    if (!checkLoads(s, false))
      return false;
    for (auto st : s.getBody()->getOps<memref::StoreOp>())
      stored.insert(st.getMemref());
  }
  if (g.final) {
    if (!checkLoads(g.final, true))
      return false;
    // The elementwise pass may not write what the reductions read, nor the
    // row buffers.
    for (auto st : g.final.getBody()->getOps<memref::StoreOp>())
      if (loadedByStats.contains(st.getMemref()) || g.buffers.contains(st.getMemref()))
        return false;
  }
  return true;
}

/// The first reduction of the first statistics loop: its columns size the
/// program.
static void chooseFirstReduction(RowGroup &g) {
  g.first = g.reductions.begin()->second;
  for (Operation &op : g.stats.front().getBody()->without_terminator())
    if (auto it = g.reductions.find(&op); it != g.reductions.end()) {
      g.first = it->second;
      break;
    }
}

/// Inputs worth keeping in shared memory: read at (row, column) in a column
/// range that starts at 0 by 1, more than once, and never written.
static void chooseStaged(RowGroup &g) {
  if (isZeroToUnitStep(g.first.loop.getLowerBound(), g.first.loop.getStep())) {
    llvm::MapVector<Value, int> reads;
    auto count = [&](Block *body, ValueRange rowIvs, Value col) {
      for (auto load : body->getOps<memref::LoadOp>())
        if (!g.buffers.contains(load.getMemref()) && indexesRow(load.getIndices(), rowIvs, col))
          ++reads[load.getMemref()];
    };
    for (scf::ParallelOp s : g.stats)
      for (Operation &op : s.getBody()->without_terminator())
        if (auto it = g.reductions.find(&op);
            it != g.reductions.end() && g.sameColumns(it->second.loop.getLowerBound(),
                                                      it->second.loop.getUpperBound(),
                                                      it->second.loop.getStep()))
          count(it->second.loop.getBody(), ivsOf(s),
                it->second.loop.getInductionVar());
    if (g.final && g.sameColumns(g.final.getLowerBound().back(), g.final.getUpperBound().back(),
                                 g.final.getStep().back()))
      count(g.final.getBody(), ivsOf(g.final).take_front(g.rank),
            ivsOf(g.final).back());
    for (auto &[memref, n] : reads) {
      auto type = llvm::dyn_cast<MemRefType>(memref.getType());
      if (n >= 2 && type && type.getElementType().isIntOrFloat())
        g.staged.push_back(memref);
    }
  }
}

std::optional<RowGroup> nerve::loop_mapping::matchRowGroup(scf::ParallelOp first) {
  RowGroup g;
  g.rank = first.getNumLoops();
  if (!matchStats(first, g) || !collectLoops(first, g) || !rowBuffersReadAtRow(g))
    return std::nullopt;
  chooseFirstReduction(g);
  chooseStaged(g);
  chooseLanes(g);
  return g;
}
