//===- Bench.h - nerve-run --bench ---------------------------*- C++ -*-===//
//
// The kernel's median time against the copy bandwidth measured in the same
// process (Bench.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_TOOLS_NERVE_RUN_BENCH_H
#define NERVE_TOOLS_NERVE_RUN_BENCH_H

#include "nerve/nerve.h"

#include <string>
#include <vector>

namespace nerve::run {

struct BenchResult {
  double medianMs = 0, minMs = 0, copyGBs = 0;
  /// CPU: the threads the kernel ran on and the copy was measured with.
  int copyThreads = 0;
  /// A device copy moving as many bytes as the kernel (half read, half
  /// written), timed the same way: what "as fast as memory allows" means at
  /// this size, launch latency and ramp-up included. 0 on the CPU.
  double sameSizeCopyMs = 0;
};

/// How L2 is emptied before each timed GPU run (--l2-flush).
enum class L2FlushMode { Read, Write, None };
Result<L2FlushMode> parseL2Flush(const std::string &name);
/// What `mode` does, as --bench reports it.
const char *describeL2Flush(L2FlushMode mode);

/// `runs` timed launches on the CPU, against the host memcpy bandwidth.
Result<BenchResult> benchCpu(const Module &module, const std::string &entry,
                             const std::vector<Arg> &args, unsigned runs, int threads);

/// Times `runs` launches with device events after a warm-up, L2 emptied
/// before each as `flushMode` says, the device's copy bandwidth (a 1 GiB
/// device-to-device copy, bytes read plus written) and a copy moving
/// `bytesMoved` in the same process, emptied the same way.
Result<BenchResult> benchGpu(const Module &module, const std::string &entry,
                             const std::vector<Arg> &args, unsigned runs, uint64_t bytesMoved,
                             L2FlushMode flushMode, const CompileOptions &options);

} // namespace nerve::run

#endif // NERVE_TOOLS_NERVE_RUN_BENCH_H
