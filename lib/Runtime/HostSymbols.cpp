//===- HostSymbols.cpp - runtime functions the JIT'd host code calls ----===//
//
// LLVM lowers some f16/bf16 conversions on x86-64 to libcalls
// (__truncsfbf2 and friends) that not every libgcc provides. nerve defines
// them here. On x86-64 a half or bfloat argument or result travels in the
// low 16 bits of xmm0, the same register as a float, so each is written as
// a float function whose float carries the 16-bit pattern.
//
//===----------------------------------------------------------------------===//

#include "nerve/Runtime/HostSymbols.h"

#include "nerve/Runtime/HostArray.h"

#include <cstdint>
#include <cstring>

using namespace nerve;

static float carry16(uint16_t bits) {
  uint32_t word = bits;
  float f;
  std::memcpy(&f, &word, 4);
  return f;
}

static uint16_t carried16(float f) {
  uint32_t word;
  std::memcpy(&word, &f, 4);
  return static_cast<uint16_t>(word);
}

extern "C" {
static float nerve_truncsfbf2(float x) { return carry16(floatToBFloat16(x)); }
// f64 -> 16 bits goes through float: a double rounding that can differ from
// a direct rounding in the last bit only for values exactly half-way after
// the first rounding. nerve never narrows f64 to f16/bf16 in its own code.
static float nerve_truncdfbf2(double x) { return carry16(floatToBFloat16(static_cast<float>(x))); }
static float nerve_extendbfsf2(float x) { return bfloat16ToFloat(carried16(x)); }
static float nerve_truncsfhf2(float x) { return carry16(floatToHalf(x)); }
static float nerve_truncdfhf2(double x) { return carry16(floatToHalf(static_cast<float>(x))); }
static float nerve_extendhfsf2(float x) { return halfToFloat(carried16(x)); }
}

std::vector<std::pair<const char *, void *>> nerve::getHostSymbols() {
  return {
      {"__truncsfbf2", reinterpret_cast<void *>(&nerve_truncsfbf2)},
      {"__truncdfbf2", reinterpret_cast<void *>(&nerve_truncdfbf2)},
      {"__extendbfsf2", reinterpret_cast<void *>(&nerve_extendbfsf2)},
      {"__truncsfhf2", reinterpret_cast<void *>(&nerve_truncsfhf2)},
      {"__truncdfhf2", reinterpret_cast<void *>(&nerve_truncdfhf2)},
      {"__extendhfsf2", reinterpret_cast<void *>(&nerve_extendhfsf2)},
      {"__gnu_f2h_ieee", reinterpret_cast<void *>(&nerve_truncsfhf2)},
      {"__gnu_h2f_ieee", reinterpret_cast<void *>(&nerve_extendhfsf2)},
  };
}
