//===- CpuThreads.h - the threads of the CPU target's kernels ---*- C++ -*-===//
//
// The CPU target's kernels are OpenMP parallel loops; nerve's runtime owns
// how many threads they take (nerve::cpuThreads, $NERVE_NUM_THREADS) and
// sets it on the launching thread before each launch.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_RUNTIME_CPUTHREADS_H
#define NERVE_RUNTIME_CPUTHREADS_H

#include "nerve/Status.h"

#include <utility>
#include <vector>

namespace nerve::cpu {

/// The cores this process may run on (its affinity mask), at least 1.
int availableCores();

/// Makes the launches from the calling thread that follow run on `threads`
/// threads (or cpuThreads() when 0); an error when $NERVE_NUM_THREADS is
/// malformed and no setting overrides it.
Status useThreads(int threads);

/// The OpenMP runtime's entry points the JIT-compiled host code calls.
std::vector<std::pair<const char *, void *>> openMPSymbols();

} // namespace nerve::cpu

#endif // NERVE_RUNTIME_CPUTHREADS_H
