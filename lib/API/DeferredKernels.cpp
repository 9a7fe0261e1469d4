//===- DeferredKernels.cpp - kernels generated at their first launch -----===//
//
// The deferred half of a CUDA compile (DeferredKernels.h): the gpu.module
// out as bytecode, and back in at its first load through the same passes an
// eager compile runs, so the PTX is the same either way.
//
//===----------------------------------------------------------------------===//

#include "DeferredKernels.h"
#include "Lowering.h"

#include "nerve/Pipelines/Pipelines.h"
#include "nerve/Runtime/GpuRuntime.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

using namespace mlir;
using namespace nerve;

std::string nerve::deferDeviceCode(gpu::GPUModuleOp module) {
  // MLIR bytecode: a tenth of the time of printing the module as text. In
  // base64, since the host code hands the runtime a NUL-terminated string.
  std::string bytecode;
  llvm::raw_string_ostream os(bytecode);
  (void)writeBytecodeToFile(module, os);
  return cuda::kDeferredDeviceCodePrefix + llvm::encodeBase64(bytecode);
}

/// The chip and libdevice the module's #nvvm.target names; an error when
/// it names none nerve knows.
static Result<std::pair<GpuChip, bool>> targetOf(gpu::GPUModuleOp module) {
  ArrayAttr targets = module.getTargetsAttr();
  auto nvvm = targets && targets.size() == 1
                  ? llvm::dyn_cast<NVVM::NVVMTargetAttr>(targets[0])
                  : NVVM::NVVMTargetAttr();
  if (!nvvm)
    return Status::error("the deferred module @" + module.getName().str() +
                         " has no single #nvvm.target");
  std::optional<GpuChip> chip = parseTargetChip(nvvm.getChip());
  if (!chip)
    return Status::error(unknownChipMessage(nvvm.getChip().str()));
  bool libdevice = nvvm.getLink() && !nvvm.getLink().empty();
  return std::make_pair(*chip, libdevice);
}

Result<std::string> nerve::generateDeferredPTX(const char *deferred) {
  if (!cuda::isDeferredDeviceCode(deferred))
    return Status::error("not deferred device code");
  std::vector<char> bytecode;
  llvm::StringRef encoded(deferred + std::strlen(cuda::kDeferredDeviceCodePrefix));
  if (llvm::Error e = llvm::decodeBase64(encoded, bytecode)) {
    llvm::consumeError(std::move(e));
    return Status::error("the deferred device code is not base64");
  }
  MLIRContext ctx(specDialects(), MLIRContext::Threading::DISABLED);
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(bytecode.data(), bytecode.size()),
                                       "deferred kernels", /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  DiagnosticCollector diags(sourceMgr, &ctx);
  OwningOpRef<ModuleOp> top = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
  if (!top)
    return diags.fail("the deferred device code does not parse");
  (*top)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(&ctx));
  auto modules = llvm::to_vector(top->getOps<gpu::GPUModuleOp>());
  if (modules.size() != 1)
    return Status::error("deferred device code holds one gpu.module, not " +
                         std::to_string(modules.size()));
  Result<std::pair<GpuChip, bool>> target = targetOf(modules.front());
  if (!target)
    return target.status();
  PassManager pm(&ctx);
  buildNerveDeviceCodePipeline(pm.nest<gpu::GPUModuleOp>(), target->first, target->second);
  buildNerveSerializePTXPipeline(pm);
  NVVM::SerializeGPUModuleBase::init();
  if (failed(pm.run(*top)))
    return diags.fail("generating the deferred kernels' PTX failed");
  std::string ptx;
  for (gpu::BinaryOp binary : top->getOps<gpu::BinaryOp>())
    for (Attribute object : binary.getObjects())
      ptx += llvm::cast<gpu::ObjectAttr>(object).getObject().getValue().str();
  return ptx;
}

/// One deferred module's generation on the compile threads.
struct nerve::DeferredGeneration {
  std::string text; ///< its own copy of the deferred code
  std::mutex mutex;
  std::condition_variable done;
  bool started = false; ///< a thread took it (the background's or a launch's)
  bool finished = false;
  Result<std::string> ptx = Status::error("not generated");

  /// Generates the PTX unless a thread took it already; true if this one
  /// did.
  bool run() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (started)
        return false;
      started = true;
    }
    Result<std::string> generated = generateDeferredPTX(text.c_str());
    std::lock_guard<std::mutex> lock(mutex);
    ptx = std::move(generated);
    finished = true;
    done.notify_all();
    return true;
  }
};

namespace {
using Generation = DeferredGeneration;

/// Generations in flight or done, by the text the host code points to.
std::mutex generationsMutex;
std::map<const char *, std::shared_ptr<Generation>> &generations() {
  static auto *map = new std::map<const char *, std::shared_ptr<Generation>>();
  return *map;
}

/// Generations still running, so that the process waits for them at exit
/// (they use LLVM's and MLIR's statics, which exit destroys).
std::mutex runningMutex;
std::condition_variable runningDone;
int running = 0;

void countRunning(int delta) {
  std::lock_guard<std::mutex> lock(runningMutex);
  running += delta;
  if (running == 0)
    runningDone.notify_all();
}

void waitForRunning() {
  std::unique_lock<std::mutex> lock(runningMutex);
  runningDone.wait(lock, [] { return running == 0; });
}

/// The PTX of `deferred`: its background generation's, waited for, or
/// generated here when none was started.
Result<std::string> generateOrWait(const char *deferred) {
  std::shared_ptr<Generation> g;
  {
    std::lock_guard<std::mutex> lock(generationsMutex);
    auto it = generations().find(deferred);
    if (it != generations().end())
      g = it->second;
  }
  if (!g)
    return generateDeferredPTX(deferred);
  // Not started yet (queued behind other modules): the launch that needs it
  // generates it.
  g->run();
  std::unique_lock<std::mutex> lock(g->mutex);
  g->done.wait(lock, [&] { return g->finished; });
  return g->ptx;
}
} // namespace

void nerve::waitForBackgroundKernels() { waitForRunning(); }

std::string nerve::generatedPTX(const DeviceCode &code) {
  std::string ptx;
  for (const auto &[binary, text] : code) {
    if (!cuda::isDeferredDeviceCode(text.c_str())) {
      ptx += text;
      continue;
    }
    Result<std::string> generated = generateOrWait(text.c_str());
    ptx += generated ? generated.take()
                     : "// @" + binary + ": generating its PTX failed: " + generated.message() + "\n";
  }
  return ptx;
}

void nerve::registerDeferredPTXGenerator() {
  static std::once_flag once;
  std::call_once(once, [] { cuda::setDeferredPTXGenerator(&generateOrWait); });
}

void BackgroundGenerations::start(const DeviceCode &code) {
  llvm::ThreadPoolInterface *threads = compileThreads();
  if (!threads)
    return; // one core: each module is generated at its first launch
  static std::once_flag atExit;
  std::call_once(atExit, [] { std::atexit(waitForRunning); });
  for (const auto &[binary, text] : code) {
    if (!cuda::isDeferredDeviceCode(text.c_str())) {
      auto done = std::make_shared<Generation>();
      done->started = done->finished = true;
      done->ptx = text;
      modules.push_back({binary, done});
      continue;
    }
    auto g = std::make_shared<Generation>();
    g->text = text;
    {
      std::lock_guard<std::mutex> lock(generationsMutex);
      generations()[text.c_str()] = g;
    }
    keys.push_back(text.c_str());
    modules.push_back({binary, g});
    countRunning(+1);
    threads->async([g] {
      g->run();
      countRunning(-1);
    });
  }
}

void BackgroundGenerations::whenGenerated(std::function<void(const DeviceCode &)> then) {
  llvm::ThreadPoolInterface *threads = compileThreads();
  if (!threads || keys.empty())
    return;
  countRunning(+1);
  threads->async([modules = modules, then = std::move(then)] {
    DeviceCode ptx;
    bool generated = true;
    for (const auto &module : modules) {
      Generation &g = *module.second;
      g.run(); // one still queued is generated here, not waited for
      std::unique_lock<std::mutex> lock(g.mutex);
      g.done.wait(lock, [&] { return g.finished; });
      if (!g.ptx)
        generated = false;
      else
        ptx.push_back({module.first, *g.ptx});
    }
    if (generated)
      then(ptx);
    countRunning(-1);
  });
}

BackgroundGenerations::~BackgroundGenerations() {
  std::lock_guard<std::mutex> lock(generationsMutex);
  for (const char *key : keys)
    generations().erase(key);
}
