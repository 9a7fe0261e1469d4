// Every gpu.module becomes a gpu.binary of the same name holding its PTX,
// in order, whether the modules are compiled concurrently (the default) or
// one after another.
// RUN: nerve-opt %s --nerve-serialize-gpu-modules | FileCheck %s
// RUN: nerve-opt %s --nerve-serialize-gpu-modules --mlir-disable-threading | FileCheck %s

// CHECK-NOT: gpu.module
// CHECK: gpu.binary @forward [#gpu.object<#nvvm.target<chip = "sm_90">, {{.*}}assembly = "
// CHECK-SAME: .target sm_90
// CHECK-SAME: .entry forward(
// CHECK: gpu.binary @backward [#gpu.object<#nvvm.target<chip = "sm_80">, {{.*}}assembly = "
// CHECK-SAME: .target sm_80
// CHECK-SAME: .entry backward(
// CHECK: func.func @host
module attributes {gpu.container_module} {
  gpu.module @forward [#nvvm.target<chip = "sm_90">] {
    llvm.func @forward(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %c = llvm.mlir.constant(1.0 : f32) : f32
      llvm.store %c, %p : f32, !llvm.ptr
      llvm.return
    }
  }
  gpu.module @backward [#nvvm.target<chip = "sm_80">] {
    llvm.func @backward(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %c = llvm.mlir.constant(2.0 : f32) : f32
      llvm.store %c, %p : f32, !llvm.ptr
      llvm.return
    }
  }
  func.func @host() {
    return
  }
}
