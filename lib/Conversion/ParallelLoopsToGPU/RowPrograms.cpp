//===- RowPrograms.cpp - row statistics and their consumer in one kernel -===//
//
// softmax, log_softmax and layer_norm lower to a few parallel loops over the
// same rows: each of the first ones reduces every row to a statistic (a
// max, a sum, a mean) stored in a row buffer, and a last one walks the rows
// again, element by element, reading the statistics. Mapped one by one,
// these are several kernels that each read the whole input.
//
// A *row program* runs them as one kernel, a block per row: the block's
// threads split each reduction (thread t takes the elements t, t + T, ...),
// combine it through shuffles and shared memory so that every thread holds
// the statistic, and then split the elementwise pass the same way. The
// statistics never go through memory (the row buffers are still written,
// once per row). An input row that the passes read more than once is kept
// in shared memory as the first pass reads it: every thread reads back only
// the elements it stored itself, so no barrier is needed. The staging takes
// up to the chip's opt-in limit of shared memory (227 KiB on an H100); in
// the vector form (below), a row up to twice as wide keeps its first
// columns there and reads the rest again from global memory. Wider rows run
// as the loops' own launches instead (chosen at run time: all are compiled).
//
// When every access that varies with the column is at (row, column) of a
// buffer with unit innermost stride, the program also exists in a vector
// form: a thread takes 16 bytes of consecutive columns at a time (one
// vector load, staging store and store each), chosen at run time when the
// row width and the buffers' alignment allow it. Its blocks that share their
// SM run a kernel for each power-of-two block size, which the compiler then
// knows; rows of one warp or less run a row per warp or per part of a warp,
// reduced by shuffles alone, two warps a block for the shorter rows.
// Those kernels and the blocks of 64 and 128 threads, whose threads take at
// most four vectors of a row, keep them in registers instead of shared
// memory (the register form: their passes are unrolled over a thread's
// vectors).
//
// On chips with thread block clusters (sm_90 and later), a vector-form row
// too wide to share its SM with other blocks runs on a cluster of 2 to 8
// blocks instead: each block stages and walks its own slice of the row's
// columns, and after each reduction the blocks' totals, each put in a
// shared-memory slot, are read by every thread of the cluster from all the
// blocks' slots (distributed shared memory) and combined in block order.
//
//===----------------------------------------------------------------------===//

#include "LoopMapping.h"
#include "RowGroups.h"

#include "nerve/Dialect/GPUMap/IR/GPUMap.h"
#include "nerve/Target/ChipProfile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace nerve::loop_mapping;
using nerve::kSharedBytesWithoutOptIn;

namespace {

/// log2 of the warp size.
constexpr int64_t kWarpShift = 5;
/// The sizes below (threads, staging, clusters, the register form) come
/// from the row program's heuristics (nerve/Dialect/GPUMap/Heuristics/
/// RowProgram.h), over the program's shape and the strategy's limits.
using nerve::gpumap::kRowUnroll;
using nerve::gpumap::kRowVectorsPerThread;

/// A parallel loop's induction variables, as a range that outlives the call.
/// Builds the kernel of one row program.
class RowProgramBuilder {
public:
  RowProgramBuilder(RowGroup &g, const nerve::gpumap::RowProgramLimits &limits,
                    function_ref<void(scf::ParallelOp, int64_t)> mapAlone)
      : g(g), loc(g.stats.front().getLoc()), t(nerve::gpumap::tuneRowProgram(shapeOf(g), limits)),
        mapAlone(mapAlone) {}

  Operation *build() {
    h.first = g.stats.front();
    for (Operation *op : g.between)
      op->moveBefore(h.first);
    OpBuilder b(h.first);
    // Columns of the first reduction: they size the block and the staging.
    h.columns = hostTripCount(b, g.first.loop, h.first);
    if (!h.columns)
      return nullptr;
    planThreads(b);
    planStaging(b);
    planClusters(b);
    Operation *resume =
        g.final ? g.final->getNextNode() : g.stats.back()->getNextNode();
    OpBuilder kb = b;
    if (h.fitsProgram)
      kb = mapOtherRows(b);
    h.rowCapacity = capacity;
    buildKernels(kb);
    for (scf::ParallelOp s : g.stats)
      s.erase();
    if (g.final)
      g.final.erase();
    return resume;
  }

private:
  /// The host's values that choose and size the program's kernels.
  struct HostPlan {
    scf::ParallelOp first;          ///< the first statistics loop
    SmallVector<Value> counts;      ///< its trip counts
    Value rows, zero, columns;      ///< rows, 0, the first reduction's columns
    Value threads;                  ///< a block's threads (vector form: its size)
    Value vectors;                  ///< whether the vector form applies (or null)
    Value sharedBytes;              ///< a block's staging (i32), or null
    Value fitsAll, fitsProgram;     ///< the row staged whole; the program applies
    Value rounded;                  ///< columns rounded up to 16
    Value solo;                     ///< a block's staging takes over half an SM's
    int64_t fit = 0;                ///< columns the staging holds at most
    int64_t bytesPerColumn = 0;     ///< staged bytes a column
    Value clustered, clusterSize;   ///< the cluster form applies; its blocks
    Value slice, sliceShared;       ///< a block's columns and staging (i32)
    bool clusterOnlyTooWide = false;///< clusters only for rows a block cannot stage
    Value rowCapacity;              ///< staged columns without clusters
  };

  /// How one kernel of the program is built.
  struct KernelForm {
    int64_t lanes = 1;           ///< columns a vector (1: by elements)
    bool partialStaging = false; ///< rows staged in part
    Value blockSize;             ///< threads a block (null for rows over warps)
    Value cluster;               ///< blocks of a cluster (host value), or null
    int64_t warpsPerBlock = 0;   ///< rows over warps: warps a block
    int64_t staticShift = -1;    ///< log2 of a row's lanes, when constant
    bool fiveAnSM = false;       ///< slices of which five blocks fit an SM
    bool rowInRegisters = false; ///< the register form
  };

  KernelForm form(int64_t kernelLanes, Value blockSize) const {
    KernelForm f;
    f.lanes = kernelLanes;
    f.blockSize = blockSize;
    return f;
  }

  /// Where a block's rows start and step, and the staging its row group
  /// starts at.
  struct RowWalk {
    Value firstRow, rowStep, stagingStart, group;
  };

  /// The trip counts, and the threads a block: the fewest warps that take
  /// perThread columns each, rounded up to a power of two, so that the
  /// vector form has a kernel for each size (buildShared); the one-warp
  /// kernel's rows: the fewest lanes, a power of two, that take a row's
  /// vectors kRowVectorsPerThread each (a warp walks 32 / lanes rows at a
  /// time).
  void planThreads(OpBuilder &b) {
    std::tie(h.counts, h.rows) = tripCounts(b, h.first);
    h.zero = indexConstant(b, loc, 0);
    int64_t perThread = t.columnsPerThread;
    Value warps = arith::CeilDivUIOp::create(b, loc, h.columns,
                                             indexConstant(b, loc, perThread * kWarpSize));
    Value needed = arith::MulIOp::create(b, loc, warps, indexConstant(b, loc, kWarpSize));
    h.threads = indexConstant(b, loc, kWarpSize);
    for (int64_t n = 2 * kWarpSize; n <= t.maxThreadsLargeStaging; n *= 2) {
      Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, needed,
                                         indexConstant(b, loc, n / 2));
      h.threads = arith::SelectOp::create(b, loc, more, indexConstant(b, loc, n), h.threads);
    }
    if (g.lanes > 1) {
      Value lanesNeeded = arith::CeilDivUIOp::create(
          b, loc, h.columns, indexConstant(b, loc, g.lanes * kRowVectorsPerThread));
      groupShift = indexConstant(b, loc, 0);
      for (int64_t n = 2, shift = 1; n <= kWarpSize; n *= 2, ++shift) {
        Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, lanesNeeded,
                                           indexConstant(b, loc, n / 2));
        groupShift =
            arith::SelectOp::create(b, loc, more, indexConstant(b, loc, shift), groupShift);
      }
    }
  }

  /// Whether the vector form applies, and how much the staging takes: the
  /// columns it holds, whether the row fits whole, whether the program
  /// applies, a block's shared memory and threads.
  void planStaging(OpBuilder &b) {
    Value maxThreads = indexConstant(b, loc, t.maxThreads);
    if (g.lanes > 1) {
      // The row width and the buffers allow.
      h.vectors = vectorAccessesFit(b, loc, g.vectorBuffers, g.lanes, h.columns, h.zero);
      // A row kept in registers has a vector (empty rows take the form by
      // elements).
      if (t.rowInRegisters) {
        Value nonEmpty =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, h.columns, h.zero);
        h.vectors = arith::AndIOp::create(b, loc, h.vectors, nonEmpty);
      }
    }
    if (!g.staged.empty()) {
      h.bytesPerColumn = stagedBytesPerColumn();
      // A whole number of 16-column groups per array keeps each one aligned
      // for 16-byte vectors.
      h.fit = t.fitColumns;
      Value groups = arith::CeilDivUIOp::create(b, loc, h.columns, indexConstant(b, loc, 16));
      h.rounded = arith::MulIOp::create(b, loc, groups, indexConstant(b, loc, 16));
      capacity = arith::MinUIOp::create(b, loc, h.rounded, indexConstant(b, loc, h.fit));
      h.fitsAll = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, h.columns,
                                        indexConstant(b, loc, h.fit));
      h.fitsProgram = h.fitsAll;
      if (h.vectors) {
        // Staging at least half the row, the vector form reads the rest of
        // it twice more at most, still less than the loops' own launches.
        Value half = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, h.columns,
                                           indexConstant(b, loc, 2 * h.fit));
        Value halfByVectors = arith::AndIOp::create(b, loc, half, h.vectors);
        h.fitsProgram = arith::OrIOp::create(b, loc, h.fitsAll, halfByVectors);
      }
      Value bytes =
          arith::MulIOp::create(b, loc, capacity, indexConstant(b, loc, h.bytesPerColumn));
      h.sharedBytes = arith::IndexCastOp::create(b, loc, b.getI32Type(), bytes);
      Value large = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, bytes,
                                          indexConstant(b, loc, kSharedBytesWithoutOptIn));
      maxThreads = arith::SelectOp::create(
          b, loc, large, indexConstant(b, loc, t.maxThreadsLargeStaging), maxThreads);
    }
    h.threads = arith::MinUIOp::create(b, loc, h.threads, maxThreads);
    if (h.sharedBytes)
      h.solo = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ugt, h.sharedBytes,
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), t.soloStagingBytes));
  }

  /// The cluster form: rows whose staging would take more than half the
  /// shared memory, split over the fewest blocks whose slices take at most
  /// the tuning's clusterSliceBytes (all of them when none do), each slice a whole
  /// number of 16 columns that fits a block's staging. It takes the place
  /// of the kernels for a block alone on its SM and for rows staged in
  /// part (softmax and log_softmax over 65536 columns on an H200: 69-75%
  /// of the copy bandwidth with those, 74-81% on clusters), except in
  /// programs whose elementwise pass loads more (clusterOnlyTooWide): they
  /// keep those kernels and take clusters only where a block would stage
  /// the row in part.
  void planClusters(OpBuilder &b) {
    h.clusterOnlyTooWide = t.clusterOnlyTooWide;
    if (t.clusterBlocks <= 1 || !h.vectors || !h.fitsAll || !clusterable())
      return;
    Value c16 = indexConstant(b, loc, 16);
    Value rowBytes =
        arith::MulIOp::create(b, loc, h.rounded, indexConstant(b, loc, h.bytesPerColumn));
    h.clusterSize = indexConstant(b, loc, t.clusterBlocks);
    for (int64_t c = t.clusterBlocks / 2; c >= 2; c /= 2) {
      Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, rowBytes,
                                         indexConstant(b, loc, c * t.clusterSliceBytes));
      h.clusterSize =
          arith::SelectOp::create(b, loc, fits, indexConstant(b, loc, c), h.clusterSize);
    }
    Value perBlock = arith::CeilDivUIOp::create(b, loc, h.columns, h.clusterSize);
    Value sliceGroups = arith::CeilDivUIOp::create(b, loc, perBlock, c16);
    h.slice = arith::MulIOp::create(b, loc, sliceGroups, c16);
    // Rows whose staging would take more than half of a block's, or with
    // other loads in the elementwise pass, more than all of it.
    Value one = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
    Value wide = h.clusterOnlyTooWide
                     ? arith::XOrIOp::create(b, loc, h.fitsAll, one).getResult()
                     : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, rowBytes,
                                             indexConstant(b, loc, t.soloStagingBytes))
                           .getResult();
    Value sliceFits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, h.slice,
                                            indexConstant(b, loc, h.fit));
    Value wideVectors = arith::AndIOp::create(b, loc, wide, h.vectors);
    h.clustered = arith::AndIOp::create(b, loc, wideVectors, sliceFits);
    Value sliceBytes =
        arith::MulIOp::create(b, loc, h.slice, indexConstant(b, loc, h.bytesPerColumn));
    h.sliceShared = arith::IndexCastOp::create(b, loc, b.getI32Type(), sliceBytes);
    if (h.clusterOnlyTooWide) {
      // The other kernels stay for rows a block stages whole or half.
      h.fitsProgram = arith::OrIOp::create(b, loc, h.fitsProgram, h.clustered);
    } else {
      Value narrow = arith::XOrIOp::create(b, loc, wideVectors, one);
      Value shares = arith::AndIOp::create(b, loc, h.fitsAll, narrow);
      h.fitsProgram = arith::OrIOp::create(b, loc, shares, h.clustered);
    }
  }

  /// Other rows run as separate launches (a row per warp for the
  /// reductions): a block per row that staged none of the row read it
  /// three times from global memory with too few loads in flight, which
  /// measured slower on an H200 (layer_norm over 65536 columns: 13% of
  /// the copy bandwidth against 34%). Returns where the program's kernels
  /// go: the branch for the rows it takes.
  OpBuilder mapOtherRows(OpBuilder &b) {
    auto choice = scf::IfOp::create(b, loc, h.fitsProgram, /*withElseRegion=*/true);
    OpBuilder eb = OpBuilder::atBlockBegin(&choice.getElseRegion().front());
    SmallVector<scf::ParallelOp> alone;
    for (scf::ParallelOp s : g.stats)
      alone.push_back(llvm::cast<scf::ParallelOp>(eb.clone(*s)));
    if (g.final)
      alone.push_back(llvm::cast<scf::ParallelOp>(eb.clone(*g.final)));
    for (scf::ParallelOp loop : alone)
      mapAlone(loop, h.fit + 1);
    return OpBuilder::atBlockBegin(&choice.getThenRegion().front());
  }

  /// A row's lanes are 2^shift, a constant of the kernel or its argument.
  Value shiftIn(OpBuilder &ob, const KernelForm &f) {
    return f.staticShift >= 0 ? indexConstant(ob, loc, f.staticShift) : groupShift;
  }
  Value rowsPerWarpIn(OpBuilder &ob, const KernelForm &f) {
    Value warpSize = indexConstant(ob, loc, kWarpSize);
    Value shift = shiftIn(ob, f);
    return arith::ShRUIOp::create(ob, loc, warpSize, shift);
  }

  /// A kernel of `f`'s form at `at`, launched over the rows.
  void buildKernel(OpBuilder &at, const KernelForm &f) {
    lanes = f.lanes;
    registers = f.rowInRegisters;
    oneVectorAStep = f.fiveAnSM;
    partial = f.partialStaging;
    warpRows = f.warpsPerBlock > 0;
    stagingOf.clear();
    statistic.clear();
    stagedAlready.clear();
    pendingStaged.clear();
    registerOf.clear();
    slots.clear();
    scratchOf.clear();
    clusterBlockCount = f.cluster;
    sliceColumns = f.cluster ? h.slice : Value();
    blockRank = columnBase = isBlockFirstThread = Value();
    capacity = f.cluster ? h.slice : h.rowCapacity;
    auto body = [&](OpBuilder &ib, gpu::LaunchOp kernel) { buildKernelBody(ib, kernel, f); };
    if (warpRows) {
      Value warps = indexConstant(at, loc, f.warpsPerBlock);
      Value perBlock = arith::MulIOp::create(at, loc, warps, rowsPerWarpIn(at, f));
      Value blockShared;
      if (h.sharedBytes && !registers) {
        Value groups = arith::IndexCastOp::create(at, loc, at.getI32Type(), perBlock);
        blockShared = arith::MulIOp::create(at, loc, h.sharedBytes, groups);
      }
      // The block size is a constant, so that outlining records it
      // (.maxntid): ptxas then gives a block of one warp, 32 of which at
      // most share an SM, the 64 registers a thread that cost no
      // occupancy. Left to guess, it took 48-56 and ran the 16-bit rows
      // of 1024 columns 1.5-7 points slower (docs/decisions.md).
      buildLaunchOver(at, loc, h.rows, perBlock,
                      indexConstant(at, loc, kWarpSize * f.warpsPerBlock), body, blockShared);
      return;
    }
    if (!f.cluster) {
      buildLaunchOver(at, loc, h.rows, indexConstant(at, loc, 1), f.blockSize, body,
                      registers ? Value() : h.sharedBytes);
      return;
    }
    Value nonEmpty = arith::CmpIOp::create(at, loc, arith::CmpIPredicate::ugt, h.rows, h.zero);
    auto guard = scf::IfOp::create(at, loc, nonEmpty, /*withElseRegion=*/false);
    OpBuilder gb = OpBuilder::atBlockBegin(&guard.getThenRegion().front());
    Value fewest = indexConstant(gb, loc, t.clusterRowsAlone);
    Value byRows =
        arith::CeilDivUIOp::create(gb, loc, h.rows, indexConstant(gb, loc, t.rowsPerCluster));
    Value most = arith::MaxUIOp::create(gb, loc, fewest, byRows);
    Value clusters = arith::MinUIOp::create(gb, loc, h.rows, most);
    Value grid = arith::MulIOp::create(gb, loc, clusters, f.cluster);
    buildLaunch(gb, loc, grid, f.blockSize, body, h.sliceShared, f.cluster);
  }

  /// The body of a kernel of form `f`: its threads, the rows it walks,
  /// and each row's statistics and elementwise pass.
  void buildKernelBody(OpBuilder &ib, gpu::LaunchOp kernel, const KernelForm &f) {
    launch = kernel;
    tid = launch.getThreadIds().x;
    blockThreads = f.blockSize; // rows over warps: their lanes, below
    Value warpSize = indexConstant(ib, loc, kWarpSize);
    warp = arith::DivUIOp::create(ib, loc, tid, warpSize);
    RowWalk walk{launch.getBlockIds().x, launch.getGridSize().x, h.zero, Value()};
    if (warpRows)
      enterWarpRows(ib, f, warpSize, walk);
    isFirstThread = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, tid, h.zero);
    Value laneOfTid = arith::RemUIOp::create(ib, loc, tid, warpSize);
    isLaneZero = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, laneOfTid, h.zero);
    if (!registers)
      setUpStaging(ib, walk.stagingStart);
    if (f.cluster)
      enterCluster(ib, walk);
    buildRowLoop(ib, f, walk);
  }

  /// Each group of groupLanes lanes is a row's program of its own: its
  /// lanes are the threads, its slice of the block's staging their shared
  /// memory. A warp walks its rows in step (its shuffles need every lane):
  /// a group past the last row redoes the last one and stores nothing.
  /// Lanes and rows as shifts of groupShift: LLVM then turns the divisions
  /// by the lanes into shifts too (with a plain value they stayed 64-bit
  /// divisions in every row's loop bounds: f16 softmax over 1024 columns
  /// 80% of the copy bandwidth against 94%).
  void enterWarpRows(OpBuilder &ib, const KernelForm &f, Value warpSize, RowWalk &walk) {
    Value one = indexConstant(ib, loc, 1);
    Value shift = shiftIn(ib, f);
    groupLanes = arith::ShLIOp::create(ib, loc, one, shift);
    Value rowsPerWarp = rowsPerWarpIn(ib, f);
    Value lane = arith::RemUIOp::create(ib, loc, tid, warpSize);
    tid = arith::RemUIOp::create(ib, loc, lane, groupLanes);
    walk.group = arith::DivUIOp::create(ib, loc, lane, groupLanes);
    blockThreads = groupLanes;
    Value perBlock =
        arith::MulIOp::create(ib, loc, indexConstant(ib, loc, f.warpsPerBlock), rowsPerWarp);
    Value warpFirstRow = arith::MulIOp::create(ib, loc, warp, rowsPerWarp);
    Value groupInBlock = arith::AddIOp::create(ib, loc, warpFirstRow, walk.group);
    Value blockFirstRow = arith::MulIOp::create(ib, loc, walk.firstRow, perBlock);
    walk.firstRow = arith::AddIOp::create(ib, loc, blockFirstRow, warpFirstRow);
    walk.rowStep = arith::MulIOp::create(ib, loc, walk.rowStep, perBlock);
    if (!g.staged.empty()) {
      Value groupBytes = arith::MulIOp::create(ib, loc, capacity,
                                               indexConstant(ib, loc, stagedBytesPerColumn()));
      walk.stagingStart = arith::MulIOp::create(ib, loc, groupInBlock, groupBytes);
    }
  }

  /// Clusters take the rows in turn; a row's first block's first thread
  /// stores its statistics. The cluster barrier's first phase ends with
  /// this arrival: each row starts by waiting for the previous phase (which
  /// ends after every block has read the slots of the previous row).
  void enterCluster(OpBuilder &ib, RowWalk &walk) {
    blockRank = gpu::ClusterBlockIdOp::create(ib, loc, gpu::Dimension::x);
    isBlockFirstThread = isFirstThread;
    Value rankZero = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, blockRank, h.zero);
    isFirstThread = arith::AndIOp::create(ib, loc, isFirstThread, rankZero);
    walk.firstRow = gpu::ClusterIdOp::create(ib, loc, gpu::Dimension::x);
    walk.rowStep = gpu::ClusterDimOp::create(ib, loc, gpu::Dimension::x);
    columnBase = arith::MulIOp::create(ib, loc, blockRank, h.slice);
    NVVM::ClusterArriveOp::create(ib, loc, ib.getUnitAttr());
    nerve::gpumap::OccupancyHintOp::create(
        ib, loc, oneVectorAStep ? t.fiveAnSMBlocksPerSM : t.clusterBlocksPerSM);
  }

  /// The loop over the kernel's rows: each row's statistics, then its
  /// elementwise pass.
  void buildRowLoop(OpBuilder &ib, const KernelForm &f, const RowWalk &walk) {
    auto rowLoop = scf::ForOp::create(ib, loc, walk.firstRow, h.rows, walk.rowStep);
    OpBuilder rb = OpBuilder::atBlockBegin(rowLoop.getBody());
    if (f.cluster)
      NVVM::ClusterWaitOp::create(rb, loc, rb.getUnitAttr());
    Value rowIndex = rowLoop.getInductionVar(), valid;
    // (A warp of one row has no row to skip.)
    if (warpRows && f.staticShift != kWarpShift) {
      rowIndex = arith::AddIOp::create(rb, loc, rowIndex, walk.group);
      valid = arith::CmpIOp::create(rb, loc, arith::CmpIPredicate::ult, rowIndex, h.rows);
      Value lastRow = arith::SubIOp::create(rb, loc, h.rows, indexConstant(rb, loc, 1));
      rowIndex = arith::MinUIOp::create(rb, loc, rowIndex, lastRow);
      Value tidZero = arith::CmpIOp::create(rb, loc, arith::CmpIPredicate::eq, tid, h.zero);
      isFirstThread = arith::AndIOp::create(rb, loc, valid, tidZero);
    }
    row = delinearize(rb, loc, h.first, h.counts, rowIndex);
    for (scf::ParallelOp s : g.stats)
      buildStats(rb, s);
    if (f.cluster)
      NVVM::ClusterArriveOp::create(rb, loc, rb.getUnitAttr());
    if (g.final) {
      OpBuilder fb = rb;
      if (valid) // a group past the last row stores nothing
        fb.setInsertionPointToStart(
            &scf::IfOp::create(rb, loc, valid, /*withElseRegion=*/false).getThenRegion().front());
      buildFinal(fb);
    }
    if (f.cluster) {
      // No block leaves while another may still read its slots.
      ib.setInsertionPointAfter(rowLoop);
      NVVM::ClusterWaitOp::create(ib, loc, ib.getUnitAttr());
    }
  }

  /// Kernels: by vectors or by elements; by vectors also for rows split
  /// over clusters, or without clusters for rows staged in part (a kernel
  /// of its own: the checks of which columns were staged took the f32
  /// softmax from 46 to 86 registers a thread).
  void buildKernels(OpBuilder &kb) {
    if (!h.vectors) {
      buildKernel(kb, form(1, h.threads));
      return;
    }
    auto choice = scf::IfOp::create(kb, loc, h.vectors, /*withElseRegion=*/true);
    OpBuilder vb = OpBuilder::atBlockBegin(&choice.getThenRegion().front());
    if (h.clustered) {
      auto split = scf::IfOp::create(vb, loc, h.clustered, /*withElseRegion=*/true);
      OpBuilder cb = OpBuilder::atBlockBegin(&split.getThenRegion().front());
      if (t.fiveAnSMSliceBytes > 0) {
        // f32 rows loading more: slices of which five blocks fit an SM
        // take a kernel of their own (fiveAnSMSliceBytes).
        Value fiveFit = arith::CmpIOp::create(
            cb, loc, arith::CmpIPredicate::ule, h.sliceShared,
            arith::ConstantIntOp::create(cb, loc, cb.getI32Type(), t.fiveAnSMSliceBytes));
        auto small = scf::IfOp::create(cb, loc, fiveFit, /*withElseRegion=*/true);
        OpBuilder fb = OpBuilder::atBlockBegin(&small.getThenRegion().front());
        KernelForm five = form(g.lanes, indexConstant(fb, loc, t.clusterThreads));
        five.cluster = h.clusterSize;
        five.fiveAnSM = true;
        buildKernel(fb, five);
        cb = OpBuilder::atBlockBegin(&small.getElseRegion().front());
      }
      KernelForm clustered = form(g.lanes, indexConstant(cb, loc, t.clusterThreads));
      clustered.cluster = h.clusterSize;
      buildKernel(cb, clustered);
      OpBuilder other = OpBuilder::atBlockBegin(&split.getElseRegion().front());
      if (h.clusterOnlyTooWide)
        buildBlocks(other);
      else
        buildShared(other);
    } else {
      buildBlocks(vb);
    }
    OpBuilder sb = OpBuilder::atBlockBegin(&choice.getElseRegion().front());
    buildKernel(sb, form(1, h.threads));
  }

  /// Vector kernels without clusters: rows staged whole (by a block alone
  /// on its SM or sharing it) or in part.
  void buildBlocks(OpBuilder &at) {
    if (!h.fitsAll) {
      buildShared(at);
      return;
    }
    auto whole = scf::IfOp::create(at, loc, h.fitsAll, /*withElseRegion=*/true);
    OpBuilder wb = OpBuilder::atBlockBegin(&whole.getThenRegion().front());
    auto alone = scf::IfOp::create(wb, loc, h.solo, /*withElseRegion=*/true);
    OpBuilder ab = OpBuilder::atBlockBegin(&alone.getThenRegion().front());
    buildKernel(ab, form(g.lanes, indexConstant(ab, loc, t.soloThreads)));
    OpBuilder sharing = OpBuilder::atBlockBegin(&alone.getElseRegion().front());
    buildShared(sharing);
    OpBuilder pb = OpBuilder::atBlockBegin(&whole.getElseRegion().front());
    KernelForm partialForm = form(g.lanes, indexConstant(pb, loc, t.soloThreads));
    partialForm.partialStaging = true;
    buildKernel(pb, partialForm);
  }

  /// Vector kernels for blocks that share their SM: a kernel for each
  /// block size, which the compiler then knows (H200, 16-bit softmax and
  /// layer_norm over 1024-4096 columns: 79-89% of the copy bandwidth with
  /// one kernel for all sizes, 88-94% with these). Rows of one warp take a
  /// warp each, shorter rows part of one (groupShift), reduced by shuffles
  /// alone; a kernel of their own for each (the whole-warp rows lost 10-12
  /// points with the lanes a run-time value).
  void buildShared(OpBuilder &start) {
    OpBuilder at = start;
    auto choose = [&](Value condition, function_ref<void(OpBuilder &)> then) {
      auto is = scf::IfOp::create(at, loc, condition, /*withElseRegion=*/true);
      OpBuilder tb = OpBuilder::atBlockBegin(&is.getThenRegion().front());
      then(tb);
      at = OpBuilder::atBlockBegin(&is.getElseRegion().front());
    };
    auto threadsAre = [&](int64_t n) {
      return arith::CmpIOp::create(at, loc, arith::CmpIPredicate::eq, h.threads,
                                   indexConstant(at, loc, n));
    };
    Value wholeWarp = arith::CmpIOp::create(at, loc, arith::CmpIPredicate::eq, groupShift,
                                            indexConstant(at, loc, kWarpShift));
    // Kernels whose threads are never capped (below maxThreads) take at
    // most kRowVectorsPerThread vectors of a row each: they keep the row in
    // registers.
    bool inRegisters = t.rowInRegisters;
    KernelForm warpRow = form(g.lanes, Value());
    warpRow.warpsPerBlock = 1;
    warpRow.staticShift = kWarpShift;
    warpRow.rowInRegisters = inRegisters;
    Value oneWarp = threadsAre(kWarpSize);
    choose(arith::AndIOp::create(at, loc, oneWarp, wholeWarp),
           [&](OpBuilder &tb) { buildKernel(tb, warpRow); });
    KernelForm groupRows = form(g.lanes, Value());
    groupRows.warpsPerBlock = t.groupWarpsPerBlock;
    groupRows.rowInRegisters = inRegisters;
    choose(threadsAre(kWarpSize), [&](OpBuilder &tb) { buildKernel(tb, groupRows); });
    int64_t largest = g.staged.empty() ? t.maxThreads : t.maxThreadsLargeStaging;
    for (int64_t n = 2 * kWarpSize; n < largest; n *= 2)
      choose(threadsAre(n), [&](OpBuilder &tb) {
        KernelForm sized = form(g.lanes, indexConstant(tb, loc, n));
        sized.rowInRegisters = inRegisters && n < t.maxThreads;
        buildKernel(tb, sized);
      });
    buildKernel(at, form(g.lanes, indexConstant(at, loc, largest)));
  }

  HostPlan h;
  RowGroup &g;
  Location loc;
  nerve::gpumap::RowProgramTuning t; ///< the program's sizes (heuristics)
  function_ref<void(scf::ParallelOp, int64_t)> mapAlone;
  gpu::LaunchOp launch;
  int64_t lanes = 1;                     ///< columns per vector in this kernel
  bool partial = false;                  ///< this kernel stages rows in part
  bool warpRows = false;                 ///< a row per group of lanes
  Value groupShift;                      ///< log2 of the lanes a row (host
                                         ///< value, vector form)
  Value groupLanes;                      ///< 1 << the shift, in the kernel
  Value tid, blockThreads, warp, isFirstThread, isLaneZero;
  SmallVector<Value> row;
  Value capacity;                        ///< staged columns (host value),
                                         ///< a multiple of 16
  DenseMap<Value, Value> stagingOf;      ///< staged input -> shared array
  DenseMap<Value, Value> statistic;      ///< row buffer -> value this row
  DenseSet<Value> stagedAlready;         ///< inputs the first pass has stored
  DenseMap<Type, Value> scratchOf;       ///< per type: 32 warp partials
  // The register form (below):
  bool registers = false;                                ///< rows kept in registers
  int64_t slot = -1;                                     ///< which of its vectors is built
  Value storeGuard;                                      ///< whether that vector exists
  DenseMap<std::pair<Value, int64_t>, Value> registerOf; ///< (staged input,
                                                         ///< slot) -> vector
  SmallVector<std::pair<Value, Value>> slots;            ///< registerVector's, this row
  // The cluster form (all null otherwise):
  Value clusterBlockCount;               ///< blocks of the cluster (host value)
  bool oneVectorAStep = false;           ///< the elementwise pass takes no pairs
                                         ///< (five blocks an SM)
  Value sliceColumns;                    ///< columns of a block's slice (host)
  Value blockRank;                       ///< this block's rank in its cluster
  Value columnBase;                      ///< the first column of its slice
  Value isBlockFirstThread;              ///< thread 0 of this block

  /// Whether the cluster form applies: every reduction's total is a value
  /// that LLVM loads and stores as it is.
  bool clusterable() const {
    return llvm::all_of(g.reductions, [](auto &entry) {
      return entry.second.combine && entry.first->getResult(0).getType().isIntOrFloat();
    });
  }

  /// What the heuristics take of the program: its lanes, its staged inputs
  /// and their bytes a column, and the elementwise pass's loads from
  /// anything else but the row statistics (layer_norm's weight and bias).
  static nerve::gpumap::RowProgramShape shapeOf(RowGroup &g) {
    nerve::gpumap::RowProgramShape shape;
    shape.lanes = g.lanes;
    shape.stagedInputs = static_cast<int64_t>(g.staged.size());
    for (Value m : g.staged)
      shape.stagedBytesPerColumn += elementBytes(m);
    if (g.final)
      for (auto load : g.final.getBody()->getOps<memref::LoadOp>())
        if (!g.buffers.contains(load.getMemref()) &&
            !llvm::is_contained(g.staged, load.getMemref()))
          ++shape.otherLoads;
    return shape;
  }

  /// The columns [lb, ub) of a column loop over [0, ub) that this block
  /// walks: all of them, or in the cluster form its slice.
  std::pair<Value, Value> window(OpBuilder &b, Value ub) {
    if (!columnBase)
      return {Value(), ub};
    Value end = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, columnBase, sliceColumns), ub);
    return {columnBase, arith::MaxUIOp::create(b, loc, end, columnBase)};
  }

  /// Where column `j` of the row is staged: at j, or in the cluster form at
  /// its place in the block's slice.
  Value stagedColumn(OpBuilder &b, Value j) {
    return columnBase ? arith::SubIOp::create(b, loc, j, columnBase).getResult() : j;
  }

  /// The cluster's total of `value` (this block's total of a reduction `r`):
  /// each block's thread 0 puts it in a slot of its shared memory; after a
  /// cluster barrier every thread reads the slots of all the blocks through
  /// distributed shared memory and combines them in block order, so that
  /// every block ends with the same bits.
  Value clusterTotal(OpBuilder &b, const LaneReduction &r, Value value) {
    Type type = value.getType();
    Value slot = workgroupArray(launch, type, 1, loc);
    Value zero = indexConstant(b, loc, 0);
    auto leader = scf::IfOp::create(b, loc, isBlockFirstThread, /*withElseRegion=*/false);
    {
      OpBuilder lb = OpBuilder::atBlockBegin(&leader.getThenRegion().front());
      memref::StoreOp::create(lb, loc, value, slot, ValueRange{zero});
    }
    NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
    auto shared = LLVM::LLVMPointerType::get(b.getContext(),
                                             static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared));
    auto cluster = LLVM::LLVMPointerType::get(
        b.getContext(), static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
    Value address = arith::IndexCastOp::create(
        b, loc, b.getI64Type(), memref::ExtractAlignedPointerAsIndexOp::create(b, loc, slot));
    Value local = LLVM::IntToPtrOp::create(b, loc, shared, address);
    auto slotOf = [&](OpBuilder &at, Value rank) -> Value {
      Value rank32 = arith::IndexCastOp::create(at, loc, at.getI32Type(), rank);
      Value remote = NVVM::MapaOp::create(at, loc, cluster, local, rank32);
      return LLVM::LoadOp::create(at, loc, type, remote);
    };
    Value one = indexConstant(b, loc, 1);
    auto fold = scf::ForOp::create(b, loc, one, clusterBlockCount, one,
                                   ValueRange{slotOf(b, zero)});
    {
      OpBuilder fb = OpBuilder::atBlockBegin(fold.getBody());
      scf::YieldOp::create(fb, loc,
                           combineAs(fb, r, fold.getRegionIterArgs()[0],
                                     slotOf(fb, fold.getInductionVar())));
    }
    return fold.getResult(0);
  }

  int64_t stagedBytesPerColumn() const {
    int64_t bytes = 0;
    for (Value m : g.staged)
      bytes += elementBytes(m);
    return bytes;
  }

  void setUpStaging(OpBuilder &b, Value start) {
    if (g.staged.empty())
      return;
    auto workgroup =
        gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
    auto bytesType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                     MemRefLayoutAttrInterface(), workgroup);
    Value raw = gpu::DynamicSharedMemoryOp::create(b, loc, bytesType);
    Value offset = start;
    for (Value m : g.staged) {
      Type element = llvm::cast<MemRefType>(m.getType()).getElementType();
      auto arrayType = MemRefType::get({ShapedType::kDynamic}, element,
                                       MemRefLayoutAttrInterface(), workgroup);
      stagingOf[m] = memref::ViewOp::create(b, loc, arrayType, raw, offset, ValueRange{capacity});
      offset = arith::AddIOp::create(
          b, loc, offset,
          arith::MulIOp::create(b, loc, capacity, indexConstant(b, loc, elementBytes(m))));
    }
  }

  /// Clones `op` of a pass whose row indices are `rowIvs` and whose column
  /// index (inside a reduction or the elementwise pass) is `col`.
  void cloneOp(OpBuilder &b, Operation &op, IRMapping &m, ValueRange rowIvs, Value col) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      Value memref = load.getMemref();
      if (g.buffers.contains(memref)) {
        m.map(load.getResult(), statistic.lookup(memref));
        return;
      }
      if (col && stagingOf.count(memref) && indexesRow(load.getIndices(), rowIvs, col)) {
        m.map(load.getResult(), stagedLoad(b, load, m, stagingOf[memref]));
        return;
      }
    }
    if (auto store = dyn_cast<memref::StoreOp>(op); store && g.buffers.contains(store.getMemref())) {
      statistic[store.getMemref()] = m.lookupOrDefault(store.getValue());
      auto once = scf::IfOp::create(b, loc, isFirstThread, /*withElseRegion=*/false);
      OpBuilder ob = OpBuilder::atBlockBegin(&once.getThenRegion().front());
      ob.clone(op, m);
      return;
    }
    b.clone(op, m);
  }

  /// The first read of a staged input loads from global memory and keeps
  /// what fits; later ones read it back from there, and the rest of the row
  /// from global memory again. `fromGlobal` loads a `type` at column `j`
  /// (the first of a vector), `fromShared` at `j` of the staging, `toShared`
  /// stores there.
  Value stagedRead(OpBuilder &b, Value input, Type type, Value j,
                   function_ref<Value(OpBuilder &)> fromGlobal,
                   function_ref<Value(OpBuilder &)> fromShared,
                   function_ref<void(OpBuilder &, Value)> toShared) {
    if (!partial) { // the whole row is staged
      if (stagedAlready.contains(input))
        return fromShared(b);
      Value v = fromGlobal(b);
      toShared(b, v);
      pendingStaged.insert(input);
      return v;
    }
    Value kept = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j, capacity);
    if (!stagedAlready.contains(input)) {
      Value v = fromGlobal(b);
      auto keep = scf::IfOp::create(b, loc, kept, /*withElseRegion=*/false);
      OpBuilder kb = OpBuilder::atBlockBegin(&keep.getThenRegion().front());
      toShared(kb, v);
      pendingStaged.insert(input);
      return v;
    }
    auto read = scf::IfOp::create(b, loc, TypeRange{type}, kept, /*withElseRegion=*/true);
    OpBuilder tb = OpBuilder::atBlockBegin(&read.getThenRegion().front());
    scf::YieldOp::create(tb, loc, fromShared(tb));
    OpBuilder eb = OpBuilder::atBlockBegin(&read.getElseRegion().front());
    scf::YieldOp::create(eb, loc, fromGlobal(eb));
    return read.getResult(0);
  }

  Value stagedLoad(OpBuilder &b, memref::LoadOp load, IRMapping &m, Value staging) {
    Value j = m.lookupOrDefault(load.getIndices().back());
    Value at = stagedColumn(b, j);
    return stagedRead(
        b, load.getMemref(), load.getType(), j,
        [&](OpBuilder &ab) { return ab.clone(*load, m)->getResult(0); },
        [&](OpBuilder &ab) {
          return memref::LoadOp::create(ab, loc, staging, ValueRange{at}).getResult();
        },
        [&](OpBuilder &ab, Value v) {
          memref::StoreOp::create(ab, loc, v, staging, ValueRange{at});
        });
  }
  /// Inputs stored by the reduction being built (readable after it).
  DenseSet<Value> pendingStaged;

  /// Clones `op` once per lane mapping of `maps` (lane k of a vector at
  /// `maps[k]`); an access whose last index is the column `col` becomes one
  /// vector access for all lanes (staged ones through shared memory).
  void cloneLanes(OpBuilder &b, Operation &op, MutableArrayRef<IRMapping> maps,
                  ValueRange rowIvs, Value col) {
    auto byVector = [&](Value memref, ValueRange indices) {
      return maps.size() > 1 && col && !g.buffers.contains(memref) && !indices.empty() &&
             indices.back() == col;
    };
    IRMapping &lane0 = maps.front();
    if (auto load = dyn_cast<memref::LoadOp>(op); load && byVector(load.getMemref(),
                                                                     load.getIndices())) {
      Value memref = load.getMemref();
      SmallVector<Value> indices = mapped(lane0, load.getIndices());
      auto staging = stagingOf.find(memref);
      bool staged = staging != stagingOf.end() && indexesRow(load.getIndices(), rowIvs, col);
      auto fromGlobal = [&](OpBuilder &at) {
        return vectorLoad(at, loc, lane0.lookupOrDefault(memref), indices, lanes);
      };
      Value vec;
      if (registers && llvm::is_contained(g.staged, memref) &&
          indexesRow(load.getIndices(), rowIvs, col)) {
        Value &kept = registerOf[{memref, slot}];
        if (!kept)
          kept = fromGlobal(b);
        vec = kept;
      } else if (staged) {
        Value shared = staging->second, j = indices.back();
        Value place = stagedColumn(b, j);
        vec = stagedRead(
            b, memref, VectorType::get({lanes}, load.getType()), j, fromGlobal,
            [&](OpBuilder &at) { return vectorLoad(at, loc, shared, place, lanes); },
            [&](OpBuilder &at, Value v) { vectorStore(at, loc, v, shared, place); });
      } else {
        vec = fromGlobal(b);
      }
      unpackLanes(b, loc, vec, load.getResult(), maps);
      return;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op); store && byVector(store.getMemref(),
                                                                        store.getIndices())) {
      Value vec = packLanes(b, loc, store.getValue(), maps);
      OpBuilder::InsertionGuard guard(b);
      if (storeGuard)
        b.setInsertionPointToStart(&scf::IfOp::create(b, loc, storeGuard, /*withElseRegion=*/false)
                                        .getThenRegion()
                                        .front());
      vectorStore(b, loc, vec, lane0.lookupOrDefault(store.getMemref()),
                  mapped(lane0, store.getIndices()));
      return;
    }
    for (IRMapping &m : maps)
      cloneOp(b, op, m, rowIvs, col);
  }

  /// The register form: a kernel whose threads take at most
  /// kRowVectorsPerThread vectors of a row each (vector t + k T in slot k)
  /// walks its slots unrolled, so that what the first pass loads of a
  /// staged input stays in registers for the others, instead of going
  /// through shared memory. A slot past the row loads the row's last
  /// vector (in bounds: the row has one) and folds the identity instead,
  /// so the loads need no branch; its stores are skipped. Returns slot
  /// `k`'s first column and whether it is in the row of `ub` columns, built
  /// by the row's first pass (every pass walks the same columns:
  /// chooseLanes) and reused by the others, which it dominates.
  std::pair<Value, Value> registerVector(OpBuilder &b, Value ub, int64_t k) {
    if (k < static_cast<int64_t>(slots.size()))
      return slots[k];
    Value lanesValue = indexConstant(b, loc, lanes);
    Value vectors = arith::DivUIOp::create(b, loc, ub, lanesValue);
    Value v = arith::AddIOp::create(
        b, loc, tid, arith::MulIOp::create(b, loc, blockThreads, indexConstant(b, loc, k)));
    Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v, vectors);
    Value last = arith::SubIOp::create(b, loc, vectors, indexConstant(b, loc, 1));
    Value at = arith::MinUIOp::create(b, loc, v, last);
    slots.push_back({arith::MulIOp::create(b, loc, at, lanesValue), valid});
    return slots.back();
  }

  /// This thread's partial value of `r` in the register form: its slots'
  /// values, each its lanes combined in order, combined in slot order.
  Value registerPartial(OpBuilder &b, const LaneReduction &r, IRMapping &m, ValueRange rowIvs,
                        Value ub) {
    Value col = r.loop.getInductionVar();
    Value folded = r.combine->getOperand(1 - r.accOperand);
    Value identity = reductionIdentity(b, loc, r.combine);
    Value partial;
    for (int64_t k = 0; k < kRowVectorsPerThread; ++k) {
      auto [first, valid] = registerVector(b, ub, k);
      SmallVector<IRMapping> maps = laneMappings(b, loc, m, col, first, lanes);
      slot = k;
      for (Operation &op : r.loop.getBody()->without_terminator())
        if (&op != r.combine)
          cloneLanes(b, op, maps, rowIvs, col);
      slot = -1;
      Value v = maps.front().lookupOrDefault(folded);
      for (IRMapping &lane : llvm::drop_begin(maps))
        v = combineAs(b, r, v, lane.lookupOrDefault(folded));
      v = arith::SelectOp::create(b, loc, valid, v, identity);
      partial = partial ? combineAs(b, r, partial, v) : v;
    }
    return partial;
  }

  Value scratch(Type type) {
    Value &s = scratchOf[type];
    if (!s)
      s = workgroupArray(launch, type, kWarpSize, loc);
    return s;
  }

  /// The block's threads split `r`, then combine: within each warp by
  /// shuffles, then the warps' values in order through shared memory, so
  /// that every thread ends with the same total.
  Value blockReduce(OpBuilder &b, const LaneReduction &r, IRMapping &m, ValueRange rowIvs) {
    Value lb = m.lookupOrDefault(r.loop.getLowerBound());
    Value ub = m.lookupOrDefault(r.loop.getUpperBound());
    Value step = m.lookupOrDefault(r.loop.getStep());
    bool columns =
        g.sameColumns(r.loop.getLowerBound(), r.loop.getUpperBound(), r.loop.getStep());
    Value col = r.loop.getInductionVar();
    Value partial;
    if (lanes > 1 && registers) {
      partial = registerPartial(b, r, m, rowIvs, ub);
    } else if (lanes > 1) {
      // The vector form (its columns start at 0 by 1: chooseLanes): each
      // iteration is a vector of columns, its lanes combined in order.
      auto [first, end] = window(b, ub);
      partial = vectorPartial(b, loc, r, m, first, end, tid, blockThreads, lanes,
                              kRowVectorsPerThread,
                              [&](OpBuilder &vb, MutableArrayRef<IRMapping> maps) {
                                for (Operation &op : r.loop.getBody()->without_terminator())
                                  if (&op != r.combine)
                                    cloneLanes(vb, op, maps, rowIvs, col);
                              });
    } else {
      partial = stridedPartial(b, loc, r, lb, ub, step, tid, blockThreads,
                               [&](OpBuilder &vb, Value iv) {
                                 IRMapping inner = m;
                                 inner.map(col, iv);
                                 for (Operation &op : r.loop.getBody()->without_terminator())
                                   if (&op != r.combine)
                                     cloneOp(vb, op, inner, rowIvs, columns ? col : Value());
                                 return inner.lookupOrDefault(
                                     r.combine->getOperand(1 - r.accOperand));
                               },
                               t.elementsPerThread);
    }
    for (Value input : pendingStaged)
      stagedAlready.insert(input);
    pendingStaged.clear();
    if (warpRows)
      return combineAs(b, r, m.lookupOrDefault(r.loop.getInitArgs()[0]),
                       warpButterfly(b, loc, r, partial, groupLanes));
    partial = warpButterfly(b, loc, r, partial);
    Value warps = arith::DivUIOp::create(b, loc, blockThreads, indexConstant(b, loc, kWarpSize));
    Value result = blockCombine(b, loc, r, partial, scratch(partial.getType()), warp, isLaneZero,
                                warps);
    if (clusterBlockCount)
      result = clusterTotal(b, r, result);
    return combineAs(b, r, m.lookupOrDefault(r.loop.getInitArgs()[0]), result);
  }

  void buildStats(OpBuilder &b, scf::ParallelOp loop) {
    IRMapping m;
    m.map(ivsOf(loop), row);
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (auto it = g.reductions.find(&op); it != g.reductions.end())
        m.map(op.getResult(0), blockReduce(b, it->second, m, ivsOf(loop)));
      else
        cloneOp(b, op, m, ivsOf(loop), Value());
    }
  }

  /// The elementwise pass: thread t takes columns t, t + T, ..., four at a
  /// time interleaved op by op (their loads in flight together), then the
  /// rest one at a time.
  void buildFinal(OpBuilder &b) {
    scf::ParallelOp loop = g.final;
    ValueRange ivs = ivsOf(loop);
    ValueRange rowIvs = ivs.take_front(g.rank);
    Value colIv = ivs.back();
    Value lb = loop.getLowerBound().back(), ub = loop.getUpperBound().back();
    Value step = loop.getStep().back();
    bool columns = g.sameColumns(lb, ub, step);
    Value zero = indexConstant(b, loc, 0), one = indexConstant(b, loc, 1);
    Value span = arith::SubIOp::create(b, loc, arith::MaxSIOp::create(b, loc, ub, lb), lb);
    Value threadStep = arith::MulIOp::create(b, loc, step, blockThreads);
    Value chunk = arith::MulIOp::create(b, loc, threadStep, indexConstant(b, loc, kRowUnroll));
    Value full = arith::DivUIOp::create(b, loc, span, chunk);
    Value offset = arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, tid, step));
    // Each unit of work is `lanes` consecutive columns from `start`.
    auto emit = [&](OpBuilder &eb, ArrayRef<Value> starts, ArrayRef<Value> valid = {}) {
      SmallVector<SmallVector<IRMapping>> units;
      for (Value start : starts) {
        IRMapping m;
        m.map(rowIvs, row);
        units.push_back(lanes > 1 ? laneMappings(eb, loc, m, colIv, start, lanes) : SmallVector<IRMapping>{m});
        if (lanes == 1)
          units.back().front().map(colIv, start);
      }
      for (Operation &op : loop.getBody()->without_terminator())
        for (auto [u, maps] : llvm::enumerate(units)) {
          if (!valid.empty()) { // the register form: unit u is slot u
            slot = static_cast<int64_t>(u);
            storeGuard = valid[u];
          }
          cloneLanes(eb, op, maps, rowIvs, columns ? colIv : Value());
        }
      slot = -1;
      storeGuard = Value();
    };
    if (lanes > 1 && registers) {
      SmallVector<Value> starts, valid;
      for (int64_t k = 0; k < kRowVectorsPerThread; ++k) {
        auto [first, inRow] = registerVector(b, ub, k);
        starts.push_back(first);
        valid.push_back(inRow);
      }
      emit(b, starts, valid);
      return;
    }
    if (lanes > 1) {
      // The vector form: columns from 0 by 1 (chooseLanes), a whole number
      // of vectors; thread t takes vectors t, t + T, ... (of its block's
      // slice in the cluster form), two at a time.
      Value lanesValue = indexConstant(b, loc, lanes);
      auto [firstColumn, endColumn] = window(b, ub);
      Value firstVector =
          firstColumn ? arith::DivUIOp::create(b, loc, firstColumn, lanesValue).getResult() : zero;
      Value vectors = arith::DivUIOp::create(b, loc, endColumn, lanesValue);
      Value pair = arith::MulIOp::create(b, loc, blockThreads, indexConstant(b, loc, 2));
      Value pairs = oneVectorAStep
                        ? zero
                        : arith::DivUIOp::create(
                              b, loc, arith::SubIOp::create(b, loc, vectors, firstVector), pair)
                              .getResult();
      Value start = arith::AddIOp::create(b, loc, firstVector, tid);
      auto main = scf::ForOp::create(b, loc, zero, pairs, one);
      {
        OpBuilder mb = OpBuilder::atBlockBegin(main.getBody());
        Value v0 = arith::AddIOp::create(
            mb, loc, start, arith::MulIOp::create(mb, loc, main.getInductionVar(), pair));
        Value v1 = arith::AddIOp::create(mb, loc, v0, blockThreads);
        emit(mb, {arith::MulIOp::create(mb, loc, v0, lanesValue).getResult(),
                  arith::MulIOp::create(mb, loc, v1, lanesValue).getResult()});
      }
      Value rest =
          arith::AddIOp::create(b, loc, start, arith::MulIOp::create(b, loc, pairs, pair));
      auto tail = scf::ForOp::create(b, loc, rest, vectors, blockThreads);
      {
        OpBuilder tb = OpBuilder::atBlockBegin(tail.getBody());
        emit(tb, {arith::MulIOp::create(tb, loc, tail.getInductionVar(), lanesValue).getResult()});
      }
      return;
    }
    auto main = scf::ForOp::create(b, loc, zero, full, one);
    {
      OpBuilder mb = OpBuilder::atBlockBegin(main.getBody());
      Value base = arith::AddIOp::create(
          mb, loc, offset, arith::MulIOp::create(mb, loc, main.getInductionVar(), chunk));
      SmallVector<Value> cols = {base};
      for (int64_t u = 1; u < kRowUnroll; ++u)
        cols.push_back(arith::AddIOp::create(
            mb, loc, base, arith::MulIOp::create(mb, loc, threadStep, indexConstant(mb, loc, u))));
      emit(mb, cols);
    }
    Value tailStart =
        arith::AddIOp::create(b, loc, offset, arith::MulIOp::create(b, loc, full, chunk));
    auto tail = scf::ForOp::create(b, loc, tailStart, ub, threadStep);
    {
      OpBuilder tb = OpBuilder::atBlockBegin(tail.getBody());
      emit(tb, {tail.getInductionVar()});
    }
  }
};

} // namespace

std::optional<unsigned> nerve::loop_mapping::rowProgramLoops(scf::ParallelOp first) {
  std::optional<RowGroup> group = matchRowGroup(first);
  // The program sizes its blocks from the first reduction's columns, on
  // the host.
  if (!group || !tripCountHoistable(group->first.loop, first))
    return std::nullopt;
  return group->numLoops();
}

Operation *nerve::loop_mapping::mapRowProgram(scf::ParallelOp first, unsigned loops,
                                             const nerve::gpumap::RowProgramLimits &limits,
                                             function_ref<void(scf::ParallelOp, int64_t)> mapAlone) {
  std::optional<RowGroup> group = matchRowGroup(first);
  if (!group || group->numLoops() != loops)
    return nullptr;
  return RowProgramBuilder(*group, limits, mapAlone).build();
}
