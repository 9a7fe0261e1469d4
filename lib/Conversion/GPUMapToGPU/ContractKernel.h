//===- ContractKernel.h - the tensor-core kernel of a tiled contraction -*- C++ -*-===//
//
// Shared by the files that build a gpumap.tiled_contract's launch: the
// index arithmetic, how an operand is staged in shared memory, and the
// kernel builder's state. TiledContractToGPU.cpp builds the products and
// the plain epilogue; StagedEpilogue.cpp the one through shared memory
// (staged_rows); ScanEpilogue.cpp the scanning one (a neuron over time);
// ProducerWarps.cpp the walk over k of a warp-specialized block.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_CONVERSION_GPUMAPTOGPU_CONTRACTKERNEL_H
#define NERVE_LIB_CONVERSION_GPUMAPTOGPU_CONTRACTKERNEL_H

#include "nerve/Dialect/GPUMap/Heuristics/ContractTiling.h"
#include "nerve/Dialect/GPUMap/IR/GPUMap.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace nerve::gpumap_to_gpu {

using namespace mlir;
using nerve::gpumap::ContractInstruction;
using nerve::gpumap::ContractTilingAttr;
using nerve::gpumap::kMmaK;
using nerve::gpumap::kMmaM;
using nerve::gpumap::kMmaN;
using nerve::gpumap::TiledContractOp;


constexpr int64_t kChunkElements = 8; // 16 bytes of 16-bit elements
constexpr int64_t kWarp = 32;
/// Output tiles along m that consecutive blocks take before moving along n.
constexpr int64_t kGroupRows = 8;
/// The period of wgmma's 128-byte swizzle: eight 128-byte rows.
constexpr int64_t kSwizzleBytes = 1024;
/// Output elements a thread loads together before storing them (accumulate).
constexpr size_t kEpilogueBatch = 32;
/// 16-byte chunks of a 128-byte swizzled row, and its bytes.
constexpr int64_t kAtomChunks = 8;
constexpr int64_t kRowBytes = 128;

/// Index arithmetic at one builder, to keep the kernel's construction
/// readable.
struct Ix {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) const { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) const { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) const { return y == 0 ? x : add(x, c(y)); }
  Value mul(Value x, int64_t y) const { return arith::MulIOp::create(b, loc, x, c(y)); }
  Value mul(Value x, Value y) const { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, int64_t y) const { return arith::DivUIOp::create(b, loc, x, c(y)); }
  Value div(Value x, Value y) const { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, int64_t y) const { return arith::RemUIOp::create(b, loc, x, c(y)); }
  Value rem(Value x, Value y) const { return arith::RemUIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) const { return arith::SubIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) const { return arith::MinUIOp::create(b, loc, x, y); }
  Value xorI(Value x, Value y) const { return arith::XOrIOp::create(b, loc, x, y); }
  Value lt(Value x, Value y) const {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value andI(Value x, Value y) const { return arith::AndIOp::create(b, loc, x, y); }
  Value ceilDiv(Value x, int64_t y) const { return arith::CeilDivUIOp::create(b, loc, x, c(y)); }
  Value ceilDiv(Value x, Value y) const { return arith::CeilDivUIOp::create(b, loc, x, y); }
  /// max(0, min(hi - lo, cap)) for lo, hi >= 0.
  Value clampedRest(Value lo, Value hi, int64_t cap) const {
    Value positive = lt(lo, hi);
    return min(arith::SelectOp::create(b, loc, positive, sub(hi, lo), c(0)), c(cap));
  }
};

/// The dimension of `type` with a static unit stride (the verifier made
/// sure there is one).
inline int64_t unitDim(MemRefType type) { return *nerve::gpumap::unitStrideDim(type); }

/// How one operand is staged: its memref, which of its dimensions is k,
/// whether k is its unit-stride dimension, and its tile's extent along
/// the outer dimension. It is copied in lines along its unit-stride
/// dimension (rows()), `chunk` elements a copy.
struct OperandStaging {
  Value global;
  int64_t kDim = 0;
  bool kMajor = true;
  int64_t chunk = kChunkElements;
  /// fma's layout, whatever the operand's: tileK rows of `outer` elements
  /// (and kFmaPad more), so that a lane reads its groups of 4 rows or
  /// columns at a k as one vector. A K-major operand is then copied an
  /// element at a time (transposed on the way).
  bool padded = false;
  /// wgmma_tf32's layout for an operand read along its outer dimension:
  /// K-major swizzled rows (tf32 has no transposed wgmma), filled an
  /// element at a time; `sharedChunk` elements are 16 bytes.
  bool transposeToK = false;
  int64_t sharedChunk = kChunkElements;
  /// Whether the stage holds rows along k (what wgmma and ldmatrix read).
  bool sharedKMajor() const { return kMajor || transposeToK; }
  /// Whether each copy is 16 bytes (cp.async.cg, rows 16-byte aligned).
  bool sixteenByteCopies() const { return chunk == sharedChunk; }
  /// wgmma's layout of a tile whose rows run along the outer dimension:
  /// atoms of 64 outer elements (128-byte rows) by tileK rows, one after
  /// another along the outer dimension.
  bool atoms = false;
  int64_t outer = 0, tileK = 0;
  Value outerSize, kSize; ///< host extents, used inside the launch
  /// A scan's lhs: a tile's rows gather `perStep` rows of each of the
  /// steps of a chunk (rows past `used`, a step or a row past the extents
  /// read as zeros). Each of this thread's chunks of a tile (the i-th at
  /// row (tid + i * threads) / chunksPerRow) keeps its step and row, in
  /// range (0 where outside), and whether it is inside, computed once a
  /// chunk of steps (placeScanRows).
  struct ScanRows {
    Value perStep, used, steps;
    SmallVector<Value> t, m, inside;
  };
  std::optional<ScanRows> scanRows;

  /// Whether this thread's i-th chunk, at outer element `o`, lies inside
  /// the operand along the outer dimension.
  Value inOuter(const Ix &x, int64_t i, Value o) const {
    return scanRows ? scanRows->inside[i] : x.lt(o, outerSize);
  }

  /// The global indices of element (outer o, contracted k) of this
  /// thread's i-th chunk; a scan's lhs (time, m, k) from its chunk's row.
  SmallVector<Value, 3> indices(int64_t i, Value o, Value k) const {
    if (scanRows)
      return {scanRows->t[i], scanRows->m[i], k};
    return kDim == 0 ? SmallVector<Value, 3>{k, o} : SmallVector<Value, 3>{o, k};
  }

  int64_t rows() const { return kMajor ? outer : tileK; }
  int64_t rowElements() const { return kMajor ? tileK : outer; }
  int64_t stageElements() const {
    return padded ? (outer + nerve::gpumap::kFmaPad) * tileK : outer * tileK;
  }
  int64_t chunksPerRow() const { return rowElements() / chunk; }

  /// Element offset in a stage held K-major (sharedKMajor) of the 16-byte
  /// chunk `kChunk` of outer row `o`: rows of tileK, swizzled.
  Value alongK(const Ix &x, Value o, Value kChunk) const {
    Value key = tileK / sharedChunk >= 8 ? x.rem(o, 8) : x.rem(x.div(o, 2), 4);
    return x.add(x.mul(o, tileK), x.mul(x.xorI(kChunk, key), sharedChunk));
  }

  /// Element offset in a stage of copy `chunk` of line `row`.
  Value destination(const Ix &x, Value row, Value chunkIndex) const {
    if (transposeToK) // element (k = row, outer = chunkIndex)
      return x.add(alongK(x, chunkIndex, x.div(row, sharedChunk)), x.rem(row, sharedChunk));
    if (!padded)
      return swizzled(x, row, chunkIndex);
    Value along = x.mul(chunkIndex, chunk);
    Value o = kMajor ? row : along, k = kMajor ? along : row;
    return x.add(x.mul(k, outer + nerve::gpumap::kFmaPad), o);
  }

  /// The same operand copied an element at a time (fma, rows not 16-byte
  /// aligned).
  OperandStaging elementwise() const {
    OperandStaging s = *this;
    s.chunk = 1;
    return s;
  }

  /// Element offset in a stage of chunk `chunk` of row `row`, swizzled.
  Value swizzled(const Ix &x, Value row, Value chunk) const {
    if (atoms) {
      Value atom = x.mul(x.div(chunk, kAtomChunks), tileK * kAtomChunks * kChunkElements);
      Value inAtom = x.mul(x.xorI(x.rem(chunk, kAtomChunks), x.rem(row, 8)), kChunkElements);
      return x.add(atom, x.add(x.mul(row, kAtomChunks * kChunkElements), inAtom));
    }
    // Rows of eight 16-byte chunks or more swizzle by row.
    Value key = rowElements() / sharedChunk >= 8 ? x.rem(row, 8) : x.rem(x.div(row, 2), 4);
    return x.add(x.mul(row, rowElements()), x.mul(x.xorI(chunk, key), sharedChunk));
  }

};

/// The accumulators' count of registers a thread per instruction tile.
constexpr int64_t kAccPerTile = 4;

/// Whether `memref`'s rows along its unit stride start 16-byte aligned
/// (host code).
Value rowsAligned(const Ix &x, Value memref);

/// A warpgroup's f32 accumulators of m64nNk* (N / 2 a thread), as wgmma
/// carries them, and the same as values.
LLVM::LLVMStructType warpgroupAccumulators(MLIRContext *ctx, int64_t n);
SmallVector<Value> unpackAccumulators(OpBuilder &b, Location loc, Value acc, int64_t n);

/// One output element of the epilogue: its place and value.
struct OutputPoint {
  Value m, n, v;
};

/// How a pass of staged output rows lies in shared memory (staged_rows):
/// `lines` lines of `length` f32 along the output's unit stride (along n,
/// or along m), `stride` apart; a thread stores `chunk` output elements of
/// a line (16 bytes) at a time.
struct StagedLines {
  bool alongN = true;
  int64_t lines = 0, length = 0, stride = 0, chunk = 0;
};

/// The kernel of one tiled contraction, built into a launch body.
class ContractKernel {
public:
  ContractKernel(TiledContractOp op, ContractTilingAttr tiling)
      : op(op), t(tiling), threads(tiling.getConsumerThreads()),
        warpM(tiling.getTileM() / tiling.getWarpsM()),
        warpN(tiling.getTileN() / tiling.getWarpsN()) {}

  /// The launch at `b` (host code), over output extents m x n.
  void build(OpBuilder &b);

private:
  TiledContractOp op;
  ContractTilingAttr t;
  /// The threads that multiply (all but producer warps), and those that
  /// copy the operand tiles (the same, or the producer warps): the thread
  /// copies chunks copyTid, copyTid + copyThreads, ...
  int64_t threads, warpM, warpN;
  int64_t copyThreads = 0;
  Value copyTid;
  bool loopCopies = false; ///< see forEachCopy
  OperandStaging lhs, rhs;
  Value sizeM, sizeN, sizeK, aligned;
  /// staged_rows, or a scan storing chunks: whether the output's rows are
  /// 16-byte aligned
  Value outputAligned;
  // A scan's: its steps, the steps a tile gathers (a chunk), the rows of
  // each step a tile takes, the chunks.
  Value sizeT, chunkSteps, perStep, chunks;
  Value rowsPerTile; ///< output rows a block takes: tile_m, or a scan's perStep
  Value raw, ringStart; ///< the dynamic shared memory and the ring's first byte
  // In the launch:
  Value tid, lane, warpRow, warpCol, m0, n0;
  Value sharedA, sharedB;
  Type element;

  Value sharedAddress; ///< the ring's first byte, 1024-aligned (wgmma)

  bool warpgroups() const { return nerve::gpumap::isWarpgroup(tilingOf(t).instruction); }
  bool specialized() const { return t.getProducerWarps() > 0; }
  /// Bytes of the ring of operand tiles (the producer's barriers, or a
  /// scan's states, follow).
  int64_t ringBytes() const {
    return t.getStages() * (lhs.stageElements() + rhs.stageElements()) * elementBytes();
  }
  bool tf32() const { return nerve::gpumap::isTf32(tilingOf(t).instruction); }
  int64_t elementBytes() const { return element.getIntOrFloatBitWidth() / 8; }
  /// The tiles of the walk over k: at least one (k = 0 then multiplies
  /// zeros), so that no path reaches the epilogue with accumulators that
  /// no tensor-core instruction wrote (ptxas then serializes every wgmma:
  /// its C7515, docs/decisions.md, "The staged epilogue").
  Value kTiles(const Ix &x) const {
    return arith::MaxUIOp::create(x.b, x.loc, x.ceilDiv(sizeK, t.getTileK()), x.c(1));
  }
  /// The contracted extent of one tensor-core instruction (tf32's k8).
  int64_t instructionK() const { return tf32() ? kMmaK / 2 : kMmaK; }
  bool fma() const { return t.getInstruction() == ContractInstruction::fma; }
  int64_t fragmentsM() const { return warpM / kMmaM; }
  int64_t fragmentsN() const { return warpN / kMmaN; }
  /// fma: a lane's accumulators along m and n.
  int64_t laneRows() const { return warpM / nerve::gpumap::kFmaLanesM; }
  int64_t laneColumns() const { return warpN / nerve::gpumap::kFmaLanesN; }
  int64_t accumulators() const {
    return fma() ? laneRows() * laneColumns() : fragmentsM() * fragmentsN() * 4;
  }

  void buildBody(OpBuilder &b, gpu::LaunchOp launch, bool loopChunks);
  void placeBlock(const Ix &x, gpu::LaunchOp launch, Value tilesM, Value tilesN);
  Value issueStage(OpBuilder &b, Value kTile, Value stage, Value exists);
  void copyAsync(const Ix &x, const OperandStaging &s, Value shared, Value o0, Value k0,
                 Value base, bool wholeK, SmallVectorImpl<Value> &tokens);
  Value copyGroup(OpBuilder &b, Value k0, Value baseA, Value baseB, bool wholeK,
                  bool elementwise = false);
  void copySync(const Ix &x, const OperandStaging &s, Value shared, Value o0, Value k0,
                Value base);
  void forEachCopy(const Ix &x, int64_t perThread,
                   function_ref<void(const Ix &, Value, int64_t)> copy);
  SmallVector<Value> computeStage(OpBuilder &b, Value stage, ValueRange acc);
  SmallVector<Value> fmaStage(OpBuilder &b, Value stage, ValueRange acc);
  SmallVector<std::pair<Value, Value>> fmaPlaces(const Ix &x);
  /// fma: this lane's first row and column in the block's tile.
  std::pair<Value, Value> fmaLaneOrigin(const Ix &x);
  Value loadFragment(const Ix &x, const OperandStaging &s, Value shared, Value base,
                     Value outerStart, int64_t kStart, bool pairOfN);
  void storeOutput(OpBuilder &b, ValueRange acc);
  /// The output's indices of element (m, n) (a plain product's).
  SmallVector<Value, 3> outputIndices(Value m, Value n) {
    return op.getOutputM() == 0 ? SmallVector<Value, 3>{m, n} : SmallVector<Value, 3>{n, m};
  }
  using OutputIndices = function_ref<SmallVector<Value, 3>(Value, Value)>;
  void finishPoints(OpBuilder &b, MutableArrayRef<OutputPoint> points);
  /// Each point stored at `indices(m, n)` where it lies inside the output.
  void storeGuarded(OpBuilder &b, ArrayRef<OutputPoint> points, OutputIndices indices);
  /// Points adjacent along the output's unit stride: one 16-byte store
  /// into `into` at `at` where `whole`, else storeGuarded (always, for one
  /// point).
  void storeChunk(OpBuilder &b, ArrayRef<OutputPoint> points, OutputIndices indices, Value whole,
                  Value into, ValueRange at);
  // staged_rows (StagedEpilogue.cpp): each pass's rows through shared
  // memory, then stored 16 bytes a thread.
  StagedLines stagedLines();
  void storeStaged(OpBuilder &b, ValueRange acc);
  void stageRows(OpBuilder &b, ValueRange acc, Value staged, int64_t pass);
  void storeStagedRows(OpBuilder &b, Value staged, Value lineView, int64_t pass);
  SmallVector<Value> applyEpilogue(OpBuilder &b, ArrayRef<Value> args);
  SmallVector<Value> products(OpBuilder &b);
  void scanChunks(OpBuilder &b, bool loopChunks);
  void placeScanRows(const Ix &x, Value t0);
  void stageTile(OpBuilder &b, ValueRange acc, Value staged);
  void scanTile(OpBuilder &b, Value chunk, Value t0, Value staged, Value states);
  int64_t scanChunkElements();
  /// The local (row, column) of each of this thread's accumulators.
  SmallVector<std::pair<Value, Value>> accumulatorPlaces(const Ix &x);
  int64_t carried() { return op.isScan() ? op.getCarryAttr().size() : 0; }
  void allocateRing(OpBuilder &b);
  ValueRange mainLoop(OpBuilder &b, int64_t lookahead, ValueRange init,
                      function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)> compute);
  Value descriptor(const Ix &x, const OperandStaging &s, Value stage, Value firstRow,
                   int64_t kStart, int64_t ringOffset);
  Value warpgroupStage(OpBuilder &b, Value stage, Value acc);
  // Warp-specialized (producer warps): the producer's and the multiplying
  // warps' walks over k, synchronized by each stage's two mbarriers.
  enum class StageBarrier { landed, released };
  Value stageBarrier(const Ix &x, StageBarrier which, Value stage);
  void specializedBody(OpBuilder &b);
  void produce(OpBuilder &b);
  SmallVector<Value> consume(OpBuilder &b);
};

} // namespace nerve::gpumap_to_gpu

#endif // NERVE_LIB_CONVERSION_GPUMAPTOGPU_CONTRACTKERNEL_H
