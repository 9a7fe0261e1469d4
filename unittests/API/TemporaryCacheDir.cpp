//===- TemporaryCacheDir.cpp - unit tests never touch the user's cache ---===//
//
// Points $NERVE_CACHE_DIR at a fresh directory for the whole test binary
// (unless the caller chose one) and removes it at the end.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {
class TemporaryCacheDir : public ::testing::Environment {
public:
  void SetUp() override {
    if (std::getenv("NERVE_CACHE_DIR"))
      return;
    std::string pattern =
        (std::filesystem::temp_directory_path() / "nerve-unittest-cache-XXXXXX").string();
    if (char *dir = mkdtemp(pattern.data())) {
      created = dir;
      setenv("NERVE_CACHE_DIR", dir, 1);
    }
  }
  void TearDown() override {
    if (created.empty())
      return;
    std::error_code ec;
    std::filesystem::remove_all(created, ec);
    unsetenv("NERVE_CACHE_DIR");
  }

private:
  std::string created;
};

[[maybe_unused]] ::testing::Environment *const environment =
    ::testing::AddGlobalTestEnvironment(new TemporaryCacheDir());
} // namespace
