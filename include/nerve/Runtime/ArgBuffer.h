//===- ArgBuffer.h - host buffers laid out like kernel arguments -*- C++ -*-===//

#ifndef NERVE_RUNTIME_ARGBUFFER_H
#define NERVE_RUNTIME_ARGBUFFER_H

#include "nerve/Runtime/HostArray.h"
#include "nerve/nerve.h"

#include <map>
#include <random>

namespace nerve {

/// A host buffer holding one tensor argument in the argument's own layout
/// (its strides, padding and offset), so a kernel sees exactly the memory a
/// caller with that layout would pass.
struct ArgBuffer {
  DType dtype = DType::F32;
  std::vector<int64_t> sizes;   // in the argument's dimension order
  std::vector<int64_t> strides; // in elements
  int64_t offset = 0;
  std::vector<uint8_t> bytes;

  /// The argument value pointing at this buffer (host memory).
  Arg asArg() { return Arg::tensor(bytes.data(), sizes, strides); }
  int64_t numElements() const;
};

/// Sizes of dimension names bound so far ("n" -> 4096).
using DimBinding = std::map<std::string, int64_t>;

/// The sizes `arg` takes under `binding`; fails naming the first dimension
/// with no size.
/// The machine's physical memory in bytes (or $NERVE_HOST_MEMORY_BYTES):
/// what nerve-run's host arrays may take at most, together.
uint64_t hostMemoryBytes();

Result<std::vector<int64_t>> sizesFor(const ArgInfo &arg, const DimBinding &binding);

/// Records the sizes of `arg`'s dimensions given an array of `shape`
/// (listed order), checking them against the spec and the binding.
/// Dimensions in `variable` (see EntryInfo::variableDims) are checked
/// against the spec only, and not recorded.
Status bindShape(const ArgInfo &arg, const std::vector<int64_t> &shape, DimBinding &binding,
                 const std::vector<std::string> &variable = {});

/// A buffer for `arg` with `sizes`, every element set to a poison value
/// (NaN for floats) so unwritten outputs show.
Result<ArgBuffer> makeArgBuffer(const ArgInfo &arg, const std::vector<int64_t> &sizes);

/// Copies a C-ordered array (in the argument's dimension order) into the
/// buffer's layout.
Status scatter(const HostArray &array, ArgBuffer &buffer);
/// The buffer's elements as a C-ordered array.
HostArray gather(const ArgBuffer &buffer);

/// Standard-normal values (as torch.randn draws them), rounded to `dtype`.
HostArray randomArray(DType dtype, const std::vector<int64_t> &shape,
                      std::mt19937_64 &rng);

} // namespace nerve

#endif // NERVE_RUNTIME_ARGBUFFER_H
