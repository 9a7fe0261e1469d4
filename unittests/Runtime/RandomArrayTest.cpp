//===- RandomArrayTest.cpp - seeded standard-normal inputs ----------------===//

#include "nerve/Runtime/ArgBuffer.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nerve;

namespace {

TEST(RandomArray, SameSeedSameValues) {
  // Several chunks, filled by several threads: the values depend on the
  // seed only.
  std::mt19937_64 a(7), b(7), c(8);
  HostArray x = randomArray(DType::F32, {5, 100003}, a);
  HostArray y = randomArray(DType::F32, {5, 100003}, b);
  HostArray z = randomArray(DType::F32, {5, 100003}, c);
  ASSERT_EQ(x.bytes, y.bytes);
  EXPECT_NE(x.bytes, z.bytes);
  // The next array from the same generator differs from the first.
  HostArray next = randomArray(DType::F32, {5, 100003}, a);
  EXPECT_NE(x.bytes, next.bytes);
}

TEST(RandomArray, StandardNormal) {
  std::mt19937_64 rng(1);
  HostArray x = randomArray(DType::F64, {1 << 20}, rng);
  double sum = 0, squares = 0;
  int64_t beyond3 = 0;
  for (int64_t i = 0; i < x.numElements(); ++i) {
    double v = x.getDouble(i);
    sum += v;
    squares += v * v;
    beyond3 += std::abs(v) > 3;
  }
  double n = static_cast<double>(x.numElements());
  EXPECT_NEAR(sum / n, 0.0, 0.005);
  EXPECT_NEAR(squares / n, 1.0, 0.005);
  // P(|z| > 3) = 0.0027.
  EXPECT_NEAR(beyond3 / n, 0.0027, 0.0003);
}

TEST(RandomArray, RoundedToTheType) {
  std::mt19937_64 rng(3);
  HostArray ints = randomArray(DType::I32, {1000}, rng);
  HostArray bools = randomArray(DType::I1, {1000}, rng);
  int64_t ones = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    double v = ints.getDouble(i);
    EXPECT_EQ(v, std::round(v));
    ones += bools.getDouble(i) != 0;
  }
  EXPECT_GT(ones, 400);
  EXPECT_LT(ones, 600);
}

} // namespace
