//===- GPUMap.cpp - the gpumap dialect and its strategy attribute --------===//
//
// Registration, and the checks that make a strategy a verified fact: its
// parameters are in range and it sits on the kind of loop it maps; a
// contraction's tiling is one its lowering takes (ContractTiling.h).
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPUMap/IR/GPUMap.h"

#include "nerve/Dialect/Fold/IR/Fold.h"
#include "nerve/Dialect/GPUMap/Heuristics/ContractTiling.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace nerve::gpumap;
using nerve::kPortableClusterBlocks;
using nerve::kSharedBytesWithoutOptIn;

#include "nerve/Dialect/GPUMap/IR/GPUMapDialect.cpp.inc"
#include "nerve/Dialect/GPUMap/IR/GPUMapEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "nerve/Dialect/GPUMap/IR/GPUMapAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "nerve/Dialect/GPUMap/IR/GPUMapOps.cpp.inc"

void GPUMapDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "nerve/Dialect/GPUMap/IR/GPUMapAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "nerve/Dialect/GPUMap/IR/GPUMapOps.cpp.inc"
      >();
}

LogicalResult OccupancyHintOp::verify() {
  if (!(*this)->getParentOfType<gpu::LaunchOp>() && !(*this)->getParentOfType<gpu::GPUFuncOp>())
    return emitOpError("must be in a gpu.launch or a gpu.func: it is a fact about a kernel");
  return success();
}

/// The most threads a CUDA block may have.
static constexpr int64_t kMaxBlockThreads = 1024;
/// The most shared memory a block of any CUDA GPU may opt in to (sm_90's
/// 227 KiB, rounded up).
static constexpr int64_t kMaxStagingBytes = 256 * 1024;

/// A row program's staging and cluster; a message when out of range.
static LogicalResult verifyRowLimits(function_ref<InFlightDiagnostic()> emitError,
                                     StrategyKind kind, int64_t staging, int64_t cluster) {
  if (kind != StrategyKind::row_program) {
    if (staging != kSharedBytesWithoutOptIn || cluster != 0)
      return emitError() << "only a row_program takes staging and cluster";
    return success();
  }
  if (staging < kSharedBytesWithoutOptIn || staging > kMaxStagingBytes)
    return emitError() << "staging must be from " << kSharedBytesWithoutOptIn << " to "
                       << kMaxStagingBytes << " bytes, not " << staging;
  if (cluster != 0 && (cluster < 2 || cluster > kPortableClusterBlocks || !llvm::isPowerOf2_64(cluster)))
    return emitError() << "cluster must be 0 (none) or a power of two from 2 to "
                       << kPortableClusterBlocks << ", not " << cluster;
  return success();
}

LogicalResult StrategyAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StrategyKind kind, int64_t block, int64_t loops,
                                   int64_t staging, int64_t cluster, int64_t lanes) {
  if (failed(verifyRowLimits(emitError, kind, staging, cluster)))
    return failure();
  if (lanes != 0 && kind != StrategyKind::threads)
    return emitError() << "only a threads mapping takes lanes";
  if (lanes != 0 && (lanes < 2 || lanes > 8 || !llvm::isPowerOf2_64(lanes)))
    return emitError() << "lanes must be 0 (elements) or 2, 4 or 8, not " << lanes;
  if (kind == StrategyKind::split_reduction) {
    if (block != 0)
      return emitError() << "a split_reduction sizes its launches itself: it takes no block";
  } else if (block < 32 || block > kMaxBlockThreads || block % 32 != 0) {
    return emitError() << "block must be a whole number of warps from 32 to "
                       << kMaxBlockThreads << " threads, not " << block;
  }
  if (loops < 1)
    return emitError() << "loops must be at least 1, not " << loops;
  if (loops != 1 && kind != StrategyKind::row_program)
    return emitError() << "only a row_program maps several loops (loops = " << loops << ")";
  return success();
}

/// What `kind` needs of the op it is on; a message when `op` is not that.
static std::optional<StringRef> misplaced(StrategyKind kind, Operation *op) {
  if (kind == StrategyKind::whole_fold) {
    if (!isa<nerve::fold::ForOp>(op))
      return StringRef("a whole_fold maps a fold.for (a fold that states its merge)");
    return std::nullopt;
  }
  auto loop = dyn_cast<scf::ParallelOp>(op);
  if (!loop)
    return StringRef("this strategy maps an scf.parallel");
  bool reduces = loop.getNumResults() != 0;
  if (kind == StrategyKind::whole_reduction && !reduces)
    return StringRef("a whole_reduction maps an scf.parallel with results");
  if (kind != StrategyKind::whole_reduction && reduces)
    return StringRef("an scf.parallel with results maps as a whole_reduction only");
  return std::nullopt;
}

static MmaFamily familyOf(ContractInstruction instruction) {
  switch (instruction) {
  case ContractInstruction::mma_sync:
    return MmaFamily::mmaSync;
  case ContractInstruction::wgmma:
    return MmaFamily::wgmma;
  case ContractInstruction::fma:
    return MmaFamily::fma;
  case ContractInstruction::wgmma_tf32:
    return MmaFamily::wgmmaTf32;
  case ContractInstruction::mma_sync_tf32:
    return MmaFamily::mmaSyncTf32;
  }
  llvm_unreachable("unknown contract instruction");
}

ContractTiling nerve::gpumap::tilingOf(ContractTilingAttr t) {
  return {familyOf(t.getInstruction()), t.getTileM(), t.getTileN(), t.getTileK(),
          t.getWarpsM(),  t.getWarpsN(), t.getStages(),   t.getProducerWarps(),
          t.getStagedRows()};
}

ContractTilingAttr nerve::gpumap::attrOf(MLIRContext *context, const ContractTiling &t) {
  ContractInstruction instruction = ContractInstruction::mma_sync;
  if (t.instruction == MmaFamily::wgmma)
    instruction = ContractInstruction::wgmma;
  else if (t.instruction == MmaFamily::wgmmaTf32)
    instruction = ContractInstruction::wgmma_tf32;
  else if (t.instruction == MmaFamily::mmaSyncTf32)
    instruction = ContractInstruction::mma_sync_tf32;
  else if (t.instruction == MmaFamily::fma)
    instruction = ContractInstruction::fma;
  return ContractTilingAttr::get(context, instruction, t.tileM, t.tileN, t.tileK, t.warpsM,
                                 t.warpsN, t.stages, t.producerWarps, t.stagedRows);
}

LogicalResult ContractTilingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                         ContractInstruction instruction, int64_t tileM,
                                         int64_t tileN, int64_t tileK, int64_t warpsM,
                                         int64_t warpsN, int64_t stages, int64_t producerWarps,
                                         int64_t stagedRows) {
  ContractTiling tiling{familyOf(instruction), tileM, tileN, tileK, warpsM, warpsN, stages,
                        producerWarps, stagedRows};
  StringRef problem = contractTilingProblem(tiling);
  if (!problem.empty())
    return emitError() << "invalid contract tiling: " << problem;
  if (contractSharedBytes(tiling) > kMaxStagingBytes)
    return emitError() << "invalid contract tiling: its stages take "
                       << contractSharedBytes(tiling) << " bytes of shared memory, more than "
                       << kMaxStagingBytes;
  return success();
}

std::optional<unsigned> nerve::gpumap::unitStrideDim(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return std::nullopt;
  for (auto [i, stride] : llvm::enumerate(strides))
    if (stride == 1)
      return i;
  return std::nullopt;
}

/// Why a scan cannot take `tiling`, or an empty string: every thread
/// scans, and the scan stages its own tile.
static StringRef scanTilingProblem(ContractTilingAttr tiling) {
  if (tiling.getProducerWarps() != 0)
    return "a scan's tiling takes no producer warps (every thread scans)";
  if (tiling.getStagedRows() != 0)
    return "a scan's tiling takes no staged_rows (it stages its own tile)";
  return "";
}

LogicalResult TiledContractOp::verify() {
  MemRefType lhs = getLhs().getType(), rhs = getRhs().getType(), out = getOutput().getType();
  unsigned o = scanOffset();
  if (lhs.getRank() != 2 + o || out.getRank() != 2 + o)
    return emitOpError() << "lhs and the output must have rank " << 2 + o
                         << (o ? " (time, then a matrix)" : "");
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError("operands must have one element type");
  ContractInstruction instruction = getTiling().getInstruction();
  bool f32Tiling = instruction == ContractInstruction::fma ||
                   instruction == ContractInstruction::wgmma_tf32 ||
                   instruction == ContractInstruction::mma_sync_tf32;
  if (lhs.getElementType().isF32() != f32Tiling)
    return emitOpError("f32 operands take an fma or tf32 tiling, 16-bit ones mma_sync or wgmma");
  if (!unitStrideDim(lhs) || !unitStrideDim(rhs))
    return emitOpError("each operand must have a dimension of unit stride");
  int64_t lk = o + getLhsK(), rk = getRhsK(), om = o + getOutputM();
  auto same = [](int64_t a, int64_t b) {
    return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
  };
  if (!same(lhs.getDimSize(lk), rhs.getDimSize(rk)))
    return emitOpError("the operands' contracted sizes differ");
  if (!same(lhs.getDimSize(2 * o + 1 - lk), out.getDimSize(om)) ||
      !same(rhs.getDimSize(1 - rk), out.getDimSize(2 * o + 1 - om)) ||
      (o && !same(lhs.getDimSize(0), out.getDimSize(0))))
    return emitOpError("the output's sizes differ from the operands'");
  if (o && *unitStrideDim(lhs) != lk)
    return emitOpError("a scan's lhs must have its unit stride along k");
  for (auto [i, in] : llvm::enumerate(getWith()))
    if (auto type = dyn_cast<MemRefType>(in.getType()); type && type.getRank() != out.getRank())
      return emitOpError() << "`with` input #" << i << " must be indexed as the output is (rank "
                           << out.getRank() << ")";
  if (!getWith().empty() && getEpilogue().empty())
    return emitOpError("has `with` inputs but no epilogue to use them");
  if (isScan() && (getEpilogue().empty() || getAccumulate()))
    return emitOpError("a scan needs an epilogue, and does not accumulate");
  if (StringRef problem = isScan() ? scanTilingProblem(getTiling()) : ""; !problem.empty())
    return emitOpError(problem);
  if (getTiling().getStagedRows() != 0 && !unitStrideDim(out))
    return emitOpError("staged_rows needs an output with a dimension of unit stride");
  return success();
}

LogicalResult TiledContractOp::verifyRegions() {
  if (getEpilogue().empty())
    return success();
  Block &body = getEpilogue().front();
  unsigned carried = isScan() ? getCarryAttr().size() : 0;
  unsigned want = getWith().size() + 1 + carried;
  if (body.getNumArguments() != want)
    return emitOpError() << "epilogue takes " << body.getNumArguments() << " arguments but needs "
                         << want << " (the sum, then one per `with` input"
                         << (carried ? ", then one per carried state)" : ")");
  if (!body.getArgument(0).getType().isF32())
    return emitOpError("epilogue argument #0 (the sum) must be f32");
  for (auto [i, in] : llvm::enumerate(getWith())) {
    Type element = in.getType();
    if (auto type = dyn_cast<MemRefType>(element))
      element = type.getElementType();
    if (body.getArgument(i + 1).getType() != element)
      return emitOpError() << "epilogue argument #" << i + 1 << " has type "
                           << body.getArgument(i + 1).getType() << " but `with` input #" << i
                           << " holds " << element;
  }
  for (unsigned i = 0; i < carried; ++i)
    if (!body.getArgument(1 + getWith().size() + i).getType().isF32())
      return emitOpError() << "carried state #" << i << " must be f32";
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().size() != 1 + carried || !isa<FloatType>(yield.getValues()[0].getType()))
    return yield.emitOpError() << "yields the float value stored"
                               << (carried ? ", then each carried state" : "");
  for (unsigned i = 0; i < carried; ++i)
    if (!yield.getValues()[1 + i].getType().isF32())
      return yield.emitOpError() << "yields carried state #" << i << " as "
                                 << yield.getValues()[1 + i].getType() << ", not f32";
  return success();
}

LogicalResult GPUMapDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() == kContractTilingAttrName) {
    if (!isa<ContractTilingAttr>(attr.getValue()))
      return op->emitError() << "'" << kContractTilingAttrName
                             << "' must be a #gpumap.contract_tiling";
    if (op->getName().getStringRef() != "tdim.contract")
      return op->emitError() << "'" << kContractTilingAttrName << "' is only for a tdim.contract";
    StringRef problem =
        op->getAttr("scan") ? scanTilingProblem(cast<ContractTilingAttr>(attr.getValue())) : "";
    if (!problem.empty())
      return op->emitError(problem);
    return success();
  }
  if (attr.getName() != kStrategyAttrName)
    return op->emitError() << "unknown gpumap attribute '" << attr.getName().getValue() << "'";
  auto strategy = dyn_cast<StrategyAttr>(attr.getValue());
  if (!strategy)
    return op->emitError() << "'" << kStrategyAttrName << "' must be a #gpumap.strategy";
  if (std::optional<StringRef> why = misplaced(strategy.getKind(), op))
    return op->emitError() << "'" << stringifyStrategyKind(strategy.getKind())
                           << "' does not fit this op: " << *why;
  return success();
}
