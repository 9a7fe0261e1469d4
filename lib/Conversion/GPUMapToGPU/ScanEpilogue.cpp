//===- ScanEpilogue.cpp - a tiled contraction's scanning epilogue --------===//
//
// A gpumap.tiled_contract with `scan`: a block's tile gathers a few rows of
// every step (a chunk of steps), its f32 products are staged through
// shared memory, and each thread walks its points (16 bytes of a row of
// the output where it can) through the steps with the carried states (a
// neuron over a linear layer's product).
//
//===----------------------------------------------------------------------===//

#include "ContractKernel.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

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

/// Output elements a scanning thread takes side by side: a 16-byte chunk
/// of a row where the output's unit stride is along n (its last
/// dimension), else one.
int64_t ContractKernel::scanChunkElements() {
  auto out = cast<MemRefType>(op.getOutput().getType());
  std::optional<unsigned> unit = nerve::gpumap::unitStrideDim(out);
  if (op.getOutputM() != 0 || !unit || *unit != out.getRank() - 1)
    return 1;
  return 16 / (out.getElementTypeBitWidth() / 8);
}

/// The staged f32 sums of row `r`, columns c0 .. c0 + count - 1 of the
/// tile (c0 a multiple of count): columns swizzled by row in groups of 4
/// (`c ^ (r % 8) * 4`), each group read as one vector.
static SmallVector<Value> stagedSums(const Ix &x, Value staged, int64_t tileN, Value r,
                                     Value c0, int64_t count) {
  Value rowStart = x.mul(r, tileN), key = x.mul(x.rem(r, 8), 4);
  SmallVector<Value> sums;
  if (count < 4) {
    for (int64_t e = 0; e < count; ++e)
      sums.push_back(memref::LoadOp::create(
          x.b, x.loc, staged, ValueRange{x.add(rowStart, x.xorI(x.add(c0, e), key))}));
    return sums;
  }
  auto group = VectorType::get({4}, x.b.getF32Type());
  for (int64_t g = 0; g < count; g += 4) {
    Value at = x.add(rowStart, x.xorI(x.add(c0, g), key));
    Value v = vector::LoadOp::create(x.b, x.loc, group, staged, ValueRange{at}, false,
                                     llvm::MaybeAlign(16));
    for (int64_t e = 0; e < 4; ++e)
      sums.push_back(vector::ExtractOp::create(x.b, x.loc, v, ArrayRef<int64_t>{e}));
  }
  return sums;
}

/// The chunk's steps from `t0` at each of this thread's points: row ml of
/// each step, columns c0 .. c0 + E - 1 of the tile (E =
/// scanChunkElements()): at each step the epilogue on each staged sum, its
/// `with` values and its states, the values stored as one 16-byte store
/// where the chunk is inside an aligned output, else one guarded store an
/// element.
void ContractKernel::scanTile(OpBuilder &b, Value chunk, Value t0, Value staged, Value states) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  int64_t tileN = t.getTileN(), numStates = carried(), width = scanChunkElements();
  int64_t perRow = tileN / width;
  Value points = x.mul(perStep, perRow);
  Value mine = x.ceilDiv(x.clampedRest(tid, points, t.getTileM() * perRow), threads);
  Value steps = x.min(chunkSteps, x.sub(sizeT, t0));
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, chunk, x.c(0));
  Value lastM = x.sub(sizeM, x.c(1)), lastN = x.sub(sizeN, x.c(1));
  Type outElement = op.getOutput().getType().getElementType();
  auto pointLoop = scf::ForOp::create(b, loc, x.c(0), mine, x.c(1));
  OpBuilder pb = OpBuilder::atBlockBegin(pointLoop.getBody());
  Ix px{pb, loc};
  Value p = px.add(tid, px.mul(pointLoop.getInductionVar(), threads));
  Value ml = px.div(p, perRow), c0 = px.mul(px.rem(p, perRow), width);
  Value m = px.add(m0, ml), n0c = px.add(n0, c0);
  Value mc = px.min(m, lastM);
  Value whole = px.andI(px.lt(m, sizeM), px.lt(px.add(n0c, width - 1), sizeN));
  if (width > 1)
    whole = px.andI(whole, outputAligned);
  // State i of element e is init[i * width + e].
  SmallVector<Value> init;
  for (int64_t i = 0; i < numStates; ++i) {
    Value start = arith::ConstantOp::create(pb, loc, cast<FloatAttr>(op.getCarryAttr()[i]));
    for (int64_t e = 0; e < width; ++e) {
      Value kept =
          memref::LoadOp::create(pb, loc, states, ValueRange{px.add(c0, i * tileN + e)});
      init.push_back(arith::SelectOp::create(pb, loc, first, start, kept));
    }
  }
  auto stepLoop = scf::ForOp::create(pb, loc, px.c(0), steps, px.c(1), init);
  OpBuilder sb = OpBuilder::atBlockBegin(stepLoop.getBody());
  Ix sx{sb, loc};
  Value step = stepLoop.getInductionVar();
  Value tIndex = sx.add(t0, step);
  auto indices = [&](Value mi, Value ni) {
    return op.getOutputM() == 0 ? SmallVector<Value, 3>{tIndex, mi, ni}
                                : SmallVector<Value, 3>{tIndex, ni, mi};
  };
  SmallVector<Value> sums =
      stagedSums(sx, staged, tileN, sx.add(sx.mul(step, perStep), ml), c0, width);
  // Every element's `with` values loaded before the first region runs.
  SmallVector<SmallVector<Value>> args;
  for (int64_t e = 0; e < width; ++e) {
    SmallVector<Value> &a = args.emplace_back(SmallVector<Value>{sums[e]});
    Value nc = sx.min(sx.add(n0c, e), lastN);
    for (Value in : op.getWith())
      a.push_back(isa<MemRefType>(in.getType())
                      ? memref::LoadOp::create(sb, loc, in, indices(mc, nc)).getResult()
                      : in);
  }
  SmallVector<OutputPoint> stored;
  SmallVector<Value> next(numStates * width);
  for (int64_t e = 0; e < width; ++e) {
    for (int64_t i = 0; i < numStates; ++i)
      args[e].push_back(stepLoop.getRegionIterArgs()[i * width + e]);
    SmallVector<Value> results = applyEpilogue(sb, args[e]);
    Value v = results[0];
    if (v.getType() != outElement)
      v = arith::TruncFOp::create(sb, loc, outElement, v);
    stored.push_back({m, sx.add(n0c, e), v});
    for (int64_t i = 0; i < numStates; ++i)
      next[i * width + e] = results[1 + i];
  }
  storeChunk(sb, stored, indices, whole, op.getOutput(), indices(m, n0c));
  scf::YieldOp::create(sb, loc, next);
  // Kept for the next chunk, which exists only with one row a step (one
  // point a column).
  if (numStates > 0) {
    auto keep = scf::IfOp::create(pb, loc, px.lt(px.c(1), chunks), false);
    OpBuilder kb = OpBuilder::atBlockBegin(&keep.getThenRegion().front());
    Ix kx{kb, loc};
    for (int64_t i = 0; i < numStates; ++i)
      for (int64_t e = 0; e < width; ++e)
        memref::StoreOp::create(kb, loc, stepLoop.getResult(i * width + e), states,
                                ValueRange{kx.add(c0, i * tileN + e)});
  }
  gpu::BarrierOp::create(b, loc);
}

} // namespace nerve::gpumap_to_gpu
