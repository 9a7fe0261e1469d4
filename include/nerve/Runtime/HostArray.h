//===- HostArray.h - n-dimensional arrays in host memory ---------*- C++ -*-===//

#ifndef NERVE_RUNTIME_HOSTARRAY_H
#define NERVE_RUNTIME_HOSTARRAY_H

#include "nerve/nerve.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nerve {

/// A C-ordered array in host memory: what .npy files hold and what the
/// runtime copies to and from kernel arguments.
struct HostArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t numElements() const;
  void *data() { return bytes.data(); }
  const void *data() const { return bytes.data(); }

  /// Element `i` (flat, C order) as a double.
  double getDouble(int64_t i) const;
  /// Stores `v` into element `i`, rounding to the element type.
  void setDouble(int64_t i, double v);

  static HostArray zeros(DType dtype, std::vector<int64_t> shape);
};

/// Reads a NumPy .npy file (format 1.0-3.0, C order, little-endian).
Result<HostArray> readNpy(const std::string &path);
/// Parses .npy bytes; `what` names the source in messages.
Result<HostArray> parseNpy(const std::string &contents, const std::string &what);
/// Writes `array` as .npy (bf16 is written as float32, which NumPy reads).
Status writeNpy(const std::string &path, const HostArray &array);

/// f32 <-> f16 / bf16 bit conversions (round to nearest even).
uint16_t floatToHalf(float f);
float halfToFloat(uint16_t h);
uint16_t floatToBFloat16(float f);
float bfloat16ToFloat(uint16_t b);

} // namespace nerve

#endif // NERVE_RUNTIME_HOSTARRAY_H
