// RUN: nerve-opt %s --nerve-half-storage-math | FileCheck %s

// A kernel whose floating-point buffers are all 16-bit gets approximate f32
// division, exp, log, log1p and tanh (afn), and f32 multiplications,
// additions and subtractions that may contract into fused multiply-adds;
// other math (erf) and f64 stay exact.
// CHECK-LABEL: gpu.func @half_only
// CHECK:         math.exp %{{.*}} fastmath<afn> : f32
// CHECK:         math.log %{{.*}} fastmath<afn> : f32
// CHECK:         arith.divf %{{.*}}, %{{.*}} fastmath<afn> : f32
// CHECK:         math.tanh %{{.*}} fastmath<afn> : f32
// CHECK:         math.log1p %{{.*}} fastmath<afn> : f32
// CHECK:         math.erf %{{.*}} : f32
// CHECK:         arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK:         arith.addf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK:         arith.subf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK-NOT:     fastmath
// CHECK:         arith.divf %{{.*}}, %{{.*}} : f64
// CHECK:         arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK:         gpu.return

// Any f32 buffer (here a partial sum) keeps the kernel exact, its
// multiplications uncontracted too.
// CHECK-LABEL: gpu.func @mixed
// CHECK-NOT:     fastmath
// CHECK:         gpu.return

// bf16 counts as 16-bit; flags already present are kept.
// CHECK-LABEL: gpu.func @bf16_keeps_flags
// CHECK:         arith.divf %{{.*}}, %{{.*}} fastmath<nnan,afn> : f32

// f32 scratch the host allocates, launches with and frees does not count,
// nor do the host check's reads of its address and strides.
// CHECK-LABEL: gpu.func @with_scratch
// CHECK:         math.exp %{{.*}} fastmath<afn> : f32
// CHECK:         arith.divf %{{.*}}, %{{.*}} fastmath<afn> : f32

// The same kernel launched with an f32 buffer the caller sees stays exact.
// CHECK-LABEL: gpu.func @with_escaping_f32
// CHECK-NOT:     fastmath
// CHECK:         gpu.return

// An f32 scalar the kernel only reads (a parameter such as PLIF's weight)
// does not count...
// CHECK-LABEL: gpu.func @reads_f32_parameter
// CHECK:         math.exp %{{.*}} fastmath<afn> : f32
// CHECK:         arith.divf %{{.*}}, %{{.*}} fastmath<afn> : f32

// ...but one it writes keeps the kernel exact.
// CHECK-LABEL: gpu.func @writes_f32_scalar
// CHECK-NOT:     fastmath
// CHECK:         gpu.return

// Integer buffers do not count; with no float buffer nothing changes.
// CHECK-LABEL: gpu.func @no_float_buffers
// CHECK-NOT:     fastmath
// CHECK:         gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @half_only(%x: memref<?xf16>, %y: memref<?xf16>, %mask: memref<?xi8>, %d: f64) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      %h = memref.load %x[%c0] : memref<?xf16>
      %v = arith.extf %h : f16 to f32
      %e = math.exp %v : f32
      %l = math.log %e : f32
      %q = arith.divf %one, %l : f32
      %t = math.tanh %q : f32
      %p = math.log1p %t : f32
      %f = math.erf %p : f32
      %m = arith.mulf %f, %v : f32
      %a = arith.addf %m, %one : f32
      %s = arith.subf %a, %v : f32
      %dd = arith.divf %d, %d : f64
      %dm = arith.mulf %dd, %d : f64
      %r = arith.truncf %s : f32 to f16
      memref.store %r, %y[%c0] : memref<?xf16>
      gpu.return
    }
    gpu.func @mixed(%x: memref<?xf16>, %p: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %h = memref.load %x[%c0] : memref<?xf16>
      %v = arith.extf %h : f16 to f32
      %e = math.exp %v : f32
      %q = arith.divf %e, %v : f32
      %qv = arith.mulf %q, %v : f32
      memref.store %qv, %p[%c0] : memref<?xf32>
      gpu.return
    }
    gpu.func @bf16_keeps_flags(%x: memref<?xbf16>) kernel {
      %c0 = arith.constant 0 : index
      %h = memref.load %x[%c0] : memref<?xbf16>
      %v = arith.extf %h : bf16 to f32
      %q = arith.divf %v, %v fastmath<nnan> : f32
      %r = arith.truncf %q : f32 to bf16
      memref.store %r, %x[%c0] : memref<?xbf16>
      gpu.return
    }
    gpu.func @with_scratch(%x: memref<?xf16>, %s: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %h = memref.load %x[%c0] : memref<?xf16>
      %v = arith.extf %h : f16 to f32
      %e = math.exp %v : f32
      %m = memref.load %s[%c0] : memref<?xf32>
      %q = arith.divf %e, %m : f32
      %r = arith.truncf %q : f32 to f16
      memref.store %r, %x[%c0] : memref<?xf16>
      gpu.return
    }
    gpu.func @with_escaping_f32(%x: memref<?xf16>, %s: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %h = memref.load %x[%c0] : memref<?xf16>
      %v = arith.extf %h : f16 to f32
      %e = math.exp %v : f32
      %q = arith.divf %e, %v : f32
      memref.store %q, %s[%c0] : memref<?xf32>
      gpu.return
    }
    gpu.func @reads_f32_parameter(%x: memref<?xf16>, %w: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %h = memref.load %x[%c0] : memref<?xf16>
      %v = arith.extf %h : f16 to f32
      %p = memref.load %w[] : memref<f32>
      %e = math.exp %p : f32
      %q = arith.divf %v, %e : f32
      %r = arith.truncf %q : f32 to f16
      memref.store %r, %x[%c0] : memref<?xf16>
      gpu.return
    }
    gpu.func @writes_f32_scalar(%x: memref<?xf16>, %w: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %h = memref.load %x[%c0] : memref<?xf16>
      %v = arith.extf %h : f16 to f32
      %e = math.exp %v : f32
      %q = arith.divf %v, %e : f32
      memref.store %q, %w[] : memref<f32>
      gpu.return
    }
    gpu.func @no_float_buffers(%m: memref<?xi32>, %s: f32) kernel {
      %c0 = arith.constant 0 : index
      %q = arith.divf %s, %s : f32
      %i = arith.fptosi %q : f32 to i32
      memref.store %i, %m[%c0] : memref<?xi32>
      gpu.return
    }
  }

  // The host side: one scratch buffer that only launches see, and one f32
  // buffer the caller passed in.
  func.func @host(%x: memref<?xf16>, %out: memref<?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %scratch = gpu.alloc (%n) : memref<?xf32>
    %base, %offset, %size, %stride = memref.extract_strided_metadata %scratch : memref<?xf32> -> memref<f32>, index, index, index
    %address = memref.extract_aligned_pointer_as_index %scratch : memref<?xf32> -> index
    gpu.launch_func @kernels::@with_scratch blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<?xf16>, %scratch : memref<?xf32>)
    gpu.launch_func @kernels::@with_escaping_f32 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<?xf16>, %out : memref<?xf32>)
    gpu.dealloc %scratch : memref<?xf32>
    return
  }
}
