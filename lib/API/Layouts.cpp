//===- Layouts.cpp - a spec retyped for the layouts its caller has ------===//
//
// A tdim kernel names dimensions, never positions, so giving an argument
// another layout (another memory order, strides bound at launch) does not
// change what the kernel computes: specializeLayouts retypes the kernel's
// arguments, verifies the result and prints it. The caller (the Python
// package, for a permuted or sliced tensor) compiles that text like any
// spec, so the kernel cache keys it by its layouts.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace nerve;

/// `type` laid out as `layout` says, or an error naming the argument.
static Result<tdim::TdimTensorType> relayoutType(tdim::TdimTensorType type,
                                                 const ArgLayout &layout,
                                                 const std::string &argName) {
  unsigned rank = type.getRank();
  std::string what = "the layout of argument %" + argName;
  if (layout.order.size() != rank)
    return Status::error(what + " lists " + std::to_string(layout.order.size()) +
                         " dimensions but the argument has " + std::to_string(rank) + " (" +
                         type.describeDims() + ")");
  std::vector<bool> seen(rank, false);
  SmallVector<tdim::DimAttr> dims;
  SmallVector<int64_t> sizes;
  for (int position : layout.order) {
    if (position < 0 || position >= static_cast<int>(rank) || seen[position])
      return Status::error(what + " is not an order of its " + std::to_string(rank) +
                           " dimensions (" + type.describeDims() + ")");
    seen[position] = true;
    dims.push_back(type.getDims()[position]);
    sizes.push_back(type.getSizes()[position]);
  }
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  if (rank > 0 && layout.unitInnermost)
    strides.back() = 1;
  MLIRContext *ctx = type.getContext();
  std::string diagnostic;
  auto emitError = [&] { return mlir::emitError(UnknownLoc::get(ctx)); };
  ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &d) {
    diagnostic = d.str();
    return success();
  });
  tdim::TdimTensorType result = tdim::TdimTensorType::getCanonical(
      emitError, ctx, dims, sizes, type.getElementType(), strides, type.getOffset());
  if (!result)
    return Status::error(what + ": " + diagnostic);
  return result;
}

Result<std::string>
nerve::specializeLayouts(const std::string &spec, const std::string &entry,
                         const std::vector<std::optional<ArgLayout>> &layouts) {
  MLIRContext context(specDialects(), MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(spec, "spec"),
                               llvm::SMLoc());
  DiagnosticCollector diags(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return diags.fail("the spec does not parse");
  auto kernel = module->lookupSymbol<tdim::KernelOp>(entry);
  if (!kernel)
    return Status::error("the spec has no kernel @" + entry);
  SmallVector<Type> types(kernel.getArgumentTypes());
  if (layouts.size() != types.size())
    return Status::error("kernel @" + entry + " takes " + std::to_string(types.size()) +
                         " arguments but " + std::to_string(layouts.size()) +
                         " layouts were given");
  for (auto [i, layout] : llvm::enumerate(layouts)) {
    if (!layout)
      continue;
    std::string name = kernel.getArgName(i).str();
    auto tensor = llvm::dyn_cast<tdim::TdimTensorType>(types[i]);
    if (!tensor)
      return Status::error("argument %" + name + " is a scalar: it has no layout");
    Result<tdim::TdimTensorType> retyped = relayoutType(tensor, *layout, name);
    if (!retyped)
      return retyped.status();
    types[i] = *retyped;
    kernel.getArgument(i).setType(*retyped);
  }
  kernel.setFunctionTypeAttr(TypeAttr::get(FunctionType::get(&context, types, {})));
  if (failed(verify(*module)))
    return diags.fail("the spec with these layouts does not verify");
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}
