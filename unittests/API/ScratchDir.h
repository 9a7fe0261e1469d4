//===- ScratchDir.h - a temporary directory a test owns -------------------===//
//
// A fresh directory under the system's temporary directory, removed with
// everything in it when the ScratchDir goes; the tests' kernel caches live
// in these, never in the user's.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_UNITTESTS_API_SCRATCHDIR_H
#define NERVE_UNITTESTS_API_SCRATCHDIR_H

#include <cstdlib>
#include <filesystem>
#include <string>

namespace nerve {

struct ScratchDir {
  /// Empty when the directory could not be made.
  std::filesystem::path path;

  explicit ScratchDir(const std::string &prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (mkdtemp(pattern.data()))
      path = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path.empty())
      std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
};

} // namespace nerve

#endif // NERVE_UNITTESTS_API_SCRATCHDIR_H
