//===- Entries.cpp - kernel signatures as the API reports them ----------===//

#include "Entries.h"

#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "mlir/IR/BuiltinTypes.h"

#include <map>
#include <set>

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

Status nerve::selectEntry(ModuleOp module, std::vector<EntryInfo> &entries,
                          const std::string &entry) {
  if (entry.empty())
    return Status();
  auto kept = llvm::find_if(entries, [&](const EntryInfo &e) { return e.name == entry; });
  if (kept == entries.end())
    return Status::error("the spec has no kernel @" + entry + " to compile");
  EntryInfo info = *kept;
  entries = {std::move(info)};
  for (tdim::KernelOp kernel : llvm::to_vector(module.getOps<tdim::KernelOp>()))
    if (kernel.getSymName() != entry)
      kernel.erase();
  return Status();
}

/// `shape` as nerve-specialize-shapes writes it: 64x?x16.
static std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text;
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? "x" : "") + (shape[d] < 0 ? std::string("?") : std::to_string(shape[d]));
  return text;
}

Result<std::vector<std::string>>
nerve::bindStaticSizes(std::vector<EntryInfo> &entries,
                       const std::vector<std::pair<std::string, int64_t>> &staticSizes) {
  std::map<std::string, int64_t> sizes;
  for (const auto &[name, size] : staticSizes) {
    if (size < 0)
      return Status::error("static size " + std::to_string(size) + " of dimension `" + name +
                           "` is negative");
    if (!sizes.emplace(name, size).second && sizes[name] != size)
      return Status::error("dimension `" + name + "` has two static sizes");
  }
  std::set<std::string> used;
  std::vector<std::string> shapes;
  for (EntryInfo &entry : entries)
    for (ArgInfo &arg : entry.args) {
      bool changed = false;
      for (size_t d = 0; d < arg.dims.size(); ++d) {
        auto it = sizes.find(arg.dims[d]);
        if (it == sizes.end() || llvm::is_contained(entry.variableDims, arg.dims[d]))
          continue;
        used.insert(it->first);
        if (arg.sizes[d] >= 0 && arg.sizes[d] != it->second)
          return Status::error("dimension `" + it->first + "` of " + arg.name + " in @" +
                               entry.name + " is " + std::to_string(arg.sizes[d]) +
                               ", not the static size " + std::to_string(it->second));
        changed |= arg.sizes[d] < 0;
        arg.sizes[d] = it->second;
      }
      if (changed)
        shapes.push_back(entry.name + ":" + arg.name + "=" + shapeText(arg.sizes));
    }
  for (const auto &[name, size] : sizes)
    if (!used.count(name))
      return Status::error("static size of dimension `" + name +
                           "`, which no kernel argument has");
  return shapes;
}
