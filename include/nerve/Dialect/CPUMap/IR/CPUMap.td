//===- CPUMap.td - how a kernel's loops map onto the CPU's threads -*- tablegen -*-===//
//
// The decision nerve-cpu-select-strategy makes for each outermost parallel
// loop of a kernel and nerve-apply-cpu-strategy applies: a registered,
// verified attribute, so the choice is visible, testable and forceable.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_CPUMAP_IR_CPUMAP
#define NERVE_DIALECT_CPUMAP_IR_CPUMAP

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def CPUMap_Dialect : Dialect {
  let name = "cpumap";
  let cppNamespace = "::nerve::cpumap";
  let summary = "How the loops of a kernel map onto the host CPU's threads";
  let description = [{
    One attribute, `cpumap.strategy`, on an outermost `scf.parallel` of a
    kernel function: how the CPU target runs it, which
    `nerve-cpu-select-strategy` chose (or a test wrote by hand) and
    `nerve-apply-cpu-strategy` applies, leaving one parallel loop of tasks
    per strategy for upstream's `convert-scf-to-openmp`. The dialect
    verifies that the strategy fits the loop it is on.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The name of the attribute on a loop: `cpumap.strategy`.
    static constexpr ::llvm::StringLiteral kStrategyAttrName = "cpumap.strategy";
  }];
}

def CPUMap_StrategyKind : I32EnumAttr<"StrategyKind", "a mapping of a loop onto CPU threads", [
    I32EnumAttrCase<"sequential", 0>,
    I32EnumAttrCase<"threads", 1>,
    I32EnumAttrCase<"time_chunks", 2>,
    I32EnumAttrCase<"whole_reduction", 3>
  ]> {
  let cppNamespace = "::nerve::cpumap";
  let genSpecializedAttr = 0;
}

def CPUMap_StrategyAttr : AttrDef<CPUMap_Dialect, "Strategy"> {
  let mnemonic = "strategy";
  let summary = "the strategy that maps a loop onto the CPU's threads";
  let description = [{
    `kind` is the mapping (docs/compiler.md describes each):
    - `sequential`: the loop runs as written on the calling thread (a
      reduction whose initial values are not constants).
    - `threads`: the iterations of the loop's outermost dimension are split
      evenly across the threads; each walks the inner dimensions in order,
      and LLVM vectorises the innermost. Takes no `chunk`.
    - `time_chunks`: a loop whose body is a recurrence (one sequential
      `scf.for` carrying values: a neuron's time loop) runs its innermost
      dimension `chunk` iterations at a time, each chunk a task: the time
      loop outside, the chunk's iterations inside it (a loop LLVM
      vectorises), the carried values in a scratch buffer of `chunk`
      elements. `chunk` is a multiple of 8 from 8 to 65536.
    - `whole_reduction`: a loop with results (a whole-tensor sum) reduces
      blocks of whole iterations of its outermost dimension, each block at
      least `chunk` iterations in all, into one partial result each, in
      parallel; the partials are then combined in order. The blocks depend
      on the shape alone, so the result is bit-identical whatever the
      number of threads. `chunk` is at least 1.

    `loops`, for `threads` only: this loop and the `loops - 1` outermost
    parallel loops after it (a softmax's row maximum, row sum and
    elementwise pass) run in the same tasks: a task runs its iterations of
    the outermost dimension through the first loop, then the same
    iterations through the next, so a row stays in cache between them.
    They range over the same outermost dimension and any buffer one writes
    and another accesses is accessed at the row that dimension gives (its
    first index); nerve-apply-cpu-strategy checks this. 1 by default.

    `lanes`, for any kind: a fold inside a task (an `scf.for` whose every
    carried value is combined by one op with a neutral element, `addf`,
    `maximumf`, ..., with what its iteration computes, writing no memory:
    a row's sum or maximum) keeps `lanes` partial results, iteration j
    going to partial j mod `lanes`, which LLVM vectorises; the initial
    values, the partials and the iterations past the last whole group of
    `lanes` then combine in order. 0, the default, runs folds as written;
    otherwise a power of two from 2 to 64. The grouping depends on `lanes`
    alone: results do not change with the number of threads.
  }];
  let parameters = (ins
    EnumParameter<CPUMap_StrategyKind>:$kind,
    DefaultValuedParameter<"int64_t", "0">:$chunk,
    DefaultValuedParameter<"int64_t", "1">:$loops,
    DefaultValuedParameter<"int64_t", "0">:$lanes
  );
  let assemblyFormat = "`<` $kind (`,` struct($chunk, $loops, $lanes)^)? `>`";
  let genVerifyDecl = 1;
}

#endif // NERVE_DIALECT_CPUMAP_IR_CPUMAP
