//===- PreparedLaunch.cpp - an entry's arguments packed once --------------===//
//
// A framework calls the same kernel on the same shapes again and again;
// checking and packing its arguments each time (ArgPacker: the signature,
// strides, the dimensions they bind) costs more host time than the launch.
// A PreparedLaunch packs them once into one block of words; a launch copies
// the block, writes the data pointers into it and runs the entry.
//
//===----------------------------------------------------------------------===//

#include "ModuleImpl.h"

#include "llvm/ADT/SmallVector.h"

#include <cstring>

using namespace nerve;

struct PreparedLaunch::Impl {
  std::shared_ptr<const Module> module;
  const EntryInfo *entry = nullptr;
  size_t index = 0;
  /// Every argument's words: a tensor's memref descriptor, a scalar's bytes.
  std::vector<int64_t> words;
  struct Slot {
    size_t offset;        ///< into `words`
    bool tensor;          ///< a descriptor (else a scalar)
    bool needsData;       ///< a tensor of rank > 0: its data may not be null
    const ArgInfo *info;  ///< for messages
  };
  std::vector<Slot> slots;
  size_t tensors = 0;
};

PreparedLaunch::PreparedLaunch(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PreparedLaunch::~PreparedLaunch() = default;

size_t PreparedLaunch::tensorCount() const { return impl_->tensors; }

Result<std::unique_ptr<PreparedLaunch>>
nerve::prepareLaunch(std::shared_ptr<const Module> module, const std::string &entryName,
                     const std::vector<Arg> &args) {
  if (!module)
    return Status::error("no module was given");
  const EntryInfo *entry = module->findEntry(entryName);
  if (!entry)
    return Status::error("the module has no kernel @" + entryName);
  if (module->impl_->specializations) {
    Result<std::shared_ptr<Module>> specialized =
        module->impl_->specializationFor(*entry, args);
    if (!specialized)
      return specialized.status();
    return prepareLaunch(*specialized, entryName, args);
  }
  ArgPacker packer;
  if (Status s = packer.pack(*entry, args, ArgPacker::Data::AtLaunch); !s)
    return s;
  auto impl = std::make_unique<PreparedLaunch::Impl>();
  impl->entry = entry;
  impl->index = entry - module->entries().data();
  size_t t = 0, s = 0;
  for (const ArgInfo &info : entry->args) {
    impl->slots.push_back({impl->words.size(), info.isTensor,
                           info.isTensor && !info.dims.empty(), &info});
    if (info.isTensor) {
      const std::vector<int64_t> &desc = packer.descriptors()[t++];
      impl->words.insert(impl->words.end(), desc.begin(), desc.end());
    } else {
      int64_t word;
      std::memcpy(&word, packer.scalars()[s++].data(), sizeof(word));
      impl->words.push_back(word);
    }
  }
  impl->tensors = t;
  impl->module = std::move(module);
  return std::unique_ptr<PreparedLaunch>(new PreparedLaunch(std::move(impl)));
}

Status PreparedLaunch::launch(const void *const *data, size_t count, void *stream) const {
  const Impl &p = *impl_;
  if (count != p.tensors || (count && !data))
    return Status::error("kernel @" + p.entry->name + " takes " + std::to_string(p.tensors) +
                         " data pointers but " + std::to_string(data ? count : 0) +
                         " were given");
  llvm::SmallVector<int64_t, 64> words(p.words.begin(), p.words.end());
  llvm::SmallVector<void *, 16> descriptors(p.tensors);
  llvm::SmallVector<void *, 16> pointers(p.slots.size());
  size_t t = 0;
  for (size_t i = 0; i < p.slots.size(); ++i) {
    const Impl::Slot &slot = p.slots[i];
    int64_t *word = words.data() + slot.offset;
    if (!slot.tensor) {
      pointers[i] = word;
      continue;
    }
    const void *ptr = data[t];
    if (!ptr && slot.needsData)
      return Status::error("argument %" + slot.info->name + " was given a null pointer");
    word[0] = word[1] = reinterpret_cast<int64_t>(ptr);
    descriptors[t] = word;
    pointers[i] = &descriptors[t];
    ++t;
  }
  return p.module->launchPacked(p.index, pointers.data(), stream);
}
