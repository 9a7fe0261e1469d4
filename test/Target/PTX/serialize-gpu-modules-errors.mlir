// A gpu.module without a target cannot become a binary: said, not crashed.
// RUN: nerve-opt %s --nerve-serialize-gpu-modules --verify-diagnostics

module attributes {gpu.container_module} {
  // expected-error @below {{the module has no target attributes}}
  gpu.module @untargeted {
    llvm.func @k() attributes {gpu.kernel} {
      llvm.return
    }
  }
}
