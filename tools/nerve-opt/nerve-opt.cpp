//===- nerve-opt.cpp - mlir-opt for nerve -----------------------------------===//
//
// Parses, verifies and transforms nerve specs: nerve's dialects, passes and
// pipelines plus the upstream ones they build on.
//
//===----------------------------------------------------------------------===//

#include "nerve/InitAll.h"
#include "nerve/Support/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  nerve::registerAllDialects(registry);
  nerve::registerAllPasses();
  llvm::cl::SetVersionPrinter(nerve::printVersion);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "nerve optimizer driver\n", registry));
}
