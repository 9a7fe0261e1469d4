//===- Pipelines.h - nerve's named pass pipelines ----------------*- C++ -*-===//
//
// `nerve-to-cpu` and `nerve-to-ptx` take a spec (tdim kernels, neuron ops)
// down to LLVM IR for the host, and for the GPU down to PTX inside a
// gpu.binary. Each is a sequence of passes that also run alone, so every
// stage can be inspected with --mlir-print-ir-after-all.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_PIPELINES_PIPELINES_H
#define NERVE_PIPELINES_PIPELINES_H

#include "nerve/Target/ChipProfile.h"

#include "mlir/Pass/PassOptions.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace nerve {

struct NerveToLoopsOptions : mlir::PassPipelineOptions<NerveToLoopsOptions> {
  Option<int64_t> neuronTimeBlock{
      *this, "neuron-time-block",
      llvm::cl::desc("Time steps of a neuron whose loads are issued together (0: automatic)"),
      llvm::cl::init(0)};
  ListOption<std::string> shapes{
      *this, "shapes",
      llvm::cl::desc("Static sizes of kernel arguments, kernel:arg=SIZExSIZE... "
                     "(nerve-specialize-shapes)")};
  Option<bool> storeExponentials{
      *this, "store-exponentials",
      llvm::cl::desc("softmax keeps exp(x - max) in its output and scales it in place "
                     "(tdim-decompose's option; for targets whose rows stay in cache)"),
      llvm::cl::init(false)};
};

/// What the shared stage takes from the target's pipeline.
struct LoopsStage {
  int64_t neuronTimeBlock = 0;
  /// nerve-specialize-shapes' entries: the static sizes kernel arguments
  /// are compiled for.
  std::vector<std::string> shapes;
  bool storeExponentials = false;
  /// The GPU whose tensor cores take the contractions they can
  /// (nerve-gpu-select-contract-tiling); empty: none do (the CPU, or
  /// tensor cores turned off).
  std::string tensorCoreChip;
  /// Whether f32 contractions may take tensor cores as tf32.
  bool tf32 = false;
};

/// From nerve's dialects to loops over memrefs: the part the CPU and GPU
/// pipelines share.
void buildNerveToLoopsPipeline(mlir::OpPassManager &pm, const LoopsStage &stage = {});

struct NerveToCPUOptions : mlir::PassPipelineOptions<NerveToCPUOptions> {
  Option<int64_t> neuronTimeBlock{
      *this, "neuron-time-block",
      llvm::cl::desc("Time steps of a neuron whose loads are issued together (0: automatic, "
                     "one on the CPU: its prefetchers follow the rows)"),
      llvm::cl::init(0)};
  Option<std::string> profile{
      *this, "profile",
      llvm::cl::desc("The CPU the code is for, vector=BYTES,l1=BYTES (empty: this host)"),
      llvm::cl::init("")};
  ListOption<std::string> shapes{
      *this, "shapes",
      llvm::cl::desc("Static sizes of kernel arguments, kernel:arg=SIZExSIZE... "
                     "(nerve-specialize-shapes)")};
};

/// Everything to the LLVM dialect for the host CPU, ready for MLIR's
/// ExecutionEngine.
void buildNerveToCPUPipeline(mlir::OpPassManager &pm,
                             const NerveToCPUOptions &options = {});

/// Parses a chip option from the names of the chip profiles.
struct ChipParser : llvm::cl::parser<GpuChip> {
  using llvm::cl::parser<GpuChip>::parser;
  /// Called once the option has its name (adding values before would
  /// register each as an option of its own).
  void initialize() {
    llvm::cl::parser<GpuChip>::initialize();
    for (const ChipProfile &profile : chipProfiles())
      addLiteralOption(profile.name, profile.chip, profile.description);
  }
  static void print(llvm::raw_ostream &os, GpuChip chip) { os << chipProfile(chip).name; }
};

struct NerveToPTXOptions : mlir::PassPipelineOptions<NerveToPTXOptions> {
  Option<GpuChip, ChipParser> chip{*this, "chip", llvm::cl::desc("GPU architecture"),
                                   llvm::cl::init(GpuChip::sm_90)};
  Option<unsigned> optLevel{*this, "opt-level",
                            llvm::cl::desc("LLVM optimisation level of device code, 0-3"),
                            llvm::cl::init(3)};
  Option<std::string> libdevice{
      *this, "libdevice",
      llvm::cl::desc("libdevice.10.bc to link; empty: look under $CUDA_HOME, $CUDA_PATH and "
                     "/usr/local/cuda; 'none': never link it"),
      llvm::cl::init("")};
  Option<bool> fastMath{*this, "fast-math",
                        llvm::cl::desc("Let LLVM use approximate math in device code"),
                        llvm::cl::init(false)};
  Option<bool> exactMath{
      *this, "exact-math",
      llvm::cl::desc("IEEE math in every kernel: no approximate f32 math in kernels whose "
                     "data is 16-bit (nerve-half-storage-math)"),
      llvm::cl::init(false)};
  Option<int64_t> blockSize{*this, "block-size", llvm::cl::desc("Threads per block"),
                            llvm::cl::init(256)};
  Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("Contractions as tiled kernels where the heuristic takes them: 16-bit "
                     "operands on tensor cores, f32 with IEEE fused multiply-adds (false: "
                     "every contraction by the general loops)"),
      llvm::cl::init(true)};
  Option<bool> tf32{*this, "tf32",
                    llvm::cl::desc("f32 contractions may read their operands as tf32 on tensor "
                                   "cores (10-bit mantissas, f32 sums)"),
                    llvm::cl::init(false)};
  Option<int64_t> neuronTimeBlock{
      *this, "neuron-time-block",
      llvm::cl::desc("Time steps of a neuron whose loads are issued together (0: automatic)"),
      llvm::cl::init(0)};
  ListOption<std::string> shapes{
      *this, "shapes",
      llvm::cl::desc("Static sizes of kernel arguments, kernel:arg=SIZExSIZE... "
                     "(nerve-specialize-shapes)")};
};

/// Everything to a host module in the LLVM dialect whose device code is
/// PTX inside a gpu.binary, launched through nerve's runtime: the three
/// parts below, in order.
void buildNerveToPTXPipeline(mlir::OpPassManager &pm, const NerveToPTXOptions &options);

/// The first part: kernels out into gpu.modules in the NVVM dialect, the
/// host code still in func/memref/gpu ops. Without `withDeviceCode`, the
/// gpu.modules stop before their own passes (buildNerveDeviceCodePipeline),
/// as a compile that generates each kernel at its first launch keeps them.
void buildNerveToNVVMPipeline(mlir::OpPassManager &pm, const NerveToPTXOptions &options,
                              bool withDeviceCode = true);
/// The first part's passes on one gpu.module (`pm` runs on gpu.module):
/// from nerve's math to the NVVM dialect. They take all they need from the
/// module's #nvvm.target: the chip and whether libdevice is linked.
void buildNerveDeviceCodePipeline(mlir::OpPassManager &pm, GpuChip chip, bool libdevice);
/// The second: every gpu.module to a gpu.binary holding its PTX, checked.
/// Touches nothing but the gpu.modules, so nerve's compile runs it on them
/// moved into a module of their own, beside the third part.
void buildNerveSerializePTXPipeline(mlir::OpPassManager &pm);
/// The third: the host code to the LLVM dialect. Needs only the names of
/// the gpu.binary ops its launches refer to, not their contents.
void buildNerveToHostLLVMPipeline(mlir::OpPassManager &pm);

/// libdevice.10.bc as `option` asks for it: the path itself, none for
/// "none", else the first that exists under $CUDA_HOME, $CUDA_PATH,
/// /usr/local/cuda.
std::optional<std::string> findLibdevice(llvm::StringRef option);

/// Registers `nerve-to-loops`, `nerve-to-cpu`, `nerve-to-ptx` and its first
/// part, `nerve-to-nvvm`.
void registerNervePipelines();

} // namespace nerve

#endif // NERVE_PIPELINES_PIPELINES_H
