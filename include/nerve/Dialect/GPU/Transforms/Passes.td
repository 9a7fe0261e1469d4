//===- Passes.td - nerve's passes over GPU kernels --------*- tablegen -*-===//
//
// Transforms of upstream's gpu dialect (and the NVVM it holds) that nerve
// runs after its loops became kernels: what a launch and a kernel need
// beyond the mapping (names, shared memory, grid dependencies, occupancy,
// 16-bit storage math, paired truncations).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_GPU_TRANSFORMS_PASSES
#define NERVE_DIALECT_GPU_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def FoldLaunchChoices : Pass<"nerve-fold-launch-choices", "::mlir::func::FuncOp"> {
  let summary = "Removes the launches that the sizes known at compile time rule out";
  let description = [{
    The mappings choose between alternative launches at run time, by the
    sizes (a row program's block size, its staging, its clusters). Where
    the sizes are static, many of these choices are decided at compile
    time. This pass folds the host code of a function whose loops are
    launches (every op outside the `gpu.launch` bodies, with `scf.if`'s own
    patterns and each op's folder, on the ops that are there), so that a
    branch a constant condition rules out, and the launches in it, are
    gone before outlining. The launches' bodies are not touched. With
    dynamic sizes it changes nothing.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
}

def AttachNVVMTargets : Pass<"nerve-attach-nvvm-targets", "::mlir::ModuleOp"> {
  let summary = "Attaches each kernel's #nvvm.target: the chip's, or its architecture-specific one";
  let description = [{
    What upstream's `nvvm-attach-target` does (an `#nvvm.target` with the
    chip, optimisation level, fast-math flag and libdevice on every
    `gpu.module`), chosen per module: warpgroup-level `wgmma` (a
    tensor-core contraction's `wgmma` tiling) exists only in PTX for
    `sm_90a`, code that runs on compute capability 9.0 and no later chip,
    so a module whose kernels hold an `nvvm.wgmma.*` op targets the chip's
    architecture-specific name (nerve/Target/ChipProfile.h:
    `archSpecificName`) and every other module stays portable. Upstream's
    pass attaches one target to all modules, and NVVM's verifier rejects
    wgmma in a module that targets `sm_90` as soon as it has one, so the
    choice cannot be a later rewrite. A module with such ops on a chip
    that has no such target is an error.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90\"", "The GPU (sm_80, sm_89, sm_90, sm_100)">,
    Option<"optLevel", "O", "unsigned", "3", "LLVM's optimisation level for the device code">,
    Option<"fastFlag", "fast", "bool", "false", "The target's `fast` flag (approximate math)">,
    ListOption<"linkLibs", "l", "std::string", "Bitcode libraries to link (libdevice)">
  ];
}

def HalfStorageMath : Pass<"nerve-half-storage-math", "::mlir::ModuleOp"> {
  let summary = "Approximate f32 functions and fused multiply-adds in kernels whose data is 16-bit";
  let description = [{
    In a kernel whose floating-point buffers (its memref arguments) are all
    f16 or bf16, f32 `arith.divf`, `math.exp`, `math.log`, `math.log2`,
    `math.log10`, `math.log1p` and `math.tanh` get the `afn` fast-math
    flag: division becomes PTX's `div.approx.f32` / `rcp.approx.f32`, exp
    `ex2.approx.ftz.f32`, log1p and tanh series and special-function forms
    (nerve-lower-gpu-math), log libdevice's `__nv_fast_logf` (`lg2.approx`),
    a few instructions instead of IEEE division's and the accurate
    functions' dozen or more. Their error (a few f32 ulps, 2^-22 relative;
    2^-17 at most for log1p) is far below the 2^-11 rounding of the 16-bit
    results; 16-bit elementwise code was
    bound by instructions per element, not by bytes. Their f32 `arith.addf`,
    `arith.subf` and `arith.mulf` get `contract`: a multiplication and the
    addition that takes it may become one fused multiply-add (`fma.rn.f32`),
    rounded once instead of twice, as nvcc and Triton compile by default.
    Kernels that read or
    write any f32 or f64 buffer keep exact math, except scratch: a buffer
    the host code takes from `gpu.alloc` and only launches kernels with,
    sets and frees (in every launch of the kernel) is nerve's own, not the
    user's, and does not count; nor does a rank-0 buffer the kernel only
    loads from (a parameter such as PLIF's weight: one value for every
    element, which stays 16-bit data computed in f32). Runs on the module,
    where the launches are.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def ExternDynamicShared : Pass<"nerve-extern-dynamic-shared", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Declares a kernel's dynamic shared memory as .extern";
  let description = [{
    After `convert-gpu-to-nvvm`: the zero-sized shared-memory globals that
    `gpu.dynamic_shared_memory` lowered to become external, so that the PTX
    declares them `.extern .shared` (the block's dynamic shared memory)
    instead of a local zero-sized array that aliases the static ones.
  }];
}

def GridDependencies : Pass<"nerve-grid-dependencies", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lets each kernel's launch overlap the end of the one before";
  let description = [{
    For sm_90 and later (programmatic dependent launch): every kernel
    begins with `griddepcontrol.wait`, so that it reads and writes nothing
    before the kernel ahead of it on the stream has finished and its writes
    are visible. The runtime launches a kernel whose PTX has it with
    cuLaunchKernelEx's programmatic stream serialization, so that its
    launch overlaps the end of the kernel ahead; launched without it, the
    wait is a no-op.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def OccupancyHints : Pass<"nerve-occupancy-hints", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Moves the loop mapping's blocks-per-SM hints onto the kernels";
  let description = [{
    A mapping that knows how many blocks of a kernel should share an SM
    (a thread block cluster's row program) says so with a
    `gpumap.occupancy_hint` in the launch's body: kernel outlining keeps a
    launch's ops, not its attributes. This pass moves the number onto the
    kernel as `nvvm.minctasm`, which becomes PTX's `.minnctapersm`: ptxas
    then allocates registers so that that many blocks fit; the hints go. A
    kernel with several hints takes the largest.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def PairTruncations : Pass<"nerve-pair-truncations", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Rounds f32 intermediates to bf16 two at a time";
  let description = [{
    ptxas turns a scalar `cvt.rn.bf16.f32` into `F2F.BF16.F32`, which runs
    on the special-function unit beside `ex2`, `lg2` and `rcp`; the pair
    form `cvt.rn.bf16x2.f32` is one `F2FP` for two values. So in each
    block, two consecutive scalar `arith.truncf` from f32 to bf16 whose
    results are only extended to f32 again (a fused 16-bit intermediate of
    a vector map's lanes, cloned op by op) become one
    `llvm.nvvm.ff2bf16x2.rn`, where no op between them uses the first, on
    sm_80 and later (targets without the pair form are left alone). Their
    extensions become bit moves of the pair: the first value is the pair
    shifted left by 16, the second the pair with its low half cleared (a
    bf16 is the high half of the f32 it extends to). The rounding is the
    same (to nearest even).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::LLVM::LLVMDialect"];
}

def NameKernels : Pass<"nerve-name-kernels", "::mlir::ModuleOp"> {
  let summary = "Gives every outlined GPU kernel a distinct name";
  let description = [{
    `gpu-kernel-outlining` names each kernel after its function
    (`@f_kernel`) and makes only the enclosing `gpu.module` names distinct
    (`@f_kernel`, `@f_kernel_0`, ...). This pass renames each kernel to its
    module's name and updates the launches, so that profilers and launch
    errors tell the kernels of one entry apart.
  }];
}

#endif // NERVE_DIALECT_GPU_TRANSFORMS_PASSES
