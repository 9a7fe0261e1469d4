//===- NewProcess.h - running a test scenario in a process of its own -----===//
//
// A kernel fault loses CUDA for the whole process, so tests that provoke
// one run their scenario in a new process: gtest's "threadsafe" death-test
// style re-executes this test binary for just that test. The scenario
// returns what went wrong (empty when all is well) and the child exits
// through std::exit, so a clean exit after the fault is checked too.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_UNITTESTS_API_NEWPROCESS_H
#define NERVE_UNITTESTS_API_NEWPROCESS_H

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

namespace nerve::testing {

inline bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// Collects failed expectations of a scenario.
class Problems {
public:
  void expect(bool ok, const std::string &what) {
    if (!ok)
      text_ += what + "\n";
  }
  /// Expects `text` to contain `part`.
  void expectContains(const std::string &text, const std::string &part) {
    expect(contains(text, part), "expected \"" + part + "\" in: " + text);
  }
  const std::string &text() const { return text_; }

private:
  std::string text_;
};

inline void expectInNewProcess(const std::function<std::string()> &scenario) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::string problems = scenario();
        if (!problems.empty()) {
          std::fprintf(stderr, "%s", problems.c_str());
          std::exit(1);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

} // namespace nerve::testing

#endif // NERVE_UNITTESTS_API_NEWPROCESS_H
