//===- CPUStrategy.h - how the CPU target sizes its tasks -------*- C++ -*-===//
//
// The CPU strategies' sizes as pure functions of the loop's facts and a
// profile of the host CPU, so they are unit-tested and the selection pass
// only records what they say (cpumap.strategy).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_CPUMAP_HEURISTICS_CPUSTRATEGY_H
#define NERVE_DIALECT_CPUMAP_HEURISTICS_CPUSTRATEGY_H

#include <cstdint>
#include <string>

namespace nerve::cpumap {

/// What the sizes depend on about the host CPU.
struct CPUProfile {
  /// The widest vector register the compiled code may use (16: SSE, 32:
  /// AVX2, 64: AVX-512).
  int64_t vectorBytes = 16;
  /// The level-1 data cache of one core.
  int64_t l1Bytes = 32 * 1024;
};

/// The profile of the CPU this process runs on (the one nerve compiles for).
CPUProfile hostCPUProfile();
/// `profile` as text for pass options and the kernel cache: "vector=V,l1=L".
std::string formatCPUProfile(const CPUProfile &profile);
/// The profile `text` describes; false when it is malformed.
bool parseCPUProfile(const std::string &text, CPUProfile &profile);

/// Neurons a task of a `time_chunks` loop takes, for a loop whose carried
/// and crossing values take `scratchBytesPerIteration` bytes of scratch an
/// iteration: the chunk's scratch takes at most half the L1 cache (the
/// other half holds the rows streaming through), at most 1024 neurons
/// (4 KiB runs of an f32 row per step, a page the prefetcher follows), at
/// least a few vectors; a multiple of 8 either way.
int64_t chooseTimeChunk(int64_t scratchBytesPerIteration, const CPUProfile &profile);

/// Iterations a partial result of a `whole_reduction` covers at least: 16
/// KiB of the widest element the loop reads, amortising a task's start and
/// the partials' combine, small enough that a few million elements give
/// every thread of a large machine blocks to take.
int64_t chooseReductionChunk(int64_t elementBytes);

/// Partial results a fold inside a task keeps (cpumap.strategy's lanes):
/// two vectors of f32, so that the vectorised fold has two independent
/// chains of additions in flight.
int64_t chooseFoldLanes(const CPUProfile &profile);

/// What the selection knows of a loop whose body is a recurrence.
struct RecurrenceFacts {
  /// Accesses in the recurrence whose innermost index follows the
  /// parallel loop's innermost dimension (a neuron's rows, time-major).
  int64_t accessesAlongIterations = 0;
  /// Accesses whose innermost index follows the recurrence (a row's fold,
  /// or a time-minor neuron).
  int64_t accessesAlongRecurrence = 0;
};

/// Whether a recurrence runs as time_chunks (its iterations contiguous in
/// memory: each step's chunk is a contiguous run LLVM vectorises) rather
/// than as threads (each thread walks its iterations' contiguous runs).
bool prefersTimeChunks(const RecurrenceFacts &facts);

} // namespace nerve::cpumap

#endif // NERVE_DIALECT_CPUMAP_HEURISTICS_CPUSTRATEGY_H
