// An f64 function has no expansion: without libdevice it is an error.
// RUN: nerve-opt %s --pass-pipeline='builtin.module(gpu.module(nerve-lower-gpu-math))' -verify-diagnostics
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @f64(%x: f64, %p: memref<f64>) kernel {
      // expected-error @+1 {{'math.exp' op on 'f64' needs libdevice, and no CUDA toolkit provides one; set CUDA_HOME or pass the path of libdevice.10.bc}}
      %e = math.exp %x : f64
      memref.store %e, %p[] : memref<f64>
      gpu.return
    }
  }
}
