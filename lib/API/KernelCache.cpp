//===- KernelCache.cpp - the persistent on-disk kernel cache ------------===//

#include "KernelCache.h"
#include "HostObject.h"

#include "nerve/Dialect/CPUMap/Heuristics/CPUStrategy.h"

#include "nerve/Pipelines/Pipelines.h"
#include "nerve/Runtime/CudaDriver.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace nerve;

/// Bumped whenever the file layout or the key's items change, or entries
/// of an earlier build must not be used (4: format-3 host objects loaded
/// their PTX at ptxas -O1).
static constexpr uint32_t kFormatVersion = 4;
static constexpr char kMagic[8] = {'N', 'E', 'R', 'V', 'E', 'K', 'C', '\n'};
static constexpr const char *kSuffix = ".nkc";
static constexpr int64_t kDefaultMaxBytes = int64_t(1) << 30;

static const char *env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

CacheSettings nerve::resolveCacheSettings(const CompileOptions &options) {
  CacheSettings s;
  s.enabled = options.cache;
  if (const char *e = env("NERVE_CACHE")) {
    std::string v(e);
    if (v == "0" || v == "off" || v == "false" || v == "no")
      s.enabled = false;
  }
  if (!options.cacheDir.empty())
    s.dir = options.cacheDir;
  else if (const char *d = env("NERVE_CACHE_DIR"))
    s.dir = d;
  else if (const char *x = env("XDG_CACHE_HOME"))
    s.dir = std::string(x) + "/nerve";
  else if (const char *h = env("HOME"))
    s.dir = std::string(h) + "/.cache/nerve";
  else
    s.enabled = false; // nowhere to put it
  s.maxBytes = options.cacheMaxBytes;
  if (s.maxBytes <= 0)
    if (const char *m = env("NERVE_CACHE_MAX_BYTES"))
      s.maxBytes = std::strtoll(m, nullptr, 10);
  if (s.maxBytes <= 0)
    s.maxBytes = kDefaultMaxBytes;
  return s;
}

std::string nerve::canonicalSpecText(const std::string &spec) {
  std::string out;
  out.reserve(spec.size());
  bool pendingSpace = false;
  for (size_t i = 0; i < spec.size(); ++i) {
    char c = spec[i];
    if (c == '/' && i + 1 < spec.size() && spec[i + 1] == '/') {
      while (i < spec.size() && spec[i] != '\n')
        ++i;
      pendingSpace = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      pendingSpace = true;
      continue;
    }
    if (pendingSpace && !out.empty())
      out += ' ';
    pendingSpace = false;
    if (c != '"') {
      out += c;
      continue;
    }
    // A string literal is kept byte for byte.
    out += c;
    for (++i; i < spec.size(); ++i) {
      out += spec[i];
      if (spec[i] == '\\' && i + 1 < spec.size())
        out += spec[++i];
      else if (spec[i] == '"')
        break;
    }
  }
  return out;
}

static std::string sha256Hex(llvm::StringRef data) {
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(data.data()), data.size()));
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t b : digest) {
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

/// The file nerve's code lives in (libnerve.so or a program linking nerve
/// statically), by inode, size and modification time: a rebuilt nerve, even
/// at the same git revision, never meets the entries of another build. (Not
/// by path: a program started by a relative path sees a relative one.)
static const std::string &buildIdentity() {
  static const std::string identity = [] {
    Dl_info info{};
    struct stat st {};
    if (!dladdr(reinterpret_cast<void *>(&buildIdentity), &info) || !info.dli_fname ||
        stat(info.dli_fname, &st) != 0)
      return std::string("unknown");
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + " " +
           std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  }();
  return identity;
}

std::string nerve::cacheKeyText(const std::string &spec, const CompileOptions &options,
                                Target target) {
  std::ostringstream key;
  key << "nerve-kernel-cache " << kFormatVersion << "\n";
  key << "nerve " << versionString() << "\n"; // includes LLVM's version
  key << "build " << buildIdentity() << "\n";
  key << "host " << hostCPUDescription() << "\n";
  key << "target " << toString(target) << " opt " << options.optLevel << " fast-math "
      << options.fastMath << " exact-math " << options.exactMath << " time-block "
      << options.neuronTimeBlock << "\n";
  if (target == Target::CUDA) {
    key << "chip " << options.chip << " tensor-cores " << options.tensorCores << " tf32 "
        << options.tf32 << "\n";
    // The artifacts hold deferred device code instead of PTX.
    if (options.lazyKernels)
      key << "lazy-kernels\n";
    std::optional<std::string> libdevice = findLibdevice(options.libdevice);
    key << "libdevice ";
    struct stat st {};
    if (libdevice && stat(libdevice->c_str(), &st) == 0)
      key << *libdevice << " " << st.st_size << " " << st.st_mtim.tv_sec;
    else
      key << "none";
    key << "\n";
    if (Result<cuda::Device *> d = cuda::Device::get(); d)
      key << "driver " << (*d)->driverVersion() << " device " << (*d)->name() << " cc "
          << (*d)->computeCapability() << "\n";
  }
  // Lines that only options away from their defaults add: the keys of
  // every other compile stay as they were.
  if (target == Target::CPU)
    key << "cpu " << cpumap::formatCPUProfile(cpumap::hostCPUProfile()) << "\n";
  if (options.cpuThreads)
    key << "cpu-threads " << options.cpuThreads << "\n";
  if (!options.entry.empty())
    key << "entry " << options.entry << "\n";
  for (const auto &[name, size] : options.staticSizes)
    key << "static-size " << name << " " << size << "\n";
  if (options.specializeSizes)
    key << "specialize-sizes\n";
  key << "spec " << sha256Hex(canonicalSpecText(spec)) << "\n";
  return key.str();
}

std::string nerve::cacheKeyHash(const std::string &keyText) { return sha256Hex(keyText); }

std::string DiskCache::entryPath(const std::string &keyText) const {
  return settings_.dir + "/" + cacheKeyHash(keyText) + kSuffix;
}

//===----------------------------------------------------------------------===//
// Serialisation
//===----------------------------------------------------------------------===//

namespace {
class Writer {
public:
  void u8(uint8_t v) { out.push_back(static_cast<char>(v)); }
  void u64(uint64_t v) { out.append(reinterpret_cast<const char *>(&v), sizeof(v)); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void str(const std::string &s) {
    u64(s.size());
    out += s;
  }
  void strs(const std::vector<std::string> &v) {
    u64(v.size());
    for (const std::string &s : v)
      str(s);
  }
  void i64s(const std::vector<int64_t> &v) {
    u64(v.size());
    for (int64_t x : v)
      i64(x);
  }
  std::string out;
};

/// Reads what Writer wrote; any overrun makes the whole read fail.
class Reader {
public:
  Reader(const char *data, size_t size) : p(data), end(data + size) {}
  bool ok() const { return good; }
  bool atEnd() const { return p == end; }
  uint8_t u8() {
    if (!need(1))
      return 0;
    return static_cast<uint8_t>(*p++);
  }
  uint64_t u64() {
    uint64_t v = 0;
    if (!need(sizeof(v)))
      return 0;
    std::memcpy(&v, p, sizeof(v));
    p += sizeof(v);
    return v;
  }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  std::string str() {
    uint64_t n = u64();
    if (!need(n))
      return {};
    std::string s(p, n);
    p += n;
    return s;
  }
  /// A count of items each at least `minBytes` long, checked against what
  /// is left so a corrupted count cannot make us allocate wildly.
  uint64_t count(size_t minBytes) {
    uint64_t n = u64();
    if (good && n > static_cast<uint64_t>(end - p) / std::max<size_t>(minBytes, 1))
      good = false;
    return good ? n : 0;
  }
  std::vector<std::string> strs() {
    std::vector<std::string> v(count(8));
    for (std::string &s : v)
      s = str();
    return v;
  }
  std::vector<int64_t> i64s() {
    std::vector<int64_t> v(count(8));
    for (int64_t &x : v)
      x = i64();
    return v;
  }

private:
  bool need(uint64_t n) {
    if (!good || n > static_cast<uint64_t>(end - p))
      good = false;
    return good;
  }
  const char *p;
  const char *end;
  bool good = true;
};
} // namespace

static std::string serialize(const std::string &keyText, const CompiledArtifacts &a) {
  Writer w;
  w.str(keyText);
  w.u8(static_cast<uint8_t>(a.target));
  w.u64(a.entries.size());
  for (const EntryInfo &e : a.entries) {
    w.str(e.name);
    w.strs(e.variableDims);
    w.u64(e.args.size());
    for (const ArgInfo &arg : e.args) {
      w.str(arg.name);
      w.u8(arg.isOutput);
      w.u8(arg.isTensor);
      w.u8(static_cast<uint8_t>(arg.dtype));
      w.strs(arg.dims);
      w.i64s(arg.sizes);
      w.i64s(arg.strides);
      w.i64(arg.offset);
    }
  }
  w.str(a.hostObject);
  w.u64(a.deviceCode.size());
  for (const auto &[binary, ptx] : a.deviceCode) {
    w.str(binary);
    w.str(ptx);
  }
  return std::move(w.out);
}

static std::optional<CompiledArtifacts> deserialize(llvm::StringRef payload,
                                                    const std::string &keyText) {
  Reader r(payload.data(), payload.size());
  if (r.str() != keyText || !r.ok())
    return std::nullopt;
  CompiledArtifacts a;
  uint8_t target = r.u8();
  if (target > static_cast<uint8_t>(Target::CUDA))
    return std::nullopt;
  a.target = static_cast<Target>(target);
  a.entries.resize(r.count(24));
  for (EntryInfo &e : a.entries) {
    e.name = r.str();
    e.variableDims = r.strs();
    e.args.resize(r.count(43));
    for (ArgInfo &arg : e.args) {
      arg.name = r.str();
      arg.isOutput = r.u8();
      arg.isTensor = r.u8();
      uint8_t dtype = r.u8();
      if (dtype > static_cast<uint8_t>(DType::Index))
        return std::nullopt;
      arg.dtype = static_cast<DType>(dtype);
      arg.dims = r.strs();
      arg.sizes = r.i64s();
      arg.strides = r.i64s();
      arg.offset = r.i64();
    }
  }
  a.hostObject = r.str();
  a.deviceCode.resize(r.count(16));
  for (auto &[binary, ptx] : a.deviceCode) {
    binary = r.str();
    ptx = r.str();
  }
  if (!r.ok() || !r.atEnd() || a.entries.empty() || a.hostObject.empty())
    return std::nullopt;
  return a;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

// Layout: magic (8) | format version (8) | payload size (8) | xxh3 of the
// payload (8) | payload.
static constexpr size_t kHeaderBytes = 32;

static bool readWhole(const std::string &path, std::string &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat st {};
  bool ok = fstat(fd, &st) == 0 && st.st_size >= 0;
  if (ok) {
    out.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (ok && done < out.size()) {
      ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      if (n <= 0)
        ok = false;
      else
        done += static_cast<size_t>(n);
    }
  }
  ::close(fd);
  return ok;
}

std::optional<CompiledArtifacts> DiskCache::load(const std::string &keyText,
                                                 bool *discarded) const {
  *discarded = false;
  std::string path = entryPath(keyText);
  std::string file;
  if (!readWhole(path, file))
    return std::nullopt; // a miss
  auto discard = [&]() -> std::optional<CompiledArtifacts> {
    *discarded = true;
    ::unlink(path.c_str());
    return std::nullopt;
  };
  if (file.size() < kHeaderBytes || std::memcmp(file.data(), kMagic, sizeof(kMagic)) != 0)
    return discard();
  uint64_t version, size, checksum;
  std::memcpy(&version, file.data() + 8, 8);
  std::memcpy(&size, file.data() + 16, 8);
  std::memcpy(&checksum, file.data() + 24, 8);
  if (version != kFormatVersion || size != file.size() - kHeaderBytes)
    return discard();
  llvm::ArrayRef<uint8_t> payloadBytes(
      reinterpret_cast<const uint8_t *>(file.data() + kHeaderBytes), size);
  if (llvm::xxh3_64bits(payloadBytes) != checksum)
    return discard();
  std::optional<CompiledArtifacts> artifacts =
      deserialize(llvm::StringRef(file).drop_front(kHeaderBytes), keyText);
  if (!artifacts)
    return discard();
  // Most recently used: eviction goes by modification time.
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
  return artifacts;
}

Status DiskCache::store(const std::string &keyText, const CompiledArtifacts &artifacts) const {
  if (std::error_code ec = llvm::sys::fs::create_directories(settings_.dir))
    return Status::error("cannot create the kernel cache " + settings_.dir + ": " +
                         ec.message());
  std::string payload = serialize(keyText, artifacts);
  std::string file(kHeaderBytes, '\0');
  std::memcpy(file.data(), kMagic, sizeof(kMagic));
  uint64_t version = kFormatVersion, size = payload.size();
  uint64_t checksum = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(payload.data()), payload.size()));
  std::memcpy(file.data() + 8, &version, 8);
  std::memcpy(file.data() + 16, &size, 8);
  std::memcpy(file.data() + 24, &checksum, 8);
  file += payload;

  std::string path = entryPath(keyText);
  int fd = -1;
  llvm::SmallString<256> temporary;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, temporary))
    return Status::error("cannot write to the kernel cache " + settings_.dir + ": " +
                         ec.message());
  size_t done = 0;
  bool ok = true;
  while (ok && done < file.size()) {
    ssize_t n = ::write(fd, file.data() + done, file.size() - done);
    if (n <= 0)
      ok = false;
    else
      done += static_cast<size_t>(n);
  }
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(temporary.c_str(), path.c_str()) != 0) {
    ::unlink(temporary.c_str());
    return Status::error("writing the kernel cache entry " + path + " failed: " +
                         std::strerror(errno));
  }
  evict();
  return Status();
}

Result<int64_t> DiskCache::clear() const {
  std::error_code ec;
  int64_t removed = 0;
  for (llvm::sys::fs::directory_iterator it(settings_.dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    const std::string &path = it->path();
    if (!llvm::StringRef(path).ends_with(kSuffix))
      continue;
    if (::unlink(path.c_str()) == 0)
      ++removed;
    else if (errno != ENOENT) // another process may have evicted it
      return Status::error("cannot delete the cache entry " + path + ": " +
                           std::strerror(errno));
  }
  if (ec && ec != std::errc::no_such_file_or_directory)
    return Status::error("cannot list the cache directory " + settings_.dir + ": " +
                         ec.message());
  return removed;
}

void DiskCache::evict() const {
  struct Entry {
    std::string path;
    int64_t bytes;
    struct timespec modified;
  };
  std::vector<Entry> entries;
  int64_t total = 0;
  std::error_code ec;
  time_t now = ::time(nullptr);
  for (llvm::sys::fs::directory_iterator it(settings_.dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    const std::string &path = it->path();
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    llvm::StringRef name = llvm::sys::path::filename(path);
    // Temporary files a crashed writer left behind.
    if (name.contains(".tmp-")) {
      if (now - st.st_mtim.tv_sec > 3600)
        ::unlink(path.c_str());
      continue;
    }
    if (!name.ends_with(kSuffix))
      continue;
    entries.push_back({path, static_cast<int64_t>(st.st_size), st.st_mtim});
    total += st.st_size;
  }
  if (total <= settings_.maxBytes)
    return;
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return a.modified.tv_sec != b.modified.tv_sec ? a.modified.tv_sec < b.modified.tv_sec
                                                  : a.modified.tv_nsec < b.modified.tv_nsec;
  });
  for (const Entry &e : entries) {
    if (total <= settings_.maxBytes)
      break;
    if (::unlink(e.path.c_str()) == 0)
      total -= e.bytes;
  }
}
