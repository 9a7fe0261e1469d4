// RUN: not nerve-opt %s --nerve-specialize-shapes="shapes=k:x=4" 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not nerve-opt %s --nerve-specialize-shapes="shapes=k:x=4x5" 2>&1 | FileCheck %s --check-prefix=STATIC
// RUN: not nerve-opt %s --nerve-specialize-shapes="shapes=k:z=4x8" 2>&1 | FileCheck %s --check-prefix=ARG
// RUN: not nerve-opt %s --nerve-specialize-shapes="shapes=other:x=4x8" 2>&1 | FileCheck %s --check-prefix=KERNEL
// RUN: not nerve-opt %s --nerve-specialize-shapes="shapes=k:x=4xq" 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: not nerve-opt %s --nerve-specialize-shapes="shapes=k:x=-4x8" 2>&1 | FileCheck %s --check-prefix=SIZE-NEG
// RUN: not nerve-opt %s --nerve-specialize-shapes="shapes=kx=4x8" 2>&1 | FileCheck %s --check-prefix=FORM
// RUN: not nerve-opt %s --nerve-specialize-shapes="shapes=k:s=4" 2>&1 | FileCheck %s --check-prefix=SCALAR

// RANK: error: argument `x` has rank 2, its shape 1 sizes
// STATIC: error: argument `x` has a static size 8 where its shape says 5
// ARG: error: nerve-specialize-shapes: @k has no argument `z`
// KERNEL: error: nerve-specialize-shapes: no kernel @other
// SIZE: error: nerve-specialize-shapes: `q` in `k:x=4xq` is neither a size nor ?
// SIZE-NEG: error: nerve-specialize-shapes: `-4` in `k:x=-4x8` is neither a size nor ?
// FORM: error: nerve-specialize-shapes: `kx=4x8` is not kernel:arg=SIZExSIZE...
// SCALAR: error: argument `s` is not a memref
func.func @k(%x: memref<?x8xf32>, %s: f32) attributes {nerve.kernel, nerve.arg_names = ["x", "s"]} {
  return
}
