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

#endif // NERVE_TRANSFORMS_PASSES
