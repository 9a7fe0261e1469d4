//===- HostArray.cpp - host arrays and NumPy .npy files -----------------===//
//
// The .npy reader accepts what NumPy and PyTorch write (format 1.0 to 3.0,
// little-endian, C order) and says precisely what is wrong with anything
// else: a truncated file, a wrong magic, Fortran order, big-endian data, a
// shape that disagrees with the payload, an unknown dtype.
//
//===----------------------------------------------------------------------===//

#include "nerve/Runtime/HostArray.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

using namespace nerve;

const char *nerve::toString(DType dtype) {
  switch (dtype) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::F64: return "f64";
  case DType::I1: return "i1";
  case DType::I8: return "i8";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::Index: return "index";
  }
  return "?";
}

int64_t nerve::byteWidth(DType dtype) {
  switch (dtype) {
  case DType::F32: case DType::I32: return 4;
  case DType::F16: case DType::BF16: return 2;
  case DType::F64: case DType::I64: case DType::Index: return 8;
  case DType::I1: case DType::I8: return 1;
  }
  return 1;
}

//===----------------------------------------------------------------------===//
// Half-precision conversions
//===----------------------------------------------------------------------===//

static uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

static float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t nerve::floatToBFloat16(float f) {
  uint32_t u = bitsOf(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet and a NaN
    return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u); // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

float nerve::bfloat16ToFloat(uint16_t b) { return floatOf(static_cast<uint32_t>(b) << 16); }

uint16_t nerve::floatToHalf(float f) {
  uint32_t u = bitsOf(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) // NaN
    return static_cast<uint16_t>(sign | 0x7e00u);
  if (absu >= 0x477ff000u) // rounds to infinity (>= 65520)
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (absu < 0x38800000u) { // subnormal or zero in half
    // Scale into half's subnormal grid and let float rounding do the work.
    float scaled = floatOf(absu) * 16777216.0f; // 2^24
    uint32_t mant = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | mant);
  }
  uint32_t exp = (absu >> 23) - 112; // rebias 127 -> 15
  uint32_t mant = absu & 0x7fffffu;
  uint32_t half = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half; // may carry into the exponent, which is right
  return static_cast<uint16_t>(sign | half);
}

float nerve::halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = static_cast<float>(mant) / 16777216.0f; // 2^-24 units
    return sign ? -v : v;
  }
  if (exp == 31)
    return floatOf(sign | 0x7f800000u | (mant << 13));
  return floatOf(sign | ((exp + 112) << 23) | (mant << 13));
}

//===----------------------------------------------------------------------===//
// HostArray
//===----------------------------------------------------------------------===//

int64_t HostArray::numElements() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

HostArray HostArray::zeros(DType dtype, std::vector<int64_t> shape) {
  HostArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.bytes.assign(static_cast<size_t>(a.numElements() * byteWidth(dtype)), 0);
  return a;
}

template <typename T>
static T load(const std::vector<uint8_t> &bytes, int64_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
static void store(std::vector<uint8_t> &bytes, int64_t i, T v) {
  std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
}

double HostArray::getDouble(int64_t i) const {
  switch (dtype) {
  case DType::F32: return load<float>(bytes, i);
  case DType::F16: return halfToFloat(load<uint16_t>(bytes, i));
  case DType::BF16: return bfloat16ToFloat(load<uint16_t>(bytes, i));
  case DType::F64: return load<double>(bytes, i);
  case DType::I1: return load<uint8_t>(bytes, i) != 0;
  case DType::I8: return load<int8_t>(bytes, i);
  case DType::I32: return load<int32_t>(bytes, i);
  case DType::I64: case DType::Index: return static_cast<double>(load<int64_t>(bytes, i));
  }
  return 0;
}

void HostArray::setDouble(int64_t i, double v) {
  switch (dtype) {
  case DType::F32: store<float>(bytes, i, static_cast<float>(v)); return;
  case DType::F16: store<uint16_t>(bytes, i, floatToHalf(static_cast<float>(v))); return;
  case DType::BF16: store<uint16_t>(bytes, i, floatToBFloat16(static_cast<float>(v))); return;
  case DType::F64: store<double>(bytes, i, v); return;
  case DType::I1: store<uint8_t>(bytes, i, v != 0); return;
  case DType::I8: store<int8_t>(bytes, i, static_cast<int8_t>(v)); return;
  case DType::I32: store<int32_t>(bytes, i, static_cast<int32_t>(v)); return;
  case DType::I64: case DType::Index: store<int64_t>(bytes, i, static_cast<int64_t>(v)); return;
  }
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

namespace {
/// A cursor over the Python-literal header dict of a .npy file.
struct HeaderParser {
  const std::string &text;
  size_t pos = 0;

  void skipSpace() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool string(std::string &out) {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos)
      return false;
    out = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
  }
  bool word(std::string &out) {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos])))
      ++pos;
    out = text.substr(start, pos - start);
    return !out.empty();
  }
  bool integer(int64_t &out) {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
      ++pos;
    if (start == pos || pos - start > 18)
      return false;
    out = std::stoll(text.substr(start, pos - start));
    return true;
  }
};
} // namespace

static Status npyError(const std::string &what, const std::string &problem) {
  return Status::error(what + ": " + problem);
}

/// The dtype of a little-endian descr; bf16 never appears in .npy files.
static bool dtypeFromDescr(const std::string &descr, DType &dtype, std::string &why) {
  if (descr.size() < 3) {
    why = "unsupported dtype '" + descr + "'";
    return false;
  }
  char order = descr[0];
  std::string kind = descr.substr(1);
  bool oneByte = kind == "b1" || kind == "i1" || kind == "u1";
  if (order == '>' && !oneByte) {
    why = "holds big-endian data ('" + descr + "'); save it little-endian, e.g. "
          "with array.astype(array.dtype.newbyteorder('<'))";
    return false;
  }
  if (order != '<' && order != '|' && order != '=') {
    why = "unsupported byte order in dtype '" + descr + "'";
    return false;
  }
  static const std::pair<const char *, DType> kinds[] = {
      {"f4", DType::F32}, {"f2", DType::F16}, {"f8", DType::F64}, {"b1", DType::I1},
      {"i1", DType::I8},  {"i4", DType::I32}, {"i8", DType::I64}};
  for (auto [k, d] : kinds)
    if (kind == k) {
      dtype = d;
      return true;
    }
  why = "unsupported dtype '" + descr + "' (nerve reads float32, float16, float64, "
        "bool, int8, int32, int64)";
  return false;
}

Result<HostArray> nerve::parseNpy(const std::string &data, const std::string &what) {
  static const char magic[] = "\x93NUMPY";
  if (data.size() < 10 || std::memcmp(data.data(), magic, 6) != 0)
    return npyError(what, data.size() < 6 ? "is too short to be a .npy file"
                                          : "is not a .npy file (wrong magic bytes)");
  unsigned major = static_cast<uint8_t>(data[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<uint8_t>(data[8]) | (static_cast<uint8_t>(data[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12)
      return npyError(what, "is truncated inside its header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<uint8_t>(data[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    return npyError(what, "has unsupported .npy format version " + std::to_string(major));
  }
  if (headerStart + headerLen > data.size())
    return npyError(what, "is truncated inside its header");
  std::string header = data.substr(headerStart, headerLen);

  HeaderParser p{header};
  std::string descr;
  bool fortran = false, haveDescr = false, haveOrder = false, haveShape = false;
  std::vector<int64_t> shape;
  if (!p.consume('{'))
    return npyError(what, "has a malformed header");
  while (!p.consume('}')) {
    std::string key;
    if (!p.string(key) || !p.consume(':'))
      return npyError(what, "has a malformed header");
    if (key == "descr") {
      if (!p.string(descr))
        return npyError(what, "has a structured or unsupported dtype");
      haveDescr = true;
    } else if (key == "fortran_order") {
      std::string v;
      if (!p.word(v) || (v != "True" && v != "False"))
        return npyError(what, "has a malformed header");
      fortran = v == "True";
      haveOrder = true;
    } else if (key == "shape") {
      if (!p.consume('('))
        return npyError(what, "has a malformed shape");
      while (!p.consume(')')) {
        int64_t dim;
        if (!p.integer(dim))
          return npyError(what, "has a malformed shape");
        shape.push_back(dim);
        p.consume(',');
      }
      haveShape = true;
    } else {
      return npyError(what, "has an unknown header key '" + key + "'");
    }
    p.consume(',');
  }
  if (!haveDescr || !haveOrder || !haveShape)
    return npyError(what, "has a header without descr, fortran_order or shape");
  if (fortran)
    return npyError(what, "is in Fortran order; save a C-ordered array "
                          "(numpy.ascontiguousarray) instead");
  HostArray array;
  std::string why;
  if (!dtypeFromDescr(descr, array.dtype, why))
    return npyError(what, why);
  array.shape = shape;
  // Overflow-checked element and byte counts.
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d))
      return npyError(what, "has a shape too large to address");
    count *= static_cast<uint64_t>(d);
  }
  uint64_t width = static_cast<uint64_t>(byteWidth(array.dtype));
  if (count > std::numeric_limits<uint64_t>::max() / width)
    return npyError(what, "has a shape too large to address");
  uint64_t payload = data.size() - headerStart - headerLen;
  if (payload != count * width) {
    std::ostringstream os;
    os << "holds " << payload << " data bytes but its shape (";
    for (size_t i = 0; i < shape.size(); ++i)
      os << (i ? ", " : "") << shape[i];
    os << ") of " << toString(array.dtype) << " needs " << count * width
       << (payload < count * width ? " (truncated file?)" : "");
    return npyError(what, os.str());
  }
  array.bytes.assign(data.begin() + static_cast<long>(headerStart + headerLen), data.end());
  return array;
}

Result<HostArray> nerve::readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream contents;
  contents << in.rdbuf();
  return parseNpy(contents.str(), path);
}

Status nerve::writeNpy(const std::string &path, const HostArray &array) {
  const HostArray *out = &array;
  HostArray widened;
  if (array.dtype == DType::BF16 || array.dtype == DType::Index) {
    widened = HostArray::zeros(array.dtype == DType::BF16 ? DType::F32 : DType::I64,
                               array.shape);
    for (int64_t i = 0; i < array.numElements(); ++i)
      widened.setDouble(i, array.getDouble(i));
    out = &widened;
  }
  const char *descr = "<f4";
  switch (out->dtype) {
  case DType::F32: descr = "<f4"; break;
  case DType::F16: descr = "<f2"; break;
  case DType::F64: descr = "<f8"; break;
  case DType::I1: descr = "|b1"; break;
  case DType::I8: descr = "|i1"; break;
  case DType::I32: descr = "<i4"; break;
  case DType::I64: case DType::Index: descr = "<i8"; break;
  case DType::BF16: break;
  }
  std::ostringstream header;
  header << "{'descr': '" << descr << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < out->shape.size(); ++i)
    header << out->shape[i] << (out->shape.size() == 1 || i + 1 < out->shape.size() ? "," : "")
           << (i + 1 < out->shape.size() ? " " : "");
  header << "), }";
  std::string h = header.str();
  // Pad with spaces so the data starts 64-byte aligned; end with a newline.
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h.push_back('\n');
  std::ofstream os(path, std::ios::binary);
  if (!os)
    return Status::error(path + ": cannot write: " + std::strerror(errno));
  os.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(h.size());
  char lenBytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  os.write(lenBytes, 2);
  os.write(h.data(), static_cast<long>(h.size()));
  os.write(reinterpret_cast<const char *>(out->bytes.data()),
           static_cast<long>(out->bytes.size()));
  if (!os)
    return Status::error(path + ": write failed");
  return Status();
}
