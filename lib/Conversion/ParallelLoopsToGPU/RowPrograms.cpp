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
// This file plans the program and builds its kernels; the passes over a row
// inside them are in RowProgramPasses.cpp (the builder: RowProgramBuilder.h).
//
//===----------------------------------------------------------------------===//

#include "RowProgramBuilder.h"

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

namespace nerve::loop_mapping {

Operation *RowProgramBuilder::build() {
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

RowProgramBuilder::KernelForm RowProgramBuilder::form(int64_t kernelLanes, Value blockSize) const {
  KernelForm f;
  f.lanes = kernelLanes;
  f.blockSize = blockSize;
  return f;
}

void RowProgramBuilder::planThreads(OpBuilder &b) {
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

void RowProgramBuilder::planStaging(OpBuilder &b) {
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

void RowProgramBuilder::planClusters(OpBuilder &b) {
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

OpBuilder RowProgramBuilder::mapOtherRows(OpBuilder &b) {
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

Value RowProgramBuilder::shiftIn(OpBuilder &ob, const KernelForm &f) {
  return f.staticShift >= 0 ? indexConstant(ob, loc, f.staticShift) : groupShift;
}

Value RowProgramBuilder::rowsPerWarpIn(OpBuilder &ob, const KernelForm &f) {
  Value warpSize = indexConstant(ob, loc, kWarpSize);
  Value shift = shiftIn(ob, f);
  return arith::ShRUIOp::create(ob, loc, warpSize, shift);
}

void RowProgramBuilder::buildKernel(OpBuilder &at, const KernelForm &f) {
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

void RowProgramBuilder::buildKernelBody(OpBuilder &ib, gpu::LaunchOp kernel, const KernelForm &f) {
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

void RowProgramBuilder::enterWarpRows(OpBuilder &ib, const KernelForm &f, Value warpSize,
                                      RowWalk &walk) {
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

void RowProgramBuilder::enterCluster(OpBuilder &ib, RowWalk &walk) {
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

void RowProgramBuilder::buildRowLoop(OpBuilder &ib, const KernelForm &f, const RowWalk &walk) {
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

void RowProgramBuilder::buildKernels(OpBuilder &kb) {
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

void RowProgramBuilder::buildBlocks(OpBuilder &at) {
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

void RowProgramBuilder::buildShared(OpBuilder &start) {
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

bool RowProgramBuilder::clusterable() const {
  return llvm::all_of(g.reductions, [](auto &entry) {
    return entry.second.combine && entry.first->getResult(0).getType().isIntOrFloat();
  });
}

nerve::gpumap::RowProgramShape RowProgramBuilder::shapeOf(RowGroup &g) {
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

Value RowProgramBuilder::stagedRead(OpBuilder &b, Value input, Type type, Value j,
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

void RowProgramBuilder::cloneLanes(OpBuilder &b, Operation &op, MutableArrayRef<IRMapping> maps,
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

Value RowProgramBuilder::registerPartial(OpBuilder &b, const LaneReduction &r, IRMapping &m,
                                         ValueRange rowIvs, Value ub) {
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

} // namespace nerve::loop_mapping

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
