//===- HalfConversionTest.cpp - f16 and bf16 rounding ---------------------===//

#include "nerve/Runtime/HostArray.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace nerve;

namespace {

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(HalfConversion, ExactValues) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff); // largest finite half
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400); // smallest normal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
}

TEST(HalfConversion, RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even 1.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 lies halfway between 0x3c01 and 0x3c02: even is 0x3c02.
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above the halfway point rounds up.
  EXPECT_EQ(floatToHalf(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3c01);
  // Half of the smallest subnormal ties to zero; a bit more rounds up.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(floatToHalf(std::ldexp(1.5f, -25)), 0x0001);
}

TEST(HalfConversion, OverflowInfinityAndNaN) {
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff); // below the rounding boundary
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // rounds to infinity
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  uint16_t nan = floatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(halfToFloat(nan)));
}

TEST(HalfConversion, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    float f = halfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(floatToHalf(f), h) << "half 0x" << std::hex << h;
  }
}

TEST(BFloat16Conversion, ExactAndRounded) {
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloat16(-2.0f), 0xc000);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(floatToBFloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3 * 2^-8: halfway between 0x3f81 and 0x3f82, even is 0x3f82.
  EXPECT_EQ(floatToBFloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(floatToBFloat16(std::numeric_limits<float>::infinity()), 0x7f80);
  // The largest float rounds to infinity, as IEEE rounding says.
  EXPECT_EQ(floatToBFloat16(std::numeric_limits<float>::max()), 0x7f80);
}

TEST(BFloat16Conversion, NaNStaysNaN) {
  // A NaN whose payload lives only in the low 16 bits must not become inf.
  float nan = fromBits(0x7f800001u);
  uint16_t b = floatToBFloat16(nan);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(b)));
}

TEST(BFloat16Conversion, EveryBFloat16RoundTrips) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    float f = bfloat16ToFloat(static_cast<uint16_t>(b));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(floatToBFloat16(f), b) << "bf16 0x" << std::hex << b;
  }
}

} // namespace
