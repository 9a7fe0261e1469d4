//===- SelectContractTiling.cpp - nerve-gpu-select-contract-tiling --------===//
//
// Decide, then apply: this pass reads each tdim.contract's typed dimensions
// (which are rows, columns, contracted; which has a unit stride; static
// extents) into a ContractShape, asks the tensor-core heuristic for a
// tiling and writes it on the op. convert-tdim-to-scf applies it.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPUMap/Transforms/Passes.h"

#include "nerve/Dialect/GPUMap/Heuristics/ContractTiling.h"
#include "nerve/Dialect/GPUMap/IR/GPUMap.h"
#include "nerve/Dialect/Tdim/IR/TdimOps.h"
#include "nerve/Target/ChipOption.h"

namespace nerve {
#define GEN_PASS_DEF_SELECTCONTRACTTILING
#include "nerve/Dialect/GPUMap/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;
using namespace nerve::gpumap;
using nerve::tdim::ContractOp;
using nerve::tdim::DimAttr;
using nerve::tdim::TdimTensorType;

namespace {

ContractElement elementOf(Type type) {
  if (type.isF16())
    return ContractElement::f16;
  if (type.isBF16())
    return ContractElement::bf16;
  if (type.isF32())
    return ContractElement::f32;
  return ContractElement::other;
}

bool hasUnitStride(TdimTensorType type) {
  return llvm::is_contained(type.getEffectiveStrides(), int64_t(1));
}


/// The static extent of `dim` in `type` (0 when bound at launch).
int64_t staticExtent(TdimTensorType type, DimAttr dim) {
  int64_t size = type.getSize(dim);
  return ShapedType::isDynamic(size) ? 0 : size;
}

/// Whether the dimensions of `type` that `isRow` picks are consecutive in
/// memory order, in the order `order` lists them, in a row-major type.
bool consecutiveInOrder(TdimTensorType type, ArrayRef<DimAttr> order) {
  if (!type.isRowMajor() || order.empty())
    return false;
  std::optional<unsigned> first = type.getPosition(order.front());
  for (auto [i, d] : llvm::enumerate(order))
    if (type.getPosition(d) != *first + i)
      return false;
  return true;
}

/// Whether an epilogue input of type `type` is indexed as the merged rows
/// are: a scalar, or a tensor with none of `rows` (broadcast along them) or
/// with all of them, merging as the output's do.
bool mergesRows(Type type, ArrayRef<DimAttr> rows) {
  auto tensor = dyn_cast<TdimTensorType>(type);
  if (!tensor)
    return true;
  unsigned present = llvm::count_if(rows, [&](DimAttr d) { return tensor.hasDim(d); });
  return present == 0 || (present == rows.size() && consecutiveInOrder(tensor, rows));
}

/// Whether `operand`'s dimension that `out` lacks (the contracted one, if
/// one) has unit stride.
bool contractedHasUnitStride(TdimTensorType operand, TdimTensorType out) {
  for (auto [d, stride] : llvm::zip(operand.getDims(), operand.getEffectiveStrides()))
    if (!out.hasDim(d) && stride == 1)
      return true;
  return false;
}

/// What the heuristic reads of `op`.
ContractShape contractShapeOf(ContractOp op) {
  auto lhs = cast<TdimTensorType>(op.getLhs().getType());
  auto rhs = cast<TdimTensorType>(op.getRhs().getType());
  auto out = cast<TdimTensorType>(op.getOutput().getType());
  ContractShape s;
  s.lhs = elementOf(lhs.getElementType());
  s.rhs = elementOf(rhs.getElementType());
  s.output = elementOf(out.getElementType());
  s.lhsUnitStride = hasUnitStride(lhs);
  s.rhsUnitStride = hasUnitStride(rhs);
  s.outputUnitStride = hasUnitStride(out);
  SmallVector<DimAttr> rowDims;
  for (DimAttr d : lhs.getDims()) {
    if (out.hasDim(d) && !rhs.hasDim(d))
      rowDims.push_back(d);
    if (!out.hasDim(d)) {
      ++s.contractedDims;
      s.contracted = staticExtent(lhs, d);
    } else if (rhs.hasDim(d)) {
      ++s.batchDims;
    } else {
      ++s.rowDims;
      s.rows = staticExtent(lhs, d);
    }
  }
  s.rowsMerge = consecutiveInOrder(lhs, rowDims) && consecutiveInOrder(out, rowDims) &&
                llvm::all_of(op.getWith(), [&](Value in) {
                  return mergesRows(in.getType(), rowDims);
                });
  if (s.rowDims > 1) // their product: static only if every one is
    s.rows = 0;
  if (std::optional<DimAttr> scan = op.getScan()) {
    s.scans = true;
    s.carried = op.getNumCarried();
    s.scanIsOuterRow = rowDims.size() > 1 && rowDims.front() == *scan && s.rowsMerge &&
                       lhs.getPosition(*scan) == 0u && out.getPosition(*scan) == 0u;
  }
  s.lhsKMajor = contractedHasUnitStride(lhs, out);
  for (DimAttr d : rhs.getDims())
    if (out.hasDim(d) && !lhs.hasDim(d)) {
      ++s.columnDims;
      s.columns = staticExtent(rhs, d);
    }
  return s;
}

struct SelectContractTiling
    : nerve::impl::SelectContractTilingBase<SelectContractTiling> {
  using Base::Base;

  void runOnOperation() override {
    const nerve::ChipProfile *chipProfile = nerve::chipOption(getOperation(), chip);
    if (!chipProfile)
      return signalPassFailure();
    const nerve::ChipProfile &profile = *chipProfile;
    getOperation().walk([&](ContractOp op) {
      if (op->hasAttr(GPUMapDialect::kContractTilingAttrName))
        return;
      ContractPermissions allowed;
      allowed.tf32 = tf32;
      std::optional<ContractTiling> t =
          chooseContractTiling(contractShapeOf(op), profile, allowed);
      if (!t)
        return;
      op->setAttr(GPUMapDialect::kContractTilingAttrName, attrOf(op.getContext(), *t));
    });
  }
};

} // namespace
