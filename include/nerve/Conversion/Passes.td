//===- Passes.td - nerve's conversions ---------------------*- tablegen -*-===//

#ifndef NERVE_CONVERSION_PASSES
#define NERVE_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTdimToSCF : Pass<"convert-tdim-to-scf", "::mlir::ModuleOp"> {
  let summary = "Lowers tdim kernels to loops over strided memrefs";
  let description = [{
    Each `tdim.kernel` becomes a `func.func` over memrefs (inputs, then
    outputs; with `llvm.emit_c_interface`). A `!tdim.tensor` becomes a memref
    with its dimensions in list order and its strides; `!tdim.index` becomes
    `index`. Whole-tensor ops become loop nests: the dimensions that are
    independent (all of a map's, the kept ones of a reduce or contract) are
    one `scf.parallel`, innermost dimension contiguous, so the GPU mapping
    can distribute them; reductions are `scf.for` nests inside, combined in a
    fixed order. Composite ops are decomposed first (see `tdim-decompose`).
    `tdim.alloc` becomes `memref.alloc`, freed when the kernel returns.
    A `tdim.contract` with a `gpumap.contract_tiling` (tensor cores, chosen
    by `nerve-gpu-select-contract-tiling`) becomes a
    `gpumap.tiled_contract` over the memrefs.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::nerve::fold::FoldDialect",
    "::nerve::gpumap::GPUMapDialect"
  ];
}

def ConvertFoldToSCF : Pass<"convert-fold-to-scf"> {
  let summary = "Runs each fold.for as it stands: an scf.for, its merge region dropped";
  let description = [{
    A `fold.for` that no mapping split (the fold of a thread, or of the
    host's loops on the CPU) folds its iterations in order: it becomes the
    `scf.for` with the same bounds, accumulators and body; its merge region,
    which only a split needs, goes.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def ConvertNeuronToTdim : Pass<"convert-neuron-to-tdim"> {
  let summary = "Lowers neurons to tdim loops: time sequential, every other dimension parallel";
  let description = [{
    Named neuron ops are first generalized (see `neuron-generalize`). Each
    `neuron.generic` becomes parallel `tdim.for` loops over the dimensions
    of `x` other than time (outermost first, in `x`'s layout order) around a
    sequential loop over time that keeps the potential in a register: per
    step it loads the input, applies the charge region, fires, resets and
    stores what was asked for.

    Each `neuron.generic_grad` becomes the same parallel loops around a
    reverse loop over time carrying `kappa * G_H`. The charge region's
    derivatives (with respect to the potential, the input and each
    parameter) are derived by forward-mode differentiation, and only the
    tensors they read are loaded. Parameter gradients are summed per neuron
    over time, then over neurons by a `tdim.reduce` (a fixed order: the same
    bits on every run).

    Time loops run in blocks of `time-block` steps whose loads are all
    issued together (the recurrence is sequential, its inputs are not);
    forward blocks, and backward blocks of at most 4 steps, are loaded one
    block ahead, so that the next block's loads are in flight while this
    block's arithmetic runs; then the remaining steps one at a time. When
    time is the contiguous dimension (time-minor), blocks span 256 bytes of
    each row and each loads its own steps: the GPU mapping stages them
    through shared memory.
  }];
  let dependentDialects = ["::nerve::tdim::TdimDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect", "::mlir::scf::SCFDialect"];
  let options = [
    Option<"timeBlock", "time-block", "int64_t", "0",
           "Time steps whose loads are issued together (1: one step at a time; "
           "0: automatic, 64 bytes of each stream, at most 96 backward loads per "
           "thread; 256 bytes of each row when time is contiguous; at most 128)">
  ];
}

def FuseKernelLoops : Pass<"nerve-fuse-kernel-loops", "::mlir::ModuleOp"> {
  let summary = "Fuses a kernel's consecutive loops that one GPU kernel runs better";
  let description = [{
    The first step of mapping a kernel's loops onto the GPU. In every
    function lowered from a `tdim.kernel`, two kinds of neighbouring
    top-level parallel loops over the same iterations become one:

    - a reduction (a loop with results) that only reads, at each
      iteration's own indices, a temporary buffer the loop before it
      stores: the reduction folds the values where they are computed;
    - two loops that each walk a sequential loop in lockstep (a neuron's
      forward, then its backward reading what the forward stored, each
      iteration only its own elements): one kernel in which a thread walks
      its neuron's time forward, then back.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect"];
}

def ConvertGPUMapToGPU : Pass<"nerve-convert-gpumap-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Builds the launch of each gpumap.tiled_contract";
  let description = [{
    Each `gpumap.tiled_contract` becomes one `gpu.launch` of a block per
    `tile_m x tile_n` output tile (grouped by eight tiles along m, so that
    blocks running together share operand tiles in L2). A block walks the
    contracted dimension `tile_k` at a time: its threads copy both operand
    tiles into a ring of `stages` shared-memory tiles with `cp.async`
    (`nvgpu.device_async_copy`, 16-byte chunks, zero-filled past the
    edges; synchronous loads where the host finds an operand's rows not
    16-byte aligned). Tiles are swizzled (16-byte chunk `c` of row `r` at
    `c ^ (r % 8)`, or `c ^ (r / 2 % 4)` for 64-byte rows) so that the
    copies and the reads hit distinct banks. Products accumulate in f32:
    - `mma_sync`: copies `stages - 1` tiles ahead; each warp reads its
      fragments with `nvgpu.ldmatrix` (transposed for an operand whose unit
      stride is not along the contracted dimension) into `nvvm.mma.sync`
      m16n8k16.
    - `wgmma`: the ring aligned to 1024 bytes; copies `stages - 2` tiles
      ahead, fenced for the async proxy; each warpgroup issues
      `nvvm.wgmma.mma_async` m64n`tile_n`k16 on shared-memory descriptors
      (128-byte swizzle; an operand stored along its outer dimension in
      64-wide atoms, transposed) and leaves one group in flight.
    - `wgmma_tf32` / `mma_sync_tf32` (f32 read as tf32): as their 16-bit
      forms on rows of 32 f32 (m64n`tile_n`k8, m16n8k8); tf32 has no
      transposed form, so an operand whose unit stride is not along k is
      staged K-major by 4-byte copies.
    - `fma` (f32, IEEE): both tiles stored along their outer dimension (k
      rows of `tile_m` or `tile_n` elements, padded by 4), whatever the
      operand's layout: 16-byte copies along a unit-stride outer
      dimension, 4-byte copies (a transpose) along a unit-stride k or
      where rows are not aligned; copies `stages - 1` tiles ahead. Each
      lane reads its 4-element groups of rows and columns at each k as
      vectors and adds their outer product with `llvm.intr.fma`.
    With `producer_warps` (wgmma), a third warpgroup only copies: it fills
    stage `s` once the multiplying warps have arrived on its `released`
    mbarrier (lane 0 of each warp, once its products no longer read it)
    and has `cp.async.mbarrier.arrive.noinc` arrive on its `landed`
    mbarrier when the copies land (a plain arrival after element copies);
    the multiplying warps wait on `landed` (phase parity: a ring of tiles
    a phase), fence for the async proxy and issue the stage's products.
    The barriers follow the ring in shared memory.
    The walk over k takes at least one tile (k = 0 multiplies zeros), so
    that every path's accumulators come from the tensor-core instructions.
    With `staged_rows`, each pass of that many rows: a barrier, the rows'
    warps write their f32 sums into lines along the output's unit stride
    (the ring's bytes, padded), a barrier, then every thread takes 16-byte
    chunks of the lines (its sums as one vector; with `accumulate` the
    output's old values, then the `with` inputs and the region at each
    element) and stores each with one 16-byte vector store where it lies
    inside an output whose rows are 16-byte aligned, else a guarded store
    an element. Without, the accumulators are stored from the fragments,
    added to the output with `accumulate` (loaded 32 at a time before they
    are stored).
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::nvgpu::NVGPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::vector::VectorDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"
  ];
}

def SelectGPUStrategy : Pass<"nerve-gpu-select-strategy", "::mlir::ModuleOp"> {
  let summary = "Chooses how each of a kernel's top-level loops maps onto GPU launches";
  let description = [{
    Decides, and writes the decision down: each top-level `scf.parallel`
    of a kernel function (and each sequential fold that carries its
    combine) gets a `#gpumap.strategy` attribute, the first strategy of
    the priority table (SelectGPUStrategy.cpp, `kStrategyTable`) whose
    matcher takes the loop:

    | strategy | takes |
    |---|---|
    | `whole_fold` | a sequential fold that states its merge (a `fold.for`: an argmax over a whole tensor), at the top of the kernel, using nothing the device computes |
    | `whole_reduction` | a parallel loop with results (a whole-tensor sum) |
    | `row_program` | row statistics and the elementwise pass that reads them (softmax, layer_norm): `loops` says how many loops; `staging` and `cluster` are the chip's limits (`chip`) |
    | `row_reductions` | a loop over rows whose body folds each row |
    | `split_reduction` | a loop whose body folds along an outer dimension (a column sum) |
    | `transposed_staging` | iterations that each walk their own contiguous row in blocks (a time-minor neuron) |
    | `tiled_transpose` | a straight-line loop storing along one dimension and loading along another |
    | `threads` | any parallel loop |

    A loop that already has a strategy keeps it (a test forces one so);
    `nerve-parallel-loops-to-gpu` fails on a strategy that does not take
    its loop. Before the last three rows, parallel loops nested directly
    in the loop are merged into it (a neuron over [b, h, w, c] written as
    four loops), the only change this pass makes to the code. The loops of
    a row program after its first get no strategy of their own: the first
    one's takes them.
  }];
  let dependentDialects = ["::nerve::gpumap::GPUMapDialect", "::mlir::scf::SCFDialect"];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "The most threads a block of the chosen launches has">,
    Option<"chip", "chip", "std::string", "\"\"",
           "The GPU whose limits a row program's staging and clusters take "
           "(sm_80, sm_89, sm_90, sm_100; empty: what every CUDA GPU allows "
           "without opting in, 48 KiB and no clusters)">
  ];
}

def ParallelLoopsToGPU : Pass<"nerve-parallel-loops-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Maps each kernel's parallel loops onto GPU threads";
  let description = [{
    Applies the `#gpumap.strategy` that `nerve-gpu-select-strategy` wrote on
    each top-level loop (a loop without one is an error, and so is a
    strategy that does not take its loop); what each strategy builds
    follows.

    In every function lowered from a `tdim.kernel`, each top-level
    `scf.parallel` becomes a `gpu.launch`: its iterations are flattened
    (innermost dimension fastest, so neighbouring threads touch neighbouring
    addresses) and distributed over a 1-D grid of 1-D blocks, 256 threads
    (fewer, a multiple of 32, when the static trip count is smaller), with a
    grid-stride loop when the grid would exceed the hardware limit, and no
    launch at all when there is nothing to do. Top-level code that touches
    memory outside parallel loops (a sequential loop, a single store) runs
    in a one-thread launch. Buffers the kernel allocates become device
    allocations (`gpu.alloc`).

    A loop whose body is straight-line code (loads, stores, arithmetic:
    elementwise maps) runs `coarsen` iterations per thread, `stride` apart
    so that accesses stay coalesced, interleaved op by op so that their
    loads are in flight together; the grid shrinks accordingly.

    When every access that varies with the innermost index walks the
    contiguous dimension, a thread takes consecutive innermost iterations
    instead, each such access one 16-byte `vector.load` / `vector.store`
    (the narrowest element type decides how many), nested loops jammed; a
    host check at run time (unit innermost stride, rows and base addresses
    aligned to the vector) chooses it over the scalar mapping.

    A thread per iteration whose body walks a sequential loop (bounds the
    same for every iteration) accessing each step's row along the innermost
    parallel index (a time-major neuron: step t reads x[t, n]) walks it in
    lockstep with its block: a `gpu.barrier` ends each iteration of the
    walk, so the block's warps reach each row's segment together. Blocks
    take consecutive iterations a block at a time; a thread past the end
    repeats the last iteration (its stores write what that iteration writes,
    so the body may not read a buffer it stores to).

    When each iteration walks its own contiguous row in blocks (a sequential
    loop accessing `[the parallel indices..., base + c]`, the base the same
    for every iteration, c constant: a time-minor neuron), each block of the
    walk is staged through shared memory, transposed: the threads of a GPU
    block load the rows of its iterations together, barrier, each computes
    from and into its own tile row, barrier, and they store the output rows
    together (by 16-byte vectors under the same kind of host check; with
    vectors the loads are asynchronous copies into shared memory,
    `nvgpu.device_async_copy`, that hold no registers).

    When a straight-line loop stores along one of its dimensions and loads
    some buffer along another (an elementwise op over a column-major view
    written row-major), it runs in square tiles of 128 bytes a side, a
    block each: the block loads those inputs with threads consecutive along
    their contiguous dimension into shared memory, barrier, and computes
    with threads consecutive along the stores' dimension, reading them
    transposed. Fewer than half a tile of iterations along the loads'
    dimension keeps the usual mapping (chosen at run time).

    A loop with reductions (to single values: a whole-tensor sum) becomes
    a fixed tree: up to 1024 blocks fold grid-stride shares in order (eight
    iterations a round, their loads first, when the body only loads) and
    combine their threads pairwise, then one block combines the blocks.
    Over one dimension, a body that loads only along the contiguous
    dimension folds 16-byte chunks instead (four a round, a vector load
    each when the host finds the buffers aligned, else scalar loads in the
    same order), thread 0 the elements after the last whole chunk. A
    sequential fold (or nest of folds) at the top of a kernel that
    states its merge (a `fold.for`: an argmax over a whole tensor) maps as
    the same tree, its merge region merging the partial tuples.
    Over two or more dimensions, a body whose indices only index its loads
    folds such chunks of its iterations in row-major order (a vector load
    of a flat view when the buffers are dense and aligned, else each
    element at its own position); another body whose rows have 128
    elements or more, and 2^21 or more in all (a host check), runs as a
    row reduction over the innermost dimension into a buffer of a value a
    row, then as that buffer's reduction.

    A loop whose body folds a sequential loop along an outer dimension (a
    column sum) splits the fold into chunks: one launch folds each chunk
    (a 16-byte vector of neighbouring columns a thread when the buffers
    allow, through a transposed view for a column-major buffer; else a
    column a thread, in the same order), a second combines each column's
    chunks over 32 slices and then in order.

    A row program stages its rows in up to the strategy's `staging` bytes
    of shared memory a block. With its `cluster` > 1 (sm_90 and later),
    a row program whose rows
    would take more than half of a block's shared memory splits each row
    over a thread block cluster of 2 to `cluster` blocks (chosen at
    run time from the row's width), each staging its own slice of columns:
    the blocks' partial statistics are exchanged through distributed shared
    memory (`nvvm.mapa`) between cluster barriers and combined in block
    order, so that every block holds the row's statistics.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect", "::mlir::nvgpu::NVGPUDialect",
                           "::nerve::gpumap::GPUMapDialect"];
  let options = [
    Option<"coarsen", "coarsen", "int64_t", "4",
           "Iterations of a straight-line loop body per thread">
  ];
}

def LowerGPUMath : Pass<"nerve-lower-gpu-math", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lowers math functions in GPU code without unresolved library calls";
  let description = [{
    `math.sqrt`, `math.absf`, `math.fma`, `math.copysign`, `math.floor`,
    `math.ceil` become LLVM intrinsics (single PTX instructions), and so
    does an approximate f32 `math.exp` (`afn`): `ex2.approx.ftz.f32` of
    x * log2(e), which flushes results below 2^-126 to zero; an approximate
    f32 division whose divisor is at least 1 by construction (sigmoid's
    1 + exp(-x)) becomes `rcp.approx.ftz` / `div.approx.ftz`. An
    approximate f32 `math.log1p` is a series where |x| < 1/32 and
    `lg2.approx.ftz`(1 + x) * ln 2 elsewhere; an approximate f32
    `math.tanh` a series where |x| < 1/4 and 1 - 2 / (2^(2|x| log2 e) + 1)
    with the sign of x elsewhere (special-function 2^x and reciprocal):
    both err by at most about 2^-17 relative, where PTX's `tanh.approx`
    errs by 2^-11. Operands known to be at least 0 (or NaN) by how they
    are computed (exp, |x|, x * x, a maximum with 0, sums and products of
    such, ...) drop what a sign costs: the approximate forms take x for
    |x| and no sign to copy; an exact (no `afn`) f32 `math.log1p` or
    `math.tanh` of such an operand becomes nerve's own form, as exact as
    libdevice's (log1p within 1 ulp, tanh in libdevice's form, within 2)
    with fewer instructions; and the maximum of such a value and a negative
    constant is the value itself. When libdevice is linked
    (`libdevice=true`), the other functions are left for
    `convert-gpu-to-nvvm`, which calls libdevice's `__nv_*`. Without it, f32
    `exp`, `log`, `tanh`, `erf` and friends are expanded into polynomial
    approximations and `powf` and `rsqrt` into those, so the PTX calls no
    external function; a function that still needs libdevice (any f64 one)
    is an error that says so.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let options = [
    Option<"libdevice", "libdevice", "bool", "false",
           "libdevice will be linked: leave library functions to it">
  ];
}

#endif // NERVE_CONVERSION_PASSES
