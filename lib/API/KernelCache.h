//===- KernelCache.h - the persistent on-disk kernel cache -------*- C++ -*-===//
//
// A compiled module is stored as one file, `<key>.nkc`, in the cache
// directory: the kernel signatures, the host object and the PTX (whose
// machine code the driver's own JIT cache keeps). The key is a SHA-256 of everything that
// changes the result (see cacheKeyText); the file repeats the key's text,
// and a checksum covers the whole payload, so a stale, truncated or
// corrupted file is detected, deleted and rebuilt, never loaded.
//
// Writes go to a unique temporary file renamed into place, so readers see a
// whole entry or none and processes compiling the same spec at once are
// safe (the last rename wins; both files are complete). The directory is
// bounded in bytes, evicting the least recently used entries (a hit
// refreshes its file's modification time).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_API_KERNELCACHE_H
#define NERVE_LIB_API_KERNELCACHE_H

#include "nerve/nerve.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nerve {

/// Where the disk cache is and whether it is used, after the environment
/// ($NERVE_CACHE, $NERVE_CACHE_DIR, $NERVE_CACHE_MAX_BYTES) and the options.
struct CacheSettings {
  bool enabled = true;
  std::string dir;
  int64_t maxBytes = 0;
};
CacheSettings resolveCacheSettings(const CompileOptions &options);

/// Spec text with comments removed and whitespace runs collapsed to one
/// space (outside string literals): edits that cannot change meaning do
/// not change the key.
std::string canonicalSpecText(const std::string &spec);

/// Everything the compiled result depends on, one item per line.
std::string cacheKeyText(const std::string &spec, const CompileOptions &options, Target target);

/// The file name stem for a key text: its SHA-256 in hex.
std::string cacheKeyHash(const std::string &keyText);

/// Each gpu.binary's name and PTX, in the module's order.
using DeviceCode = std::vector<std::pair<std::string, std::string>>;

/// What a compiled module is made of.
struct CompiledArtifacts {
  Target target = Target::CPU;
  std::vector<EntryInfo> entries;
  std::string hostObject;
  DeviceCode deviceCode; ///< CUDA only
};

class DiskCache {
public:
  explicit DiskCache(CacheSettings settings) : settings_(std::move(settings)) {}

  /// The entry for `keyText`, or nothing. An unreadable, corrupted or
  /// mismatching entry is deleted and reported as a miss, with `discarded`
  /// set.
  std::optional<CompiledArtifacts> load(const std::string &keyText, bool *discarded) const;

  /// Stores `artifacts` under `keyText` atomically, then evicts least
  /// recently used entries over the size bound.
  Status store(const std::string &keyText, const CompiledArtifacts &artifacts) const;

  /// The path an entry for `keyText` lives at.
  std::string entryPath(const std::string &keyText) const;

  /// Deletes every entry; returns how many there were. A missing
  /// directory holds none.
  Result<int64_t> clear() const;

private:
  void evict() const;
  CacheSettings settings_;
};

} // namespace nerve

#endif // NERVE_LIB_API_KERNELCACHE_H
