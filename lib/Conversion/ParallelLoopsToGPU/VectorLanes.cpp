//===- VectorLanes.cpp - consecutive iterations per thread, 16-byte accesses ===//
//
// A parallel loop whose memory accesses that vary with its innermost index
// all walk the contiguous dimension (`a[.., i]` with `i` the innermost
// index; elementwise maps, neurons over a time-major input) runs `lanes`
// consecutive innermost iterations per thread: each such access of the
// group is one vector load or store of `lanes` elements (16 bytes of the
// narrowest element type), the arithmetic stays scalar, once per lane.
// Loops nested in the body (a neuron's time loop) are jammed: one loop
// carrying every lane's values. Whether the buffers allow it (innermost
// stride 1, rows and base addresses aligned to the vector, a whole number
// of vectors per row) is known only at run time: a host check picks this
// mapping or the scalar one.
//
//===----------------------------------------------------------------------===//

#include "LoopMapping.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace nerve::loop_mapping {

constexpr int64_t kVectorBytes = 16;

namespace {

/// What the body's analysis found.
struct LanePlan {
  int64_t lanes = 0;
  /// Loads and stores that walk the contiguous dimension: one vector access
  /// per group of lanes.
  llvm::DenseSet<Operation *> contiguous;
  /// The buffers they access (checked at run time).
  llvm::SetVector<Value> buffers;
  /// Values carried by jammed loops, per lane.
  int64_t carried = 0;
  /// Values loaded by one iteration of the jammed loops, per lane (a time
  /// loop blocked by steps loads a block of values before using them).
  int64_t loadedInLoops = 0;
  /// Values loaded outside loops, per lane.
  int64_t loadedOutsideLoops = 0;
  /// Ops emitLanes leaves out (a fold's step, which the caller applies).
  llvm::DenseSet<Operation *> skipped;
  /// Contiguous loads of a straight-line body that index by none of the
  /// outer indices: the same vector for every row (a bias, a softmax's
  /// column maximum and sum over dim 0). Found only for bodies that then
  /// run row tiles.
  llvm::DenseSet<Operation *> rowInvariant;
};

/// Jammed loops carry and load this many values at most over all lanes:
/// beyond it the registers they need cost more occupancy than the vectors
/// save (an f16 neuron's backward, 16 steps of 3 loads a block, jammed 8
/// lanes wide spilled at 255 registers).
constexpr int64_t kMaxCarried = 64;

/// A straight-line body loads this many values at most over all lanes. A
/// neuron whose time loop has one block of steps (its length known and no
/// longer than the block) is straight-line code loading the whole block:
/// 8 lanes of a 32-step f16 PLIF made one kernel of 20,000 PTX lines and a
/// 2-second compile. Elementwise bodies load a few values a lane.
constexpr int64_t kMaxStraightLineLoads = 128;

/// Whether `v` is defined outside `loop`.
bool isOutside(Value v, Operation *loop) {
  return !loop->isAncestor(v.getParentBlock()->getParentOp());
}

/// Walks `block` (in `loop`'s body) marking what varies with the innermost
/// index in `variant`; fails on anything the vector mapping cannot run.
LogicalResult analyze(Block &block, Operation *loop, Value iv, llvm::DenseSet<Value> &variant,
                      LanePlan &plan, bool inLoop = false) {
  auto varies = [&](Value v) { return variant.contains(v); };
  auto contiguousAccess = [&](Value memref, ValueRange indices) {
    auto type = dyn_cast<MemRefType>(memref.getType());
    int64_t lanes = type ? vectorLanesOf(type) : 0;
    if (!lanes || indices.back() != iv || !isOutside(memref, loop) ||
        llvm::any_of(indices.drop_back(), varies))
      return false;
    plan.buffers.insert(memref);
    plan.lanes = std::max(plan.lanes, lanes);
    return true;
  };
  for (Operation &op : block.without_terminator()) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (llvm::any_of(load.getIndices(), varies)) {
        if (!contiguousAccess(load.getMemRef(), load.getIndices()))
          return failure();
        plan.contiguous.insert(&op);
        variant.insert(load.getResult());
        (inLoop ? plan.loadedInLoops : plan.loadedOutsideLoops) += 1;
      }
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      // Every iteration writes its own element: a store that does not vary
      // would be every lane writing one place.
      if (!contiguousAccess(store.getMemRef(), store.getIndices()))
        return failure();
      plan.contiguous.insert(&op);
      continue;
    }
    if (auto inner = dyn_cast<scf::ForOp>(op)) {
      if (varies(inner.getLowerBound()) || varies(inner.getUpperBound()) ||
          varies(inner.getStep()))
        return failure();
      plan.carried += inner.getNumRegionIterArgs();
      for (Value arg : inner.getRegionIterArgs())
        variant.insert(arg);
      if (failed(analyze(*inner.getBody(), loop, iv, variant, plan, /*inLoop=*/true)))
        return failure();
      for (Value r : inner.getResults())
        variant.insert(r);
      continue;
    }
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      if (varies(branch.getCondition()))
        return failure();
      for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()})
        if (!region->empty() && failed(analyze(region->front(), loop, iv, variant, plan, inLoop)))
          return failure();
      plan.carried += branch.getNumResults();
      for (Value r : branch.getResults())
        variant.insert(r);
      continue;
    }
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
      return failure();
    if (llvm::any_of(op.getOperands(), varies))
      for (Value r : op.getResults())
        variant.insert(r);
  }
  return success();
}

/// The plan of `body` (of `loop`) by lanes of its index `iv`, when
/// analyze accepts it and some buffer is accessed by vectors.
std::optional<LanePlan> planBody(Block &body, Operation *loop, Value iv) {
  LanePlan plan;
  llvm::DenseSet<Value> variant;
  variant.insert(iv);
  if (failed(analyze(body, loop, iv, variant, plan)) || plan.buffers.empty())
    return std::nullopt;
  plan.lanes = std::min(plan.lanes, kMaxVectorLanes);
  return plan;
}

std::optional<LanePlan> planLanes(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0 || getConstantIntValue(loop.getStep().back()) != 1)
    return std::nullopt;
  std::optional<LanePlan> plan = planBody(*loop.getBody(), loop, loop.getInductionVars().back());
  if (!plan || (plan->carried + plan->loadedInLoops) * plan->lanes > kMaxCarried ||
      plan->loadedOutsideLoops * plan->lanes > kMaxStraightLineLoads)
    return std::nullopt;
  return plan;
}

/// The plan of a 1-D reduction whose straight-line body walks the
/// contiguous dimension wherever it varies (see planChunks); its skipped
/// ops (a fold's step) are left out of the copies.
std::optional<LanePlan> planChunkLanes(const ChunkSource &source) {
  Block *body = Value(source.iv).getParentBlock();
  if (getConstantIntValue(source.step) != 1 ||
      llvm::any_of(body->without_terminator(),
                   [](Operation &op) { return op.getNumRegions() != 0; }))
    return std::nullopt;
  std::optional<LanePlan> plan = planBody(*body, source.loop, source.iv);
  if (!plan || plan->contiguous.empty())
    return std::nullopt;
  plan->skipped.insert(source.skipped.begin(), source.skipped.end());
  return plan;
}

} // namespace

/// Bytes a vector access is aligned to: the whole vector, at most 16
/// (wider ones are split into 16-byte accesses).
static int64_t vectorAlignment(int64_t lanes, MemRefType type) {
  return std::min<int64_t>(lanes * type.getElementTypeBitWidth() / 8, kVectorBytes);
}

int64_t vectorLanesOf(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (type.getRank() == 0 || failed(type.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1 || !type.getElementType().isIntOrFloat())
    return 0;
  unsigned bits = type.getElementTypeBitWidth();
  return bits % 8 == 0 && bits <= 64 ? kVectorBytes * 8 / bits : 0;
}

Value vectorLoad(OpBuilder &b, Location loc, Value memref, ValueRange indices, int64_t lanes) {
  auto type = cast<MemRefType>(memref.getType());
  return vector::LoadOp::create(b, loc, VectorType::get({lanes}, type.getElementType()), memref,
                                indices, /*nontemporal=*/false,
                                llvm::MaybeAlign(vectorAlignment(lanes, type)));
}

void vectorStore(OpBuilder &b, Location loc, Value vec, Value memref, ValueRange indices) {
  int64_t lanes = cast<VectorType>(vec.getType()).getNumElements();
  vector::StoreOp::create(
      b, loc, vec, memref, indices, /*nontemporal=*/false,
      llvm::MaybeAlign(vectorAlignment(lanes, cast<MemRefType>(memref.getType()))));
}

void unpackLanes(OpBuilder &b, Location loc, Value vec, Value scalar,
                 MutableArrayRef<IRMapping> maps) {
  for (auto [k, m] : llvm::enumerate(maps))
    m.map(scalar, vector::ExtractOp::create(b, loc, vec, int64_t(k)).getResult());
}

Value packLanes(OpBuilder &b, Location loc, Value scalar, ArrayRef<IRMapping> maps) {
  SmallVector<Value> values;
  for (const IRMapping &m : maps)
    values.push_back(m.lookupOrDefault(scalar));
  auto type = VectorType::get({static_cast<int64_t>(maps.size())}, scalar.getType());
  return vector::FromElementsOp::create(b, loc, type, values);
}

SmallVector<Value> mapped(const IRMapping &m, ValueRange values) {
  return llvm::map_to_vector(values, [&](Value v) { return m.lookupOrDefault(v); });
}

SmallVector<IRMapping> laneMappings(OpBuilder &b, Location loc, const IRMapping &base, Value iv,
                                    Value first, int64_t lanes) {
  SmallVector<IRMapping> maps(lanes, base);
  for (int64_t k = 0; k < lanes; ++k)
    maps[k].map(iv, k == 0 ? first
                           : arith::AddIOp::create(b, loc, first, indexConstant(b, loc, k))
                                 .getResult());
  return maps;
}

Value vectorPartial(OpBuilder &b, Location loc, const LaneReduction &r, const IRMapping &base,
                    Value lb, Value ub, Value lane, Value lanes, int64_t vectorLanes,
                    int64_t unroll,
                    function_ref<void(OpBuilder &, MutableArrayRef<IRMapping>)> emitBody) {
  Value lanesValue = indexConstant(b, loc, vectorLanes);
  Value firstVector = lb ? b.createOrFold<arith::DivUIOp>(loc, lb, lanesValue)
                         : indexConstant(b, loc, 0);
  Value vectors = arith::DivUIOp::create(b, loc, ub, lanesValue);
  Value folded = r.combine->getOperand(1 - r.accOperand);
  return stridedPartial(
      b, loc, r, firstVector, vectors, indexConstant(b, loc, 1), lane, lanes,
      [&](OpBuilder &vb, Value vector) {
        Value first = arith::MulIOp::create(vb, loc, vector, indexConstant(vb, loc, vectorLanes));
        SmallVector<IRMapping> maps =
            laneMappings(vb, loc, base, r.loop.getInductionVar(), first, vectorLanes);
        emitBody(vb, maps);
        Value v = maps.front().lookupOrDefault(folded);
        for (IRMapping &m : llvm::drop_begin(maps))
          v = combineAs(vb, r, v, m.lookupOrDefault(folded));
        return v;
      },
      unroll);
}

Value vectorAccessesFit(OpBuilder &b, Location loc, ArrayRef<Value> buffers, int64_t lanes,
                        Value columns, Value firstColumn) {
  Value zero = indexConstant(b, loc, 0), one = indexConstant(b, loc, 1);
  Value lanesValue = indexConstant(b, loc, lanes);
  auto multipleOf = [&](Value v, Value m) {
    Value rem = b.createOrFold<arith::RemUIOp>(loc, v, m);
    return b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, rem, zero);
  };
  auto both = [&](Value x, Value y) { return b.createOrFold<arith::AndIOp>(loc, x, y); };
  Value ok = both(multipleOf(columns, lanesValue), multipleOf(firstColumn, lanesValue));
  for (Value buffer : buffers) {
    auto type = cast<MemRefType>(buffer.getType());
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
    ValueRange strides = meta.getStrides();
    ok = both(ok, b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, strides.back(),
                                                one));
    for (Value stride : strides.drop_back())
      ok = both(ok, multipleOf(stride, lanesValue));
    ok = both(ok, startsAligned(b, loc, buffer, meta.getOffset(), vectorAlignment(lanes, type)));
  }
  return ok;
}

Value startsAligned(OpBuilder &b, Location loc, Value buffer, Value offset, int64_t alignment) {
  int64_t bytes = cast<MemRefType>(buffer.getType()).getElementTypeBitWidth() / 8;
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value offsetBytes = arith::MulIOp::create(b, loc, offset, indexConstant(b, loc, bytes));
  Value start = arith::AddIOp::create(b, loc, base, offsetBytes);
  Value rem = b.createOrFold<arith::RemUIOp>(loc, start, indexConstant(b, loc, alignment));
  return b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, rem,
                                       indexConstant(b, loc, 0));
}

namespace {

/// Emits `block`'s ops once per lane mapping (`maps[g * lanes + k]`: lane
/// k of group g), the plan's accesses as one vector per group, nested loops
/// and branches jammed; a store of a group whose `valid` value is false is
/// skipped. A row-invariant load (the plan has them only when the groups
/// are rows of one tile) is one vector for all groups.
void emitLanes(OpBuilder &b, Location loc, Block &block, const LanePlan &plan,
               MutableArrayRef<IRMapping> maps, ArrayRef<Value> valid) {
  int64_t lanes = plan.lanes, groups = static_cast<int64_t>(valid.size());
  for (Operation &op : block.without_terminator()) {
    if (plan.skipped.contains(&op))
      continue;
    if (plan.contiguous.contains(&op)) {
      for (int64_t g = 0; g < groups; ++g) {
        MutableArrayRef<IRMapping> group = maps.slice(g * lanes, lanes);
        IRMapping &first = group.front();
        if (g > 0 && plan.rowInvariant.contains(&op)) {
          for (int64_t k = 0; k < lanes; ++k)
            group[k].map(op.getResult(0), maps[k].lookup(op.getResult(0)));
          continue;
        }
        if (auto load = dyn_cast<memref::LoadOp>(op)) {
          Value vec = vectorLoad(b, loc, first.lookupOrDefault(load.getMemRef()),
                                 mapped(first, load.getIndices()), lanes);
          unpackLanes(b, loc, vec, load.getResult(), group);
          continue;
        }
        auto store = cast<memref::StoreOp>(op);
        OpBuilder::InsertionGuard guard(b);
        if (valid[g]) {
          auto inRange = scf::IfOp::create(b, loc, valid[g], /*withElseRegion=*/false);
          b.setInsertionPointToStart(&inRange.getThenRegion().front());
        }
        vectorStore(b, loc, packLanes(b, loc, store.getValueToStore(), group),
                    first.lookupOrDefault(store.getMemRef()), mapped(first, store.getIndices()));
      }
      continue;
    }
    // A jammed region op carries every lane's values, lane after lane.
    auto concatLanes = [&](ValueRange values) {
      SmallVector<Value> all;
      for (IRMapping &m : maps)
        for (Value v : values)
          all.push_back(m.lookupOrDefault(v));
      return all;
    };
    auto yieldLanes = [&](Block &from, Block &to) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(&to);
      emitLanes(b, loc, from, plan, maps, valid);
      scf::YieldOp::create(b, loc, concatLanes(from.getTerminator()->getOperands()));
    };
    auto mapResults = [&](Operation *original, Operation *jammed) {
      unsigned n = original->getNumResults();
      for (auto [m, map] : llvm::enumerate(maps))
        for (unsigned i = 0; i < n; ++i)
          map.map(original->getResult(i), jammed->getResult(m * n + i));
    };
    if (auto inner = dyn_cast<scf::ForOp>(op)) {
      IRMapping &first = maps.front();
      auto jammed = scf::ForOp::create(
          b, loc, first.lookupOrDefault(inner.getLowerBound()),
          first.lookupOrDefault(inner.getUpperBound()), first.lookupOrDefault(inner.getStep()),
          concatLanes(inner.getInitArgs()));
      Block *body = jammed.getBody();
      unsigned n = inner.getNumRegionIterArgs();
      for (auto [m, map] : llvm::enumerate(maps)) {
        map.map(inner.getInductionVar(), jammed.getInductionVar());
        for (unsigned i = 0; i < n; ++i)
          map.map(inner.getRegionIterArgs()[i], jammed.getRegionIterArgs()[m * n + i]);
      }
      if (!body->empty())
        body->getTerminator()->erase(); // the builder adds an empty yield without iter args
      yieldLanes(*inner.getBody(), *body);
      mapResults(inner, jammed);
      continue;
    }
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      SmallVector<Type> types;
      for (size_t m = 0; m < maps.size(); ++m)
        llvm::append_range(types, branch.getResultTypes());
      bool hasElse = !branch.getElseRegion().empty();
      auto jammed = scf::IfOp::create(b, loc, types,
                                      maps.front().lookupOrDefault(branch.getCondition()),
                                      hasElse);
      for (auto [from, to] : {std::pair{&branch.getThenRegion(), &jammed.getThenRegion()},
                              std::pair{&branch.getElseRegion(), &jammed.getElseRegion()}}) {
        if (from->empty())
          continue;
        Block &target = to->front();
        if (!target.empty())
          target.getTerminator()->erase();
        yieldLanes(from->front(), target);
      }
      mapResults(branch, jammed);
      continue;
    }
    for (IRMapping &map : maps)
      b.clone(op, map);
  }
}

/// Fills `plan.rowInvariant` for `loop`, whose body is straight-line.
void findRowInvariantLoads(scf::ParallelOp loop, LanePlan &plan) {
  // The values computed from the outer indices.
  llvm::DenseSet<Value> fromRows;
  for (Value iv : ValueRange(loop.getInductionVars()).drop_back())
    fromRows.insert(iv);
  for (Operation &op : loop.getBody()->without_terminator())
    if (llvm::any_of(op.getOperands(), [&](Value v) { return fromRows.contains(v); }))
      fromRows.insert(op.result_begin(), op.result_end());
  for (Operation *op : plan.contiguous)
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && llvm::none_of(load.getIndices(), [&](Value i) { return fromRows.contains(i); }))
      plan.rowInvariant.insert(op);
}

} // namespace

int64_t vectorLanesFor(scf::ParallelOp loop) {
  std::optional<LanePlan> plan = planLanes(loop);
  return plan && plan->lanes > 1 ? plan->lanes : 0;
}

bool mapVectorLanes(OpBuilder &b, scf::ParallelOp loop, ArrayRef<Value> counts, Value total,
                    int64_t threads, int64_t groups,
                    function_ref<void(OpBuilder &)> scalarMapping) {
  std::optional<LanePlan> plan = planLanes(loop);
  if (!plan)
    return false;
  // Groups of lanes a grid stride apart interleave only straight-line code.
  // A straight-line map that reads a vector the same for every row takes a
  // tile instead: `lanes` rows of one vector of columns, so that vector is
  // loaded once for them all. H200, one process, 16384 x 4096 / 65536 x
  // 1024 / 4096 x 65536: the 8-op chain with a bias, f32 63.7 / 63.4 /
  // 65.1% of the copy bandwidth with two groups, 76.3 / 76.1 / 79.0% with
  // tiles of 4 rows (8 rows: 70%, 123 registers); f16 55.1 / 55.1 / 57.4%,
  // tiles of 8 rows 66.2 / 66.3 / 70.6% (4 rows: 63.8 / 63.7 / 66.9);
  // softmax over dim 0's write pass (x, and the column maximum and sum) in
  // f16 0.1188 / 0.1228 / 0.4214 ms with one group, 0.1160 / 0.1202 /
  // 0.3948 with tiles of 8 rows, f32 the same within 1%.
  bool straightLine = plan->carried == 0 &&
                      llvm::all_of(loop.getBody()->without_terminator(),
                                   [](Operation &op) { return op.getNumRegions() == 0; });
  if (straightLine && loop.getNumLoops() >= 2)
    findRowInvariantLoads(loop, *plan);
  bool rowTiles = !plan->rowInvariant.empty();
  int64_t lanes = plan->lanes;
  if (rowTiles)
    groups = lanes;
  else if (!straightLine)
    groups = 1;
  Location loc = loop.getLoc();
  Value fits = vectorAccessesFit(b, loc, plan->buffers.getArrayRef(), lanes, counts.back(),
                                 loop.getLowerBound().back());
  if (auto known = getConstantIntValue(fits); known && !*known) {
    scalarMapping(b);
    return true;
  }
  auto choice = scf::IfOp::create(b, loc, fits, /*withElseRegion=*/true);
  OpBuilder eb = OpBuilder::atBlockBegin(&choice.getElseRegion().front());
  scalarMapping(eb);

  // Work items: vectors of `lanes` columns, or tiles of `groups` rows of
  // one such vector (the check above makes rows whole vectors).
  OpBuilder vb = OpBuilder::atBlockBegin(&choice.getThenRegion().front());
  Value lanesValue = indexConstant(vb, loc, lanes), groupsValue = indexConstant(vb, loc, groups);
  Value chunks = arith::DivUIOp::create(vb, loc, total, lanesValue);
  Value items = chunks, rowVectors, rows;
  if (rowTiles) {
    Value columns = arith::MaxUIOp::create(vb, loc, counts.back(), indexConstant(vb, loc, 1));
    rowVectors = arith::DivUIOp::create(vb, loc, columns, lanesValue);
    rows = arith::DivUIOp::create(vb, loc, total, columns);
    items = arith::MulIOp::create(vb, loc, arith::CeilDivUIOp::create(vb, loc, rows, groupsValue),
                                  rowVectors);
  }
  Value block = indexConstant(vb, loc, threads);
  buildLaunchOver(
      vb, loc, items, rowTiles ? block : indexConstant(vb, loc, threads * groups), block,
      [&](OpBuilder &ib, gpu::LaunchOp launch) {
        Value first = arith::AddIOp::create(
            ib, loc, arith::MulIOp::create(ib, loc, launch.getBlockIds().x, block),
            launch.getThreadIds().x);
        Value stride = arith::MulIOp::create(ib, loc, launch.getGridSize().x, block);
        Value step = rowTiles ? stride : arith::MulIOp::create(ib, loc, stride, groupsValue);
        auto strided = scf::ForOp::create(ib, loc, first, items, step);
        ib.setInsertionPointToStart(strided.getBody());
        Value item = strided.getInductionVar();
        Value innermost, tileRow, last;
        if (rowTiles) {
          // Every row of the tile takes the same innermost index.
          Value column = arith::MulIOp::create(
              ib, loc, arith::RemUIOp::create(ib, loc, item, rowVectors), lanesValue);
          innermost = arith::AddIOp::create(ib, loc, loop.getLowerBound().back(), column);
          tileRow = arith::MulIOp::create(
              ib, loc, arith::DivUIOp::create(ib, loc, item, rowVectors), groupsValue);
          last = arith::SubIOp::create(ib, loc, rows, indexConstant(ib, loc, 1));
        } else {
          last = arith::SubIOp::create(ib, loc, chunks, indexConstant(ib, loc, 1));
        }
        // Group j of this thread: row j of its tile, or chunk item + j * stride;
        // past the end it loads the last row or chunk and stores nothing.
        SmallVector<IRMapping> maps(groups * lanes);
        SmallVector<Value> valid(groups);
        for (int64_t j = 0; j < groups; ++j) {
          Value at = rowTiles ? tileRow : item;
          if (j > 0) {
            at = arith::AddIOp::create(
                ib, loc, at,
                rowTiles ? indexConstant(ib, loc, j)
                         : arith::MulIOp::create(ib, loc, stride, indexConstant(ib, loc, j)));
            valid[j] = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::ult, at,
                                             rowTiles ? rows : chunks);
            at = arith::SelectOp::create(ib, loc, valid[j], at, last);
          }
          SmallVector<Value> ivs;
          if (rowTiles) {
            ivs = delinearize(ib, loc, loop, counts, at, loop.getNumLoops() - 1);
            ivs.push_back(innermost);
          } else {
            ivs =
                delinearize(ib, loc, loop, counts, arith::MulIOp::create(ib, loc, at, lanesValue));
          }
          IRMapping rowOf;
          rowOf.map(ValueRange(loop.getInductionVars()).drop_back(), ValueRange(ivs).drop_back());
          llvm::move(
              laneMappings(ib, loc, rowOf, loop.getInductionVars().back(), ivs.back(), lanes),
              maps.begin() + j * lanes);
        }
        emitLanes(ib, loc, *loop.getBody(), *plan, maps, valid);
      });
  return true;
}

ChunkSource ChunkSource::of(scf::ParallelOp loop) {
  return {loop,
          loop.getInductionVars().back(),
          loop.getStep().back(),
          {},
          loop.getBody()->getTerminator()->getOperands()};
}

ChunkSource ChunkSource::of(const LaneReduction &fold) {
  return {fold.loop, fold.loop.getInductionVar(), fold.loop.getStep(), fold.step, fold.stepInputs};
}

std::optional<ChunkPlan> planChunks(const ChunkSource &source) {
  std::optional<LanePlan> plan = planChunkLanes(source);
  if (!plan)
    return std::nullopt;
  return ChunkPlan{plan->lanes, SmallVector<Value>(plan->buffers.getArrayRef())};
}

SmallVector<SmallVector<Value>> chunkValues(OpBuilder &b, Location loc, const ChunkSource &source,
                                            MutableArrayRef<IRMapping> maps, bool byVectors) {
  Block *body = Value(source.iv).getParentBlock();
  std::optional<LanePlan> plan = byVectors ? planChunkLanes(source) : std::nullopt;
  if (plan && plan->lanes == static_cast<int64_t>(maps.size())) {
    emitLanes(b, loc, *body, *plan, maps, ArrayRef<Value>{Value()});
  } else {
    for (IRMapping &m : maps)
      for (Operation &op : body->without_terminator())
        if (!llvm::is_contained(source.skipped, &op))
          b.clone(op, m);
  }
  return llvm::map_to_vector(maps, [&](IRMapping &m) { return mapped(m, source.values); });
}

} // namespace nerve::loop_mapping
