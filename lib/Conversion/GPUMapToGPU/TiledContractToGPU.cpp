//===- TiledContractToGPU.cpp - nerve-convert-gpumap-to-gpu ---------------===//
//
// A gpumap.tiled_contract as one tensor-core launch, sized by its
// #gpumap.contract_tiling (Passes.td describes the kernel). The operand
// tiles are staged the same way for both operands: an "outer" dimension
// (rows m of lhs, columns n of rhs) and the contracted k; a tile is stored
// as rows along the operand's unit-stride dimension, so that each 16-byte
// chunk is one cp.async. mma.sync reads it with ldmatrix (transposed when
// those rows run along the outer dimension); wgmma through shared-memory
// descriptors (the transpose bit then, the rows cut into 64-wide atoms).
// fma (IEEE f32, no tensor cores) stores both tiles along their outer
// dimension, k rows padded by 4 elements, whatever the operand's layout
// (4-byte copies transpose a K-major one), and each lane reads its groups
// of 4 rows and columns at a k as vectors.
//
//===----------------------------------------------------------------------===//

#include "ContractKernel.h"

#include "nerve/Conversion/Passes.h"

#include "nerve/Dialect/GPUMap/Heuristics/ContractTiling.h"
#include "nerve/Dialect/GPUMap/IR/GPUMap.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace nerve {
#define GEN_PASS_DEF_CONVERTGPUMAPTOGPU
#include "nerve/Conversion/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace nerve::gpumap_to_gpu {

/// Whether `memref`'s rows along its unit stride start 16-byte aligned:
/// its first element and its other stride (host code).
Value rowsAligned(const Ix &x, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t unit = unitDim(type);
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  auto meta = memref::ExtractStridedMetadataOp::create(x.b, x.loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(x.b, x.loc, memref);
  Value first = x.add(base, x.mul(meta.getOffset(), bytes));
  Value zero = x.c(0);
  auto eq = [&](Value v) {
    return arith::CmpIOp::create(x.b, x.loc, arith::CmpIPredicate::eq, v, zero);
  };
  Value aligned = eq(x.rem(first, 16));
  for (auto [i, stride] : llvm::enumerate(meta.getStrides()))
    if (static_cast<int64_t>(i) != unit)
      aligned = x.andI(aligned, eq(x.rem(stride, 16 / bytes)));
  return aligned;
}


Value ContractKernel::issueStage(OpBuilder &b, Value kTile, Value stage, Value exists) {
  Location loc = op.getLoc();
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  auto inRange = scf::IfOp::create(b, loc, TypeRange{tokenType}, exists, true);
  {
    OpBuilder tb = OpBuilder::atBlockBegin(&inRange.getThenRegion().front());
    Ix x{tb, loc};
    Value k0 = x.mul(kTile, t.getTileK());
    Value baseA = x.mul(stage, lhs.stageElements());
    Value baseB = x.mul(stage, rhs.stageElements());
    auto byChunks = scf::IfOp::create(tb, loc, TypeRange{tokenType}, aligned, true);
    OpBuilder ab = OpBuilder::atBlockBegin(&byChunks.getThenRegion().front());
    Ix ax{ab, loc};
    // A tile wholly inside k (all but the last) has every bound but the
    // rows' fixed for the whole walk, which the loop then hoists.
    Value wholeK = arith::CmpIOp::create(ab, loc, arith::CmpIPredicate::ule,
                                         ax.add(k0, t.getTileK()), sizeK);
    auto inK = scf::IfOp::create(ab, loc, TypeRange{tokenType}, wholeK, true);
    OpBuilder wb = OpBuilder::atBlockBegin(&inK.getThenRegion().front());
    scf::YieldOp::create(wb, loc, copyGroup(wb, k0, baseA, baseB, true));
    OpBuilder pb = OpBuilder::atBlockBegin(&inK.getElseRegion().front());
    scf::YieldOp::create(pb, loc, copyGroup(pb, k0, baseA, baseB, false));
    scf::YieldOp::create(ab, loc, inK.getResults());
    OpBuilder sb = OpBuilder::atBlockBegin(&byChunks.getElseRegion().front());
    Ix sx{sb, loc};
    if (fma()) { // 4-byte copies need no more alignment than f32's
      scf::YieldOp::create(sb, loc, copyGroup(sb, k0, baseA, baseB, false, true));
    } else {
      copySync(sx, lhs, sharedA, lhs.scanRows ? sx.c(0) : m0, k0, baseA);
      copySync(sx, rhs, sharedB, n0, k0, baseB);
      scf::YieldOp::create(
          sb, loc,
          ValueRange{nvgpu::DeviceAsyncCreateGroupOp::create(sb, loc, tokenType, ValueRange{})});
    }
    scf::YieldOp::create(tb, loc, byChunks.getResults());
  }
  OpBuilder eb = OpBuilder::atBlockBegin(&inRange.getElseRegion().front());
  scf::YieldOp::create(
      eb, loc,
      ValueRange{nvgpu::DeviceAsyncCreateGroupOp::create(eb, loc, tokenType, ValueRange{})});
  return inRange.getResult(0);
}

/// Both operands' chunks of the tiles at k0, as one group of copies (with
/// `elementwise`, an element a copy).
Value ContractKernel::copyGroup(OpBuilder &b, Value k0, Value baseA, Value baseB, bool wholeK,
                                bool elementwise) {
  Ix x{b, op.getLoc()};
  SmallVector<Value> tokens;
  copyAsync(x, elementwise ? lhs.elementwise() : lhs, sharedA, lhs.scanRows ? x.c(0) : m0, k0,
            baseA, wholeK, tokens);
  copyAsync(x, elementwise ? rhs.elementwise() : rhs, sharedB, n0, k0, baseB, wholeK, tokens);
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  return nvgpu::DeviceAsyncCreateGroupOp::create(b, op.getLoc(), tokenType, tokens);
}

/// This thread's chunks of the operand tile at (o0, k0), one cp.async
/// each, zero-filled past the operand's extents; with `wholeK`, the tile
/// is known to lie inside k.
void ContractKernel::copyAsync(const Ix &x, const OperandStaging &s, Value shared, Value o0,
                               Value k0, Value base, bool wholeK,
                               SmallVectorImpl<Value> &tokens) {
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(x.b.getContext());
  int64_t perThread = s.rows() * s.chunksPerRow() / copyThreads;
  forEachCopy(x, perThread, [&](const Ix &x, Value idx, int64_t i) {
    Value row = x.div(idx, s.chunksPerRow()), chunk = x.rem(idx, s.chunksPerRow());
    Value along = x.mul(chunk, s.chunk);
    // Outer and contracted coordinates of the chunk's first element; the
    // chunk runs along the unit-stride one.
    Value o = x.add(o0, s.kMajor ? row : along), k = x.add(k0, s.kMajor ? along : row);
    Value count;
    if (wholeK && s.kMajor) // the row is in or out
      count = arith::SelectOp::create(x.b, x.loc, s.inOuter(x, i, o), x.c(s.chunk), x.c(0));
    else if (wholeK) // a row along the outer dimension, cut at its extent
      count = x.clampedRest(o, s.outerSize, s.chunk);
    else {
      count = s.kMajor ? x.clampedRest(k, s.kSize, s.chunk)
                       : x.clampedRest(o, s.outerSize, s.chunk);
      Value crossIn = s.kMajor ? s.inOuter(x, i, o) : x.lt(k, s.kSize);
      count = arith::SelectOp::create(x.b, x.loc, crossIn, count, x.c(0));
    }
    // Nothing is read for a count of 0; the address stays in the buffer
    // (inside k already when the tile is).
    Value none = arith::CmpIOp::create(x.b, x.loc, arith::CmpIPredicate::eq, count, x.c(0));
    o = arith::SelectOp::create(x.b, x.loc, none, x.c(0), o);
    if (!wholeK)
      k = arith::SelectOp::create(x.b, x.loc, none, x.c(0), k);
    Value into = x.add(base, s.destination(x, row, chunk));
    // Only 16-byte copies may bypass L1 (cp.async.cg).
    Value token = nvgpu::DeviceAsyncCopyOp::create(
        x.b, x.loc, tokenType, shared, ValueRange{into}, s.global, s.indices(i, o, k),
        x.b.getIndexAttr(s.chunk), count, s.sixteenByteCopies() ? x.b.getUnitAttr() : nullptr);
    if (!loopCopies) // a looped copy's completion is tracked by the stage's barrier
      tokens.push_back(token);
  });
}

/// The same chunks by element loads (rows not 16-byte aligned), zeros past
/// the extents (not loaded).
void ContractKernel::copySync(const Ix &x, const OperandStaging &s, Value shared, Value o0,
                              Value k0, Value base) {
  int64_t perThread = s.rows() * s.chunksPerRow() / copyThreads;
  auto vecType = VectorType::get({s.chunk}, element);
  Value zero = arith::ConstantOp::create(x.b, x.loc, x.b.getFloatAttr(element, 0.0));
  forEachCopy(x, perThread, [&](const Ix &x, Value idx, int64_t i) {
    Value row = x.div(idx, s.chunksPerRow()), chunk = x.rem(idx, s.chunksPerRow());
    Value along = x.mul(chunk, s.chunk);
    Value vec = arith::ConstantOp::create(
        x.b, x.loc, vecType, DenseElementsAttr::get(vecType, x.b.getFloatAttr(element, 0.0)));
    for (int64_t e = 0; e < s.chunk; ++e) {
      Value a = x.add(along, e);
      Value o = x.add(o0, s.kMajor ? row : a), k = x.add(k0, s.kMajor ? a : row);
      Value in = x.andI(s.inOuter(x, i, o), x.lt(k, s.kSize));
      // Loaded only inside: with k = 0 (a walk over k of one tile of
      // zeros) no index is.
      auto load = scf::IfOp::create(x.b, x.loc, TypeRange{element}, in, true);
      OpBuilder tb = load.getThenBodyBuilder();
      scf::YieldOp::create(
          tb, x.loc, memref::LoadOp::create(tb, x.loc, s.global, s.indices(i, o, k)).getResult());
      OpBuilder eb = load.getElseBodyBuilder();
      scf::YieldOp::create(eb, x.loc, zero);
      vec = vector::InsertOp::create(x.b, x.loc, load.getResult(0), vec, ArrayRef<int64_t>{e});
    }
    vector::StoreOp::create(x.b, x.loc, vec, shared,
                            ValueRange{x.add(base, s.destination(x, row, chunk))});
  });
}

/// Calls `copy` for each of this thread's `perThread` chunks with the
/// chunk's index and its number i: unrolled, or with `loopCopies` (the
/// producer warps) as a loop, i then -1 (LLVM unrolls it too, but the
/// producer's kernel then takes 160 registers and 2000 PTX lines rather
/// than 168 and 4500: docs/decisions.md, "Producer warps"). A scan's lhs
/// (which reads i) never loops.
void ContractKernel::forEachCopy(const Ix &x, int64_t perThread,
                                 function_ref<void(const Ix &, Value, int64_t)> copy) {
  if (!loopCopies) {
    for (int64_t i = 0; i < perThread; ++i)
      copy(x, x.add(copyTid, i * copyThreads), i);
    return;
  }
  auto loop = scf::ForOp::create(x.b, x.loc, x.c(0), x.c(perThread), x.c(1));
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  Ix lx{lb, x.loc};
  copy(lx, lx.add(copyTid, lx.mul(loop.getInductionVar(), copyThreads)), -1);
}

/// One ldmatrix.x4 of operand `s` at stage offset `base`: for lhs the
/// 16 x 16 fragment at rows outerStart.., k kStart..; for rhs (pairOfN)
/// the two 8-column fragments at columns outerStart.. (Passes.td and
/// docs/compiler.md give the lane-to-row mapping).
Value ContractKernel::loadFragment(const Ix &x, const OperandStaging &s, Value shared,
                                   Value base, Value outerStart, int64_t kStart, bool pairOfN) {
  Value l8 = x.rem(lane, 8), q = x.rem(x.div(lane, 8), 2), h = x.div(lane, 16);
  Value outerOff, kOff; // the lane's row address, in (outer, k)
  if (s.sharedKMajor()) {
    // Rows along the outer dimension, 16 bytes of k a matrix.
    outerOff = pairOfN ? x.add(l8, x.mul(h, 8)) : x.rem(lane, 16);
    kOff = x.mul(pairOfN ? q : h, s.sharedChunk);
  } else {
    // Rows along k; the outer dimension in 8-wide columns.
    kOff = x.add(l8, x.mul(pairOfN ? q : h, 8));
    outerOff = x.mul(pairOfN ? h : q, 8);
  }
  Value o = x.add(outerStart, outerOff), k = x.add(kOff, kStart);
  Value at = s.sharedKMajor() ? s.alongK(x, o, x.div(k, s.sharedChunk))
                              : s.swizzled(x, k, x.div(o, s.sharedChunk));
  // Each lane's share of four 8 x 16-byte matrices: two 16-bit elements
  // or one tf32.
  auto type = VectorType::get({4, s.sharedChunk / 4}, element);
  return nvgpu::LdMatrixOp::create(x.b, x.loc, type, shared, ValueRange{x.add(base, at)},
                                   !s.sharedKMajor(), 4);
}

} // namespace nerve::gpumap_to_gpu

namespace nerve::gpumap_to_gpu {

/// The 32-bit registers of an ldmatrix result: row `r` of vector<4x2xT>
/// or vector<4x1xf32>, as nvvm.mma.sync takes them (vector<2xf16>, or i32
/// for bf16 and tf32).
Value fragmentRegister(const Ix &x, Value fragment, int64_t r) {
  Value pair = vector::ExtractOp::create(x.b, x.loc, fragment, ArrayRef<int64_t>{r});
  if (cast<VectorType>(pair.getType()).getElementType().isF16())
    return pair;
  if (cast<VectorType>(pair.getType()).getElementType().isF32()) {
    Value v = vector::ExtractOp::create(x.b, x.loc, pair, ArrayRef<int64_t>{0});
    return arith::BitcastOp::create(x.b, x.loc, x.b.getI32Type(), v);
  }
  auto i32x1 = VectorType::get({1}, x.b.getI32Type());
  Value word = vector::BitCastOp::create(x.b, x.loc, i32x1, pair);
  return vector::ExtractOp::create(x.b, x.loc, word, ArrayRef<int64_t>{0});
}

SmallVector<Value> ContractKernel::computeStage(OpBuilder &b, Value stage, ValueRange acc) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  Value baseA = x.mul(stage, lhs.stageElements());
  Value baseB = x.mul(stage, rhs.stageElements());
  SmallVector<Value> out(acc);
  auto ptx = tf32()             ? NVVM::MMATypes::tf32
             : element.isBF16() ? NVVM::MMATypes::bf16
                                : NVVM::MMATypes::f16;
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  for (int64_t kk = 0; kk < t.getTileK(); kk += instructionK()) {
    SmallVector<SmallVector<Value, 4>> a(fragmentsM()), bn(fragmentsN());
    for (int64_t mi = 0; mi < fragmentsM(); ++mi) {
      Value f = loadFragment(x, lhs, sharedA, baseA, x.add(warpRow, mi * kMmaM), kk, false);
      for (int64_t r = 0; r < 4; ++r)
        a[mi].push_back(fragmentRegister(x, f, r));
    }
    for (int64_t p = 0; p < fragmentsN(); p += 2) {
      Value f = loadFragment(x, rhs, sharedB, baseB, x.add(warpCol, p * kMmaN), kk, true);
      for (int64_t r = 0; r < 4; ++r)
        bn[p + r / 2].push_back(fragmentRegister(x, f, r));
    }
    for (int64_t mi = 0; mi < fragmentsM(); ++mi)
      for (int64_t nj = 0; nj < fragmentsN(); ++nj) {
        int64_t at = (mi * fragmentsN() + nj) * kAccPerTile;
        ValueRange c = ValueRange(out).slice(at, kAccPerTile);
        auto mma = NVVM::MmaOp::create(
            b, loc, resultType, a[mi], bn[nj], SmallVector<Value>(c),
            ArrayRef<int64_t>{kMmaM, kMmaN, instructionK()}, std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{ptx, ptx},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
        for (int64_t r = 0; r < kAccPerTile; ++r)
          out[at + r] = LLVM::ExtractValueOp::create(b, loc, mma, ArrayRef<int64_t>{r});
      }
  }
  return out;
}

/// fma's products of one stage: at each k, this lane's groups of 4 rows of
/// lhs and 4 columns of rhs, one 16-byte vector each, and their outer
/// product added to the accumulators (row-major over the lane's tile).
SmallVector<Value> ContractKernel::fmaStage(OpBuilder &b, Value stage, ValueRange acc) {
  using nerve::gpumap::kFmaGroup;
  using nerve::gpumap::kFmaLanesM;
  using nerve::gpumap::kFmaLanesN;
  Location loc = op.getLoc();
  Ix x{b, loc};
  Value baseA = x.mul(stage, lhs.stageElements());
  Value baseB = x.mul(stage, rhs.stageElements());
  auto [laneRow, laneCol] = fmaLaneOrigin(x);
  auto vectorType = VectorType::get({kFmaGroup}, element);
  // The lane's elements of one operand at k: `count` groups, `spacing` apart.
  auto read = [&](const OperandStaging &s, Value shared, Value base, Value first, int64_t k,
                  int64_t count, int64_t spacing) {
    SmallVector<Value> values;
    Value row = x.add(base, x.c(k * (s.outer + nerve::gpumap::kFmaPad)));
    for (int64_t g = 0; g < count; ++g) {
      Value at = x.add(row, x.add(first, g * spacing));
      Value v = vector::LoadOp::create(b, loc, vectorType, shared, ValueRange{at}, false,
                                       llvm::MaybeAlign(16));
      for (int64_t e = 0; e < kFmaGroup; ++e)
        values.push_back(vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{e}));
    }
    return values;
  };
  SmallVector<Value> out(acc);
  for (int64_t k = 0; k < t.getTileK(); ++k) {
    SmallVector<Value> a = read(lhs, sharedA, baseA, laneRow, k, laneRows() / kFmaGroup,
                                kFmaLanesM * kFmaGroup);
    SmallVector<Value> c = read(rhs, sharedB, baseB, laneCol, k, laneColumns() / kFmaGroup,
                                kFmaLanesN * kFmaGroup);
    for (int64_t i = 0; i < laneRows(); ++i)
      for (int64_t j = 0; j < laneColumns(); ++j) {
        Value &sum = out[i * laneColumns() + j];
        sum = LLVM::FMAOp::create(b, loc, a[i], c[j], sum);
      }
  }
  return out;
}

/// A warp's lanes are 4 x 8, each starting a 4-group of rows and columns.
std::pair<Value, Value> ContractKernel::fmaLaneOrigin(const Ix &x) {
  using nerve::gpumap::kFmaGroup;
  using nerve::gpumap::kFmaLanesN;
  return {x.add(warpRow, x.mul(x.div(lane, kFmaLanesN), kFmaGroup)),
          x.add(warpCol, x.mul(x.rem(lane, kFmaLanesN), kFmaGroup))};
}

/// fma's accumulator (i, j) at row group i / 4 (16 rows apart), row
/// i % 4 of it, and likewise along the columns (32 apart).
SmallVector<std::pair<Value, Value>> ContractKernel::fmaPlaces(const Ix &x) {
  using nerve::gpumap::kFmaGroup;
  using nerve::gpumap::kFmaLanesM;
  using nerve::gpumap::kFmaLanesN;
  auto [laneRow, laneCol] = fmaLaneOrigin(x);
  SmallVector<std::pair<Value, Value>> places;
  for (int64_t i = 0; i < laneRows(); ++i)
    for (int64_t j = 0; j < laneColumns(); ++j)
      places.push_back(
          {x.add(laneRow, (i / kFmaGroup) * kFmaLanesM * kFmaGroup + i % kFmaGroup),
           x.add(laneCol, (j / kFmaGroup) * kFmaLanesN * kFmaGroup + j % kFmaGroup)});
  return places;
}

/// Each point's value as stored: with `accumulate` the output's old value
/// added, then the epilogue region on it and the `with` inputs at the
/// point, in the output's element type. Every load is issued before the
/// first region runs, at indices clamped into the output (so that no load
/// waits on a branch or on a store that might alias it; one at a time,
/// each load's latency was paid in turn).
void ContractKernel::finishPoints(OpBuilder &b, MutableArrayRef<OutputPoint> points) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  Value out = op.getOutput();
  Type outElement = op.getOutput().getType().getElementType();
  Value lastM = x.sub(sizeM, x.c(1)), lastN = x.sub(sizeN, x.c(1));
  auto clamped = [&](const OutputPoint &p) {
    return outputIndices(x.min(p.m, lastM), x.min(p.n, lastN));
  };
  if (op.getAccumulate())
    for (OutputPoint &p : points) {
      Value old = memref::LoadOp::create(b, loc, out, clamped(p));
      if (old.getType() != p.v.getType())
        old = arith::ExtFOp::create(b, loc, p.v.getType(), old);
      p.v = arith::AddFOp::create(b, loc, old, p.v);
    }
  if (!op.getEpilogue().empty()) {
    SmallVector<SmallVector<Value>> args;
    for (OutputPoint &p : points) {
      SmallVector<Value> &a = args.emplace_back(SmallVector<Value>{p.v});
      for (Value in : op.getWith())
        a.push_back(isa<MemRefType>(in.getType())
                        ? memref::LoadOp::create(b, loc, in, clamped(p)).getResult()
                        : in);
    }
    for (auto [p, a] : llvm::zip(points, args))
      p.v = applyEpilogue(b, a)[0];
  }
  for (OutputPoint &p : points)
    if (p.v.getType() != outElement)
      p.v = arith::TruncFOp::create(b, loc, outElement, p.v);
}

/// Each accumulator to its output element (m, n) (accumulatorPlaces),
/// kEpilogueBatch at a time through finishPoints; each store guarded by
/// the output's extents.
void ContractKernel::storeOutput(OpBuilder &b, ValueRange acc) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  SmallVector<OutputPoint> points;
  for (auto [place, v] : llvm::zip(accumulatorPlaces(x), acc))
    points.push_back({x.add(m0, place.first), x.add(n0, place.second), v});
  for (size_t first = 0; first < points.size(); first += kEpilogueBatch) {
    MutableArrayRef<OutputPoint> batch = MutableArrayRef<OutputPoint>(points).slice(
        first, std::min<size_t>(kEpilogueBatch, points.size() - first));
    finishPoints(b, batch);
    storeGuarded(b, batch, [&](Value m, Value n) { return outputIndices(m, n); });
  }
}

void ContractKernel::storeGuarded(OpBuilder &b, ArrayRef<OutputPoint> points,
                                  OutputIndices indices) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  for (const OutputPoint &p : points) {
    auto guard = scf::IfOp::create(b, loc, x.andI(x.lt(p.m, sizeM), x.lt(p.n, sizeN)), false);
    OpBuilder gb = OpBuilder::atBlockBegin(&guard.getThenRegion().front());
    memref::StoreOp::create(gb, loc, p.v, op.getOutput(), indices(p.m, p.n));
  }
}

void ContractKernel::storeChunk(OpBuilder &b, ArrayRef<OutputPoint> points,
                                OutputIndices indices, Value whole, Value into, ValueRange at) {
  if (points.size() == 1) {
    storeGuarded(b, points, indices);
    return;
  }
  Location loc = op.getLoc();
  auto store = scf::IfOp::create(b, loc, whole, true);
  OpBuilder vb = OpBuilder::atBlockBegin(&store.getThenRegion().front());
  SmallVector<Value> values;
  for (const OutputPoint &p : points)
    values.push_back(p.v);
  Value chunk = vector::FromElementsOp::create(
      vb, loc, VectorType::get({static_cast<int64_t>(values.size())}, values.front().getType()),
      values);
  vector::StoreOp::create(vb, loc, chunk, into, at, false, llvm::MaybeAlign(16));
  OpBuilder eb = OpBuilder::atBlockBegin(&store.getElseRegion().front());
  storeGuarded(eb, points, indices);
}

/// Accumulator c0, c1 at row g, columns 2t and 2t + 1 of an instruction
/// tile, c2, c3 eight rows below, in the block's tile.
SmallVector<std::pair<Value, Value>> ContractKernel::accumulatorPlaces(const Ix &x) {
  if (fma())
    return fmaPlaces(x);
  Value g = x.div(lane, 4), t2 = x.mul(x.rem(lane, 4), 2);
  Value rowBase = x.add(warpRow, g), colBase = x.add(warpCol, t2);
  SmallVector<std::pair<Value, Value>> places;
  for (int64_t mi = 0; mi < fragmentsM(); ++mi)
    for (int64_t nj = 0; nj < fragmentsN(); ++nj)
      for (int64_t r = 0; r < kAccPerTile; ++r)
        places.push_back({x.add(rowBase, mi * kMmaM + (r / 2) * 8),
                          x.add(colBase, nj * kMmaN + r % 2)});
  return places;
}

/// The epilogue region's ops at `b` over `args` (the sum, the inputs'
/// values, the carried states); its yielded values.
SmallVector<Value> ContractKernel::applyEpilogue(OpBuilder &b, ArrayRef<Value> args) {
  Block &body = op.getEpilogue().front();
  IRMapping mapping;
  mapping.map(body.getArguments(), args);
  for (Operation &inner : body.without_terminator())
    b.clone(inner, mapping);
  SmallVector<Value> results;
  for (Value v : body.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}

/// A warpgroup's accumulators of m64nNk16 in f32: N / 2 a thread.
LLVM::LLVMStructType warpgroupAccumulators(MLIRContext *ctx, int64_t n) {
  SmallVector<Type> fields(n / 2, Float32Type::get(ctx));
  return LLVM::LLVMStructType::getLiteral(ctx, fields);
}

SmallVector<Value> unpackAccumulators(OpBuilder &b, Location loc, Value acc, int64_t n) {
  SmallVector<Value> values;
  for (int64_t i = 0; i < n / 2; ++i)
    values.push_back(LLVM::ExtractValueOp::create(b, loc, acc, ArrayRef<int64_t>{i}));
  return values;
}

/// The shared-memory matrix descriptor of the 16-wide k slice at `kStart`
/// of operand `s`'s tile in `stage`, from outer element `firstRow` (PTX's
/// matrix descriptor: start address, leading and stride byte offsets in
/// 16-byte units, the 128-byte swizzle in the top two bits). K-major: rows
/// of 64 k, eight-row groups 1024 bytes apart (the leading offset unused),
/// a k slice 32 bytes along the row. Outer-major (atoms): eight-k-row
/// groups 1024 bytes apart, atoms of 64 outer elements tileK rows apart, a
/// k slice 16 rows down.
Value ContractKernel::descriptor(const Ix &x, const OperandStaging &s, Value stage,
                                 Value firstRow, int64_t kStart, int64_t ringOffset) {
  int64_t atomBytes = s.tileK * kRowBytes;
  Value within = s.atoms ? x.add(x.mul(x.div(firstRow, kAtomChunks * kChunkElements), atomBytes),
                                 x.c(kStart * kRowBytes))
                         : x.add(x.mul(firstRow, kRowBytes), x.c(kStart * elementBytes()));
  Value bytes = x.add(x.add(sharedAddress, ringOffset),
                      x.add(x.mul(stage, s.stageElements() * elementBytes()), within));
  Type i64 = x.b.getI64Type();
  Value address = arith::IndexCastUIOp::create(x.b, x.loc, i64, bytes);
  auto i64c = [&](int64_t v) { return arith::ConstantIntOp::create(x.b, x.loc, i64, v); };
  Value field = arith::AndIOp::create(
      x.b, x.loc, arith::ShRUIOp::create(x.b, x.loc, address, i64c(4)), i64c(0x3FFF));
  const int64_t leading = (s.atoms ? atomBytes >> 4 : 1) << 16;
  const int64_t stride = int64_t(kSwizzleBytes >> 4) << 32; // eight rows
  const int64_t swizzle128 = int64_t(1) << 62;
  return arith::OrIOp::create(x.b, x.loc, field, i64c(leading | stride | swizzle128));
}

/// The products of one stage: four m64nNk16 over the 64-wide k tile, the
/// warpgroup's 64 rows of lhs against all of rhs's tile; the previous
/// stage's products are waited for (their stage is copied into next).
Value ContractKernel::warpgroupStage(OpBuilder &b, Value stage, Value acc) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  MLIRContext *ctx = b.getContext();
  Value firstRow = x.mul(x.div(tid, 4 * kWarp), 4 * kMmaM);
  int64_t ringB = t.getStages() * lhs.stageElements() * elementBytes();
  auto type = tf32()             ? NVVM::WGMMATypes::tf32
              : element.isBF16() ? NVVM::WGMMATypes::bf16
                                 : NVVM::WGMMATypes::f16;
  auto typeAttr = NVVM::WGMMATypesAttr::get(ctx, type);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t k = 0; k < t.getTileK(); k += instructionK()) {
    Value a = descriptor(x, lhs, stage, firstRow, k, 0);
    Value bd = descriptor(x, rhs, stage, x.c(0), k, ringB);
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, acc.getType(), acc, a, bd,
        NVVM::MMAShapeAttr::get(ctx, 4 * kMmaM, t.getTileN(), instructionK()), typeAttr,
        typeAttr,
        NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
        NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one),
        NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
        NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
        NVVM::MMALayoutAttr::get(ctx, lhs.sharedKMajor() ? NVVM::MMALayout::row
                                                         : NVVM::MMALayout::col),
        NVVM::MMALayoutAttr::get(ctx, rhs.sharedKMajor() ? NVVM::MMALayout::col
                                                         : NVVM::MMALayout::row),
        nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
  return acc;
}

/// The walk over k, and the f32 accumulators it leaves, in
/// accumulatorPlaces' order. A warpgroup's accumulators hold, for each 8
/// columns j, the registers of an m16n8 tile of each warp's 16 rows: the
/// mma.sync layout with one fragment along m and tile_n / 8 along n.
SmallVector<Value> ContractKernel::products(OpBuilder &b) {
  Location loc = op.getLoc();
  if (warpgroups()) {
    // The copies run two tiles behind: the stage before this tile's may
    // still be read by the products left in flight.
    auto accType = warpgroupAccumulators(b.getContext(), t.getTileN());
    Value zero = LLVM::ZeroOp::create(b, loc, accType);
    Value acc = mainLoop(b, t.getStages() - 2, ValueRange{zero},
                         [&](OpBuilder &lb, Value stage, ValueRange carried) {
                           return SmallVector<Value>{warpgroupStage(lb, stage, carried[0])};
                         })[0];
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    return unpackAccumulators(b, loc, acc, t.getTileN());
  }
  SmallVector<Value> init(accumulators(),
                          arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0)));
  ValueRange acc = mainLoop(b, t.getStages() - 1, init,
                            [&](OpBuilder &lb, Value stage, ValueRange carried) {
                              return fma() ? fmaStage(lb, stage, carried)
                                           : computeStage(lb, stage, carried);
                            });
  return SmallVector<Value>(acc.begin(), acc.end());
}

/// The block's output tile from its id: eight tiles along m share each
/// step along n, so that blocks resident together reuse operand tiles.
void ContractKernel::placeBlock(const Ix &x, gpu::LaunchOp launch, Value tilesM,
                                Value tilesN) {
  Value bid = launch.getBlockIds().x;
  Value perGroup = x.mul(tilesN, kGroupRows);
  Value firstM = x.mul(x.div(bid, perGroup), kGroupRows);
  Value rowsInGroup = x.min(x.sub(tilesM, firstM), x.c(kGroupRows));
  Value inGroup = x.rem(bid, perGroup);
  m0 = x.mul(x.add(firstM, x.rem(inGroup, rowsInGroup)), rowsPerTile);
  n0 = x.mul(x.div(inGroup, rowsInGroup), t.getTileN());
}

/// The ring of operand tiles in dynamic shared memory: every lhs stage,
/// then every rhs stage. wgmma's swizzle is a function of address bits, so
/// its ring starts at the first 1024-byte boundary (the launch asks for
/// 1024 bytes more).
void ContractKernel::allocateRing(OpBuilder &b) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  raw = gpu::DynamicSharedMemoryOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr, workgroup));
  Value start = x.c(0);
  if (warpgroups()) {
    Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, raw);
    start = x.rem(x.sub(x.c(kSwizzleBytes), x.rem(address, kSwizzleBytes)), kSwizzleBytes);
    sharedAddress = x.add(address, start);
  }
  auto view = [&](const OperandStaging &s, Value byteOffset) -> Value {
    auto type = MemRefType::get({t.getStages() * s.stageElements()}, element, nullptr, workgroup);
    return memref::ViewOp::create(b, loc, type, raw, byteOffset, ValueRange{});
  };
  sharedA = view(lhs, start);
  sharedB = view(rhs, x.add(start, t.getStages() * lhs.stageElements() * elementBytes()));
  ringStart = start;
}

/// The walk over k: the first `lookahead` tiles' copies issued before it,
/// then at each tile: wait for its copies, a barrier (the stage the next
/// copies overwrite is free), the copies of the tile `lookahead` ahead,
/// and `compute` on this tile's stage. Returns the accumulators.
ValueRange ContractKernel::mainLoop(
    OpBuilder &b, int64_t lookahead, ValueRange init,
    function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)> compute) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  Value numK = kTiles(x);
  Value token;
  for (int64_t s = 0; s < lookahead; ++s)
    token = issueStage(b, x.c(s), x.c(s), x.lt(x.c(s), numK));
  SmallVector<Value> carried(init);
  carried.push_back(token);
  auto loop = scf::ForOp::create(b, loc, x.c(0), numK, x.c(1), carried);
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  Ix lx{lb, loc};
  Value kt = loop.getInductionVar();
  ValueRange state = loop.getRegionIterArgs();
  // This tile's group done (the lookahead - 1 after it may stay in flight).
  nvgpu::DeviceAsyncWaitOp::create(lb, loc, state.back(), lb.getI32IntegerAttr(lookahead - 1));
  // wgmma reads shared memory through the async proxy: what this thread's
  // copies wrote is made visible to it before the barrier publishes it.
  if (warpgroups())
    NVVM::FenceProxyOp::create(lb, loc, NVVM::ProxyKind::async_shared,
                               NVVM::SharedSpaceAttr::get(lb.getContext(),
                                                          NVVM::SharedSpace::shared_cta));
  gpu::BarrierOp::create(lb, loc);
  Value ahead = lx.add(kt, lookahead);
  Value issued = issueStage(lb, ahead, lx.rem(ahead, t.getStages()), lx.lt(ahead, numK));
  SmallVector<Value> next = compute(lb, lx.rem(kt, t.getStages()), state.drop_back());
  next.push_back(issued);
  scf::YieldOp::create(lb, loc, next);
  return loop.getResults().drop_back();
}

void ContractKernel::buildBody(OpBuilder &b, gpu::LaunchOp launch, bool loopChunks) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  tid = launch.getThreadIds().x;
  copyTid = tid;
  copyThreads = threads;
  lane = x.rem(tid, kWarp);
  Value warp = x.div(tid, kWarp);
  warpRow = x.mul(x.div(warp, t.getWarpsN()), warpM);
  warpCol = x.mul(x.rem(warp, t.getWarpsN()), warpN);
  placeBlock(x, launch, x.ceilDiv(sizeM, rowsPerTile), x.ceilDiv(sizeN, t.getTileN()));
  if (fma())
    nerve::gpumap::OccupancyHintOp::create(b, loc, nerve::gpumap::kFmaBlocksPerSM);
  allocateRing(b);
  if (op.isScan())
    scanChunks(b, loopChunks);
  else if (specialized())
    specializedBody(b);
  else if (t.getStagedRows() > 0)
    storeStaged(b, products(b));
  else
    storeOutput(b, products(b));
}

void ContractKernel::build(OpBuilder &b) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  element = op.getLhs().getType().getElementType();
  int64_t o = op.scanOffset(), outM = op.getOutputM();
  sizeM = memref::DimOp::create(b, loc, op.getOutput(), o + outM);
  sizeN = memref::DimOp::create(b, loc, op.getOutput(), o + 1 - outM);
  sizeK = memref::DimOp::create(b, loc, op.getLhs(), o + op.getLhsK());
  auto staging = [&](Value global, int64_t kDim, int64_t outer, Value outerSize) {
    OperandStaging s;
    s.global = global;
    s.kDim = kDim;
    s.kMajor = unitDim(cast<MemRefType>(global.getType())) == kDim;
    s.atoms = warpgroups() && !s.kMajor && !tf32();
    s.padded = fma();
    s.chunk = s.sharedChunk = 16 / elementBytes(); // 16-byte copies
    if (tf32() && !s.kMajor) { // transposed an element at a time
      s.transposeToK = true;
      s.chunk = 1;
    }
    if (fma()) // along an outer unit stride, else transposed
      s.chunk = s.kMajor ? 1 : nerve::gpumap::kFmaGroup;
    s.outer = outer;
    s.tileK = t.getTileK();
    s.outerSize = outerSize;
    s.kSize = sizeK;
    return s;
  };
  lhs = staging(op.getLhs(), o + op.getLhsK(), t.getTileM(), sizeM);
  rhs = staging(op.getRhs(), op.getRhsK(), t.getTileN(), sizeN);
  // Whether the operands copied 16 bytes at a time are aligned for it.
  aligned = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  for (const OperandStaging *s : {&lhs, &rhs})
    if (s->sixteenByteCopies())
      aligned = x.andI(aligned, rowsAligned(x, s->global));
  if (t.getStagedRows() > 0 || (op.isScan() && scanChunkElements() > 1))
    outputAligned = rowsAligned(x, op.getOutput());
  rowsPerTile = x.c(t.getTileM());
  Value active = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  int64_t sharedBytes = nerve::gpumap::contractSharedBytes(nerve::gpumap::tilingOf(t));
  if (op.isScan()) {
    // Up to tile_m steps a chunk, tile_m / steps rows of each a tile.
    sizeT = memref::DimOp::create(b, loc, op.getOutput(), 0);
    active = x.lt(x.c(0), sizeT);
    chunkSteps = x.min(arith::MaxUIOp::create(b, loc, sizeT, x.c(1)), x.c(t.getTileM()));
    perStep = x.div(x.c(t.getTileM()), chunkSteps);
    chunks = arith::CeilDivUIOp::create(b, loc, sizeT, chunkSteps);
    rowsPerTile = perStep;
    lhs.scanRows = OperandStaging::ScanRows{perStep, x.mul(perStep, chunkSteps), sizeT, {}, {},
                                            {}};
    sharedBytes = nerve::gpumap::contractScanSharedBytes(nerve::gpumap::tilingOf(t), carried());
  }
  Value work = x.mul(x.ceilDiv(sizeM, rowsPerTile), x.ceilDiv(sizeN, t.getTileN()));
  auto nonEmpty = scf::IfOp::create(b, loc, x.andI(x.lt(x.c(0), work), active), false);
  OpBuilder ib = OpBuilder::atBlockBegin(&nonEmpty.getThenRegion().front());
  auto emitLaunch = [&](OpBuilder &lb0, bool loopChunks) {
    Ix ix{lb0, loc};
    Value one = ix.c(1);
    Value shared = arith::IndexCastOp::create(lb0, loc, lb0.getI32Type(), ix.c(sharedBytes));
    auto launch =
        gpu::LaunchOp::create(lb0, loc, work, one, one, ix.c(t.getThreads()), one, one, shared);
    OpBuilder lb = OpBuilder::atBlockBegin(&launch.getBody().front());
    buildBody(lb, launch, loopChunks);
    gpu::TerminatorOp::create(lb, loc);
  };
  if (!op.isScan()) {
    emitLaunch(ib, false);
    return;
  }
  // A scan of at most tile_m steps (one chunk) and one of more are two
  // kernels: around a loop of chunks, what the walk over k keeps stays
  // live through the scan and spills (ptxas: ~2 KB a thread), which the
  // common case should not pay.
  auto single = scf::IfOp::create(
      ib, loc, arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, chunks, Ix{ib, loc}.c(1)),
      true);
  OpBuilder sb = OpBuilder::atBlockBegin(&single.getThenRegion().front());
  emitLaunch(sb, false);
  OpBuilder eb = OpBuilder::atBlockBegin(&single.getElseRegion().front());
  emitLaunch(eb, true);
}

struct ConvertGPUMapToGPU : nerve::impl::ConvertGPUMapToGPUBase<ConvertGPUMapToGPU> {
  void runOnOperation() override {
    SmallVector<TiledContractOp> ops;
    getOperation().walk([&](TiledContractOp op) { ops.push_back(op); });
    for (TiledContractOp op : ops) {
      OpBuilder b(op);
      ContractKernel(op, op.getTiling()).build(b);
      op.erase();
    }
  }
};

} // namespace nerve::gpumap_to_gpu
