//===- ChipProfile.h - the GPUs nerve compiles for ----------------*- C++ -*-===//
//
// One table of the facts code generation takes from a GPU (SM count, shared
// memory, L2, registers, clusters, launch features). Heuristics take a
// profile as input, so they are pure functions a unit test can call with
// any chip; nothing else in nerve spells a chip's numbers.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_TARGET_CHIPPROFILE_H
#define NERVE_TARGET_CHIPPROFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace nerve {

/// GPU architectures nerve compiles for.
enum class GpuChip { sm_80, sm_89, sm_90, sm_100 };

/// Dynamic and static shared memory together that a block may use without
/// opting in, on every CUDA GPU.
constexpr int64_t kSharedBytesWithoutOptIn = 48 * 1024;
/// The most blocks of a thread block cluster that is portable: every chip
/// with clusters launches them without opting in.
constexpr int64_t kPortableClusterBlocks = 8;

struct ChipProfile {
  GpuChip chip;
  llvm::StringRef name;        ///< "sm_90": the PTX target
  llvm::StringRef description; ///< the GPUs it stands for
  int computeCapability;       ///< 90 for sm_90
  /// Of the GPU the numbers are taken from (the description's first).
  int multiprocessors;
  int64_t sharedBytesPerBlockOptIn; ///< CUDA's sharedMemPerBlockOptin
  int64_t sharedBytesPerMultiprocessor;
  int64_t l2Bytes;
  int registersPerMultiprocessor;
  int maxThreadsPerBlock;
  /// Most blocks of a thread block cluster that is portable (0: the chip
  /// has no clusters).
  int maxClusterBlocks;
  /// Programmatic dependent launch (griddepcontrol): a kernel may start
  /// while the one before it drains.
  bool programmaticDependentLaunch;
  /// The PTX target of the chip's architecture-specific instructions
  /// (sm_90a: warpgroup-level wgmma), which run on this chip alone; empty
  /// where nerve uses none.
  llvm::StringRef archSpecificName;
};

/// Every chip nerve compiles for, oldest first.
llvm::ArrayRef<ChipProfile> chipProfiles();
const ChipProfile &chipProfile(GpuChip chip);
/// The chip named `name` ("sm_90"), if nerve compiles for it.
std::optional<GpuChip> parseChip(llvm::StringRef name);
/// The chip of an #nvvm.target's chip name: its own ("sm_90") or its
/// architecture-specific one ("sm_90a").
std::optional<GpuChip> parseTargetChip(llvm::StringRef name);
/// "sm_80, sm_89, sm_90 and sm_100", for messages.
std::string chipNames();
/// The message for a chip name nerve does not compile for.
std::string unknownChipMessage(llvm::StringRef name);
/// The newest chip whose code a GPU of `computeCapability` runs (PTX runs
/// on its own and later architectures), if any.
std::optional<GpuChip> chipForComputeCapability(int computeCapability);

} // namespace nerve

#endif // NERVE_TARGET_CHIPPROFILE_H
