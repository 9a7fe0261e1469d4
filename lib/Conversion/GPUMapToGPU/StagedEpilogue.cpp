//===- StagedEpilogue.cpp - a tiled contraction's output through shared memory -===//
//
// With `staged_rows`, the products' f32 sums leave the registers through
// shared memory: a pass's rows are written as lines along the output's
// unit stride (the ring's bytes, padded against bank conflicts), then each
// thread takes 16-byte chunks of a line, finishes them (accumulate, the
// `with` inputs, the epilogue region) and stores each with one 16-byte
// store. Stored from registers, a warp's store writes 8 bytes into each of
// eight rows; from the lines, 512 contiguous bytes.
//
//===----------------------------------------------------------------------===//

#include "ContractKernel.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace nerve::gpumap_to_gpu {

StagedLines ContractKernel::stagedLines() {
  auto out = cast<MemRefType>(op.getOutput().getType());
  StagedLines l;
  l.alongN = unitDim(out) == 1 - op.getOutputM();
  int64_t rows = t.getStagedRows();
  l.lines = l.alongN ? rows : t.getTileN();
  l.length = l.alongN ? t.getTileN() : rows;
  l.stride = l.length + (l.alongN ? nerve::gpumap::kStagedPadAlongN
                                  : nerve::gpumap::kStagedPadAlongM);
  l.chunk = 16 / (out.getElementTypeBitWidth() / 8);
  return l;
}

/// Each pass of staged_rows rows: a barrier (the ring, or the last pass's
/// lines, read), the rows' warps write their sums, a barrier, every thread
/// stores chunks. The output is read through a view whose last dimension
/// is its unit stride.
void ContractKernel::storeStaged(OpBuilder &b, ValueRange acc) {
  Location loc = op.getLoc();
  StagedLines l = stagedLines();
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value staged = memref::ViewOp::create(
      b, loc, MemRefType::get({l.lines * l.stride}, b.getF32Type(), nullptr, workgroup), raw,
      ringStart, ValueRange{});
  Value out = op.getOutput();
  auto outType = cast<MemRefType>(out.getType());
  Value lineView = out;
  if (unitDim(outType) != 1) {
    AffineMap swap = AffineMap::getPermutationMap(ArrayRef<unsigned>{1, 0}, b.getContext());
    lineView = memref::TransposeOp::create(b, loc, out, AffineMapAttr::get(swap));
  }
  for (int64_t pass = 0; pass < t.getTileM() / t.getStagedRows(); ++pass) {
    gpu::BarrierOp::create(b, loc);
    stageRows(b, acc, staged, pass);
    gpu::BarrierOp::create(b, loc);
    storeStagedRows(b, staged, lineView, pass);
  }
}

/// The accumulators of the warps whose rows are in `pass` to their lines:
/// along n, each pair of adjacent columns (c0 c1, c2 c3 of every tensor-core
/// instruction) as one 8-byte store; along m, one element at a time.
void ContractKernel::stageRows(OpBuilder &b, ValueRange acc, Value staged, int64_t pass) {
  Location loc = op.getLoc();
  StagedLines l = stagedLines();
  int64_t rows = t.getStagedRows();
  OpBuilder wb = b;
  if (rows < t.getTileM()) {
    Ix x{b, loc};
    Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x.div(warpRow, rows),
                                       x.c(pass));
    auto inPass = scf::IfOp::create(b, loc, mine, false);
    wb = OpBuilder::atBlockBegin(&inPass.getThenRegion().front());
  }
  Ix x{wb, loc};
  SmallVector<std::pair<Value, Value>> places = accumulatorPlaces(x);
  Value first = x.c(pass * rows);
  for (size_t i = 0; i < acc.size(); i += l.alongN ? 2 : 1) {
    auto [r, c] = places[i];
    Value line = l.alongN ? x.sub(r, first) : c, along = l.alongN ? c : x.sub(r, first);
    Value at = x.add(x.mul(line, l.stride), along);
    if (!l.alongN) {
      memref::StoreOp::create(wb, loc, acc[i], staged, ValueRange{at});
      continue;
    }
    Value pair = vector::FromElementsOp::create(
        wb, loc, VectorType::get({2}, wb.getF32Type()), ValueRange{acc[i], acc[i + 1]});
    vector::StoreOp::create(wb, loc, pair, staged, ValueRange{at}, false, llvm::MaybeAlign(8));
  }
}

/// Every thread's chunks of the pass's lines (chunk c = tid + i * threads):
/// the sums read as one vector, finished, then one 16-byte store where the
/// chunk lies inside an aligned output, else one guarded store an element.
void ContractKernel::storeStagedRows(OpBuilder &b, Value staged, Value lineView, int64_t pass) {
  Location loc = op.getLoc();
  StagedLines l = stagedLines();
  Ix x{b, loc};
  int64_t chunksPerLine = l.length / l.chunk, total = l.lines * chunksPerLine;
  int64_t perThread = (total + threads - 1) / threads;
  auto loop = scf::ForOp::create(b, loc, x.c(0), x.c(perThread), x.c(1));
  OpBuilder cb = OpBuilder::atBlockBegin(loop.getBody());
  Ix cx{cb, loc};
  Value c = cx.add(tid, cx.mul(loop.getInductionVar(), threads));
  if (total % threads != 0) {
    auto inside = scf::IfOp::create(cb, loc, cx.lt(c, cx.c(total)), false);
    cb.setInsertionPointToStart(&inside.getThenRegion().front());
  }
  Value line = cx.div(c, chunksPerLine), along = cx.mul(cx.rem(c, chunksPerLine), l.chunk);
  Value sums = vector::LoadOp::create(cb, loc, VectorType::get({l.chunk}, cb.getF32Type()), staged,
                                      ValueRange{cx.add(cx.mul(line, l.stride), along)}, false,
                                      llvm::MaybeAlign(16));
  Value firstRow = cx.add(m0, cx.c(pass * t.getStagedRows()));
  Value lineAt = l.alongN ? cx.add(firstRow, line) : cx.add(n0, line);
  Value alongAt = cx.add(l.alongN ? n0 : firstRow, along);
  SmallVector<OutputPoint> points;
  for (int64_t e = 0; e < l.chunk; ++e) {
    Value a = cx.add(alongAt, e);
    Value v = vector::ExtractOp::create(cb, loc, sums, ArrayRef<int64_t>{e});
    points.push_back(l.alongN ? OutputPoint{lineAt, a, v} : OutputPoint{a, lineAt, v});
  }
  finishPoints(cb, points);
  Value lineSize = l.alongN ? sizeM : sizeN, alongSize = l.alongN ? sizeN : sizeM;
  Value whole = cx.andI(cx.andI(cx.lt(lineAt, lineSize),
                                cx.lt(cx.add(alongAt, l.chunk - 1), alongSize)),
                        outputAligned);
  storeChunk(cb, points, [&](Value m, Value n) { return outputIndices(m, n); }, whole, lineView,
             ValueRange{lineAt, alongAt});
}

} // namespace nerve::gpumap_to_gpu
