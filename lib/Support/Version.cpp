//===- Version.cpp - nerve's version ----------------------------------------===//

#include "nerve/Support/Version.h"

#include "nerve/NerveVersion.inc"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

const char *nerve::getVersion() { return NERVE_VERSION_STRING; }

const char *nerve::getGitRevision() { return NERVE_GIT_REVISION; }

const char *nerve::getLLVMVersion() { return LLVM_VERSION_STRING; }

std::string nerve::getFullVersion() {
  return std::string("nerve ") + getVersion() + " (git " + getGitRevision() +
         "), LLVM/MLIR " + getLLVMVersion();
}

void nerve::printVersion(llvm::raw_ostream &os) {
  os << "nerve version " << getVersion() << " (git " << getGitRevision()
     << ")\n";
  os << "  built with LLVM/MLIR " << getLLVMVersion() << "\n";
}
