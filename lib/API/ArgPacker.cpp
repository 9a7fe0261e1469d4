//===- ArgPacker.cpp - kernel arguments to memref descriptors -----------===//
//
// A lowered kernel takes, per tensor, a pointer to a memref descriptor
// {allocated, aligned, offset, sizes[rank], strides[rank]} and, per scalar,
// the value. Before building them, every argument is checked against the
// kernel's signature, in the kernel's own names.
//
//===----------------------------------------------------------------------===//

#include "ModuleImpl.h"

#include "nerve/Runtime/HostArray.h"

#include <array>

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>

using namespace nerve;

static std::string argName(const ArgInfo &info) { return "argument %" + info.name; }

static std::string joinDims(const ArgInfo &info) {
  std::string s;
  for (size_t i = 0; i < info.dims.size(); ++i)
    s += (i ? ", " : "") + info.dims[i];
  return s;
}

/// The (base name, fold factor) of a dimension spelled "i" or "i/64".
static std::pair<std::string, int64_t> splitDim(const std::string &dim) {
  size_t slash = dim.find('/');
  if (slash == std::string::npos)
    return {dim, 1};
  return {dim.substr(0, slash), std::stoll(dim.substr(slash + 1))};
}

Result<std::vector<std::pair<std::string, int64_t>>>
nerve::bindDimensions(const EntryInfo &entry, const std::vector<Arg> &args) {
  struct Seen {
    int64_t factor, size;
    const ArgInfo *arg;
  };
  std::map<std::string, Seen> seen;
  std::vector<std::pair<std::string, int64_t>> bound;
  for (size_t a = 0; a < entry.args.size() && a < args.size(); ++a) {
    const ArgInfo &info = entry.args[a];
    if (!info.isTensor || args[a].sizes.size() != info.dims.size())
      continue;
    for (size_t d = 0; d < info.dims.size(); ++d) {
      int64_t size = args[a].sizes[d];
      auto [base, factor] = splitDim(info.dims[d]);
      if (std::find(entry.variableDims.begin(), entry.variableDims.end(), base) !=
          entry.variableDims.end())
        continue;
      auto [it, inserted] = seen.try_emplace(base, Seen{factor, size, &info});
      if (inserted) {
        bound.push_back({info.dims[d], size});
        continue;
      }
      const Seen &first = it->second;
      int64_t fineFactor = std::min(first.factor, factor);
      int64_t coarseFactor = std::max(first.factor, factor);
      int64_t fineSize = first.factor <= factor ? first.size : size;
      int64_t coarseSize = first.factor <= factor ? size : first.size;
      int64_t ratio = coarseFactor / fineFactor;
      bool agree = ratio == 1 ? fineSize == coarseSize
                              : fineSize % ratio == 0 && fineSize / ratio == coarseSize;
      if (!agree) {
        std::ostringstream os;
        os << "dimension `" << info.dims[d] << "` has size " << size << " in "
           << argName(info) << " but " << argName(*first.arg) << " makes it ";
        if (first.factor == factor)
          os << first.size;
        else
          os << "inconsistent (" << base << "/" << first.factor << " = " << first.size
             << ")";
        return Status::error(os.str());
      }
      if (first.factor != factor)
        bound.push_back({info.dims[d], size});
    }
  }
  return bound;
}

/// A scalar argument's bytes, converted to the entry's type.
static std::array<uint8_t, 8> scalarBytes(const ArgInfo &info, const Arg &arg) {
  std::array<uint8_t, 8> bytes{};
  double f = arg.kind == Arg::Kind::Float ? arg.floatValue : static_cast<double>(arg.intValue);
  int64_t n = arg.kind == Arg::Kind::Int ? arg.intValue : static_cast<int64_t>(arg.floatValue);
  HostArray tmp = HostArray::zeros(info.dtype, {});
  if (info.dtype == DType::I32 || info.dtype == DType::I64 || info.dtype == DType::Index ||
      info.dtype == DType::I8 || info.dtype == DType::I1)
    tmp.setDouble(0, static_cast<double>(n));
  else
    tmp.setDouble(0, f);
  std::memcpy(bytes.data(), tmp.data(), tmp.bytes.size());
  return bytes;
}

/// A tensor argument's strides: as given, else the spec's layout, else
/// row-major.
static std::vector<int64_t> stridesOf(const ArgInfo &info, const Arg &arg) {
  std::vector<int64_t> strides = arg.strides;
  if (!strides.empty())
    return strides;
  if (!info.strides.empty())
    return info.strides;
  size_t rank = info.dims.size();
  strides.assign(rank, 1);
  for (size_t d = rank; d-- > 1;)
    strides[d - 1] = strides[d] * std::max<int64_t>(arg.sizes[d], 1);
  return strides;
}

/// Whether a tensor argument's sizes and strides fit the entry's
/// argument: static sizes and the spec's layout.
static Status checkTensor(const ArgInfo &info, const Arg &arg,
                          const std::vector<int64_t> &strides) {
  size_t rank = info.dims.size();
  if (strides.size() != rank)
    return Status::error(argName(info) + " was given " + std::to_string(strides.size()) +
                         " strides for " + std::to_string(rank) + " dimensions");
  for (size_t d = 0; d < rank; ++d) {
    if (arg.sizes[d] < 0)
      return Status::error(argName(info) + ": dimension `" + info.dims[d] +
                           "` has negative size " + std::to_string(arg.sizes[d]));
    if (info.sizes[d] >= 0 && info.sizes[d] != arg.sizes[d])
      return Status::error(argName(info) + ": dimension `" + info.dims[d] + "` is " +
                           std::to_string(info.sizes[d]) + " in the spec but " +
                           std::to_string(arg.sizes[d]) + " was given");
    int64_t expected = -1;
    if (!info.strides.empty())
      expected = info.strides[d];
    else if (!arg.strides.empty()) {
      // A row-major argument must really be row-major.
      int64_t rowMajor = 1;
      for (size_t e = d + 1; e < rank; ++e)
        rowMajor *= std::max<int64_t>(arg.sizes[e], 1);
      expected = rowMajor;
    }
    if (expected >= 0 && strides[d] != expected && arg.sizes[d] > 1)
      return Status::error(argName(info) + ": dimension `" + info.dims[d] + "` has stride " +
                           std::to_string(expected) + " in the spec's layout but " +
                           std::to_string(strides[d]) + " was given");
  }
  return Status();
}

/// The memref descriptor of a tensor argument: pointers, offset, sizes,
/// strides.
static std::vector<int64_t> descriptorOf(const ArgInfo &info, const Arg &arg,
                                         const std::vector<int64_t> &strides) {
  size_t rank = info.dims.size();
  std::vector<int64_t> desc(3 + 2 * rank);
  auto ptr = reinterpret_cast<int64_t>(arg.data);
  desc[0] = ptr;
  desc[1] = ptr;
  desc[2] = info.offset >= 0 ? info.offset : 0;
  for (size_t d = 0; d < rank; ++d) {
    desc[3 + d] = arg.sizes[d];
    desc[3 + rank + d] = strides[d];
  }
  return desc;
}

Status ArgPacker::pack(const EntryInfo &entry, const std::vector<Arg> &args, Data data) {
  if (args.size() != entry.args.size()) {
    std::ostringstream os;
    os << "kernel @" << entry.name << " takes " << entry.args.size()
       << " arguments but " << args.size() << " were given";
    return Status::error(os.str());
  }
  descriptors_.clear();
  descriptorPtrs_.clear();
  scalars_.clear();
  pointers_.clear();
  descriptors_.reserve(args.size());
  scalars_.reserve(args.size());

  for (size_t i = 0; i < args.size(); ++i) {
    const ArgInfo &info = entry.args[i];
    const Arg &arg = args[i];
    if (!info.isTensor) {
      if (arg.kind == Arg::Kind::Tensor)
        return Status::error(argName(info) + " is a " + toString(info.dtype) +
                             " scalar but a tensor was given");
      scalars_.push_back(scalarBytes(info, arg));
      continue;
    }
    if (arg.kind != Arg::Kind::Tensor)
      return Status::error(argName(info) + " is a tensor over (" + joinDims(info) +
                           ") but a scalar was given");
    if (data == Data::Now && arg.data == nullptr && !info.dims.empty())
      return Status::error(argName(info) + " was given a null pointer");
    if (arg.sizes.size() != info.dims.size()) {
      std::ostringstream os;
      os << argName(info) << " has " << info.dims.size() << " dimensions (" << joinDims(info)
         << ") but " << arg.sizes.size() << " sizes were given";
      return Status::error(os.str());
    }
    std::vector<int64_t> strides = stridesOf(info, arg);
    if (Status s = checkTensor(info, arg, strides); !s)
      return s;
    descriptors_.push_back(descriptorOf(info, arg, strides));
  }
  Result<std::vector<std::pair<std::string, int64_t>>> bound = bindDimensions(entry, args);
  if (!bound)
    return bound.status();

  // Pointers last: the vectors above no longer move.
  size_t t = 0, s = 0;
  pointers_.clear();
  descriptorPtrs_.assign(descriptors_.size(), nullptr);
  for (size_t i = 0; i < args.size(); ++i) {
    if (entry.args[i].isTensor) {
      descriptorPtrs_[t] = descriptors_[t].data();
      pointers_.push_back(&descriptorPtrs_[t]);
      ++t;
    } else {
      pointers_.push_back(scalars_[s++].data());
    }
  }
  return Status();
}
