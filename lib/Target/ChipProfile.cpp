//===- ChipProfile.cpp - the GPUs nerve compiles for ---------------------===//
//
// Numbers from NVIDIA's CUDA C++ Programming Guide (compute capabilities
// table) and the data sheets of the GPU each row names first.
//
//===----------------------------------------------------------------------===//

#include "nerve/Target/ChipProfile.h"

#include "llvm/ADT/STLExtras.h"

#include <string>

using namespace nerve;

static constexpr int64_t KiB = 1024, MiB = 1024 * KiB;

static const ChipProfile kProfiles[] = {
    {GpuChip::sm_80, "sm_80", "Ampere A100", 80, 108, 163 * KiB, 164 * KiB, 40 * MiB, 65536,
     1024, 0, false, ""},
    {GpuChip::sm_89, "sm_89", "Ada L40S", 89, 142, 99 * KiB, 100 * KiB, 96 * MiB, 65536, 1024,
     0, false, ""},
    {GpuChip::sm_90, "sm_90", "Hopper H100/H200", 90, 132, 227 * KiB, 228 * KiB, 50 * MiB,
     65536, 1024, 8, true, "sm_90a"},
    {GpuChip::sm_100, "sm_100", "Blackwell B200", 100, 148, 227 * KiB, 228 * KiB, 126 * MiB,
     65536, 1024, 8, true, ""},
};

llvm::ArrayRef<ChipProfile> nerve::chipProfiles() { return kProfiles; }

const ChipProfile &nerve::chipProfile(GpuChip chip) {
  for (const ChipProfile &p : kProfiles)
    if (p.chip == chip)
      return p;
  return kProfiles[2]; // unreachable: every enumerator has a row
}

std::optional<GpuChip> nerve::parseChip(llvm::StringRef name) {
  for (const ChipProfile &p : kProfiles)
    if (p.name == name)
      return p.chip;
  return std::nullopt;
}

std::optional<GpuChip> nerve::parseTargetChip(llvm::StringRef name) {
  for (const ChipProfile &p : kProfiles)
    if (p.name == name || (!p.archSpecificName.empty() && p.archSpecificName == name))
      return p.chip;
  return std::nullopt;
}

std::string nerve::chipNames() {
  std::string names;
  for (size_t i = 0; i < std::size(kProfiles); ++i) {
    if (i)
      names += i + 1 == std::size(kProfiles) ? " and " : ", ";
    names += kProfiles[i].name.str();
  }
  return names;
}

std::string nerve::unknownChipMessage(llvm::StringRef name) {
  return "unknown chip '" + name.str() + "'; nerve compiles for " + chipNames();
}

std::optional<GpuChip> nerve::chipForComputeCapability(int computeCapability) {
  std::optional<GpuChip> best;
  for (const ChipProfile &p : kProfiles)
    if (p.computeCapability <= computeCapability)
      best = p.chip;
  return best;
}
