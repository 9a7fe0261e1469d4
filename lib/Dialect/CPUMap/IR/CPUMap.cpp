//===- CPUMap.cpp - the cpumap dialect and its strategy attribute --------===//
//
// Registration, and the checks that make a strategy a verified fact: its
// chunk is in range and it sits on the kind of loop it maps.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/CPUMap/IR/CPUMap.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace nerve::cpumap;

#include "nerve/Dialect/CPUMap/IR/CPUMapDialect.cpp.inc"
#include "nerve/Dialect/CPUMap/IR/CPUMapEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "nerve/Dialect/CPUMap/IR/CPUMapAttrs.cpp.inc"

void CPUMapDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "nerve/Dialect/CPUMap/IR/CPUMapAttrs.cpp.inc"
      >();
}

/// The largest chunk of a time_chunks strategy: its scratch lives on the
/// task's stack.
static constexpr int64_t kMaxTimeChunk = 65536;

LogicalResult StrategyAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StrategyKind kind, int64_t chunk, int64_t loops,
                                   int64_t lanes) {
  if (loops < 1)
    return emitError() << "loops must be at least 1, not " << loops;
  if (loops != 1 && kind != StrategyKind::threads)
    return emitError() << "only threads runs several loops in the same tasks (loops = " << loops
                       << ")";
  if (lanes != 0 && (lanes < 2 || lanes > 64 || !llvm::isPowerOf2_64(lanes)))
    return emitError() << "lanes must be 0 (folds as written) or a power of two from 2 to 64, not "
                       << lanes;
  switch (kind) {
  case StrategyKind::sequential:
  case StrategyKind::threads:
    if (chunk != 0)
      return emitError() << "'" << stringifyStrategyKind(kind) << "' takes no chunk";
    return success();
  case StrategyKind::time_chunks:
    if (chunk < 8 || chunk > kMaxTimeChunk || chunk % 8 != 0)
      return emitError() << "a time_chunks chunk must be a multiple of 8 from 8 to "
                         << kMaxTimeChunk << ", not " << chunk;
    return success();
  case StrategyKind::whole_reduction:
    if (chunk < 1)
      return emitError() << "a whole_reduction chunk must be at least 1, not " << chunk;
    return success();
  }
  return success();
}

bool nerve::cpumap::isUniformIn(Value v, scf::ParallelOp loop) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return !loop->isAncestor(cast<BlockArgument>(v).getOwner()->getParentOp());
  if (!loop->isProperAncestor(def))
    return true;
  if (def->getBlock() != loop.getBody() || def->getNumRegions() != 0 || !isPure(def))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value o) { return isUniformIn(o, loop); });
}

Operation *nerve::cpumap::recurrenceOf(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return nullptr;
  scf::ForOp recurrence;
  for (Operation &op : loop.getBody()->without_terminator()) {
    auto forOp = dyn_cast<scf::ForOp>(op);
    if (!forOp || forOp.getNumResults() == 0)
      continue;
    if (recurrence)
      return nullptr;
    recurrence = forOp;
  }
  if (!recurrence)
    return nullptr;
  for (Value bound : {recurrence.getLowerBound(), recurrence.getUpperBound(), recurrence.getStep()})
    if (!isUniformIn(bound, loop))
      return nullptr;
  // What crosses from one part of an iteration to another lives in
  // scratch buffers: scalars only.
  for (Operation &op : loop.getBody()->without_terminator())
    for (Type t : op.getResultTypes())
      if (!t.isIntOrIndexOrFloat())
        return nullptr;
  return recurrence;
}

/// What `kind` needs of the op it is on; a message when `op` is not that.
static std::optional<StringRef> misplaced(StrategyKind kind, Operation *op) {
  auto loop = dyn_cast<scf::ParallelOp>(op);
  if (!loop)
    return StringRef("a cpumap strategy maps an scf.parallel");
  if (loop->getParentOfType<scf::ParallelOp>())
    return StringRef("only an outermost scf.parallel takes a strategy");
  bool reduces = loop.getNumResults() != 0;
  switch (kind) {
  case StrategyKind::sequential:
    return std::nullopt;
  case StrategyKind::threads:
    if (reduces)
      return StringRef("a loop with results maps as a whole_reduction");
    return std::nullopt;
  case StrategyKind::time_chunks:
    if (!recurrenceOf(loop))
      return StringRef("a time_chunks loop's body is one scf.for carrying values, with bounds "
                       "the same for every iteration, and scalars around it");
    return std::nullopt;
  case StrategyKind::whole_reduction:
    if (!reduces)
      return StringRef("a whole_reduction maps an scf.parallel with results");
    // Each block starts from them: they must be the combines' identities.
    if (!llvm::all_of(loop.getInitVals(),
                      [](Value v) { return static_cast<bool>(v.getDefiningOp<arith::ConstantOp>()); }))
      return StringRef("a whole_reduction's initial values are constants (the identities)");
    return std::nullopt;
  }
  return std::nullopt;
}

LogicalResult CPUMapDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() != kStrategyAttrName)
    return op->emitError() << "unknown cpumap attribute '" << attr.getName().getValue() << "'";
  auto strategy = dyn_cast<StrategyAttr>(attr.getValue());
  if (!strategy)
    return op->emitError() << "'" << kStrategyAttrName << "' must be a #cpumap.strategy";
  if (std::optional<StringRef> why = misplaced(strategy.getKind(), op))
    return op->emitError() << "'" << stringifyStrategyKind(strategy.getKind())
                           << "' does not fit this op: " << *why;
  return success();
}
