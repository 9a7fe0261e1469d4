//===- CacheTest.cpp - the in-process and on-disk kernel caches ----------===//

#include "../../lib/API/DeferredKernels.h"
#include "../../lib/API/KernelCache.h"
#include "nerve/Runtime/GpuRuntime.h"
#include "ScratchDir.h"
#include "nerve/nerve.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <fcntl.h>
#include <functional>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace nerve;
namespace fs = std::filesystem;

namespace {

const char *kSpec = R"(
!v = !tdim.tensor<[n: ?], f32>
tdim.kernel @axpb(%x: !v, %a: f32) -> (%y: !v) {
  tdim.map ins(%x : !v) outs(%y : !v) {
  ^bb0(%e: f32):
    %r = arith.mulf %e, %a : f32
    %one = arith.constant 1.0 : f32
    %s = arith.addf %r, %one : f32
    tdim.yield %s : f32
  }
  tdim.return
}
)";

/// A fresh cache directory per test, removed afterwards.
class Cache : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(scratch.path.empty());
    dir = scratch.path.string();
    clearMemoryCache();
  }

  CompileOptions options() const {
    CompileOptions o;
    o.target = Target::CPU;
    o.cacheDir = dir;
    return o;
  }

  std::vector<fs::path> entries() const {
    std::vector<fs::path> files;
    for (const auto &e : fs::directory_iterator(dir))
      files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
  }

  /// Runs axpb on [1, 2, 3] with a = 2 and checks [3, 5, 7].
  static void expectWorks(const std::shared_ptr<Module> &m) {
    std::vector<float> x = {1, 2, 3}, y(3, 0);
    Status s = m->run("axpb", {Arg::tensor(x.data(), {3}), Arg::scalar(2.0),
                               Arg::tensor(y.data(), {3})});
    ASSERT_TRUE(s) << s.message();
    EXPECT_EQ(y, (std::vector<float>{3, 5, 7}));
  }

  ScratchDir scratch{"nerve-cache-test"};
  std::string dir;
};

CacheStats delta(const CacheStats &before) {
  CacheStats now = cacheStats(), d;
  d.memoryHits = now.memoryHits - before.memoryHits;
  d.diskHits = now.diskHits - before.diskHits;
  d.misses = now.misses - before.misses;
  d.stores = now.stores - before.stores;
  d.discarded = now.discarded - before.discarded;
  return d;
}

TEST_F(Cache, MissThenDiskHitThenMemoryHit) {
  CacheStats before = cacheStats();
  auto cold = compile(kSpec, options());
  ASSERT_TRUE(cold) << cold.message();
  expectWorks(*cold);
  EXPECT_EQ(delta(before).misses, 1u);
  EXPECT_EQ(delta(before).stores, 1u);
  ASSERT_EQ(entries().size(), 1u);
  EXPECT_EQ(entries()[0].extension(), ".nkc");

  // The same spec again in this process: the same module, for free.
  auto again = compile(kSpec, options());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->get(), cold->get());
  EXPECT_EQ(delta(before).memoryHits, 1u);

  // As a new process would: from the disk.
  clearMemoryCache();
  auto warm = compile(kSpec, options());
  ASSERT_TRUE(warm) << warm.message();
  EXPECT_NE(warm->get(), cold->get());
  EXPECT_EQ(delta(before).diskHits, 1u);
  ASSERT_FALSE((*warm)->compileTimes().empty());
  EXPECT_EQ((*warm)->compileTimes().front().first, "read disk cache");
  for (const auto &[stage, ms] : (*warm)->compileTimes())
    EXPECT_EQ(stage.find("pars"), std::string::npos) << "a hit must not parse: " << stage;
  expectWorks(*warm);
  // Signatures survive the round trip.
  ASSERT_EQ((*warm)->entries().size(), 1u);
  const EntryInfo &e = (*warm)->entries()[0];
  EXPECT_EQ(e.name, "axpb");
  ASSERT_EQ(e.args.size(), 3u);
  EXPECT_EQ(e.args[0].dims, (std::vector<std::string>{"n"}));
  EXPECT_EQ(e.args[1].isTensor, false);
  EXPECT_EQ(e.args[2].isOutput, true);
  EXPECT_FALSE((*warm)->llvmIR().empty()); // lowered again on request
}

TEST_F(Cache, CommentsAndWhitespaceDoNotChangeTheKey) {
  ASSERT_TRUE(compile(kSpec, options()));
  clearMemoryCache();
  std::string edited = std::string("// a comment\n") + kSpec + "\n\n   // trailing\n";
  CompileOptions o = options();
  o.sourceName = "another-name.mlir";
  CacheStats before = cacheStats();
  ASSERT_TRUE(compile(edited, o));
  EXPECT_EQ(delta(before).diskHits, 1u);
  EXPECT_EQ(entries().size(), 1u);
}

TEST_F(Cache, EveryOptionThatChangesCodeChangesTheKey) {
  ASSERT_TRUE(compile(kSpec, options()));
  std::vector<CompileOptions> variants(5, options());
  variants[0].optLevel = 1;
  variants[1].fastMath = true;
  variants[2].neuronTimeBlock = 4;
  variants[3].exactMath = true;
  std::string changed = kSpec;
  changed.replace(changed.find("1.0 : f32"), 9, "2.0 : f32");
  size_t expected = 1;
  for (size_t i = 0; i < variants.size(); ++i) {
    CacheStats before = cacheStats();
    ASSERT_TRUE(compile(i == 4 ? changed : std::string(kSpec), variants[i]));
    EXPECT_EQ(delta(before).misses, 1u) << "variant " << i;
    EXPECT_EQ(entries().size(), ++expected) << "variant " << i;
  }
  // What the CPU target ignores still separates CUDA keys.
  CompileOptions a = options(), b = options();
  b.chip = "sm_80";
  EXPECT_EQ(cacheKeyText(kSpec, a, Target::CPU), cacheKeyText(kSpec, b, Target::CPU));
  EXPECT_NE(cacheKeyText(kSpec, a, Target::CUDA), cacheKeyText(kSpec, b, Target::CUDA));
  EXPECT_NE(cacheKeyText(kSpec, a, Target::CUDA), cacheKeyText(kSpec, a, Target::CPU));
  CompileOptions loops = options();
  loops.tensorCores = false;
  EXPECT_EQ(cacheKeyText(kSpec, a, Target::CPU), cacheKeyText(kSpec, loops, Target::CPU));
  EXPECT_NE(cacheKeyText(kSpec, a, Target::CUDA), cacheKeyText(kSpec, loops, Target::CUDA));
  // Compiling one kernel, for static sizes or at launches, is its own key;
  // the options' defaults add nothing to it.
  CompileOptions entry = options(), sized = options(), special = options();
  entry.entry = "axpb";
  sized.staticSizes = {{"n", 3}};
  special.specializeSizes = true;
  std::string plain = cacheKeyText(kSpec, a, Target::CPU);
  for (const CompileOptions &o : {entry, sized, special})
    EXPECT_NE(cacheKeyText(kSpec, o, Target::CPU), plain);
  EXPECT_EQ(plain.find("entry"), std::string::npos) << plain;
  std::string key = cacheKeyText(kSpec, a, Target::CPU);
  EXPECT_NE(key.find("nerve " + versionString()), std::string::npos) << key;
}

TEST_F(Cache, CanonicalTextKeepsStringsAndDropsComments) {
  EXPECT_EQ(canonicalSpecText("a  b\n\t// c\n  d"), "a b d");
  EXPECT_EQ(canonicalSpecText("x = \"two  spaces // kept\"  // gone"),
            "x = \"two  spaces // kept\"");
  EXPECT_EQ(canonicalSpecText("\"esc \\\" // kept\" y"), "\"esc \\\" // kept\" y");
}

/// Damages the one entry in `dir` with `damage`, then checks that the
/// next compile notices, deletes it, recompiles and writes a good one.
void expectRecovery(Cache &test, const std::vector<fs::path> &files,
                    const std::function<void(const fs::path &)> &damage,
                    const std::function<std::shared_ptr<Module>()> &compileAgain) {
  ASSERT_EQ(files.size(), 1u);
  damage(files[0]);
  clearMemoryCache();
  CacheStats before = cacheStats();
  std::shared_ptr<Module> m = compileAgain();
  ASSERT_TRUE(m);
  EXPECT_EQ(delta(before).discarded, 1u);
  EXPECT_EQ(delta(before).misses, 1u);
  EXPECT_EQ(delta(before).stores, 1u);
  // The rewritten entry is good.
  clearMemoryCache();
  before = cacheStats();
  ASSERT_TRUE(compileAgain());
  EXPECT_EQ(delta(before).diskHits, 1u);
}

TEST_F(Cache, CorruptedTruncatedOrForeignEntriesAreRebuilt) {
  auto again = [&]() -> std::shared_ptr<Module> {
    auto m = compile(kSpec, options());
    EXPECT_TRUE(m) << m.message();
    if (m)
      expectWorks(*m);
    return m ? *m : nullptr;
  };
  ASSERT_TRUE(again());
  // A flipped byte in the middle of the payload.
  expectRecovery(*this, entries(), [](const fs::path &p) {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    std::streamoff size = f.tellg();
    f.seekp(size / 2);
    char c = 0;
    f.seekg(size / 2);
    f.get(c);
    f.seekp(size / 2);
    f.put(static_cast<char>(c ^ 0x5a));
  }, again);
  // Truncated, as by a crash without the rename protocol.
  expectRecovery(*this, entries(), [](const fs::path &p) {
    fs::resize_file(p, fs::file_size(p) / 3);
  }, again);
  // Not a cache entry at all.
  expectRecovery(*this, entries(), [](const fs::path &p) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << "hello";
  }, again);
  // Empty.
  expectRecovery(*this, entries(), [](const fs::path &p) { fs::resize_file(p, 0); }, again);
}

TEST_F(Cache, ProcessesRacingOnOneKeyAllSucceed) {
  // Start the compile threads first (two gpu.modules serialize in parallel):
  // a forked child has none of them and must not wait for them.
  std::string twoKernels = std::string(kSpec) + R"(
tdim.kernel @twice(%x: !v) -> (%y: !v) {
  tdim.map ins(%x : !v) outs(%y : !v) {
  ^bb0(%e: f32):
    %r = arith.addf %e, %e : f32
    tdim.yield %r : f32
  }
  tdim.return
}
)";
  CompileOptions gpu = options();
  gpu.target = Target::CUDA;
  Result<std::string> ptx = emit(twoKernels, gpu, Emit::PTX);
  ASSERT_TRUE(ptx) << ptx.message();

  constexpr int kChildren = 4;
  std::vector<pid_t> children;
  for (int i = 0; i < kChildren; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      clearMemoryCache();
      auto m = compile(kSpec, options());
      bool ok = m.ok();
      if (ok) {
        std::vector<float> x = {1, 2, 3}, y(3, 0);
        ok = (*m)->run("axpb", {Arg::tensor(x.data(), {3}), Arg::scalar(2.0),
                               Arg::tensor(y.data(), {3})}) &&
             y == std::vector<float>{3, 5, 7};
      }
      _exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  auto mine = compile(kSpec, options());
  ASSERT_TRUE(mine) << mine.message();
  expectWorks(*mine);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a racing process failed";
  }
  // One whole entry, no temporary left behind, and it loads.
  std::vector<fs::path> files = entries();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].extension(), ".nkc");
  clearMemoryCache();
  CacheStats before = cacheStats();
  auto warm = compile(kSpec, options());
  ASSERT_TRUE(warm);
  EXPECT_EQ(delta(before).diskHits, 1u);
}

TEST_F(Cache, SizeBoundEvictsTheLeastRecentlyUsed) {
  auto variant = [&](int i) {
    std::string s = kSpec;
    s.replace(s.find("1.0 : f32"), 9, std::to_string(i) + ".0 : f32");
    return s;
  };
  ASSERT_TRUE(compile(variant(1), options()));
  ASSERT_TRUE(compile(variant(2), options()));
  std::vector<fs::path> two = entries();
  ASSERT_EQ(two.size(), 2u);
  // Make variant 1's entry the older one, whatever the clock's resolution.
  std::string first = DiskCache(resolveCacheSettings(options()))
                          .entryPath(cacheKeyText(variant(1), options(), Target::CPU));
  struct timespec old[2] = {{1000, 0}, {1000, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, first.c_str(), old, 0), 0);
  uintmax_t bytes = fs::file_size(two[0]) + fs::file_size(two[1]);

  CompileOptions bounded = options();
  bounded.cacheMaxBytes = static_cast<int64_t>(bytes + bytes / 4); // room for two
  ASSERT_TRUE(compile(variant(3), bounded));
  EXPECT_FALSE(fs::exists(first)) << "the least recently used entry stays";
  EXPECT_EQ(entries().size(), 2u);
}

TEST_F(Cache, DisabledCachesWriteNothing) {
  CompileOptions o = options();
  o.cache = false;
  auto m = compile(kSpec, o);
  ASSERT_TRUE(m);
  auto n = compile(kSpec, o);
  ASSERT_TRUE(n);
  EXPECT_NE(m->get(), n->get());
  EXPECT_TRUE(entries().empty());

  setenv("NERVE_CACHE", "0", 1);
  auto e = compile(kSpec, options());
  unsetenv("NERVE_CACHE");
  ASSERT_TRUE(e);
  EXPECT_TRUE(entries().empty());
}

TEST_F(Cache, AnUnwritableDirectoryCostsOnlySpeed) {
  CompileOptions o = options();
  o.cacheDir = "/proc/nerve-cannot-be-here";
  auto m = compile(kSpec, o);
  ASSERT_TRUE(m) << m.message();
  expectWorks(*m);
}

} // namespace

TEST(DeferredKernels, BadDeferredCodeIsAnErrorNotACrash) {
  // Not deferred code at all, not base64, base64 of no bytecode, and a
  // module that parses but is no gpu.module: each an error with a message.
  Result<std::string> plain = generateDeferredPTX("// PTX");
  ASSERT_FALSE(plain);
  EXPECT_NE(plain.message().find("not deferred device code"), std::string::npos);
  std::string prefix = cuda::kDeferredDeviceCodePrefix;
  Result<std::string> notBase64 = generateDeferredPTX((prefix + "%%%").c_str());
  ASSERT_FALSE(notBase64);
  EXPECT_NE(notBase64.message().find("not base64"), std::string::npos);
  Result<std::string> notBytecode = generateDeferredPTX((prefix + "bm90IGJ5dGVjb2Rl").c_str());
  ASSERT_FALSE(notBytecode);
  EXPECT_FALSE(notBytecode.message().empty());
}
