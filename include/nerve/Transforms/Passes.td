//===- Passes.td - nerve's passes over any dialect ---------*- tablegen -*-===//
//
// Transforms of upstream's func and memref dialects that no nerve dialect
// owns: what the compiler does to a kernel's interface once its tensors are
// memrefs.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_TRANSFORMS_PASSES
#define NERVE_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def SpecializeShapes : Pass<"nerve-specialize-shapes", "::mlir::ModuleOp"> {
  let summary = "Gives a kernel's memref arguments the static sizes it is compiled for";
  let description = [{
    Each entry of `shapes`, `kernel:arg=S0xS1x...`, names a kernel (a
    `func.func` with `nerve.kernel`), one of its arguments (by
    `nerve.arg_names`) and a size per dimension of that memref, `?` for
    one left dynamic. The argument's type becomes the memref of those
    sizes (strides and offset as they were), and its uses take a
    `memref.cast` back to the dynamic type, which canonicalization folds
    into them: `memref.dim` becomes a constant, loops get static trip
    counts, and the mapping decides at compile time what it otherwise
    decides at run time. Launches must then bind exactly these sizes;
    nerve's runtime checks them.

    ```mlir
    // nerve-specialize-shapes{shapes=softmax:x=4096x1024}
    func.func @softmax(%x: memref<4096x1024xf32>, ...) {
      %0 = memref.cast %x : memref<4096x1024xf32> to memref<?x?xf32>
    ```

    A kernel or argument that does not exist, a rank or size that does not
    match the argument's type, or a malformed entry is an error.
  }];
  let options = [
    ListOption<"shapes", "shapes", "std::string",
               "kernel:arg=SIZExSIZE... (? for a dynamic size), one per argument">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def SelectCPUStrategy : Pass<"nerve-cpu-select-strategy", "::mlir::ModuleOp"> {
  let summary = "Chooses how each outermost parallel loop of a kernel runs on the CPU's threads";
  let description = [{
    Decide, then apply: writes a `#cpumap.strategy` on every outermost
    `scf.parallel` of every kernel that has none (a test or a user may
    force one by writing it first), which `nerve-apply-cpu-strategy`
    applies:

    - a loop with results: `whole_reduction`, its blocks sized by
      `chooseReductionChunk` from the widest element it loads
      (`sequential` when its initial values are not constants);
    - a loop whose body is a recurrence (a neuron's time loop:
      `cpumap::recurrenceOf`): `time_chunks`, its chunk from
      `chooseTimeChunk` and the scratch bytes an iteration needs;
    - any other: `threads`.

    `profile` describes the CPU the code is for, `vector=BYTES,l1=BYTES`;
    empty, the host this runs on.

    ```mlir
    scf.parallel (%n) = (%c0) to (%N) step (%c1) {
      %r = scf.for %t = %c0 to %T step %c1 iter_args(%v = %zero) -> (f32) {...}
    } {cpumap.strategy = #cpumap.strategy<time_chunks, chunk = 1024>}
    ```
  }];
  let options = [
    Option<"profile", "profile", "std::string", "\"\"",
           "the CPU: vector=BYTES,l1=BYTES (empty: this host)">
  ];
  let dependentDialects = ["::nerve::cpumap::CPUMapDialect"];
}

def ApplyCPUStrategy : Pass<"nerve-apply-cpu-strategy", "::mlir::ModuleOp"> {
  let summary = "Rewrites each outermost parallel loop into the tasks its #cpumap.strategy says";
  let description = [{
    Reads the `#cpumap.strategy` of every outermost `scf.parallel` (a loop
    without one is an error) and leaves, per loop, at most one
    `scf.parallel` without results over the tasks, for upstream's
    `convert-scf-to-openmp` to run on threads; every loop nested in a task
    becomes `scf.for`, run in order. The loops it makes from parallel
    dimensions (a chunk's iterations, the inner dimensions of `threads`)
    carry `llvm.loop_annotation<parallelAccesses = ...>`: LLVM may
    vectorise them without run-time alias checks
    (nerve-parallel-access-groups).

    - `sequential`: the loop becomes nested `scf.for`s on the calling
      thread.
    - `threads`: the outermost dimension stays parallel, the inner ones
      become `scf.for`s.
    - `time_chunks`: a parallel loop over the other dimensions and chunks
      of the innermost (`chunk` iterations, or the threads' share rounded
      up to 8 when that is fewer: `omp_get_max_threads`); a task puts the values that cross from one part of
      an iteration to another in `memref.alloca` scratch of `chunk`
      elements, runs the part before the recurrence for its iterations,
      then the recurrence's loop with the chunk's iterations inside each
      step, then the part after.
    - `whole_reduction`: a parallel loop over blocks of the outermost
      dimension, each storing its partial results in a buffer, then an
      `scf.for` combining the partials in order with the loop's reduction
      regions.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def PolynomialMath : Pass<"nerve-polynomial-math", "::mlir::ModuleOp"> {
  let summary = "f32 exp, expm1, log1p, tanh and erf as polynomials, which the CPU target vectorises";
  let description = [{
    On the CPU, `math.exp`, `math.expm1`, `math.log1p`, `math.tanh` and
    `math.erf` of f32 (scalars or vectors)
    otherwise become calls to libm, one element at a time: a loop holding
    one is not vectorised (a surrogate's backward, softmax, log_softmax).
    This pass rewrites them with upstream's polynomial approximations
    (`populateMathPolynomialApproximationPatterns`; upstream registers no
    pass for them): range reduction and a polynomial in plain arithmetic,
    within 5 f32 ulps of the exact result (docs/decisions.md measures
    them; exp's results below the smallest normal number are 0). f64
    functions, and `math.log` and `math.log2` (whose approximations take
    subnormal arguments as the smallest normal number), stay calls to libm.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def ParallelAccessGroups : Pass<"nerve-parallel-access-groups", "::mlir::ModuleOp"> {
  let summary = "Gives the loads and stores of loops declared parallel their LLVM access groups";
  let description = [{
    An `scf.for` whose `llvm.loop_annotation` lists `parallelAccesses`
    (nerve-apply-cpu-strategy declares so the loops it makes from parallel
    dimensions) promises LLVM that its iterations touch no memory another
    touches; LLVM believes the promise for the memory accesses tagged with
    those access groups. Once memrefs are lowered (after
    `finalize-memref-to-llvm`, before `convert-scf-to-cf`, which moves the
    annotation to the loop's back edge), this pass tags every `llvm.load`,
    `llvm.store` and other access in such a loop, nested loops included,
    with the loop's groups. LLVM then vectorises the loop without run-time
    alias checks (checks that failed for loops walking rows backwards, a
    neuron's backward through time, leaving them scalar).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def AttachLoopAnnotations : Pass<"nerve-attach-loop-annotations", "::mlir::ModuleOp"> {
  let summary = "Moves the loop annotations SCF's lowering leaves on branches into llvm.br's own";
  let description = [{
    `convert-scf-to-cf` moves an `scf.for`'s `llvm.loop_annotation` to the
    loop's back edge, and `convert-cf-to-llvm` keeps it there as a
    discardable attribute of the `llvm.br`, which translation to LLVM IR
    ignores: the loop would lose its metadata (nerve's parallel-accesses
    declarations among it). This pass, run once branches are in the LLVM
    dialect, makes each such attribute the branch's `loop_annotation`.
  }];
}

#endif // NERVE_TRANSFORMS_PASSES
