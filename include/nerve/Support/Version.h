//===- Version.h - nerve's version --------------------------------*- C++ -*-===//

#ifndef NERVE_SUPPORT_VERSION_H
#define NERVE_SUPPORT_VERSION_H

#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace nerve {

/// The release version, e.g. "0.1.0".
const char *getVersion();

/// The git revision the build came from, or "unknown".
const char *getGitRevision();

/// The LLVM/MLIR release nerve was built against, e.g. "22.1.8".
const char *getLLVMVersion();

/// One line naming nerve's and LLVM's versions, for `--version` and for the
/// kernel cache key.
std::string getFullVersion();

/// Prints the `--version` text of every nerve tool.
void printVersion(llvm::raw_ostream &os);

} // namespace nerve

#endif // NERVE_SUPPORT_VERSION_H
