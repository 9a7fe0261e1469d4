//===- GPUMap.td - how a kernel's loops map onto the GPU ---*- tablegen -*-===//
//
// The decision that nerve-gpu-select-strategy makes for each top-level loop
// of a kernel and nerve-parallel-loops-to-gpu applies: a registered,
// verified attribute, so the choice is visible, testable and forceable.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_GPUMAP_IR_GPUMAP
#define NERVE_DIALECT_GPUMAP_IR_GPUMAP

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def GPUMap_Dialect : Dialect {
  let name = "gpumap";
  let cppNamespace = "::nerve::gpumap";
  let summary = "How the loops of a kernel map onto GPU launches";
  let description = [{
    One attribute, `gpumap.strategy`, on a top-level `scf.parallel` (or a
    sequential fold, `fold.for`) of a kernel function: the mapping onto GPU
    launches that `nerve-gpu-select-strategy` chose for it (or a test wrote
    by hand) and that `nerve-parallel-loops-to-gpu` applies. The dialect
    verifies that the strategy fits the op it is on.

    `gpumap.contract_tiling` on a `tdim.contract`: how the product runs on
    tensor cores (`nerve-gpu-select-contract-tiling` chose it), and the op
    it lowers to, `gpumap.tiled_contract`, the product over memrefs that
    `nerve-convert-gpumap-to-gpu` turns into its launch.

    One op, `gpumap.occupancy_hint`, in the body of a launch that a
    strategy built: the blocks an SM should fit, which
    `nerve-occupancy-hints` turns into the kernel's `nvvm.minctasm` once the
    launch is a kernel.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The name of the attribute on a loop: `gpumap.strategy`.
    static constexpr ::llvm::StringLiteral kStrategyAttrName = "gpumap.strategy";
    /// The name of the attribute on a tdim.contract: `gpumap.contract_tiling`.
    static constexpr ::llvm::StringLiteral kContractTilingAttrName = "gpumap.contract_tiling";
  }];
}

def GPUMap_StrategyKind : I32EnumAttr<"StrategyKind", "a mapping of a loop onto GPU launches", [
    I32EnumAttrCase<"whole_fold", 0>,
    I32EnumAttrCase<"whole_reduction", 1>,
    I32EnumAttrCase<"row_program", 2>,
    I32EnumAttrCase<"row_reductions", 3>,
    I32EnumAttrCase<"split_reduction", 4>,
    I32EnumAttrCase<"transposed_staging", 5>,
    I32EnumAttrCase<"tiled_transpose", 6>,
    I32EnumAttrCase<"threads", 7>
  ]> {
  let cppNamespace = "::nerve::gpumap";
  let genSpecializedAttr = 0;
}

def GPUMap_StrategyAttr : AttrDef<GPUMap_Dialect, "Strategy"> {
  let mnemonic = "strategy";
  let summary = "the strategy that maps a loop onto GPU launches";
  let description = [{
    `kind` is the mapping (docs/compiler.md describes each):

    - `whole_fold`: a sequential fold at the top of a kernel that states
      its merge (an argmax over a whole tensor), as a fixed tree of two
      launches. On a `fold.for`.
    - `whole_reduction`: a parallel loop with reductions to single values
      (a whole-tensor sum), as a fixed tree; by rows first where its rows
      are long enough at run time. On an `scf.parallel` with results.
    - `row_program`: this loop and the `loops - 1` parallel loops after it
      (row statistics, then the elementwise pass that reads them: softmax,
      layer_norm) as one kernel of a block a row, the row staged in shared
      memory.
    - `row_reductions`: a loop over rows whose body reduces each row with
      sequential folds, a warp or a block a row.
    - `split_reduction`: a loop whose body folds along an outer dimension
      (a column sum), the fold split into chunks over two launches.
    - `transposed_staging`: iterations that each walk their own contiguous
      row in blocks (a time-minor neuron), staged through shared memory.
    - `tiled_transpose`: a straight-line loop storing along one dimension
      and loading along another, in square tiles through shared memory.
    - `threads`: a thread per iteration (by 16-byte vectors, in lockstep,
      or by row tiles where the body allows): every loop can take it.

    `block` is the most threads a block of the strategy's launches has (it
    may take fewer: a whole number of warps that the trip count needs, a
    power of two whose tiles fit the shared memory); a `split_reduction`
    sizes its launches from the fold alone and takes none (0).

    A `row_program` also records what the chip lets its blocks take:
    `staging`, the bytes of shared memory a block may stage rows in (the
    chip's opt-in limit; 49152, what every CUDA GPU allows without opting
    in, when omitted), and `cluster`, the most blocks of a thread block
    cluster that splits a wide row (a power of two from 2 to 8; 0, the
    default, for none). The rest of its sizes follow from these and the
    program's shape (include/nerve/Dialect/GPUMap/Heuristics/RowProgram.h).

    A `threads` mapping records `lanes`: the consecutive iterations a
    thread takes as one vector of each access along the contiguous
    dimension (16 bytes of the narrowest element type: 2, 4 or 8), which a
    host check still replaces by elements where the buffers do not allow
    it; 0, the default, for elements only. The selection finds it from the
    loop's body (nerve/Conversion/ParallelLoopsToGPU: planLanes); a test may
    write 0 to keep a vectorisable loop by elements. No other strategy
    takes it.
  }];
  let parameters = (ins
    EnumParameter<GPUMap_StrategyKind>:$kind,
    DefaultValuedParameter<"int64_t", "0">:$block,
    DefaultValuedParameter<"int64_t", "1">:$loops,
    DefaultValuedParameter<"int64_t", "::nerve::kSharedBytesWithoutOptIn">:$staging,
    DefaultValuedParameter<"int64_t", "0">:$cluster,
    DefaultValuedParameter<"int64_t", "0">:$lanes
  );
  let builders = [
    AttrBuilder<(ins "StrategyKind":$kind, "int64_t":$block, "int64_t":$loops), [{
      return $_get($_ctxt, kind, block, loops, ::nerve::kSharedBytesWithoutOptIn, 0, 0);
    }]>
  ];
  let assemblyFormat = "`<` $kind (`,` struct($block, $loops, $staging, $cluster, $lanes)^)? `>`";
  let genVerifyDecl = 1;
}

def GPUMap_ContractInstruction : I32EnumAttr<"ContractInstruction",
    "the instructions of a tiled contraction", [
    I32EnumAttrCase<"mma_sync", 0>,
    I32EnumAttrCase<"wgmma", 1>,
    I32EnumAttrCase<"fma", 2>,
    I32EnumAttrCase<"wgmma_tf32", 3>,
    I32EnumAttrCase<"mma_sync_tf32", 4>
  ]> {
  let cppNamespace = "::nerve::gpumap";
  let genSpecializedAttr = 0;
}

def GPUMap_ContractTilingAttr : AttrDef<GPUMap_Dialect, "ContractTiling"> {
  let mnemonic = "contract_tiling";
  let summary = "how a contraction's blocks are tiled";
  let description = [{
    On a `tdim.contract` (as `gpumap.contract_tiling`, written by
    `nerve-gpu-select-contract-tiling`) and on the `gpumap.tiled_contract`
    it lowers to: each block of `warps_m x warps_n` warps computes a
    `tile_m x tile_n` tile of the output, walking the contracted dimension
    `tile_k` at a time through a ring of `stages` shared-memory tiles of
    each operand. `instruction` is `mma_sync` (tensor cores, m16n8k16 a
    warp, its fragments read with ldmatrix: every chip), `wgmma` (tensor
    cores, m64n`tile_n`k16 a warpgroup of four warps, its operands read
    from shared memory through descriptors: sm_90), `wgmma_tf32` (the same
    on f32 operands read as tf32, m64n`tile_n`k8: 128-byte rows of 32
    elements along k, an operand read along m or n transposed as it is
    copied), `mma_sync_tf32` (mma.sync's m16n8k8 on f32 operands read as
    tf32, staged as `wgmma_tf32`'s: every chip) or `fma` (IEEE f32
    fused multiply-adds, no tensor cores: each warp's lanes 4 x 8, each
    lane an outer product of whole 4-element groups of rows and columns,
    read as vectors from tiles stored along m and n).

    `producer_warps` (wgmma with two multiplying warpgroups only; 0 where
    omitted, 4 otherwise) adds a warpgroup after the multiplying warps that
    only copies the operand tiles: it fills a stage once the multiplying
    warps have released it and each stage's mbarrier tells them when its
    copies have landed, so that no warp waits on the whole block between
    tiles. The selection pass does not choose it (slower with cp.async
    copies: docs/decisions.md, "Producer warps"); it is there to be
    written.

    `staged_rows` (tensor cores; 0 where omitted) is how many of the
    tile's output rows the epilogue stages at once: after the products,
    those rows' f32 sums go to shared memory (the ring's bytes, lines
    along the output's unit stride, padded against bank conflicts), and
    each thread then takes whole 16-byte chunks of a line: the output's
    old values (`accumulate`), the `with` inputs and the epilogue region
    at each element, one 16-byte store where the chunk lies inside an
    aligned output. With 0, each thread stores its accumulators from
    registers, an element at a time. A multiple of a warp's rows
    (`tile_m / warps_m`) dividing `tile_m`; not with producer warps or a
    scan (which stages its own tile).

    ```mlir
    #gpumap.contract_tiling<instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
    #gpumap.contract_tiling<instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, producer_warps = 4>
    #gpumap.contract_tiling<instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, staged_rows = 128>
    ```
    The verifier checks what the lowering relies on
    (nerve/Dialect/GPUMap/Heuristics/ContractTiling.h).
  }];
  let parameters = (ins EnumParameter<GPUMap_ContractInstruction>:$instruction,
                        "int64_t":$tile_m, "int64_t":$tile_n, "int64_t":$tile_k,
                        "int64_t":$warps_m, "int64_t":$warps_n, "int64_t":$stages,
                        DefaultValuedParameter<"int64_t", "0">:$producer_warps,
                        DefaultValuedParameter<"int64_t", "0">:$staged_rows);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Threads that multiply (and, without producer warps, copy).
    int64_t getConsumerThreads() const { return getWarpsM() * getWarpsN() * 32; }
    /// Threads a block.
    int64_t getThreads() const { return getConsumerThreads() + getProducerWarps() * 32; }
  }];
}

/// What gpumap.occupancy_hint writes: nothing in memory, a fact about its
/// kernel, so that it is not dead code and moves past no memory access.
def GPUMap_OccupancyResource : Resource<"::nerve::gpumap::OccupancyResource">;

def GPUMap_OccupancyHintOp : Op<GPUMap_Dialect, "occupancy_hint",
                                [MemoryEffects<[MemWrite<GPUMap_OccupancyResource>]>]> {
  let summary = "the blocks of this kernel that an SM should fit";
  let description = [{
    A strategy that decides its kernel's occupancy (a thread block cluster's
    row program: blocks whose shared memory lets several share an SM) says
    so in the body of the `gpu.launch` it builds, since kernel outlining
    keeps a launch's ops but not its attributes. `nerve-occupancy-hints`
    moves the number onto the outlined kernel as `nvvm.minctasm` (PTX's
    `.minnctapersm`), from which ptxas sets the kernel's register budget, and
    erases the op; of several in a kernel, the largest wins.

    ```mlir
    gpumap.occupancy_hint blocks_per_sm = 5
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntPositive]>:$blocks_per_sm);
  let assemblyFormat = "`blocks_per_sm` `=` $blocks_per_sm attr-dict";
  let hasVerifier = 1;
}

def GPUMap_TiledContractOp : Op<GPUMap_Dialect, "tiled_contract", [SingleBlock]> {
  let summary = "a matrix product over memrefs, tiled";
  let description = [{
    `output[m, n] (+)= sum over k of lhs[m, k] * rhs[n, k]`, summed in f32,
    where a `tdim.contract` with a `gpumap.contract_tiling` went: the
    structure of the product kept until `nerve-convert-gpumap-to-gpu`
    builds its launch. `lhs_k` and `rhs_k` say which dimension of each
    operand is contracted, `output_m` which of the output's is lhs's other
    one; any strides, one of them 1 in each operand. Operands are f16 or
    bf16 (the same; tensor cores), or f32 (an `fma` tiling, or
    `wgmma_tf32` / `mma_sync_tf32`: read as tf32), the output
    f16, bf16 or f32. `accumulate` adds to the
    output instead of overwriting it.

    The optional `epilogue` region is the contraction's: it takes the f32
    sum and one value per `with` input, each a memref indexed as the output
    is (a broadcast input has stride 0 along the dimensions it lacks) or a
    scalar, and yields the value stored.

    With `scan carry [...]`, lhs, the output and the `with` memrefs have
    a leading dimension (time) that the epilogue walks in order at each
    (m, n), carrying states that start from the `carry` values: after the
    inputs' values the region takes the states, and after the stored value
    yields their next values (a neuron reading a linear layer's product).
    `lhs_k` and `output_m` then count from the dimension after it; lhs's
    unit stride is along k.

    ```mlir
    gpumap.tiled_contract ins(%x, %w : memref<?x?xf16>, memref<?x?xf16>)
        with(%bias : memref<?x?xf16, strided<[0, 1]>>)
        outs(%y : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0
        tiling #gpumap.contract_tiling<instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
        epilogue {
    ^bb0(%sum: f32, %c: f16):
      %e = arith.extf %c : f16 to f32
      %r = arith.addf %sum, %e : f32
      gpumap.yield %r : f32
    }
    ```
  }];
  let arguments = (ins Arg<MemRefRankOf<[F16, BF16, F32], [2, 3]>, "", [MemRead]>:$lhs,
                       Arg<MemRefRankOf<[F16, BF16, F32], [2]>, "", [MemRead]>:$rhs,
                       Arg<Variadic<AnyType>, "", [MemRead]>:$with,
                       Arg<MemRefRankOf<[F16, BF16, F32], [2, 3]>, "", [MemRead, MemWrite]>:$output,
                       ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<1>]>:$lhs_k,
                       ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<1>]>:$rhs_k,
                       ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<1>]>:$output_m,
                       GPUMap_ContractTilingAttr:$tiling, UnitAttr:$accumulate,
                       OptionalAttr<F32ArrayAttr>:$carry);
  let regions = (region MaxSizedRegion<1>:$epilogue);
  let assemblyFormat = [{
    `ins` `(` $lhs `,` $rhs `:` type($lhs) `,` type($rhs) `)`
    (`with` `(` $with^ `:` type($with) `)`)?
    `outs` `(` $output `:` type($output) `)`
    `lhs_k` `=` $lhs_k `rhs_k` `=` $rhs_k `output_m` `=` $output_m `tiling` $tiling
    (`accumulate` $accumulate^)? (`scan` `carry` $carry^)? attr-dict (`epilogue` $epilogue^)?
  }];
  let extraClassDeclaration = [{
    /// Whether the epilogue scans the leading dimension.
    bool isScan() { return static_cast<bool>(getCarryAttr()); }
    /// The rank of the operands' and the output's matrices: 2, after the
    /// scanned dimension when there is one.
    unsigned scanOffset() { return isScan() ? 1 : 0; }
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def GPUMap_YieldOp : Op<GPUMap_Dialect, "yield", [Pure, Terminator,
                                                  HasParent<"TiledContractOp">]> {
  let summary = "yields the value a tiled contraction's epilogue stores";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // NERVE_DIALECT_GPUMAP_IR_GPUMAP
