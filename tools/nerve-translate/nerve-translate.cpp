//===- nerve-translate.cpp - the PTX or LLVM IR of a spec ---------------===//
//
//   nerve-translate SPEC.mlir --emit=ptx|llvm [--target cpu|cuda] [--chip sm_90]
//                   [--opt-level N] [--libdevice PATH|none] [--entry NAME]
//                   [--static-size NAME=SIZE ...] [-o FILE]
//
// Lowers a spec and prints the PTX of its device code or the LLVM IR of its
// host code. Needs no GPU.
//
//===----------------------------------------------------------------------===//

#include "nerve/Support/Version.h"
#include "nerve/nerve.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <iostream>
#include <sstream>

using namespace nerve;
namespace cl = llvm::cl;

static cl::OptionCategory category("nerve-translate options");
static cl::opt<std::string> specPath(cl::Positional, cl::desc("<spec.mlir>"), cl::init("-"),
                                     cl::cat(category));
static cl::opt<std::string> emitKind("emit", cl::desc("ptx (device code) or llvm (host code)"),
                                     cl::init("ptx"), cl::cat(category));
static cl::opt<std::string> targetName("target",
                                       cl::desc("cuda or cpu (default: cuda for ptx, cpu for llvm)"),
                                       cl::init(""), cl::cat(category));
static cl::opt<std::string> chip("chip", cl::desc("GPU architecture (sm_80, sm_89, sm_90, sm_100)"),
                                 cl::init("sm_90"), cl::cat(category));
static cl::opt<unsigned> optLevel("opt-level", cl::desc("Optimisation level 0-3"), cl::init(3),
                                  cl::cat(category));
static cl::opt<int> timeBlock("time-block",
                              cl::desc("Time steps of a neuron whose loads are issued together "
                                       "(1-128; default 0: automatic)"),
                              cl::init(0), cl::cat(category));
static cl::opt<bool> tf32("tf32",
                          cl::desc("f32 contractions may read their operands as tf32 on tensor "
                                   "cores (CompileOptions::tf32)"),
                          cl::init(false), cl::cat(category));
static cl::opt<std::string> libdevice(
    "libdevice", cl::desc("libdevice.10.bc to link, or 'none' (default: find a CUDA toolkit)"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string> entry("entry", cl::desc("Compile this kernel alone"),
                                  cl::value_desc("NAME"), cl::init(""), cl::cat(category));
static cl::list<std::string> staticSizes("static-size",
                                         cl::desc("Compile for this size of a dimension"),
                                         cl::value_desc("NAME=SIZE"), cl::cat(category));
static cl::opt<std::string> outputPath("o", cl::desc("Output file"), cl::init("-"),
                                       cl::value_desc("FILE"), cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(nerve::printVersion);
  cl::ParseCommandLineOptions(argc, argv, "nerve-translate: PTX or LLVM IR of a nerve spec\n");

  Emit what;
  if (emitKind == "ptx")
    what = Emit::PTX;
  else if (emitKind == "llvm")
    what = Emit::LLVMIR;
  else {
    llvm::errs() << "nerve-translate: error: --emit must be ptx or llvm, not '" << emitKind
                 << "'\n";
    return 1;
  }
  CompileOptions options;
  options.chip = chip;
  options.optLevel = static_cast<int>(optLevel);
  options.libdevice = libdevice;
  options.neuronTimeBlock = timeBlock;
  options.tf32 = tf32;
  options.entry = entry;
  for (const std::string &text : staticSizes) {
    size_t eq = text.find('=');
    long long size = -1;
    if (eq == std::string::npos || eq == 0 ||
        !llvm::to_integer(llvm::StringRef(text).substr(eq + 1), size, 10)) {
      llvm::errs() << "nerve-translate: error: --static-size expects NAME=SIZE, not '" << text
                   << "'\n";
      return 1;
    }
    options.staticSizes.push_back({text.substr(0, eq), size});
  }
  if (targetName == "cuda")
    options.target = Target::CUDA;
  else if (targetName == "cpu")
    options.target = Target::CPU;
  else if (!targetName.empty()) {
    llvm::errs() << "nerve-translate: error: unknown target '" << targetName << "'\n";
    return 1;
  }

  std::string spec;
  if (specPath == "-") {
    std::ostringstream text;
    text << std::cin.rdbuf();
    spec = text.str();
  } else {
    std::ifstream in(specPath, std::ios::binary);
    if (!in) {
      llvm::errs() << "nerve-translate: error: " << specPath << ": cannot open the spec\n";
      return 1;
    }
    std::ostringstream text;
    text << in.rdbuf();
    spec = text.str();
  }
  options.sourceName = specPath == "-" ? std::string("<stdin>") : std::string(specPath);
  Result<std::string> out = emit(spec, options, what);
  if (!out) {
    llvm::errs() << out.message() << "\n";
    return 1;
  }
  std::error_code ec;
  llvm::ToolOutputFile file(outputPath, ec, llvm::sys::fs::OF_None);
  if (ec) {
    llvm::errs() << "nerve-translate: error: " << outputPath << ": " << ec.message() << "\n";
    return 1;
  }
  file.os() << *out;
  file.keep();
  return 0;
}
