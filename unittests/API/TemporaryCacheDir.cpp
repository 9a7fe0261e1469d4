//===- TemporaryCacheDir.cpp - unit tests never touch the user's cache ---===//
//
// Points $NERVE_CACHE_DIR at a fresh directory for the whole test binary
// (unless the caller chose one) and removes it at the end.
//
//===----------------------------------------------------------------------===//

#include "ScratchDir.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

namespace {
class TemporaryCacheDir : public ::testing::Environment {
public:
  void SetUp() override {
    if (std::getenv("NERVE_CACHE_DIR"))
      return;
    created.emplace("nerve-unittest-cache");
    if (!created->path.empty())
      setenv("NERVE_CACHE_DIR", created->path.c_str(), 1);
  }
  void TearDown() override {
    if (!created || created->path.empty())
      return;
    created.reset();
    unsetenv("NERVE_CACHE_DIR");
  }

private:
  std::optional<nerve::ScratchDir> created;
};

[[maybe_unused]] ::testing::Environment *const environment =
    ::testing::AddGlobalTestEnvironment(new TemporaryCacheDir());
} // namespace
