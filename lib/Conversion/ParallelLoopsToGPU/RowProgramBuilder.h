//===- RowProgramBuilder.h - the builder of one row program ---*- C++ -*-===//
//
// RowPrograms.cpp's builder, shared by its two files: RowPrograms.cpp plans
// the program on the host and builds its kernels (block sizes, staging,
// clusters); RowProgramPasses.cpp builds the passes over a row inside a
// kernel (statistics, the elementwise pass, staged loads, the register
// form, cluster totals).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_CONVERSION_PARALLELLOOPSTOGPU_ROWPROGRAMBUILDER_H
#define NERVE_LIB_CONVERSION_PARALLELLOOPSTOGPU_ROWPROGRAMBUILDER_H

#include "LoopMapping.h"
#include "RowGroups.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace nerve::loop_mapping {

// This header is private to the two files that build row programs, which
// are written against MLIR's names.
using namespace mlir;

/// log2 of the warp size.
constexpr int64_t kWarpShift = 5;
/// The sizes below (threads, staging, clusters, the register form) come
/// from the row program's heuristics (nerve/Dialect/GPUMap/Heuristics/
/// RowProgram.h), over the program's shape and the strategy's limits.
using nerve::gpumap::kRowUnroll;
using nerve::gpumap::kRowVectorsPerThread;

/// Builds the kernel of one row program.
class RowProgramBuilder {
public:
  RowProgramBuilder(RowGroup &g, const nerve::gpumap::RowProgramLimits &limits,
                    function_ref<void(scf::ParallelOp, int64_t)> mapAlone)
      : g(g), loc(g.stats.front().getLoc()), t(nerve::gpumap::tuneRowProgram(shapeOf(g), limits)),
        mapAlone(mapAlone) {}

  Operation *build();

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

  KernelForm form(int64_t kernelLanes, Value blockSize) const;

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
  void planThreads(OpBuilder &b);

  /// Whether the vector form applies, and how much the staging takes: the
  /// columns it holds, whether the row fits whole, whether the program
  /// applies, a block's shared memory and threads.
  void planStaging(OpBuilder &b);

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
  void planClusters(OpBuilder &b);

  /// Other rows run as separate launches (a row per warp for the
  /// reductions): a block per row that staged none of the row read it
  /// three times from global memory with too few loads in flight, which
  /// measured slower on an H200 (layer_norm over 65536 columns: 13% of
  /// the copy bandwidth against 34%). Returns where the program's kernels
  /// go: the branch for the rows it takes.
  OpBuilder mapOtherRows(OpBuilder &b);

  /// A row's lanes are 2^shift, a constant of the kernel or its argument.
  Value shiftIn(OpBuilder &ob, const KernelForm &f);
  Value rowsPerWarpIn(OpBuilder &ob, const KernelForm &f);

  /// A kernel of `f`'s form at `at`, launched over the rows.
  void buildKernel(OpBuilder &at, const KernelForm &f);

  /// The body of a kernel of form `f`: its threads, the rows it walks,
  /// and each row's statistics and elementwise pass.
  void buildKernelBody(OpBuilder &ib, gpu::LaunchOp kernel, const KernelForm &f);

  /// Each group of groupLanes lanes is a row's program of its own: its
  /// lanes are the threads, its slice of the block's staging their shared
  /// memory. A warp walks its rows in step (its shuffles need every lane):
  /// a group past the last row redoes the last one and stores nothing.
  /// Lanes and rows as shifts of groupShift: LLVM then turns the divisions
  /// by the lanes into shifts too (with a plain value they stayed 64-bit
  /// divisions in every row's loop bounds: f16 softmax over 1024 columns
  /// 80% of the copy bandwidth against 94%).
  void enterWarpRows(OpBuilder &ib, const KernelForm &f, Value warpSize, RowWalk &walk);

  /// Clusters take the rows in turn; a row's first block's first thread
  /// stores its statistics. The cluster barrier's first phase ends with
  /// this arrival: each row starts by waiting for the previous phase (which
  /// ends after every block has read the slots of the previous row).
  void enterCluster(OpBuilder &ib, RowWalk &walk);

  /// The loop over the kernel's rows: each row's statistics, then its
  /// elementwise pass.
  void buildRowLoop(OpBuilder &ib, const KernelForm &f, const RowWalk &walk);

  /// Kernels: by vectors or by elements; by vectors also for rows split
  /// over clusters, or without clusters for rows staged in part (a kernel
  /// of its own: the checks of which columns were staged took the f32
  /// softmax from 46 to 86 registers a thread).
  void buildKernels(OpBuilder &kb);

  /// Vector kernels without clusters: rows staged whole (by a block alone
  /// on its SM or sharing it) or in part.
  void buildBlocks(OpBuilder &at);

  /// Vector kernels for blocks that share their SM: a kernel for each
  /// block size, which the compiler then knows (H200, 16-bit softmax and
  /// layer_norm over 1024-4096 columns: 79-89% of the copy bandwidth with
  /// one kernel for all sizes, 88-94% with these). Rows of one warp take a
  /// warp each, shorter rows part of one (groupShift), reduced by shuffles
  /// alone; a kernel of their own for each (the whole-warp rows lost 10-12
  /// points with the lanes a run-time value).
  void buildShared(OpBuilder &start);

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
  bool clusterable() const;

  /// What the heuristics take of the program: its lanes, its staged inputs
  /// and their bytes a column, and the elementwise pass's loads from
  /// anything else but the row statistics (layer_norm's weight and bias).
  static nerve::gpumap::RowProgramShape shapeOf(RowGroup &g);

  /// The columns [lb, ub) of a column loop over [0, ub) that this block
  /// walks: all of them, or in the cluster form its slice.
  std::pair<Value, Value> window(OpBuilder &b, Value ub);

  /// Where column `j` of the row is staged: at j, or in the cluster form at
  /// its place in the block's slice.
  Value stagedColumn(OpBuilder &b, Value j);

  /// The cluster's total of `value` (this block's total of a reduction `r`):
  /// each block's thread 0 puts it in a slot of its shared memory; after a
  /// cluster barrier every thread reads the slots of all the blocks through
  /// distributed shared memory and combines them in block order, so that
  /// every block ends with the same bits.
  Value clusterTotal(OpBuilder &b, const LaneReduction &r, Value value);

  int64_t stagedBytesPerColumn() const;

  void setUpStaging(OpBuilder &b, Value start);

  /// Clones `op` of a pass whose row indices are `rowIvs` and whose column
  /// index (inside a reduction or the elementwise pass) is `col`.
  void cloneOp(OpBuilder &b, Operation &op, IRMapping &m, ValueRange rowIvs, Value col);

  /// The first read of a staged input loads from global memory and keeps
  /// what fits; later ones read it back from there, and the rest of the row
  /// from global memory again. `fromGlobal` loads a `type` at column `j`
  /// (the first of a vector), `fromShared` at `j` of the staging, `toShared`
  /// stores there.
  Value stagedRead(OpBuilder &b, Value input, Type type, Value j,
                   function_ref<Value(OpBuilder &)> fromGlobal,
                   function_ref<Value(OpBuilder &)> fromShared,
                   function_ref<void(OpBuilder &, Value)> toShared);

  Value stagedLoad(OpBuilder &b, memref::LoadOp load, IRMapping &m, Value staging);
  /// Inputs stored by the reduction being built (readable after it).
  DenseSet<Value> pendingStaged;

  /// Clones `op` once per lane mapping of `maps` (lane k of a vector at
  /// `maps[k]`); an access whose last index is the column `col` becomes one
  /// vector access for all lanes (staged ones through shared memory).
  void cloneLanes(OpBuilder &b, Operation &op, MutableArrayRef<IRMapping> maps,
                  ValueRange rowIvs, Value col);

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
  std::pair<Value, Value> registerVector(OpBuilder &b, Value ub, int64_t k);

  /// This thread's partial value of `r` in the register form: its slots'
  /// values, each its lanes combined in order, combined in slot order.
  Value registerPartial(OpBuilder &b, const LaneReduction &r, IRMapping &m, ValueRange rowIvs,
                        Value ub);

  Value scratch(Type type);

  /// The block's threads split `r`, then combine: within each warp by
  /// shuffles, then the warps' values in order through shared memory, so
  /// that every thread ends with the same total.
  Value blockReduce(OpBuilder &b, const LaneReduction &r, IRMapping &m, ValueRange rowIvs);

  void buildStats(OpBuilder &b, scf::ParallelOp loop);

  /// The elementwise pass: thread t takes columns t, t + T, ..., four at a
  /// time interleaved op by op (their loads in flight together), then the
  /// rest one at a time.
  void buildFinal(OpBuilder &b);
};

} // namespace nerve::loop_mapping

#endif // NERVE_LIB_CONVERSION_PARALLELLOOPSTOGPU_ROWPROGRAMBUILDER_H
