//===- Entries.cpp - kernel signatures as the API reports them ----------===//

#include "Entries.h"

#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace nerve;

std::optional<DType> nerve::dtypeOf(Type type) {
  if (type.isF32()) return DType::F32;
  if (type.isF16()) return DType::F16;
  if (type.isBF16()) return DType::BF16;
  if (type.isF64()) return DType::F64;
  if (type.isSignlessInteger(1)) return DType::I1;
  if (type.isSignlessInteger(8)) return DType::I8;
  if (type.isSignlessInteger(32)) return DType::I32;
  if (type.isSignlessInteger(64)) return DType::I64;
  if (llvm::isa<mlir::IndexType>(type)) return DType::Index;
  return std::nullopt;
}

static int64_t apiSize(int64_t s) { return s == ShapedType::kDynamic ? -1 : s; }

std::vector<EntryInfo> nerve::collectEntries(ModuleOp module) {
  std::vector<EntryInfo> entries;
  module.walk([&](tdim::KernelOp kernel) {
    EntryInfo entry;
    entry.name = kernel.getSymName().str();
    for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes())) {
      ArgInfo arg;
      arg.name = kernel.getArgName(i).str();
      arg.isOutput = kernel.isOutput(i);
      if (auto tensor = llvm::dyn_cast<tdim::TdimTensorType>(type)) {
        arg.isTensor = true;
        arg.dtype = *dtypeOf(tensor.getElementType());
        for (auto [d, s] : llvm::zip(tensor.getDims(), tensor.getSizes())) {
          arg.dims.push_back(d.str());
          arg.sizes.push_back(apiSize(s));
        }
        for (int64_t s : tensor.getStrides())
          arg.strides.push_back(apiSize(s));
        arg.offset = apiSize(tensor.getOffset());
      } else {
        arg.dtype = dtypeOf(type).value_or(DType::F32);
      }
      entry.args.push_back(std::move(arg));
    }
    for (tdim::DimAttr d : kernel.getVariableDimList())
      entry.variableDims.push_back(d.str());
    entries.push_back(std::move(entry));
  });
  return entries;
}
