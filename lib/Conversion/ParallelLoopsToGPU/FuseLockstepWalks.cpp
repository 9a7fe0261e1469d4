//===- FuseLockstepWalks.cpp - a forward walk and the backward walk after it -===//
//
// A neuron's training step in one kernel spec is two parallel loops over
// the neurons: the forward walks each neuron's time storing spikes, v_seq
// and h_seq, then the backward walks it back, reading h_seq. Each is a
// launch, and the backward can start only after the forward's last block:
// the GPU drains and fills again between them, and the backward reads all
// of h_seq from DRAM although the forward's last steps were just written.
// The only dependence between them is per neuron, so the two become one
// loop: a thread walks its neuron forward, then back, with no launch in
// between, and reads back its last steps while L2 still holds them.
//
// Fused when both loops walk in lockstep (LockstepLoops.cpp) over the same
// iterations, and every buffer one stores and the other accesses is stored
// only by the first and loaded only by the second, each iteration touching
// only its own elements (ownElementsOf): no iteration of either loop then
// reads or writes what another iteration wrote, so running them one
// iteration at a time computes what running them one loop at a time does.
// Loops that a split reduction maps are left alone (their kernel is worth
// more than a launch).
//
//===----------------------------------------------------------------------===//

#include "LoopMapping.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace nerve::loop_mapping {

namespace {
/// The buffers a loop's body loads from and stores to, through any view.
struct Accesses {
  llvm::SetVector<Value> loaded, stored;

  explicit Accesses(scf::ParallelOp loop) {
    loop.getBody()->walk([&](Operation *op) {
      if (Value memref = memrefOf(op))
        (isa<memref::LoadOp>(op) ? loaded : stored).insert(rootBuffer(memref));
    });
  }
  bool touches(Value root) const { return loaded.contains(root) || stored.contains(root); }
};
} // namespace

/// Whether a lockstep walk that a split reduction would not take.
static bool fusable(scf::ParallelOp loop) {
  return loop.getNumResults() == 0 && walksInLockstep(loop) && !splitsAsReduction(loop);
}

scf::ParallelOp fuseLockstepWalks(scf::ParallelOp producer) {
  if (!fusable(producer))
    return {};
  // Allocations may stand between the loops (PLIF's buffer of per-neuron
  // grad_w sums).
  auto consumer = nextLoopOverSameIterations(producer, /*pastAllocations=*/true);
  if (!consumer || !fusable(consumer))
    return {};

  Accesses first(producer), second(consumer);
  bool passesValues = false;
  llvm::SetVector<Value> written = first.stored;
  written.insert_range(second.stored);
  for (Value root : written) {
    if (!first.touches(root) || !second.touches(root))
      continue;
    if (first.loaded.contains(root) || second.stored.contains(root))
      return {};
    std::optional<OwnElements> stores = ownElementsOf(producer, root);
    std::optional<OwnElements> loads = ownElementsOf(consumer, root);
    if (!stores || !loads || stores->memref != loads->memref ||
        stores->positions != loads->positions)
      return {};
    passesValues = true;
  }
  if (!passesValues)
    return {};

  prependBody(producer, consumer);
  return consumer;
}

} // namespace nerve::loop_mapping
