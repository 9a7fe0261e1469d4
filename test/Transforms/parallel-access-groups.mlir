// RUN: nerve-opt %s --nerve-parallel-access-groups | FileCheck %s
// RUN: nerve-opt %s --nerve-parallel-access-groups --convert-scf-to-cf --convert-arith-to-llvm --convert-cf-to-llvm --nerve-attach-loop-annotations | FileCheck %s --check-prefix=BRANCH

// Every access in a loop declared parallel, nested loops included, joins
// the loop's access group; accesses outside it do not.

#g0 = #llvm.access_group<id = distinct[0]<>>
#g1 = #llvm.access_group<id = distinct[1]<>>
#outer = #llvm.loop_annotation<parallelAccesses = #g0>
#inner = #llvm.loop_annotation<parallelAccesses = #g1>

// CHECK-DAG: #[[G0:.*]] = #llvm.access_group<id = distinct[0]<>>
// CHECK-DAG: #[[G1:.*]] = #llvm.access_group<id = distinct[1]<>>
// CHECK-LABEL: func.func @nest
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: scf.for
// CHECK:   llvm.load %{{.*}} {access_groups = [#[[G0]]]} : !llvm.ptr -> f32
// CHECK:   scf.for
// CHECK:     llvm.store %{{.*}}, %{{.*}} {access_groups = [#[[G1]], #[[G0]]]} : f32, !llvm.ptr
// BRANCH-LABEL: func.func @nest
// BRANCH: llvm.br ^{{.*}} {loop_annotation = #{{.*}}}
// BRANCH: llvm.br ^{{.*}} {loop_annotation = #{{.*}}}
// BRANCH-NOT: llvm.loop_annotation =
func.func @nest(%p: !llvm.ptr, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %first = llvm.load %p : !llvm.ptr -> f32
  scf.for %i = %c0 to %n step %c1 {
    %v = llvm.load %p : !llvm.ptr -> f32
    scf.for %j = %c0 to %n step %c1 {
      llvm.store %v, %p : f32, !llvm.ptr
    } {llvm.loop_annotation = #inner}
  } {llvm.loop_annotation = #outer}
  return
}
