//===- SpecializeShapes.cpp - a kernel's arguments at static sizes -------===//
//
// A spec's dimensions are usually dynamic, so its kernels carry every
// alternative the sizes could need (vectors or elements, block sizes, row
// widths). Compiled for the sizes of one launch, they need one: this pass
// gives the named memref arguments static sizes and leaves the rest to
// canonicalization (memref.cast folds into its users). Upstream's way of
// refining a function's argument types, applied to nerve's kernel
// interface (`nerve.kernel`, `nerve.arg_names`).
//
//===----------------------------------------------------------------------===//

#include "nerve/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace nerve {
#define GEN_PASS_DEF_SPECIALIZESHAPES
#include "nerve/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {

/// One `kernel:arg=S0xS1` entry; ShapedType::kDynamic for `?`.
struct ShapeEntry {
  std::string kernel, arg;
  SmallVector<int64_t> sizes;
};

/// Parses an entry; a message saying what is wrong otherwise.
FailureOr<ShapeEntry> parseEntry(StringRef text, std::string &error) {
  auto [name, shape] = text.split('=');
  auto [kernel, arg] = name.split(':');
  if (kernel.empty() || arg.empty() || shape.empty()) {
    error = "`" + text.str() + "` is not kernel:arg=SIZExSIZE...";
    return failure();
  }
  ShapeEntry entry{kernel.str(), arg.str(), {}};
  SmallVector<StringRef> parts;
  shape.split(parts, 'x');
  for (StringRef part : parts) {
    int64_t size = 0;
    if (part == "?")
      entry.sizes.push_back(ShapedType::kDynamic);
    else if (!part.getAsInteger(10, size) && size >= 0)
      entry.sizes.push_back(size);
    else {
      error = "`" + part.str() + "` in `" + text.str() + "` is neither a size nor ?";
      return failure();
    }
  }
  return entry;
}

/// The argument of `kernel` called `name` in `nerve.arg_names`, or -1.
int64_t argumentIndex(func::FuncOp kernel, StringRef name) {
  auto names = kernel->getAttrOfType<ArrayAttr>("nerve.arg_names");
  if (!names)
    return -1;
  for (auto [i, attr] : llvm::enumerate(names))
    if (auto s = dyn_cast<StringAttr>(attr); s && s.getValue() == name)
      return static_cast<int64_t>(i);
  return -1;
}

/// Gives argument `index` of `kernel` the sizes of `entry`, its uses a cast
/// back to the type they had.
LogicalResult specialize(func::FuncOp kernel, int64_t index, const ShapeEntry &entry) {
  BlockArgument arg = kernel.getArgument(index);
  auto type = dyn_cast<MemRefType>(arg.getType());
  if (!type)
    return kernel.emitError() << "argument `" << entry.arg << "` is not a memref";
  if (type.getRank() != static_cast<int64_t>(entry.sizes.size()))
    return kernel.emitError() << "argument `" << entry.arg << "` has rank " << type.getRank()
                              << ", its shape " << entry.sizes.size() << " sizes";
  SmallVector<int64_t> sizes;
  for (auto [declared, wanted] : llvm::zip(type.getShape(), entry.sizes)) {
    if (!ShapedType::isDynamic(declared) && !ShapedType::isDynamic(wanted) &&
        declared != wanted)
      return kernel.emitError() << "argument `" << entry.arg << "` has a static size "
                                << declared << " where its shape says " << wanted;
    sizes.push_back(ShapedType::isDynamic(declared) ? wanted : declared);
  }
  auto specialized = MemRefType::get(sizes, type.getElementType(), type.getLayout(),
                                     type.getMemorySpace());
  if (specialized == type)
    return success();
  arg.setType(specialized);
  SmallVector<Type> inputs(kernel.getArgumentTypes());
  inputs[index] = specialized;
  kernel.setFunctionType(
      FunctionType::get(kernel.getContext(), inputs, kernel.getResultTypes()));
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.front());
  auto cast = memref::CastOp::create(b, kernel.getLoc(), type, arg);
  arg.replaceAllUsesExcept(cast.getResult(), cast);
  return success();
}

struct SpecializeShapesPass : nerve::impl::SpecializeShapesBase<SpecializeShapesPass> {
  using SpecializeShapesBase::SpecializeShapesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<func::FuncOp> kernels;
    module.walk([&](func::FuncOp f) {
      if (f->hasAttr("nerve.kernel") && !f.isExternal())
        kernels[f.getSymName()] = f;
    });
    for (const std::string &text : shapes) {
      std::string error;
      FailureOr<ShapeEntry> entry = parseEntry(text, error);
      if (failed(entry)) {
        module.emitError() << "nerve-specialize-shapes: " << error;
        return signalPassFailure();
      }
      auto it = kernels.find(entry->kernel);
      if (it == kernels.end()) {
        module.emitError() << "nerve-specialize-shapes: no kernel @" << entry->kernel;
        return signalPassFailure();
      }
      int64_t index = argumentIndex(it->second, entry->arg);
      if (index < 0) {
        it->second.emitError() << "nerve-specialize-shapes: @" << entry->kernel
                               << " has no argument `" << entry->arg << "`";
        return signalPassFailure();
      }
      if (failed(specialize(it->second, index, *entry)))
        return signalPassFailure();
    }
  }
};

} // namespace
