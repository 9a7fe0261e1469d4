//===- SizeSpecialization.cpp - kernels compiled for their launches' sizes ===//
//
// With CompileOptions::specializeSizes, compile() parses and verifies the
// spec and returns a module that compiles each kernel at its first launch
// for the sizes that launch binds (staticSizes, that kernel alone), and
// again for each new set of sizes, up to kMaxSizeSpecializations a kernel;
// later sets share one compile for dynamic sizes. Every such compile goes
// through the memory and disk caches like any other.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"
#include "ModuleImpl.h"

using namespace nerve;

Result<std::shared_ptr<Module>> Module::Impl::specializationFor(const EntryInfo &entry,
                                                                const std::vector<Arg> &args) {
  Result<std::vector<std::pair<std::string, int64_t>>> bound = bindDimensions(entry, args);
  if (!bound)
    return bound.status();
  CompileOptions compileFor = options;
  compileFor.specializeSizes = false;
  compileFor.entry = entry.name;
  std::string key = entry.name;
  for (const auto &[dim, size] : *bound) {
    // A fold's size follows from its dimension's, which another argument
    // binds; alone it stays dynamic.
    if (dim.find('/') != std::string::npos)
      continue;
    compileFor.staticSizes.push_back({dim, size});
    key += ";" + dim + "=" + std::to_string(size);
  }
  std::promise<Result<std::shared_ptr<Module>>> promise;
  std::shared_future<Result<std::shared_ptr<Module>>> pending;
  {
    std::lock_guard<std::mutex> lock(specializations->mutex);
    auto known = specializations->modules.find(key);
    int &count = specializations->counts[entry.name];
    if (known == specializations->modules.end() &&
        count >= CompileOptions::kMaxSizeSpecializations) {
      key = entry.name + ";dynamic";
      compileFor.staticSizes = options.staticSizes;
      known = specializations->modules.find(key);
    } else if (known == specializations->modules.end()) {
      ++count;
    }
    if (known != specializations->modules.end())
      pending = known->second;
    else
      specializations->modules.emplace(key, promise.get_future().share());
  }
  // Waited for without the lock: launches at other sizes go on meanwhile.
  if (pending.valid())
    return pending.get();
  // Compiled without the lock; a failure is given to whoever waited and
  // forgotten, so that a later launch tries again.
  Result<std::shared_ptr<Module>> module = compile(spec, compileFor);
  promise.set_value(module);
  if (!module) {
    std::lock_guard<std::mutex> lock(specializations->mutex);
    specializations->modules.erase(key);
  }
  return module;
}

Result<const Module *> Module::compiledFor(const std::string &entryName,
                                           const std::vector<Arg> &args) const {
  const EntryInfo *entry = findEntry(entryName);
  if (!entry)
    return Status::error("the module has no kernel @" + entryName);
  if (!impl_->specializations)
    return this;
  Result<std::shared_ptr<Module>> specialized = impl_->specializationFor(*entry, args);
  if (!specialized)
    return specialized.status();
  return static_cast<const Module *>(specialized->get());
}

/// The module compile() returns for specializeSizes: the spec's kernels,
/// nothing compiled yet.
Result<std::shared_ptr<Module>> nerve::specializingModule(const std::string &spec,
                                                          const CompileOptions &options,
                                                          Target target) {
  auto start = std::chrono::steady_clock::now();
  Result<std::vector<EntryInfo>> entries = checkSpec(spec, options);
  if (!entries)
    return entries.status();
  auto impl = std::make_unique<Module::Impl>();
  impl->target = target;
  impl->entries = entries.take();
  impl->times.push_back({"parse and verify (kernels compile at their launches)",
                         millisecondsSince(start)});
  impl->spec = spec;
  impl->options = options;
  impl->options.target = target;
  impl->specializations = std::make_unique<SizeSpecializations>();
  return makeModule(std::move(impl));
}
