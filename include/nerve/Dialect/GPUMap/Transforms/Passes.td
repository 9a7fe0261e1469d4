//===- Passes.td - gpumap's decisions made on nerve's ops -*- tablegen -*-===//
//
// Passes that decide how an op of nerve's dialects maps onto the GPU and
// write the decision as a gpumap attribute, before the op is lowered.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_GPUMAP_TRANSFORMS_PASSES
#define NERVE_DIALECT_GPUMAP_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def SelectContractTiling : Pass<"nerve-gpu-select-contract-tiling", "::mlir::ModuleOp"> {
  let summary = "Chooses which contractions run as tiled kernels, and their tiles";
  let description = [{
    Decides, and writes the decision down: each `tdim.contract` that the
    tiling heuristic takes (nerve/Dialect/GPUMap/Heuristics/
    ContractTiling.h: float operands of one type, f16 or bf16 on tensor
    cores, f32 with IEEE fused multiply-adds; one row, column and
    contracted dimension, a unit stride in each operand; with `tf32`, f32
    operands take tensor cores as tf32) gets a
    `gpumap.contract_tiling` attribute sized for `chip`; the others keep
    the general lowering. A contraction that already has a tiling keeps
    it (a test forces one so). `convert-tdim-to-scf` lowers a contraction
    with a tiling to a `gpumap.tiled_contract`.
  }];
  let dependentDialects = ["::nerve::gpumap::GPUMapDialect"];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90\"",
           "The GPU the tiles are sized for (sm_80, sm_89, sm_90, sm_100)">,
    Option<"tf32", "tf32", "bool", "false",
           "f32 operands may be read as tf32 on tensor cores (10-bit mantissas)">
  ];
}

#endif // NERVE_DIALECT_GPUMAP_TRANSFORMS_PASSES
