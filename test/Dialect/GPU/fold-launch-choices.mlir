// RUN: nerve-opt %s --pass-pipeline='builtin.module(func.func(nerve-fold-launch-choices))' | FileCheck %s

// A choice the constants decide keeps the launch it chooses; the other one
// is gone. A choice by a run-time value keeps both. The launches' bodies
// are not folded (the kernel's own add of two constants stays).
// CHECK-LABEL: func.func @choices
// CHECK-SAME:    (%[[N:[^:]*]]: index, %[[FLAG:[^:]*]]: i1
// CHECK-NOT:     scf.if %{{.*}} {
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %[[N]], {{.*}}) threads({{.*}}) in ({{.*}} = %c64
// CHECK:           arith.addi %c2{{.*}}, %c3{{.*}} : index
// CHECK:           gpu.terminator
// CHECK-NOT:     threads({{.*}}) in ({{.*}} = %c128
// CHECK:         scf.if %[[FLAG]] {
// CHECK:           gpu.launch
// CHECK:         } else {
// CHECK:           gpu.launch
// CHECK:         return
func.func @choices(%n: index, %flag: i1, %out: memref<?xindex>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %columns = arith.constant 4096 : index
  %small = arith.cmpi ule, %columns, %c64 : index
  %threads = arith.select %small, %c128, %c64 : index
  %is64 = arith.cmpi eq, %threads, %c64 : index
  scf.if %is64 {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %v = arith.addi %c2, %c3 : index
      memref.store %v, %out[%bx] : memref<?xindex>
      gpu.terminator
    }
  } else {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
      memref.store %c1, %out[%bx] : memref<?xindex>
      gpu.terminator
    }
  }
  scf.if %flag {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
      memref.store %c64, %out[%bx] : memref<?xindex>
      gpu.terminator
    }
  } else {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
      memref.store %c128, %out[%bx] : memref<?xindex>
      gpu.terminator
    }
  }
  return
}
