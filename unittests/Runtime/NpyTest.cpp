//===- NpyTest.cpp - reading and writing .npy files -----------------------===//

#include "nerve/Runtime/HostArray.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

using namespace nerve;

namespace {

/// A version 1.0 .npy file with `header` (padded as NumPy pads it) and
/// `payload`.
std::string npy(const std::string &header, const std::string &payload) {
  std::string h = header;
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string s = "\x93NUMPY";
  s += '\x01';
  s += '\x00';
  s += static_cast<char>(h.size() & 0xff);
  s += static_cast<char>(h.size() >> 8);
  return s + h + payload;
}

std::string floats(std::initializer_list<float> values) {
  std::string s(values.size() * 4, '\0');
  size_t i = 0;
  for (float v : values)
    std::memcpy(&s[4 * i++], &v, 4);
  return s;
}

TEST(Npy, ParsesFloat32Matrix) {
  Result<HostArray> a = parseNpy(
      npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
          floats({1, 2, 3, 4, 5, 6})),
      "m.npy");
  ASSERT_TRUE(a) << a.message();
  EXPECT_EQ(a->dtype, DType::F32);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a->numElements(), 6);
  EXPECT_EQ(a->getDouble(4), 5.0);
}

TEST(Npy, ParsesScalarAndOtherTypes) {
  Result<HostArray> s = parseNpy(
      npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", floats({2.5f})), "s");
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(s->shape.empty());
  EXPECT_EQ(s->getDouble(0), 2.5);

  std::string halfOne("\x00\x3c", 2);
  Result<HostArray> h = parseNpy(
      npy("{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }", halfOne), "h");
  ASSERT_TRUE(h) << h.message();
  EXPECT_EQ(h->dtype, DType::F16);
  EXPECT_EQ(h->getDouble(0), 1.0);

  std::string ints("\x07\x00\x00\x00\xff\xff\xff\xff", 8);
  Result<HostArray> i = parseNpy(
      npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", ints), "i");
  ASSERT_TRUE(i) << i.message();
  EXPECT_EQ(i->dtype, DType::I32);
  EXPECT_EQ(i->getDouble(1), -1.0);
}

void expectError(const std::string &contents, const std::string &fragment) {
  Result<HostArray> a = parseNpy(contents, "bad.npy");
  ASSERT_FALSE(a) << "parsed without error";
  EXPECT_NE(a.message().find("bad.npy"), std::string::npos) << a.message();
  EXPECT_NE(a.message().find(fragment), std::string::npos)
      << "message: " << a.message() << "\nexpected to contain: " << fragment;
}

TEST(Npy, RejectsWhatItCannotRead) {
  expectError("not an npy file at all", "not a .npy file");
  expectError("", "too short to be a .npy file");
  expectError(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                  floats({1, 2, 3, 4})),
              "Fortran");
  expectError(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
                  floats({1})),
              "big-endian");
  expectError(npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
                  floats({1, 2})),
              "<c8");
  expectError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
                  floats({1, 2})),
              "holds 8 data bytes but its shape (4) of f32 needs 16");
  std::string whole = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
                          floats({1}));
  expectError(whole.substr(0, 20), "truncated");
}

TEST(Npy, WriteThenReadRoundTrips) {
  HostArray a = HostArray::zeros(DType::F16, {3, 1, 2});
  for (int64_t i = 0; i < a.numElements(); ++i)
    a.setDouble(i, 0.5 * static_cast<double>(i) - 1);
  std::string path = ::testing::TempDir() + "nerve-npy-roundtrip.npy";
  ASSERT_TRUE(writeNpy(path, a));
  Result<HostArray> b = readNpy(path);
  ASSERT_TRUE(b) << b.message();
  EXPECT_EQ(b->dtype, DType::F16);
  EXPECT_EQ(b->shape, a.shape);
  EXPECT_EQ(b->bytes, a.bytes);
  std::remove(path.c_str());
}

TEST(Npy, BFloat16IsWrittenAsFloat32) {
  // .npy has no bfloat16: the values are written exactly, widened.
  HostArray a = HostArray::zeros(DType::BF16, {2});
  a.setDouble(0, 1.5);
  a.setDouble(1, -3.0);
  std::string path = ::testing::TempDir() + "nerve-npy-bf16.npy";
  ASSERT_TRUE(writeNpy(path, a));
  Result<HostArray> b = readNpy(path);
  ASSERT_TRUE(b) << b.message();
  EXPECT_EQ(b->dtype, DType::F32);
  EXPECT_EQ(b->getDouble(0), 1.5);
  EXPECT_EQ(b->getDouble(1), -3.0);
  std::remove(path.c_str());
}

TEST(Npy, MissingFileSaysSo) {
  Result<HostArray> a = readNpy("/nonexistent/dir/x.npy");
  ASSERT_FALSE(a);
  EXPECT_NE(a.message().find("/nonexistent/dir/x.npy: cannot open"), std::string::npos)
      << a.message();
}

} // namespace
