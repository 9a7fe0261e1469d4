//===- ArgBuffer.cpp - host buffers laid out like kernel arguments ------===//

#include "nerve/Runtime/ArgBuffer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

using namespace nerve;

int64_t ArgBuffer::numElements() const {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

uint64_t nerve::hostMemoryBytes() {
  if (const char *limit = std::getenv("NERVE_HOST_MEMORY_BYTES"))
    if (uint64_t v = std::strtoull(limit, nullptr, 10))
      return v;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0)
    return uint64_t(1) << 40;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

static std::string tooLarge(const ArgInfo &arg, const std::string &what) {
  return "argument %" + arg.name + " " + what + ", more than this machine's memory (" +
         std::to_string(hostMemoryBytes()) + " bytes)";
}

Result<std::vector<int64_t>> nerve::sizesFor(const ArgInfo &arg, const DimBinding &binding) {
  std::vector<int64_t> sizes;
  for (size_t d = 0; d < arg.dims.size(); ++d) {
    if (arg.sizes[d] >= 0) {
      sizes.push_back(arg.sizes[d]);
      continue;
    }
    auto it = binding.find(arg.dims[d]);
    if (it == binding.end())
      return Status::error("dimension `" + arg.dims[d] + "` of argument %" + arg.name +
                           " has no size: no input binds it (pass --dim " +
                           arg.dims[d] + "=N)");
    sizes.push_back(it->second);
  }
  // Refused here, before anything is allocated for it.
  uint64_t bytes = static_cast<uint64_t>(byteWidth(arg.dtype));
  bool overflow = false;
  for (int64_t size : sizes)
    overflow |= size < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(size), &bytes);
  if (overflow)
    return Status::error("argument %" + arg.name +
                         " has more bytes than 64-bit sizes can count");
  if (bytes > hostMemoryBytes())
    return Status::error(tooLarge(arg, "needs " + std::to_string(bytes) + " bytes"));
  return sizes;
}

static std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

Status nerve::bindShape(const ArgInfo &arg, const std::vector<int64_t> &shape,
                        DimBinding &binding, const std::vector<std::string> &variable) {
  auto isVariable = [&](const std::string &dim) {
    return std::find(variable.begin(), variable.end(), dim) != variable.end();
  };
  std::vector<int64_t> expected;
  for (size_t d = 0; d < arg.dims.size(); ++d) {
    auto it = isVariable(arg.dims[d]) ? binding.end() : binding.find(arg.dims[d]);
    expected.push_back(arg.sizes[d] >= 0 ? arg.sizes[d]
                                         : it != binding.end() ? it->second : -1);
  }
  auto describeExpected = [&] {
    std::string s = "(";
    for (size_t d = 0; d < arg.dims.size(); ++d)
      s += (d ? ", " : "") + arg.dims[d] + "=" +
           (expected[d] >= 0 ? std::to_string(expected[d]) : std::string("?"));
    return s + ")";
  };
  if (shape.size() != arg.dims.size())
    return Status::error("argument %" + arg.name + " has shape " + describeExpected() +
                         " but the array has shape " + shapeText(shape));
  for (size_t d = 0; d < shape.size(); ++d)
    if (expected[d] >= 0 && expected[d] != shape[d])
      return Status::error("argument %" + arg.name + " has shape " + describeExpected() +
                           " but the array has shape " + shapeText(shape));
  for (size_t d = 0; d < shape.size(); ++d)
    if (!isVariable(arg.dims[d]))
      binding[arg.dims[d]] = shape[d];
  return Status();
}

Result<ArgBuffer> nerve::makeArgBuffer(const ArgInfo &arg, const std::vector<int64_t> &sizes) {
  ArgBuffer buffer;
  buffer.dtype = arg.dtype;
  buffer.sizes = sizes;
  size_t rank = sizes.size();
  // Strides the layout fixes are kept; the others (all of them for a
  // row-major spec) pack the remaining dimensions densely outside those, the
  // last fastest: `strides = [1, ?]` over (r, c) is column-major.
  buffer.strides.assign(rank, -1);
  int64_t extent = 1, reach = 0;
  bool tooFar = false;
  if (arg.strides.size() == rank)
    for (size_t d = 0; d < rank; ++d)
      if (arg.strides[d] >= 0) {
        buffer.strides[d] = arg.strides[d];
        tooFar |= __builtin_mul_overflow(arg.strides[d], std::max<int64_t>(sizes[d], 1), &reach);
        extent = std::max(extent, reach);
      }
  for (size_t d = rank; d-- > 0;)
    if (buffer.strides[d] < 0) {
      buffer.strides[d] = extent;
      tooFar |= __builtin_mul_overflow(extent, std::max<int64_t>(sizes[d], 1), &extent);
    }
  if (tooFar)
    return Status::error("argument %" + arg.name + " is too large to address");
  buffer.offset = arg.offset > 0 ? arg.offset : 0;
  // Span = offset + the farthest element + 1, overflow-checked.
  uint64_t span = static_cast<uint64_t>(buffer.offset);
  bool empty = false, overflow = false;
  for (size_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0) {
      empty = true;
      continue;
    }
    uint64_t reach;
    overflow |= __builtin_mul_overflow(static_cast<uint64_t>(sizes[d] - 1),
                                       static_cast<uint64_t>(buffer.strides[d]), &reach);
    overflow |= __builtin_add_overflow(span, reach, &span);
  }
  if (overflow)
    return Status::error("argument %" + arg.name + " is too large to address");
  if (!empty)
    span += 1;
  uint64_t width = static_cast<uint64_t>(byteWidth(arg.dtype));
  if (span > hostMemoryBytes() / width)
    return Status::error(tooLarge(arg, "needs " + std::to_string(span) + " elements of " +
                                           std::to_string(width) + " bytes"));
  buffer.bytes.assign(span * width, 0xA5);
  if (arg.dtype == DType::F32 || arg.dtype == DType::F64 || arg.dtype == DType::F16 ||
      arg.dtype == DType::BF16) {
    HostArray poison;
    poison.dtype = arg.dtype;
    poison.shape = {static_cast<int64_t>(span)};
    poison.bytes.swap(buffer.bytes);
    for (uint64_t i = 0; i < span; ++i)
      poison.setDouble(static_cast<int64_t>(i), std::numeric_limits<double>::quiet_NaN());
    buffer.bytes.swap(poison.bytes);
  }
  return buffer;
}

/// Calls `fn(flat, linear)` for every element: its C-order index among the
/// logical elements and its position in the strided buffer.
template <typename Fn>
static void forEachElement(const ArgBuffer &b, Fn fn) {
  size_t rank = b.sizes.size();
  int64_t n = b.numElements();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t linear = b.offset;
    for (size_t d = 0; d < rank; ++d)
      linear += idx[d] * b.strides[d];
    fn(flat, linear);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < b.sizes[d])
        break;
      idx[d] = 0;
    }
  }
}

Status nerve::scatter(const HostArray &array, ArgBuffer &buffer) {
  if (array.dtype != buffer.dtype)
    return Status::error(std::string("array holds ") + toString(array.dtype) +
                         " but the argument holds " + toString(buffer.dtype));
  int64_t width = byteWidth(buffer.dtype);
  forEachElement(buffer, [&](int64_t flat, int64_t linear) {
    std::memcpy(buffer.bytes.data() + linear * width, array.bytes.data() + flat * width,
                static_cast<size_t>(width));
  });
  return Status();
}

HostArray nerve::gather(const ArgBuffer &buffer) {
  HostArray array = HostArray::zeros(buffer.dtype, buffer.sizes);
  int64_t width = byteWidth(buffer.dtype);
  forEachElement(buffer, [&](int64_t flat, int64_t linear) {
    std::memcpy(array.bytes.data() + flat * width, buffer.bytes.data() + linear * width,
                static_cast<size_t>(width));
  });
  return array;
}

HostArray nerve::randomArray(DType dtype, const std::vector<int64_t> &shape,
                             std::mt19937_64 &rng) {
  HostArray array = HostArray::zeros(dtype, shape);
  int64_t n = array.numElements();
  bool isInt = dtype == DType::I8 || dtype == DType::I32 || dtype == DType::I64 ||
               dtype == DType::Index;
  // Fixed-size chunks, each drawn by its own generator seeded from one draw
  // of `rng` and the chunk's index: the values depend on the seed alone, not
  // on how many threads fill them (a benchmark's 1024 x 65536 inputs took
  // seconds on one thread).
  constexpr int64_t kChunk = int64_t(1) << 16;
  uint64_t base = rng();
  int64_t chunks = (n + kChunk - 1) / kChunk;
  auto fill = [&](int64_t chunk) {
    std::seed_seq seed{uint32_t(base), uint32_t(base >> 32), uint32_t(chunk),
                       uint32_t(uint64_t(chunk) >> 32)};
    std::mt19937_64 local(seed);
    // Box-Muller on 53-bit uniforms: libstdc++'s normal_distribution spends
    // most of its time in a long-double log per uniform it draws.
    auto uniform = [&] { return double(local() >> 11) * 0x1p-53; };
    double spare = 0;
    bool haveSpare = false;
    auto normal = [&] {
      if (haveSpare) {
        haveSpare = false;
        return spare;
      }
      double radius = std::sqrt(-2.0 * std::log(1.0 - uniform())); // 1 - u in (0, 1]
      double angle = 2.0 * M_PI * uniform();
      spare = radius * std::sin(angle);
      haveSpare = true;
      return radius * std::cos(angle);
    };
    for (int64_t i = chunk * kChunk, end = std::min(n, i + kChunk); i < end; ++i) {
      double v = normal();
      if (dtype == DType::I1)
        v = v > 0;
      else if (isInt)
        v = std::round(v * 8);
      array.setDouble(i, v);
    }
  };
  // The calling thread works too; small arrays (a scalar) start no thread.
  int64_t threads =
      std::min<int64_t>({chunks, std::max(1u, std::thread::hardware_concurrency()), 32});
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t c = next++; c < chunks; c = next++)
      fill(c);
  };
  std::vector<std::thread> helpers;
  for (int64_t t = 1; t < threads; ++t)
    helpers.emplace_back(work);
  work();
  for (std::thread &h : helpers)
    h.join();
  return array;
}
