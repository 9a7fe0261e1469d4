//===- TdimVerifyUtils.cpp - shared checks of tdim verifiers ------------===//

#include "nerve/Dialect/Tdim/IR/TdimVerifyUtils.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace nerve::tdim;

namespace {
/// The first static size seen for an axis, in the unit of some fold of it.
struct SeenSize {
  DimAttr dim;
  int64_t size;
  const NamedTensor *tensor;
};
} // namespace

LogicalResult nerve::tdim::checkConsistentSizes(Operation *op,
                                                ArrayRef<NamedTensor> tensors,
                                                ArrayRef<DimAttr> exempt) {
  llvm::StringMap<SeenSize> seen;
  for (const NamedTensor &t : tensors) {
    for (auto [dim, size] : llvm::zip(t.type.getDims(), t.type.getSizes())) {
      if (size == ShapedType::kDynamic ||
          llvm::any_of(exempt, [&](DimAttr e) { return dim.sameAxis(e); }))
        continue;
      auto [it, inserted] = seen.try_emplace(dim.getName().getValue(),
                                             SeenSize{dim, size, &t});
      if (inserted)
        continue;
      const SeenSize &first = it->second;
      if (first.dim == dim) {
        if (first.size != size)
          return op->emitOpError()
                 << t.what << " has dimension `" << dim.str() << "` of size "
                 << size << " but " << first.tensor->what << " has it with size "
                 << first.size;
        continue;
      }
      // Two folds of one axis: the coarser size must be the finer one
      // divided by the ratio of the factors.
      bool firstFiner = first.dim.getFactor() < dim.getFactor();
      DimAttr fine = firstFiner ? first.dim : dim;
      DimAttr coarse = firstFiner ? dim : first.dim;
      int64_t fineSize = firstFiner ? first.size : size;
      int64_t coarseSize = firstFiner ? size : first.size;
      if (coarse.getFactor() % fine.getFactor() != 0)
        return op->emitOpError()
               << "dimensions `" << fine.str() << "` and `" << coarse.str()
               << "` fold one axis by factors that do not nest";
      int64_t ratio = coarse.getFactor() / fine.getFactor();
      if (fineSize % ratio != 0)
        return op->emitOpError()
               << "fold `" << coarse.str() << "` does not divide `" << fine.str()
               << "` of size " << fineSize << " (" << fineSize << " is not a multiple of "
               << ratio << ")";
      if (fineSize / ratio != coarseSize)
        return op->emitOpError()
               << (firstFiner ? t.what : first.tensor->what) << " has `"
               << coarse.str() << "` of size " << coarseSize << " but `"
               << fine.str() << "` of size " << fineSize << " in "
               << (firstFiner ? first.tensor->what : t.what) << " makes it "
               << fineSize / ratio;
    }
  }
  return success();
}

bool nerve::tdim::haveSameDims(TdimTensorType a, TdimTensorType b) {
  if (a.getRank() != b.getRank())
    return false;
  return llvm::all_of(a.getDims(), [&](DimAttr d) { return b.hasDim(d); });
}

SmallVector<DimAttr> nerve::tdim::dimsMissingFrom(TdimTensorType type,
                                                  TdimTensorType others) {
  SmallVector<DimAttr> missing;
  for (DimAttr d : type.getDims())
    if (!others.hasDim(d))
      missing.push_back(d);
  return missing;
}
