//===- ScanEpilogue.cpp - a tiled contraction's scanning epilogue --------===//
//
// A gpumap.tiled_contract with `scan`: a block's tile gathers a few rows of
// every step (a chunk of steps), its f32 products are staged through
// shared memory, and each thread walks its points through the steps with
// the carried states (a neuron over a linear layer's product).
//
//===----------------------------------------------------------------------===//

#include "ContractKernel.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>

namespace nerve::gpumap_to_gpu {

/// A scan's block: for each chunk of steps, the products of its tile
/// (perStep rows of each step), staged in f32 through shared memory, then
/// walked step by step at each of its (row, column) points. The states of
/// a point pass from chunk to chunk through shared memory (a chunk is
/// then a whole tile of steps, one row of each).
void ContractKernel::scanChunks(OpBuilder &b, bool loopChunks) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  int64_t tileFloats = t.getTileM() * t.getTileN();
  Value staged = memref::ViewOp::create(
      b, loc, MemRefType::get({tileFloats}, b.getF32Type(), nullptr, workgroup), raw, ringStart,
      ValueRange{});
  Value states = memref::ViewOp::create(
      b, loc, MemRefType::get({std::max<int64_t>(carried(), 1) * t.getTileN()}, b.getF32Type(),
                              nullptr, workgroup),
      raw, x.add(ringStart, std::max(ringBytes(), tileFloats * 4)), ValueRange{});
  auto chunk = [&](OpBuilder &cb, Value index) {
    Ix cx{cb, loc};
    Value t0 = cx.mul(index, chunkSteps);
    placeScanRows(cx, t0);
    SmallVector<Value> acc = products(cb);
    stageTile(cb, acc, staged);
    scanTile(cb, index, t0, staged, states);
  };
  if (!loopChunks) {
    chunk(b, x.c(0));
    return;
  }
  auto loop = scf::ForOp::create(b, loc, x.c(0), chunks, x.c(1));
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  chunk(lb, loop.getInductionVar());
}

/// This thread's lhs chunk rows at the chunk of steps from `t0`: their
/// step and row (0 outside, so that an address stays in the buffer) and
/// whether they are inside, once, before the walk over k.
void ContractKernel::placeScanRows(const Ix &x, Value t0) {
  OperandStaging::ScanRows &rows = *lhs.scanRows;
  rows.t.clear();
  rows.m.clear();
  rows.inside.clear();
  int64_t perThread = lhs.rows() * lhs.chunksPerRow() / copyThreads;
  for (int64_t i = 0; i < perThread; ++i) {
    Value row = x.div(x.add(copyTid, i * copyThreads), lhs.chunksPerRow());
    Value step = x.add(t0, x.div(row, rows.perStep));
    Value m = x.add(m0, x.rem(row, rows.perStep));
    Value inside = x.andI(x.lt(row, rows.used),
                          x.andI(x.lt(step, rows.steps), x.lt(m, lhs.outerSize)));
    rows.inside.push_back(inside);
    rows.t.push_back(arith::SelectOp::create(x.b, x.loc, inside, step, x.c(0)));
    rows.m.push_back(arith::SelectOp::create(x.b, x.loc, inside, m, x.c(0)));
  }
}

/// Each accumulator to the f32 tile in shared memory at (row, column),
/// columns swizzled by row (`c ^ (r % 8) * 4`) so that the warps' stores
/// spread over the banks; between barriers (the ring's last stage may
/// still be read; the scan reads every thread's values).
void ContractKernel::stageTile(OpBuilder &b, ValueRange acc, Value staged) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  gpu::BarrierOp::create(b, loc);
  for (auto [place, v] : llvm::zip(accumulatorPlaces(x), acc)) {
    auto [r, c] = place;
    Value at = x.add(x.mul(r, t.getTileN()), x.xorI(c, x.mul(x.rem(r, 8), 4)));
    memref::StoreOp::create(b, loc, v, staged, ValueRange{at});
  }
  gpu::BarrierOp::create(b, loc);
}

/// The chunk's steps from `t0` at each of this thread's points (row ml of
/// each step, column c of the tile): the epilogue on the staged sum, the
/// `with` values and the states, its value stored.
void ContractKernel::scanTile(OpBuilder &b, Value chunk, Value t0, Value staged, Value states) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  int64_t tileN = t.getTileN(), numStates = carried();
  Value points = x.mul(perStep, tileN);
  Value mine = x.ceilDiv(x.clampedRest(tid, points, t.getTileM() * tileN), threads);
  Value steps = x.min(chunkSteps, x.sub(sizeT, t0));
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, chunk, x.c(0));
  Value lastM = x.sub(sizeM, x.c(1)), lastN = x.sub(sizeN, x.c(1));
  Type outElement = op.getOutput().getType().getElementType();
  auto pointLoop = scf::ForOp::create(b, loc, x.c(0), mine, x.c(1));
  OpBuilder pb = OpBuilder::atBlockBegin(pointLoop.getBody());
  Ix px{pb, loc};
  Value p = px.add(tid, px.mul(pointLoop.getInductionVar(), threads));
  Value ml = px.div(p, tileN), c = px.rem(p, tileN);
  Value m = px.add(m0, ml), n = px.add(n0, c);
  Value inside = px.andI(px.lt(m, sizeM), px.lt(n, sizeN));
  Value mc = px.min(m, lastM), nc = px.min(n, lastN);
  SmallVector<Value> init;
  for (int64_t i = 0; i < numStates; ++i) {
    Value start = arith::ConstantOp::create(pb, loc, cast<FloatAttr>(op.getCarryAttr()[i]));
    Value kept = memref::LoadOp::create(pb, loc, states, ValueRange{px.add(c, i * tileN)});
    init.push_back(arith::SelectOp::create(pb, loc, first, start, kept));
  }
  auto stepLoop = scf::ForOp::create(pb, loc, px.c(0), steps, px.c(1), init);
  OpBuilder sb = OpBuilder::atBlockBegin(stepLoop.getBody());
  Ix sx{sb, loc};
  Value step = stepLoop.getInductionVar();
  Value tIndex = sx.add(t0, step);
  Value r = sx.add(sx.mul(step, perStep), ml);
  Value at = sx.add(sx.mul(r, tileN), sx.xorI(c, sx.mul(sx.rem(r, 8), 4)));
  auto indices = [&](Value mi, Value ni) {
    return op.getOutputM() == 0 ? SmallVector<Value, 3>{tIndex, mi, ni}
                                : SmallVector<Value, 3>{tIndex, ni, mi};
  };
  SmallVector<Value> args{memref::LoadOp::create(sb, loc, staged, ValueRange{at})};
  for (Value in : op.getWith())
    args.push_back(isa<MemRefType>(in.getType())
                       ? memref::LoadOp::create(sb, loc, in, indices(mc, nc)).getResult()
                       : in);
  args.append(stepLoop.getRegionIterArgs().begin(), stepLoop.getRegionIterArgs().end());
  SmallVector<Value> results = applyEpilogue(sb, args);
  Value v = results[0];
  if (outElement != v.getType())
    v = arith::TruncFOp::create(sb, loc, outElement, v);
  auto guard = scf::IfOp::create(sb, loc, inside, false);
  OpBuilder gb = OpBuilder::atBlockBegin(&guard.getThenRegion().front());
  memref::StoreOp::create(gb, loc, v, op.getOutput(), indices(m, n));
  scf::YieldOp::create(sb, loc, ArrayRef<Value>(results).drop_front());
  // Kept for the next chunk, which exists only with one row a step (one
  // point a column).
  if (numStates > 0) {
    auto keep = scf::IfOp::create(pb, loc, px.lt(px.c(1), chunks), false);
    OpBuilder kb = OpBuilder::atBlockBegin(&keep.getThenRegion().front());
    Ix kx{kb, loc};
    for (int64_t i = 0; i < numStates; ++i)
      memref::StoreOp::create(kb, loc, stepLoop.getResult(i), states,
                              ValueRange{kx.add(c, i * tileN)});
  }
  gpu::BarrierOp::create(b, loc);
}

} // namespace nerve::gpumap_to_gpu
