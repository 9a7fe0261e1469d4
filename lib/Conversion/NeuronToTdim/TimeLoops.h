//===- TimeLoops.h - the loops every neuron lowering builds ------*- C++ -*-===//
//
// Shared by the lowering of neuron.generic (NeuronToTdim.cpp) and of model
// neurons (ModelToTdim.cpp): per-neuron scalar builders, the parallel nest
// over the neurons, and the blocked (optionally pipelined) time loop with
// its block-size heuristics.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_CONVERSION_NEURONTOTDIM_TIMELOOPS_H
#define NERVE_LIB_CONVERSION_NEURONTOTDIM_TIMELOOPS_H

#include "FloatArith.h"

#include "nerve/Dialect/Tdim/IR/TdimBuilders.h"
#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include <optional>

namespace nerve {

using mlir::Value;
using mlir::ValueRange;
using mlir::OpBuilder;
using mlir::Location;
using mlir::Type;
using tdim::DimAttr;
using tdim::TdimTensorType;
using mlir::FloatType;

/// Builders for the per-neuron code, over one compute type.
struct NeuronBuilder : FloatArith {
  /// A float converted to `to` the way a store and a load would.
  Value convert(Value v, Type to) {
    if (v.getType() == to)
      return v;
    if (llvm::cast<FloatType>(to).getWidth() < llvm::cast<FloatType>(v.getType()).getWidth())
      return mlir::arith::TruncFOp::create(b, loc, to, v);
    return mlir::arith::ExtFOp::create(b, loc, to, v);
  }

  /// `tensor` at the point `indices` (typed by dimension), in the compute type.
  Value load(Value tensor, ValueRange indices) {
    Type e = llvm::cast<TdimTensorType>(tensor.getType()).getElementType();
    Value v = tdim::LoadOp::create(b, loc, e, tensor, indices);
    return convert(v, type);
  }

  void store(Value v, Value tensor, ValueRange indices) {
    Type e = llvm::cast<TdimTensorType>(tensor.getType()).getElementType();
    tdim::StoreOp::create(b, loc, convert(v, e), tensor, indices);
  }

  /// A spike (i1) as 1/0 in element type `e`.
  Value spikeValue(Value fired, Type e) {
    if (e.isSignlessInteger(1))
      return fired;
    if (e.isSignlessInteger(8))
      return mlir::arith::ExtUIOp::create(b, loc, e, fired);
    // Operands built in named statements: the order of evaluating a
    // call's arguments (and so of the ops) is the host compiler's.
    Value one = c(1.0), zero = c(0.0);
    return convert(select(fired, one, zero), e);
  }

  /// A spike (i1) stored as 1/0 in the tensor's element type.
  void storeSpike(Value fired, Value tensor, ValueRange indices) {
    Type e = llvm::cast<TdimTensorType>(tensor.getType()).getElementType();
    tdim::StoreOp::create(b, loc, spikeValue(fired, e), tensor, indices);
  }

  /// Fire: h - v_th >= 0, as torch's heaviside(h - v_th) (NaN does not fire).
  Value fire(Value h, double vth) {
    Value margin = sub(h, c(vth));
    Value zero = c(0.0);
    return mlir::arith::CmpFOp::create(b, loc, mlir::arith::CmpFPredicate::OGE, margin, zero);
  }

  /// Reset: exactly v_reset or h (hard), or h - v_th (soft), when fired.
  Value reset(Value h, Value fired, double vth, std::optional<double> vReset) {
    if (vReset)
      return select(fired, c(*vReset), h);
    return select(fired, sub(h, c(vth)), h);
  }
};

/// The contraction whose product `x` the neuron op `reader` alone reads,
/// when the neuron can be its scanning epilogue: `x` a tdim.alloc'ed
/// tensor that contraction alone writes (no epilogue of its own), nothing
/// writing memory in between, the spikes `spike` in x's element type and
/// not an operand. (Whether the op writes anything but spikes, each
/// lowering checks.)
tdim::ContractOp productFeeding(Value x, mlir::Operation *reader, Value spike);

/// The dimensions of `seq` other than `time`, in its layout order.
llvm::SmallVector<DimAttr> neuronDims(Value seq, DimAttr time);

/// Nested parallel tdim.for loops over `dims` (extents from `source`); `body`
/// runs in the innermost with the index of each dimension.
void buildParallelNest(OpBuilder &b, Location loc, Value source, llvm::ArrayRef<DimAttr> dims,
                       llvm::function_ref<void(OpBuilder &, ValueRange)> body,
                       llvm::SmallVector<Value> ivs = {});

/// The neuron's indices followed by `t`.
llvm::SmallVector<Value> withTime(ValueRange neuron, Value t);

/// Builds the per-neuron time loop. The steps run in blocks of `block`
/// whose loads are issued together and, with `pipeline`, one block ahead:
/// while a block's arithmetic runs, the next block's loads are in flight
/// (the recurrence is sequential, its inputs are not). Pipelining carries a
/// block of loaded values in registers, so it is for blocks of few values. The steps after the last whole block
/// run one at a time. `reverse` walks time backwards (the partial block
/// first). `load(b, t)` emits a step's loads; `compute(b, t, loaded,
/// previous, mayBeFirst, carried)` its arithmetic and stores, where
/// `previous` is what the step before in time loaded, when at hand, and
/// `mayBeFirst` says whether `t` may be 0 (then `previous` is stale).
using StepValues = llvm::SmallVector<Value>;
using LoadFn = llvm::function_ref<StepValues(OpBuilder &, Value)>;
using ComputeFn = llvm::function_ref<llvm::SmallVector<Value>(OpBuilder &, Value, const StepValues &,
                                                  const StepValues *, bool, ValueRange)>;

llvm::SmallVector<Value> buildTimeLoop(OpBuilder &b, Location loc, DimAttr time, Value steps,
                                 ValueRange inits, int64_t block, bool reverse, LoadFn load,
                                 ComputeFn compute, bool pipeline = true);

/// The most loaded values a pipelined forward block carries: more spill
/// registers (measured on an H200: 48 floats a thread made f16 training 25%
/// slower).
inline constexpr int64_t kPipelinedValues = 32;
inline constexpr int64_t kMaxTimeBlock = 128;
inline constexpr int64_t kBackwardPipelinedValues = 16;
inline constexpr int64_t kBackwardValuesPerStep = 4;

/// Bytes of an element of the tensor `seq`.
int64_t elementBytes(Value seq);

/// What a time block is chosen from: facts of a sequence's type.
struct SequenceFacts {
  int64_t elementBytes = 4;
  /// Time is the contiguous dimension (time-minor layouts).
  bool timeContiguous = false;
  /// The number of steps, when the type fixes it.
  std::optional<int64_t> steps;
};
SequenceFacts sequenceFacts(Value seq, DimAttr time);

/// Whether blocks of `block` steps, `values` loaded values each, are loaded
/// one block ahead: along a strided time dimension, with at most
/// `maxValues` values carried, and when the sequence may hold more than one
/// block (a single block has nothing ahead to load).
bool pipelineBlocks(const SequenceFacts &facts, int64_t block, int64_t values,
                    int64_t maxValues);

/// The forward time block for `requested` (0: automatic).
int64_t chooseForwardBlock(int64_t requested, const SequenceFacts &facts);
/// The backward time block for `requested` (0: automatic), loading
/// `streams` sequences a step.
int64_t chooseBackwardBlock(int64_t requested, const SequenceFacts &facts, int64_t streams);

} // namespace nerve

#endif // NERVE_LIB_CONVERSION_NEURONTOTDIM_TIMELOOPS_H
