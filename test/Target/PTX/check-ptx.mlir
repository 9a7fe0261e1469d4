// RUN: not nerve-opt %s --nerve-check-ptx -o /dev/null 2>&1 | FileCheck %s
// CHECK: error: the PTX of @k calls functions nothing provides (__nv_expf, __nv_logf); link libdevice (CUDA_HOME) or use functions nerve expands
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = ".version 7.8\0A.target sm_90\0A.extern .func  (.param .b32 func_retval0) __nv_expf\0A(\0A.param .b32 p\0A);\0A.extern .func  (.param .b32 func_retval0) __nv_logf\0A(\0A.param .b32 p\0A);\0A">]
}
