//===- LoopMapping.h - pieces shared by the GPU loop mappings ---*- C++ -*-===//
//
// Helpers of nerve-parallel-loops-to-gpu used by more than one of its
// mappings (elementwise loops, reductions, row programs).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_CONVERSION_PARALLELLOOPSTOGPU_LOOPMAPPING_H
#define NERVE_LIB_CONVERSION_PARALLELLOOPSTOGPU_LOOPMAPPING_H

#include "nerve/Conversion/TdimToSCF/TdimToSCF.h"
#include "nerve/Dialect/Fold/IR/Fold.h"
#include "nerve/Dialect/GPU/Transforms/Passes.h"
#include "nerve/Dialect/GPUMap/Heuristics/RowProgram.h"
#include "nerve/Dialect/GPUMap/Heuristics/SplitReduction.h"
#include "nerve/Dialect/GPUMap/Heuristics/TiledTranspose.h"
#include "nerve/Dialect/GPUMap/Heuristics/WholeReduction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

#include <optional>
#include <utility>

namespace nerve::loop_mapping {

constexpr int64_t kWarpSize = 32;
/// Folds statically shorter than this are left to a thread each: splitting
/// them over lanes, blocks or chunks costs more than it saves.
constexpr int64_t kMinStaticTrip = 64;

mlir::Value indexConstant(mlir::OpBuilder &b, mlir::Location loc, int64_t v);

/// The innermost dimension of `type` with a static unit stride, if any.
std::optional<unsigned> contiguousDim(mlir::MemRefType type);

/// The permutation of `rank` dimensions that swaps `d` and the last.
mlir::AffineMap swapWithLastMap(unsigned rank, unsigned d, mlir::MLIRContext *ctx);

/// `type` (strided) with dimension `d` and the last swapped: what
/// memref.transpose by swapWithLastMap gives, a view whose last dimension
/// is `d` (contiguous along it, vector loads may walk it).
mlir::MemRefType transposedType(mlir::MemRefType type, unsigned d);

/// Bytes of one element of `memref`.
int64_t elementBytes(mlir::Value memref);

/// A 1-D array in shared memory: its element type and length.
using SharedArray = std::pair<mlir::Type, int64_t>;

/// Views of `arrays`, one after another in the block's dynamic shared
/// memory, each at a multiple of 16 bytes.
llvm::SmallVector<mlir::Value> sharedArrays(mlir::OpBuilder &b, mlir::Location loc,
                                            llvm::ArrayRef<SharedArray> arrays);

/// The dynamic shared memory `sharedArrays` lays `arrays` out in.
int64_t sharedArraysBytes(llvm::ArrayRef<SharedArray> arrays);

/// A gpu.launch of `grid` x `block` threads (1-D) whose body `fn` builds.
/// `sharedBytes`, when given, is the dynamic shared memory of each block.
/// With `cluster`, blocks run in 1-D thread block clusters of that many
/// (`grid` a multiple of it).
void buildLaunch(mlir::OpBuilder &b, mlir::Location loc, mlir::Value grid, mlir::Value block,
                 llvm::function_ref<void(mlir::OpBuilder &, mlir::gpu::LaunchOp)> fn,
                 mlir::Value sharedBytes = {}, mlir::Value cluster = {});

/// A launch of blocks of `block` threads covering `work` items, `perBlock`
/// per block (the grid capped at the hardware's limit: the body strides over
/// the rest), built only when there is work.
void buildLaunchOver(mlir::OpBuilder &b, mlir::Location loc, mlir::Value work,
                     mlir::Value perBlock, mlir::Value block,
                     llvm::function_ref<void(mlir::OpBuilder &, mlir::gpu::LaunchOp)> fn,
                     mlir::Value sharedBytes = {});

/// The loop of a fold: an `scf.for` with accumulators (whose merge, if any,
/// is its step's one op) or a `fold.for` (which states its merge), seen
/// through the accessors they share.
class FoldLoop {
public:
  FoldLoop() = default;
  FoldLoop(mlir::scf::ForOp loop) : op(loop) {}
  FoldLoop(nerve::fold::ForOp loop) : op(loop) {}
  /// `op` as a FoldLoop when it is either kind of loop; null otherwise.
  static FoldLoop dynCast(mlir::Operation *op);

  explicit operator bool() const { return op != nullptr; }
  operator mlir::Operation *() const { return op; }
  mlir::Operation *operator->() const { return op; }
  mlir::Operation *getOperation() const { return op; }
  mlir::Location getLoc() const { return op->getLoc(); }
  /// The fold.for, when the loop is one (it states its merge).
  nerve::fold::ForOp getFoldFor() const { return llvm::dyn_cast_or_null<nerve::fold::ForOp>(op); }

  mlir::Value getLowerBound() const;
  mlir::Value getUpperBound() const;
  mlir::Value getStep() const;
  mlir::Value getInductionVar() const;
  mlir::Block *getBody() const;
  mlir::Block::BlockArgListType getRegionIterArgs() const;
  mlir::OperandRange getInitArgs() const;
  mlir::ResultRange getResults() const { return op->getResults(); }
  unsigned getNumResults() const { return op->getNumResults(); }
  mlir::ValueTypeRange<mlir::ResultRange> getResultTypes() const { return op->getResultTypes(); }

private:
  mlir::Operation *op = nullptr;
};

/// A loop whose iterations fold values into its accumulators, reading
/// memory but writing none, in one of two forms:
///  - an `scf.for` of one accumulator whose step is one associative,
///    commutative op with a known identity (a sum, a maximum): `combine`,
///    which merges partial values too. Row reductions that lanes split take
///    this form only.
///  - a `fold.for` of any number of accumulators, whose merge region merges
///    two partial tuples (its init values are the identities): a fold split
///    into chunks folds each chunk with the loop's own step, then merges the
///    chunks with that region.
struct LaneReduction {
  FoldLoop loop;
  mlir::Operation *combine = nullptr; ///< single form: the op producing the yielded value
  unsigned accOperand = 0;            ///< single form: which of its operands is %acc
  mlir::Region *merge = nullptr;      ///< carried form: what merges two partial tuples
  /// The ops of an iteration that use the accumulators (in order), and the
  /// other values they use: what each iteration folds in.
  llvm::SmallVector<mlir::Operation *> step;
  llvm::SmallVector<mlir::Value> stepInputs;
  /// Carried form, of a fold.for stating max_sum_exp (an online softmax's
  /// statistics, accumulators (m, s)): which of stepInputs is the value v
  /// an iteration folds in as (v, 1). A block of iterations may then fold
  /// as foldMaxSumExpBlock does.
  std::optional<unsigned> maxSumExpValue;

  unsigned numAccumulators() const { return loop.getNumResults(); }
  bool isStep(mlir::Operation *op) const { return llvm::is_contained(step, op); }
};

/// The identity of `combine`'s kind, or null when it has no shuffle-friendly
/// one (kinds other than sums, minima and maxima; types other than f32, i32).
mlir::Value reductionIdentity(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *combine);

/// The identity of each of `r`'s accumulators.
llvm::SmallVector<mlir::Value> identitiesOf(mlir::OpBuilder &b, mlir::Location loc,
                                            const LaneReduction &r);

/// `loop` as a fold of values into accumulators (either form of
/// LaneReduction), reading memory but writing none.
std::optional<LaneReduction> matchFold(FoldLoop loop);

/// `loop` as a fold of the carried form, merged as `stating` (the fold.for
/// it is or is the innermost loop of) says, whatever its init values
/// (matchFold also wants constants: the identities).
std::optional<LaneReduction> matchCarriedFold(FoldLoop loop, nerve::fold::ForOp stating);

/// `loop` as a LaneReduction: a fold whose iterations walk the contiguous
/// dimension of what they load.
std::optional<LaneReduction> matchLaneReduction(mlir::scf::ForOp loop);

/// The buffer a memref.load or memref.store accesses; null for other ops.
mlir::Value memrefOf(mlir::Operation *op);

/// The indices of a memref.load or memref.store.
mlir::ValueRange indicesOf(mlir::Operation *op);

/// Whether `v` has the same value in every iteration of `loop`: defined
/// outside it, or computed inside by pure ops from such values.
bool isInvariantIn(mlir::Value v, mlir::Operation *loop);

/// `v` in host code before `loop`: itself when defined outside it, else
/// clones (recorded in `m`) of the pure ops inside it that compute it from
/// values outside; null when it depends on the loop's iterations or memory.
mlir::Value hoistOutOf(mlir::OpBuilder &host, mlir::Value v, mlir::Operation *loop,
                       mlir::IRMapping &m);

/// Whether `a` and `b` compute the same value: the same SSA value, equal
/// constants, or the same pure op applied to equivalent operands (the
/// extent of a dimension read inside one loop and outside another).
bool equivalent(mlir::Value a, mlir::Value b, int depth = 3);

/// Whether the first `rank` dimensions of `a` and `b` have equivalent
/// bounds and steps.
bool sameBounds(mlir::scf::ParallelOp a, mlir::scf::ParallelOp b, unsigned rank);

/// The parallel loop right after `loop` over the same iterations, with
/// nothing between but ops free of memory effects (and, with
/// `pastAllocations`, allocations, whose buffers `loop` cannot reach): a
/// loop that `loop`'s body may join; null otherwise.
mlir::scf::ParallelOp nextLoopOverSameIterations(mlir::scf::ParallelOp loop, bool pastAllocations);

/// Moves `producer`'s body (its terminator aside) to the start of
/// `consumer`'s, its induction variables replaced by `consumer`'s, and
/// erases `producer`: the two loops fused, `producer`'s effects moved past
/// whatever stood between them.
void prependBody(mlir::scf::ParallelOp producer, mlir::scf::ParallelOp consumer);

/// `combine` (a reduction region of two arguments) applied to `lhs`, `rhs`.
mlir::Value combineWith(mlir::OpBuilder &b, mlir::Region &combine, mlir::Value lhs,
                        mlir::Value rhs);

/// Each of `reduce`'s reductions applied to its accumulator in `acc` and its
/// value in `values`.
llvm::SmallVector<mlir::Value> combineEach(mlir::OpBuilder &b, mlir::scf::ReduceOp reduce,
                                          mlir::ValueRange acc, mlir::ValueRange values);

/// `reduction.combine` applied to (`acc`, `value`), as the loop applies it
/// (the single form).
mlir::Value combineAs(mlir::OpBuilder &b, const LaneReduction &r, mlir::Value acc,
                      mlir::Value value);

/// One iteration's step: the accumulators `acc` with `inputs` (values of
/// r.stepInputs) folded in, as the loop folds them.
llvm::SmallVector<mlir::Value> stepAs(mlir::OpBuilder &b, const LaneReduction &r,
                                      mlir::ValueRange acc, mlir::ValueRange inputs);

/// Two partial tuples of `r`'s accumulators merged.
llvm::SmallVector<mlir::Value> mergePartials(mlir::OpBuilder &b, const LaneReduction &r,
                                             mlir::ValueRange lhs, mlir::ValueRange rhs);

/// The trip count of each dimension of `loop` (0 when empty), built as
/// host code before it, and their product.
std::pair<llvm::SmallVector<mlir::Value>, mlir::Value> tripCounts(mlir::OpBuilder &b,
                                                                  mlir::scf::ParallelOp loop);

/// The same for loops of bounds `lbs`, `ubs` and steps `steps`.
std::pair<llvm::SmallVector<mlir::Value>, mlir::Value>
tripCounts(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange lbs, mlir::ValueRange ubs,
           mlir::ValueRange steps);

/// The loop's indices at flat iteration `linear` (innermost fastest); with
/// `leading`, those of its first `leading` dimensions at flat position
/// `linear` among them.
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b, mlir::Location loc,
                                           mlir::scf::ParallelOp loop,
                                           llvm::ArrayRef<mlir::Value> counts,
                                           mlir::Value linear, unsigned leading = 0);

/// This thread's partial value of `r` run over [lb, ub) by `step`, when
/// `lanes` threads split it and this one is `lane`: it takes iterations
/// lane, lane + lanes, ..., `unroll` at a time into as many partial values
/// so that that many loads are in flight, then combines them in a fixed
/// order. `valueAt` builds the value iteration `iv` folds in. `r` is of the
/// single form.
mlir::Value stridedPartial(mlir::OpBuilder &b, mlir::Location loc, const LaneReduction &r,
                           mlir::Value lb, mlir::Value ub, mlir::Value step, mlir::Value lane,
                           mlir::Value lanes,
                           llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Value)> valueAt,
                           int64_t unroll = 4);

/// Folds `values` (of consecutive iterations) into the accumulators (m, s)
/// of a fold.for stating max_sum_exp as a block: m' = the larger
/// of m and the values' maximum, s' = s exp(m - m') + the sum of
/// exp(v - m'), a term 1 where its two sides are equal (both infinite
/// included, as the online merge takes them). One exp a value, as the
/// step, but the steps' compares, selects and rescales of s once a block,
/// and a dependence chain of a few ops where the steps chain them all.
void foldMaxSumExpBlock(mlir::OpBuilder &b, mlir::Location loc,
                        llvm::MutableArrayRef<mlir::Value> acc, llvm::ArrayRef<mlir::Value> values);

/// What the values of a strided fold are: r.stepInputs of an iteration
/// (folded in by the loop's step) or partial accumulator tuples (merged).
enum class FoldOf { Inputs, Partials };

/// stridedPartial of `width` folds at once (a thread's columns of a vector,
/// say), for either form of `r`: `valuesAt` builds what each of them folds
/// in at iteration `iv`, fold-major (r.stepInputs' values, or with
/// FoldOf::Partials a partial tuple, per fold); the result is each fold's
/// partial tuple, fold-major. Each fold takes its iterations in
/// stridedPartial's order, so its partial has the bits stridedPartial would
/// give it. With `inOrder`, each fold keeps one partial tuple instead of
/// `unroll` and takes its iterations in order (the bits of a sequential
/// fold): the loads of `unroll` iterations are still in flight together,
/// with 1/`unroll` of the partials' registers; a maximum-and-sum-of-exp
/// fold (r.maxSumExpValue) takes those `unroll` iterations as one block
/// (foldMaxSumExpBlock), its bits those of that order.
llvm::SmallVector<mlir::Value> stridedPartials(
    mlir::OpBuilder &b, mlir::Location loc, const LaneReduction &r, mlir::Value lb,
    mlir::Value ub, mlir::Value step, mlir::Value lane, mlir::Value lanes, int64_t width,
    llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::OpBuilder &, mlir::Value)> valuesAt,
    int64_t unroll = 4, bool inOrder = false, FoldOf of = FoldOf::Inputs);

/// Combines `partial` over the 32 lanes of the warp by XOR shuffles: every
/// lane ends with the same total, combined in the same order. With
/// `groupLanes` (a power of two, an index value), over each group of that
/// many lanes instead: the exchanges across groups are made (every lane
/// takes part) and dropped.
mlir::Value warpButterfly(mlir::OpBuilder &b, mlir::Location loc, const LaneReduction &r,
                          mlir::Value partial, mlir::Value groupLanes = {});

/// A static workgroup (shared memory) array of `length` `element`s that
/// `launch`'s blocks each have.
mlir::Value workgroupArray(mlir::gpu::LaunchOp launch, mlir::Type element, int64_t length,
                           mlir::Location loc);

/// Combines the totals of a block's warps (each warp's `partial` after
/// warpButterfly, the same on all its lanes) in warp order through
/// `scratch`, a workgroup buffer of at least `warps` elements: every thread
/// ends with the block's total. Two barriers, so the scratch may be reused
/// at once; every thread of the block must reach them.
mlir::Value blockCombine(mlir::OpBuilder &b, mlir::Location loc, const LaneReduction &r,
                         mlir::Value partial, mlir::Value scratch, mlir::Value warp,
                         mlir::Value isLaneZero, mlir::Value warps);

/// Maps a row program that starts at `first` (see RowPrograms.cpp) onto one
/// launch, a block per row, which may stage up to `limits.stagingBytes` of
/// shared memory, or, for wide rows, a cluster of up to
/// `limits.clusterBlocks` blocks per row (0: none); `mapAlone` maps one of
/// its loops by itself, for rows too wide for the program (given how many
/// columns they have at least). Returns the op to continue mapping from, or
/// null when `first` starts no program of `loops` loops (nothing changed).
mlir::Operation *
mapRowProgram(mlir::scf::ParallelOp first, unsigned loops,
              const nerve::gpumap::RowProgramLimits &limits,
              llvm::function_ref<void(mlir::scf::ParallelOp, int64_t)> mapAlone);

/// The trip count of `inner` (0 when empty), computed in host code before
/// `loop` (its bounds hoisted with hoistOutOf, clones recorded in `m`);
/// null when a bound depends on `loop`'s iterations.
mlir::Value hostTripCount(mlir::OpBuilder &host, FoldLoop inner, mlir::Operation *loop,
                          mlir::IRMapping &m);
inline mlir::Value hostTripCount(mlir::OpBuilder &host, FoldLoop inner,
                                 mlir::Operation *loop) {
  mlir::IRMapping m;
  return hostTripCount(host, inner, loop, m);
}

/// Merges `outer` with the parallel loops nested directly in it into one
/// loop over all their dimensions (a neuron over [b, h, w, c] is written as
/// four nested loops), so that all of them map onto threads. Pure ops
/// between the loops that do not use the outer indices (bounds) move out.
/// Returns the merged loop (`outer` itself when nothing merges).
mlir::scf::ParallelOp collapseNested(mlir::scf::ParallelOp outer);

/// Ops that may stay in host code: they compute on values, not memory
/// (sizes from descriptors, views, index arithmetic), or manage buffers.
bool staysOnHost(mlir::Operation *op);

/// Whether hostTripCount can build `inner`'s trip count before `loop`.
bool tripCountHoistable(FoldLoop inner, mlir::Operation *loop);

/// The matchers nerve-gpu-select-strategy asks, in its table's order; each
/// says whether its mapping takes the loop, changing nothing.
/// How many loops the row program that starts at `first` takes (its
/// statistics loops and elementwise pass), if one does.
std::optional<unsigned> rowProgramLoops(mlir::scf::ParallelOp first);
/// Whether mapRowReductions maps `loop`.
bool reducesRows(mlir::scf::ParallelOp loop);
/// Whether mapSplitReduction maps `loop`.
bool mapsAsSplitReduction(mlir::scf::ParallelOp loop);
/// The threads a block of mapTransposedStaging has for `loop` (at most
/// `blockSize`), if it maps it.
std::optional<int64_t> transposedStagingThreads(mlir::scf::ParallelOp loop, int64_t blockSize);
/// Whether mapTiledTranspose maps `loop`.
bool tiledTransposeApplies(mlir::scf::ParallelOp loop);

/// Maps a parallel loop over rows whose body reduces each row with
/// sequential loops (a row sum, a softmax's statistics; see
/// RowReductions.cpp): a row per warp, or per block of up to `blockSize`
/// threads for rows long enough, by vectors where a host check allows.
/// `minColumns`: what the caller knows the rows' length to be at least.
/// Returns false, changing nothing, when the body is anything else or its
/// reductions are statically short.
bool mapRowReductions(mlir::scf::ParallelOp loop, int64_t blockSize, int64_t minColumns = 0);

/// Maps a parallel loop whose body folds a sequential loop along an outer
/// dimension (a column sum; see SplitReductions.cpp) onto two launches that
/// split the fold into chunks. Returns false, changing nothing, otherwise.
bool mapSplitReduction(mlir::scf::ParallelOp loop);

/// Maps a parallel loop whose iterations each walk their own contiguous
/// row in blocks (a time-minor neuron) onto blocks of up to `blockSize`
/// threads that stage each block of the walk through shared memory,
/// transposed, so that rows are loaded and stored by the threads together
/// (see TransposedStaging.cpp). Returns false, changing nothing, otherwise.
bool mapTransposedStaging(mlir::scf::ParallelOp loop, int64_t blockSize);

/// Maps a straight-line parallel loop whose stores are contiguous along one
/// of its dimensions and some of whose loads along another (an elementwise
/// op of a transposed view) onto square tiles, a block each, that stage
/// those loads through shared memory so that both sides are coalesced (see
/// TiledTranspose.cpp). Fails, changing nothing, otherwise. On success,
/// returns the copy of `loop` left for the shapes that tiles do not suit,
/// to be mapped otherwise (null when the shapes are known to suit them).
mlir::FailureOr<mlir::scf::ParallelOp> mapTiledTranspose(mlir::scf::ParallelOp loop);

/// Maps `loop` (trip counts `counts`, `total` in all), a thread per
/// iteration in blocks of `threads`, with the blocks' threads walking the
/// body's sequential loops in step: a barrier ends each of their iterations
/// (see LockstepLoops.cpp). Returns false, changing nothing, when the body
/// has no such loop or does what a barrier forbids.
bool mapLockstep(mlir::OpBuilder &b, mlir::scf::ParallelOp loop,
                 llvm::ArrayRef<mlir::Value> counts, mlir::Value total, int64_t threads);

/// Whether mapLockstep maps `loop` (or foldInLockstep folds it).
bool walksInLockstep(mlir::scf::ParallelOp loop);

/// The buffer `memref` is a view of (through view-like ops), or itself.
mlir::Value rootBuffer(mlir::Value memref);

/// How a parallel loop's iterations reach a buffer when each touches only
/// its own elements: every access goes through `memref` and has the loop's
/// k-th induction variable at index `positions[k]`.
struct OwnElements {
  mlir::Value memref;
  llvm::SmallVector<unsigned> positions;
};

/// How every access in `loop`'s body to the buffer `root` (through any
/// view) reaches the iteration's own elements; nullopt when one does not,
/// when they differ in memref or positions, or when none accesses it.
std::optional<OwnElements> ownElementsOf(mlir::scf::ParallelOp loop, mlir::Value root);

/// Fuses into one loop `producer` and the parallel loop right after it
/// (nothing between but pure ops and allocations) when both walk in
/// lockstep over the same iterations and the second reads what the first
/// stores, each iteration only its own elements: a neuron's forward and its
/// backward become one kernel in which a thread walks its neuron's time
/// forward, then back (see FuseLockstepWalks.cpp). Returns the fused loop
/// (at the second's place), or null, changing nothing.
mlir::scf::ParallelOp fuseLockstepWalks(mlir::scf::ParallelOp producer);

/// Whether `loop` has the shape mapSplitReduction maps: a parallel loop
/// without results whose body folds one sequential loop over an outer
/// dimension, computing before it and storing after it.
bool splitsAsReduction(mlir::scf::ParallelOp loop);

/// The threads of a block that walks `loop` in lockstep, given `threads`
/// otherwise: fewer when its rows are all 16-bit.
int64_t lockstepThreads(mlir::scf::ParallelOp loop, int64_t threads);

/// Inside `launch` (blocks of `block` threads), each thread's fold of the
/// reduction `loop`'s iterations bid * block + tid, then a grid of blocks
/// on (the order of a grid-stride fold), its threads walking the body's
/// sequential loops in step as mapLockstep's do; a thread's repeat of the
/// last iteration is not folded. Nothing, building nothing, when the body
/// has no such loop or does what a barrier forbids.
std::optional<llvm::SmallVector<mlir::Value>>
foldInLockstep(mlir::OpBuilder &b, mlir::gpu::LaunchOp launch, mlir::scf::ParallelOp loop,
               llvm::ArrayRef<mlir::Value> counts, mlir::Value total, mlir::Value block);

/// Folds into `producer` a reduction that only reads what it stores: a
/// parallel loop with results, right after it (nothing between but ops
/// free of memory effects), over the same iterations, that loads one
/// element of a temporary buffer at its indices, where `producer` stores
/// it (see FuseReductions.cpp). Returns the fused loop, or null, changing
/// nothing.
mlir::scf::ParallelOp fuseReductionIntoProducer(mlir::scf::ParallelOp producer);

/// `build(b, lanes)` under the host condition `fits`, `build(b, 1)` (the
/// scalar form) otherwise: the launch by vectors or by scalars chosen at
/// run time. With `lanes` <= 1 only the scalar form is built.
void buildVectorsIfFit(mlir::OpBuilder &b, mlir::Location loc, mlir::Value fits, int64_t lanes,
                       llvm::function_ref<void(mlir::OpBuilder &, int64_t)> build);

/// Most elements per vector access (16 bytes of the narrowest type).
constexpr int64_t kMaxVectorLanes = 8;

/// Elements of `type` in a 16-byte vector when its innermost dimension can
/// be accessed by vectors (statically unit stride, as vector.load needs;
/// whole-byte integer or float elements of at most 8 bytes), else 0.
int64_t vectorLanesOf(mlir::MemRefType type);

/// A vector load of `lanes` elements of `memref` at `indices`, aligned to
/// the vector (at most 16 bytes).
mlir::Value vectorLoad(mlir::OpBuilder &b, mlir::Location loc, mlir::Value memref,
                       mlir::ValueRange indices, int64_t lanes);

/// A vector store of `vec` into `memref` at `indices`, aligned likewise.
void vectorStore(mlir::OpBuilder &b, mlir::Location loc, mlir::Value vec, mlir::Value memref,
                 mlir::ValueRange indices);

/// Maps `scalar` in each lane mapping `maps[k]` to element k of `vec`.
void unpackLanes(mlir::OpBuilder &b, mlir::Location loc, mlir::Value vec, mlir::Value scalar,
                 llvm::MutableArrayRef<mlir::IRMapping> maps);

/// The vector of `scalar`'s value in each lane mapping of `maps`.
mlir::Value packLanes(mlir::OpBuilder &b, mlir::Location loc, mlir::Value scalar,
                      llvm::ArrayRef<mlir::IRMapping> maps);

/// `values` as `m` maps them.
llvm::SmallVector<mlir::Value> mapped(const mlir::IRMapping &m, mlir::ValueRange values);

/// One mapping per lane of a vector of `lanes` iterations from `first`:
/// copies of `base` with `iv` at first + k.
llvm::SmallVector<mlir::IRMapping> laneMappings(mlir::OpBuilder &b, mlir::Location loc,
                                                const mlir::IRMapping &base, mlir::Value iv,
                                                mlir::Value first, int64_t lanes);

/// stridedPartial over vectors: `r` runs from `lb` (null: 0) by 1 over a
/// whole number of vectors of `vectorLanes` iterations, up to `ub` (both
/// multiples of the vector); thread `lane` of `lanes` takes the vectors
/// lane, lane + lanes, ... from there, `unroll` at a time.
/// `emitBody` clones r's body (all but its combine) once per lane mapping
/// (copies of `base` with r's index at each lane's iteration); the lanes'
/// values are then combined in lane order.
mlir::Value vectorPartial(
    mlir::OpBuilder &b, mlir::Location loc, const LaneReduction &r, const mlir::IRMapping &base,
    mlir::Value lb, mlir::Value ub, mlir::Value lane, mlir::Value lanes, int64_t vectorLanes,
    int64_t unroll,
    llvm::function_ref<void(mlir::OpBuilder &, llvm::MutableArrayRef<mlir::IRMapping>)> emitBody);

/// Host check that vectors of `lanes` elements along the innermost
/// dimension of each of `buffers`, starting at `firstColumn` and covering
/// `columns`, are aligned and stay inside rows: a whole number of vectors,
/// unit innermost strides, the other strides and the base addresses
/// multiples of the vector.
mlir::Value vectorAccessesFit(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::ArrayRef<mlir::Value> buffers, int64_t lanes,
                              mlir::Value columns, mlir::Value firstColumn);

/// Maps `loop`, a parallel loop with reductions (to single values: a
/// whole-tensor sum), as a fixed tree (see WholeReductions.cpp): kernel 1
/// has up to 1024 blocks of `blockSize` threads (a power of two) fold
/// grid-stride shares in order and combine them pairwise, kernel 2 one
/// block over the blocks' partial values. `init` must be the identity of
/// the combination (tdim.reduce's is). Returns the op to continue mapping
/// from: the loads that replace the results come before their uses.
mlir::Operation *mapWholeReduction(mlir::scf::ParallelOp loop, int64_t blockSize);

/// Whether mapWholeReduction folds `loop`, over several dimensions, by
/// chunks of its iterations in row-major order (its indices serve only its
/// loads, whose whole index they are).
bool foldsFlat(mlir::scf::ParallelOp loop);

/// Whether `loop` is a fold mapWholeFold maps: one that states its merge
/// (LaneReduction's carried form).
bool foldsAsWhole(nerve::fold::ForOp loop);

/// mapWholeReduction for a sequential fold that states its merge (an
/// argmax over a whole tensor), its iterations regrouped as the tree
/// needs (the merge region merges partial tuples).
mlir::Operation *mapWholeFold(nerve::fold::ForOp loop, int64_t blockSize);

/// mapWholeReduction for a reduction over two or more dimensions whose
/// body is not foldsFlat's (a sum weighted by a vector of columns): by
/// rows into a buffer (mapRowReductions), then over the rows, when the
/// rows and the tensor are long enough at run time; as it stands
/// otherwise. Returns the op to continue mapping from, or null, changing
/// nothing, when `loop` is not such a reduction.
mlir::Operation *mapWholeReductionByRows(mlir::scf::ParallelOp loop, int64_t blockSize);

/// Whether `loop`'s body reads memory but writes none.
bool loadsOnly(mlir::scf::ParallelOp loop);

/// What `loop`'s body reduces at the iteration `mapping` binds its
/// induction variables to, from a copy of its body.
llvm::SmallVector<mlir::Value> reducedValues(mlir::OpBuilder &b, mlir::scf::ParallelOp loop,
                                             mlir::IRMapping &mapping);

/// A read of the 0-d `buffer` in place of `result`, just before the first
/// op of its block that uses it (host ops in between stay on the host);
/// null when none does.
mlir::memref::LoadOp readBeforeFirstUse(mlir::Value result, mlir::Value buffer);

/// The store that is `result`'s only use, when a reduction's last kernel
/// can do it instead of a launch of its own: right after `loop` (nothing
/// between touches memory), into a buffer at indices defined before the
/// loop (a tdim.reduce into a 0-d output).
mlir::memref::StoreOp storedDirectly(mlir::scf::ParallelOp loop, mlir::Value result);

/// A 1-D reduction's iterations in chunks of `lanes` consecutive ones:
/// each access that varies with the index walks the contiguous dimension
/// (one 16-byte vector a chunk where `buffers` allow it at run time).
struct ChunkPlan {
  int64_t lanes;
  llvm::SmallVector<mlir::Value> buffers;
};

/// What chunks of a 1-D reduction copy: the loop's body but `skipped` (a
/// fold's step, applied by the caller), and the `values` an iteration
/// folds in (a parallel loop's reduced values, a fold's step inputs).
struct ChunkSource {
  mlir::Operation *loop;
  mlir::Value iv, step;
  llvm::SmallVector<mlir::Operation *> skipped;
  llvm::SmallVector<mlir::Value> values;

  static ChunkSource of(mlir::scf::ParallelOp loop);
  static ChunkSource of(const LaneReduction &fold);
};

/// The chunks of `source`, a loop by steps of 1 whose body is straight-line
/// code in which every access that varies with the index is a load along
/// the contiguous dimension at that index; nullopt otherwise.
std::optional<ChunkPlan> planChunks(const ChunkSource &source);

/// `source`'s body emitted for each lane mapping of `maps` (consecutive
/// iterations of a chunk, as laneMappings makes them), its varying loads
/// one vector load when `byVectors` (the lanes then must be planChunks'),
/// else one load a lane; the values each lane folds in. Both forms compute
/// the same values.
llvm::SmallVector<llvm::SmallVector<mlir::Value>>
chunkValues(mlir::OpBuilder &b, mlir::Location loc, const ChunkSource &source,
            llvm::MutableArrayRef<mlir::IRMapping> maps, bool byVectors);

/// Whether `buffer`'s first element (at element `offset` from its aligned
/// base) lies at an address that is a multiple of `alignment` bytes (a
/// host check).
mlir::Value startsAligned(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer,
                          mlir::Value offset, int64_t alignment);

/// Maps `loop` (trip counts `counts`, `total` in all) with consecutive
/// innermost iterations per thread, each access along the contiguous
/// dimension one 16-byte vector (see VectorLanes.cpp), `groups` such
/// vectors per access in flight per thread for straight-line bodies (a
/// tile of as many rows as lanes where some vector is the same for every
/// row), under a host check of the buffers at run time; `scalarMapping`
/// builds the mapping used when the check fails. Returns false, changing
/// nothing, when the body does not suit it.
bool mapVectorLanes(mlir::OpBuilder &b, mlir::scf::ParallelOp loop,
                    llvm::ArrayRef<mlir::Value> counts, mlir::Value total, int64_t threads,
                    int64_t groups, llvm::function_ref<void(mlir::OpBuilder &)> scalarMapping);

/// The lanes mapVectorLanes takes `loop` by (2, 4 or 8), or 0 when its
/// body does not suit vectors: what nerve-gpu-select-strategy records in a
/// `threads` strategy.
int64_t vectorLanesFor(mlir::scf::ParallelOp loop);

} // namespace nerve::loop_mapping

#endif // NERVE_LIB_CONVERSION_PARALLELLOOPSTOGPU_LOOPMAPPING_H
