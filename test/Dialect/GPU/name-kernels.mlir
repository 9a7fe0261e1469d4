// RUN: nerve-opt %s --nerve-name-kernels | FileCheck %s

// Each kernel takes its module's name; launches follow.
// CHECK-LABEL: func.func @two
// CHECK: gpu.launch_func @two_kernel::@two_kernel
// CHECK: gpu.launch_func @two_kernel_0::@two_kernel_0
// CHECK: gpu.module @two_kernel
// CHECK: gpu.func @two_kernel() kernel
// CHECK: gpu.module @two_kernel_0
// CHECK: gpu.func @two_kernel_0() kernel
// A module with two functions keeps their names.
// CHECK: gpu.module @pair
// CHECK: gpu.func @a() kernel
// CHECK: gpu.func @b() kernel
module attributes {gpu.container_module} {
  func.func @two() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @two_kernel::@two_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @two_kernel_0::@two_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @two_kernel {
    gpu.func @two_kernel() kernel { gpu.return }
  }
  gpu.module @two_kernel_0 {
    gpu.func @two_kernel() kernel { gpu.return }
  }
  gpu.module @pair {
    gpu.func @a() kernel { gpu.return }
    gpu.func @b() kernel { gpu.return }
  }
}
