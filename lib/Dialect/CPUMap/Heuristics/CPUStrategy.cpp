//===- CPUStrategy.cpp - how the CPU target sizes its tasks ---------------===//

#include "nerve/Dialect/CPUMap/Heuristics/CPUStrategy.h"

#include <algorithm>
#include <cstdio>
#include <unistd.h>

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

using namespace nerve::cpumap;

CPUProfile nerve::cpumap::hostCPUProfile() {
  // The host does not change: asked for at every compile's cache key and
  // every selection, its features are read once.
  static const CPUProfile host = [] {
    CPUProfile profile;
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    if (features.lookup("avx512f"))
      profile.vectorBytes = 64;
    else if (features.lookup("avx2"))
      profile.vectorBytes = 32;
#ifdef _SC_LEVEL1_DCACHE_SIZE
    long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    if (l1 >= 4096 && l1 <= (1L << 22))
      profile.l1Bytes = l1;
#endif
    return profile;
  }();
  return host;
}

std::string nerve::cpumap::formatCPUProfile(const CPUProfile &profile) {
  return "vector=" + std::to_string(profile.vectorBytes) + ",l1=" + std::to_string(profile.l1Bytes);
}

bool nerve::cpumap::parseCPUProfile(const std::string &text, CPUProfile &profile) {
  long long vector = 0, l1 = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "vector=%lld,l1=%lld%n", &vector, &l1, &consumed) != 2 ||
      consumed != static_cast<int>(text.size()))
    return false;
  if ((vector != 16 && vector != 32 && vector != 64) || l1 < 4096)
    return false;
  profile.vectorBytes = vector;
  profile.l1Bytes = l1;
  return true;
}

int64_t nerve::cpumap::chooseTimeChunk(int64_t scratchBytesPerIteration, const CPUProfile &profile) {
  constexpr int64_t kMaxChunk = 1024;
  int64_t perIteration = std::max<int64_t>(scratchBytesPerIteration, 1);
  int64_t fits = profile.l1Bytes / 2 / perIteration;
  // At least four vectors of the narrowest lanes the scratch holds.
  int64_t least = std::max<int64_t>(8, 4 * profile.vectorBytes / 4);
  int64_t chunk = std::clamp(fits, least, kMaxChunk);
  return std::max<int64_t>(8, chunk / 8 * 8);
}

int64_t nerve::cpumap::chooseReductionChunk(int64_t elementBytes) {
  return 16 * 1024 / std::max<int64_t>(elementBytes, 1);
}

int64_t nerve::cpumap::chooseFoldLanes(const CPUProfile &profile) {
  return 2 * profile.vectorBytes / 4;
}

bool nerve::cpumap::prefersTimeChunks(const RecurrenceFacts &facts) {
  return facts.accessesAlongIterations > 0 && facts.accessesAlongRecurrence == 0;
}
