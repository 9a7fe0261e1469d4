//===- CpuThreads.cpp - the threads of the CPU target's kernels ----------===//
//
// The generated code's omp.parallel regions take the OpenMP runtime's
// nthreads-var of the launching thread, which useThreads sets from
// nerve's own setting before each launch. The runtime is LLVM's libomp,
// linked into libnerve; the JIT resolves the code's __kmpc_* calls to it
// through openMPSymbols (libnerve may be loaded with RTLD_LOCAL, as ctypes
// does, so the process's global symbols need not include them).
//
//===----------------------------------------------------------------------===//

#include "nerve/Runtime/CpuThreads.h"

#include "nerve/nerve.h"

#include <atomic>
#include <cstdlib>
#include <sched.h>
#include <string>

extern "C" {
// libomp's entry points (kmp.h and omp.h); only their addresses are taken
// here, but for omp_set_num_threads.
void omp_set_num_threads(int);
int omp_get_max_threads();
void kmp_set_blocktime(int);
void __kmpc_barrier();
void __kmpc_cancel_barrier();
void __kmpc_end_serialized_parallel();
void __kmpc_for_static_fini();
void __kmpc_for_static_init_4();
void __kmpc_for_static_init_4u();
void __kmpc_for_static_init_8();
void __kmpc_for_static_init_8u();
void __kmpc_fork_call();
void __kmpc_global_thread_num();
void __kmpc_push_num_threads();
void __kmpc_serialized_parallel();
}

using namespace nerve;

namespace {
/// setCpuThreads' value; 0 when unset.
std::atomic<int> setting{0};

/// $NERVE_NUM_THREADS: its value, 0 when unset, -1 when malformed.
int environmentThreads() {
  static const int value = [] {
    const char *text = std::getenv("NERVE_NUM_THREADS");
    if (!text || !*text)
      return 0;
    char *end = nullptr;
    long n = std::strtol(text, &end, 10);
    return (*end || n < 1 || n > 4096) ? -1 : static_cast<int>(n);
  }();
  return value;
}
} // namespace

int nerve::cpu::availableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return std::max(1, CPU_COUNT(&set));
  return 1;
}

int nerve::cpuThreads() {
  if (int n = setting.load(std::memory_order_relaxed))
    return n;
  int env = environmentThreads();
  return env > 0 ? env : cpu::availableCores();
}

Status nerve::setCpuThreads(int threads) {
  if (threads < 0 || threads > 4096)
    return Status::error("threads must be from 1 to 4096, or 0 for the default, not " +
                         std::to_string(threads));
  setting.store(threads, std::memory_order_relaxed);
  return Status();
}

Status nerve::cpu::useThreads(int threads) {
  if (threads <= 0) {
    if (setting.load(std::memory_order_relaxed) == 0 && environmentThreads() < 0)
      return Status::error(std::string("NERVE_NUM_THREADS must be a number of threads from 1 to "
                                       "4096, not '") +
                           std::getenv("NERVE_NUM_THREADS") + "'");
    threads = cpuThreads();
  }
  // Both settings are the calling thread's; a launch sets them only when
  // they change.
  thread_local int current = 0;
  if (threads != current) {
    omp_set_num_threads(threads);
    current = threads;
  }
  // libomp's threads spin for 200 ms after each parallel loop by default,
  // taking the cores from the PyTorch (or other) CPU work that follows a
  // kernel; nerve's sleep at once instead (a wake-up costs microseconds).
  // $KMP_BLOCKTIME, when set, keeps its say.
  static const bool spinSet = std::getenv("KMP_BLOCKTIME") != nullptr;
  thread_local bool blocktimeSet = false;
  if (!spinSet && !blocktimeSet) {
    kmp_set_blocktime(0);
    blocktimeSet = true;
  }
  return Status();
}

std::vector<std::pair<const char *, void *>> nerve::cpu::openMPSymbols() {
#define NERVE_OMP_SYMBOL(name) {#name, reinterpret_cast<void *>(&name)}
  return {
      NERVE_OMP_SYMBOL(__kmpc_barrier),
      NERVE_OMP_SYMBOL(__kmpc_cancel_barrier),
      NERVE_OMP_SYMBOL(__kmpc_end_serialized_parallel),
      NERVE_OMP_SYMBOL(__kmpc_for_static_fini),
      NERVE_OMP_SYMBOL(__kmpc_for_static_init_4),
      NERVE_OMP_SYMBOL(__kmpc_for_static_init_4u),
      NERVE_OMP_SYMBOL(__kmpc_for_static_init_8),
      NERVE_OMP_SYMBOL(__kmpc_for_static_init_8u),
      NERVE_OMP_SYMBOL(__kmpc_fork_call),
      NERVE_OMP_SYMBOL(__kmpc_global_thread_num),
      NERVE_OMP_SYMBOL(__kmpc_push_num_threads),
      NERVE_OMP_SYMBOL(__kmpc_serialized_parallel),
      NERVE_OMP_SYMBOL(omp_get_max_threads),
  };
#undef NERVE_OMP_SYMBOL
}
