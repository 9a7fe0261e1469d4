//===- FuseReductions.cpp - a reduction folded into the loop it reads ----===//
//
// A parallel loop that stores one value per iteration into a temporary
// buffer, followed by a reduction that only loads that buffer back at its
// own indices (a neuron's backward: each neuron's sum of its parameter
// gradient over time, then the sum over neurons), becomes one parallel
// loop with the reduction. Its kernel then folds its threads' values per
// block, as issue 7 asks of PLIF's grad_w: no buffer of a value per
// iteration, and one launch fewer. Only producers whose threads walk a
// loop in lockstep (LockstepLoops.cpp) are fused: the reduction's kernel
// maps those the same way, while others would give up their vector and
// tiled mappings for the reduction's grid-stride loop.
//
//===----------------------------------------------------------------------===//

#include "LoopMapping.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace nerve::loop_mapping {

/// The single top-level op of `loop`'s body that accesses `buffer`, at
/// exactly the loop's indices, as OpTy; null otherwise.
template <typename OpTy>
static OpTy accessAtIndices(scf::ParallelOp loop, Value buffer) {
  OpTy found;
  for (Operation *user : buffer.getUsers()) {
    if (!loop->isAncestor(user))
      continue;
    auto access = dyn_cast<OpTy>(user);
    if (found || !access || access->getBlock() != loop.getBody() ||
        access.getMemRef() != buffer ||
        !llvm::equal(access.getIndices(), loop.getInductionVars()))
      return {};
    found = access;
  }
  return found;
}

scf::ParallelOp fuseReductionIntoProducer(scf::ParallelOp producer) {
  if (producer.getNumResults() != 0 || !walksInLockstep(producer))
    return {};
  auto consumer = nextLoopOverSameIterations(producer, /*pastAllocations=*/false);
  if (!consumer || consumer.getNumResults() == 0)
    return {};

  // The consumer reads one temporary buffer, element by element, and
  // computes; the producer writes each element once.
  memref::LoadOp load;
  for (Operation &op : consumer.getBody()->without_terminator()) {
    if (auto l = dyn_cast<memref::LoadOp>(op); l && !load) {
      load = l;
      continue;
    }
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
      return {};
  }
  if (!load)
    return {};
  Value buffer = load.getMemRef();
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || load != accessAtIndices<memref::LoadOp>(consumer, buffer))
    return {};
  auto store = accessAtIndices<memref::StoreOp>(producer, buffer);
  if (!store)
    return {};
  SmallVector<Operation *> deallocs;
  for (Operation *user : buffer.getUsers()) {
    if (isa<memref::DeallocOp>(user))
      deallocs.push_back(user);
    else if (user != load && user != store)
      return {};
  }

  // The producer's body goes first in the consumer's, its stored value in
  // place of the load. Only ops free of memory effects stood between the
  // loops, so moving the producer's effects past them changes nothing.
  load.getResult().replaceAllUsesWith(store.getValueToStore());
  load.erase();
  store.erase();
  prependBody(producer, consumer);
  for (Operation *dealloc : deallocs)
    dealloc->erase();
  alloc.erase();
  return consumer;
}

} // namespace nerve::loop_mapping
