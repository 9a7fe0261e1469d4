// RUN: nerve-opt %s --nerve-bound-block-sizes | FileCheck %s

// A kernel's block size chosen at run time gets the largest any of its
// launches can ask for, as the host code's integer ranges bound it: here
// 1024 from one launch (a select of 1024 and at most 512), 300 from the
// other. A kernel with a launch whose block size has no bound, one with a
// constant block size (known_block_size) and one whose launches may exceed
// CUDA's 1024 threads a block are left alone.

module attributes {gpu.container_module} {
  func.func @host(%n: index, %wide: i1) {
    %c1 = arith.constant 1 : index
    %c300 = arith.constant 300 : index
    %c512 = arith.constant 512 : index
    %c1024 = arith.constant 1024 : index
    %c4096 = arith.constant 4096 : index
    %small = arith.minui %n, %c512 : index
    %threads = arith.select %wide, %c1024, %small : index
    %few = arith.minui %n, %c300 : index
    gpu.launch_func @bounded::@bounded blocks in (%n, %c1, %c1) threads in (%threads, %c1, %c1)
    gpu.launch_func @bounded::@bounded blocks in (%n, %c1, %c1) threads in (%few, %c1, %c1)
    gpu.launch_func @unbounded::@unbounded blocks in (%c1, %c1, %c1) threads in (%few, %c1, %c1)
    gpu.launch_func @unbounded::@unbounded blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1)
    gpu.launch_func @known::@known blocks in (%n, %c1, %c1) threads in (%c300, %c1, %c1)
    %big = arith.minui %n, %c4096 : index
    gpu.launch_func @too_many::@too_many blocks in (%c1, %c1, %c1) threads in (%big, %c1, %c1)
    return
  }
  // CHECK: gpu.func @bounded() kernel attributes {nvvm.maxntid = array<i32: 1024, 1, 1>}
  gpu.module @bounded {
    gpu.func @bounded() kernel {
      gpu.return
    }
  }
  // CHECK: gpu.func @unbounded() kernel {
  gpu.module @unbounded {
    gpu.func @unbounded() kernel {
      gpu.return
    }
  }
  // CHECK: gpu.func @known() kernel attributes {known_block_size = array<i32: 300, 1, 1>} {
  gpu.module @known {
    gpu.func @known() kernel attributes {known_block_size = array<i32: 300, 1, 1>} {
      gpu.return
    }
  }
  // CHECK: gpu.func @too_many() kernel {
  gpu.module @too_many {
    gpu.func @too_many() kernel {
      gpu.return
    }
  }
}
