// RUN: nerve-opt --version | FileCheck %s -DVERSION=%nerve_version -DLLVM=%llvm_version
// CHECK: nerve version [[VERSION]] (git
// CHECK: built with LLVM/MLIR [[LLVM]]
