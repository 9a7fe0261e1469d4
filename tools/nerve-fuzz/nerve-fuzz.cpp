//===- nerve-fuzz.cpp - libFuzzer target for the whole front end ---------===//
//
// Every input is taken as spec text and lowered as far as nerve goes
// without a GPU: parsed, verified, through nerve-to-cpu to LLVM IR, and
// through nerve-to-ptx to PTX (no libdevice, so no toolkit is needed). Any
// crash, assertion, LLVM ERROR or sanitizer report is a bug: bad input must
// come back as an error message. Built with -DNERVE_ENABLE_FUZZER=ON
// (scripts/fuzz.sh).
//
//===----------------------------------------------------------------------===//

#include "nerve/nerve.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string spec(reinterpret_cast<const char *>(data), size);
  nerve::CompileOptions options;
  options.cache = false;
  options.target = nerve::Target::CPU;
  (void)nerve::emit(spec, options, nerve::Emit::LLVMIR);
  options.target = nerve::Target::CUDA;
  options.libdevice = "none";
  (void)nerve::emit(spec, options, nerve::Emit::PTX);
  return 0;
}
