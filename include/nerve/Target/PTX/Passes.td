//===- Passes.td - PTX from GPU modules, and its checks ---*- tablegen -*-===//
//
// Serialising nerve's GPU modules to PTX (in parallel) and checking what
// the PTX may not contain.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_TARGET_PTX_PASSES
#define NERVE_TARGET_PTX_PASSES

include "mlir/Pass/PassBase.td"

def SerializeGPUModules : Pass<"nerve-serialize-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Compiles every gpu.module to PTX, the modules concurrently";
  let description = [{
    What `gpu-module-to-binary{format=isa}` does, with the modules' code
    generation (the bulk of a cold compile) run in parallel on the
    context's threads: each `gpu.module` is serialized by its target
    attributes, then, in order, replaced by a `gpu.binary` of the same name
    holding the objects. With threading disabled it runs the modules one
    after another, exactly as the upstream pass.
  }];
}

def CheckPTX : Pass<"nerve-check-ptx", "::mlir::ModuleOp"> {
  let summary = "Rejects PTX that declares external functions";
  let description = [{
    After `gpu-module-to-binary`, fails with the names of any `.extern .func`
    the PTX still declares (a library function nothing linked), so that no
    module that cannot load ever reaches the driver.
  }];
}

#endif // NERVE_TARGET_PTX_PASSES
