//===- VersionTest.cpp - nerve's version strings ----------------------------===//

#include "nerve/Support/Version.h"

#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <string>

TEST(Version, NamesNerveAndLLVM) {
  std::string full = nerve::getFullVersion();
  EXPECT_NE(full.find(std::string("nerve ") + nerve::getVersion()),
            std::string::npos);
  EXPECT_NE(full.find(nerve::getLLVMVersion()), std::string::npos);
  EXPECT_EQ(std::string(nerve::getLLVMVersion()).rfind("22.", 0), 0u);
}

TEST(Version, PrinterMatchesAccessors) {
  std::string text;
  llvm::raw_string_ostream os(text);
  nerve::printVersion(os);
  EXPECT_NE(text.find(nerve::getGitRevision()), std::string::npos);
  EXPECT_NE(text.find(nerve::getLLVMVersion()), std::string::npos);
}
