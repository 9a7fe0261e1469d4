// Every tdim op parses, prints and parses again, in custom and generic form.
// RUN: nerve-opt %s | FileCheck %s
// RUN: nerve-opt %s | nerve-opt | FileCheck %s
// RUN: nerve-opt %s --mlir-print-op-generic | nerve-opt | FileCheck %s

!m = !tdim.tensor<[r: ?, c: ?], f32>
!v = !tdim.tensor<[c: ?], f32>
!rows = !tdim.tensor<[r: ?], f32>

// CHECK-LABEL: tdim.kernel @index_ops
tdim.kernel @index_ops(%x: !m) {
  // CHECK: %[[N:.*]] = tdim.size %x[c] : !tdim.tensor<[r: ?, c: ?], f32>
  %n = tdim.size %x[c] : !m
  // CHECK: %[[C3:.*]] = tdim.const 3 : !tdim.index<c>
  %c3 = tdim.const 3 : !tdim.index<c>
  // CHECK: tdim.add %[[N]], %[[C3]] : !tdim.index<c>
  %a = tdim.add %n, %c3 : !tdim.index<c>
  // CHECK: tdim.sub
  %s = tdim.sub %a, %c3 : !tdim.index<c>
  // CHECK: tdim.fold %{{.*}} : !tdim.index<c> to !tdim.index<c/4>
  %f = tdim.fold %s : !tdim.index<c> to !tdim.index<c/4>
  // CHECK: tdim.unfold %{{.*}} : !tdim.index<c/4> to !tdim.index<c>
  %u = tdim.unfold %f : !tdim.index<c/4> to !tdim.index<c>
  // CHECK: tdim.cast %{{.*}} : !tdim.index<c> to !tdim.index<r>
  %k = tdim.cast %u : !tdim.index<c> to !tdim.index<r>
  // CHECK: tdim.to_index %{{.*}} : !tdim.index<r>
  %i = tdim.to_index %k : !tdim.index<r>
  // CHECK: tdim.from_index %{{.*}} : !tdim.index<c>
  %j = tdim.from_index %i : !tdim.index<c>
  // CHECK: tdim.cmp lt, %{{.*}}, %{{.*}} : !tdim.index<c>
  %lt = tdim.cmp lt, %j, %n : !tdim.index<c>
  tdim.return
}

// CHECK-LABEL: tdim.kernel @loops
tdim.kernel @loops(%x: !m) -> (%y: !m) {
  %r0 = tdim.const 0 : !tdim.index<r>
  %nr = tdim.size %x[r] : !m
  %c0 = tdim.const 0 : !tdim.index<c>
  %nc = tdim.size %x[c] : !m
  // CHECK: tdim.for %[[R:.*]] over r from %{{.*}} to %{{.*}} parallel {
  tdim.for %ri over r from %r0 to %nr parallel {
    %zero = arith.constant 0.0 : f32
    // CHECK: tdim.for %[[C:.*]] over c from %{{.*}} to %{{.*}} step 2 reverse iter_args(%{{.*}} = %{{.*}}) -> (f32) {
    %sum = tdim.for %ci over c from %c0 to %nc step 2 reverse iter_args(%acc = %zero) -> (f32) {
      // CHECK: tdim.load %x[c = %[[C]], r = %[[R]]] : !tdim.tensor<[r: ?, c: ?], f32>
      %v = tdim.load %x[c = %ci, r = %ri] : !m
      %s = arith.addf %acc, %v : f32
      // CHECK: tdim.store %{{.*}}, %y[r = %[[R]], c = %[[C]]] : !tdim.tensor<[r: ?, c: ?], f32>
      tdim.store %s, %y[r = %ri, c = %ci] : !m
      tdim.yield %s : f32
    }
  }
  tdim.return
}

// CHECK-LABEL: tdim.kernel @views
tdim.kernel @views(%x: !m) {
  %c1 = tdim.const 1 : !tdim.index<c>
  %r2 = tdim.const 2 : !tdim.index<r>
  %n = tdim.size %x[c] : !m
  // CHECK: tdim.slice %x along c from %{{.*}} length 4 : !tdim.tensor<[r: ?, c: ?], f32>
  %s = tdim.slice %x along c from %c1 length 4 : !m
  // CHECK: tdim.slice %x along c from %{{.*}} length %{{.*}} : !tdim.tensor<[r: ?, c: ?], f32>
  %d = tdim.slice %x along c from %c1 length %n : !m
  // CHECK: tdim.select %x[r = %{{.*}}] : !tdim.tensor<[r: ?, c: ?], f32>
  %row = tdim.select %x[r = %r2] : !m
  // CHECK: tdim.view %x as [c, r] : !tdim.tensor<[r: ?, c: ?], f32>
  %t = tdim.view %x as [c, r] : !m
  // CHECK: tdim.alloc(%{{.*}}) : !tdim.tensor<[c: ?], f16>
  %a = tdim.alloc(%n) : !tdim.tensor<[c: ?], f16>
  tdim.return
}

// CHECK-LABEL: tdim.kernel @scan
// CHECK: tdim.contract ins(%x, %w : !tdim.tensor<[t: ?, b: ?, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>) outs(%s : !tdim.tensor<[t: ?, b: ?, j: ?], f16>) scan t carry [0.000000e+00 : f32, 1.000000e+00 : f32] epilogue {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: tdim.yield %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32
tdim.kernel @scan(%x: !tdim.tensor<[t: ?, b: ?, k: ?], f16>, %w: !tdim.tensor<[j: ?, k: ?], f16>) -> (%s: !tdim.tensor<[t: ?, b: ?, j: ?], f16>) {
  tdim.contract ins(%x, %w : !tdim.tensor<[t: ?, b: ?, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>) outs(%s : !tdim.tensor<[t: ?, b: ?, j: ?], f16>) scan t carry [0.0 : f32, 1.0 : f32] epilogue {
  ^bb0(%sum: f32, %v: f32, %u: f32):
    %n = arith.addf %v, %sum : f32
    tdim.yield %n, %n, %u : f32, f32, f32
  }
  tdim.return
}

// CHECK-LABEL: tdim.kernel @whole_tensor
tdim.kernel @whole_tensor(%x: !m, %b: !v, %w: !v, %k: !tdim.tensor<[c: ?, j: ?], f32>, %s: f32)
    -> (%y: !m, %rows: !rows, %mm: !tdim.tensor<[r: ?, j: ?], f32>, %cat: !tdim.tensor<[r: ?, c: ?], f32>) {
  // CHECK: tdim.map ins(%x, %b, %s : !tdim.tensor<[r: ?, c: ?], f32>, !tdim.tensor<[c: ?], f32>, f32) outs(%y : !tdim.tensor<[r: ?, c: ?], f32>) {
  tdim.map ins(%x, %b, %s : !m, !v, f32) outs(%y : !m) {
  ^bb0(%xv: f32, %bv: f32, %sv: f32):
    %0 = arith.mulf %xv, %sv : f32
    %1 = arith.addf %0, %bv : f32
    tdim.yield %1 : f32
  }
  // CHECK: tdim.reduce ins(%x : !tdim.tensor<[r: ?, c: ?], f32>) outs(%rows : !tdim.tensor<[r: ?], f32>) over [c] init [0.000000e+00 : f32] map {
  // CHECK: } combine {
  // CHECK: } post {
  tdim.reduce ins(%x : !m) outs(%rows : !rows) over [c] init [0.0 : f32]
    map {
    ^bb0(%v: f32):
      %sq = arith.mulf %v, %v : f32
      tdim.yield %sq : f32
    }
    combine {
    ^bb0(%p: f32, %q: f32):
      %sum = arith.addf %p, %q : f32
      tdim.yield %sum : f32
    }
    post {
    ^bb0(%acc: f32, %count: index):
      %root = math.sqrt %acc : f32
      tdim.yield %root : f32
    }
  // CHECK: tdim.broadcast ins(%b : !tdim.tensor<[c: ?], f32>) outs(%y : !tdim.tensor<[r: ?, c: ?], f32>)
  tdim.broadcast ins(%b : !v) outs(%y : !m)
  // CHECK: tdim.relayout ins(%x : !tdim.tensor<[r: ?, c: ?], f32>) outs(%y : !tdim.tensor<[r: ?, c: ?], f32>)
  tdim.relayout ins(%x : !m) outs(%y : !m)
  // CHECK: tdim.concat ins(%x, %y : {{.*}}) outs(%cat : {{.*}}) along c
  tdim.concat ins(%x, %y : !m, !m) outs(%cat : !m) along c
  // A contraction without scan ends its line where its output's type does.
  // CHECK: tdim.contract ins(%x, %k : !tdim.tensor<[r: ?, c: ?], f32>, !tdim.tensor<[c: ?, j: ?], f32>) outs(%mm : !tdim.tensor<[r: ?, j: ?], f32>){{$}}
  tdim.contract ins(%x, %k : !m, !tdim.tensor<[c: ?, j: ?], f32>) outs(%mm : !tdim.tensor<[r: ?, j: ?], f32>)
  // CHECK: tdim.contract ins(%x, %k : !tdim.tensor<[r: ?, c: ?], f32>, !tdim.tensor<[c: ?, j: ?], f32>) outs(%mm : !tdim.tensor<[r: ?, j: ?], f32>) accumulate{{$}}
  tdim.contract ins(%x, %k : !m, !tdim.tensor<[c: ?, j: ?], f32>) outs(%mm : !tdim.tensor<[r: ?, j: ?], f32>) accumulate
  // CHECK: tdim.contract ins(%x, %k : !tdim.tensor<[r: ?, c: ?], f32>, !tdim.tensor<[c: ?, j: ?], f32>) with(%{{.*}}, %{{.*}} : !tdim.tensor<[j: ?], f32>, f32) outs(%mm : !tdim.tensor<[r: ?, j: ?], f32>) epilogue {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
  // CHECK: tdim.yield %{{.*}} : f32
  %nj = tdim.size %k[j] : !tdim.tensor<[c: ?, j: ?], f32>
  %bias = tdim.alloc(%nj) : !tdim.tensor<[j: ?], f32>
  %half = arith.constant 0.5 : f32
  tdim.contract ins(%x, %k : !m, !tdim.tensor<[c: ?, j: ?], f32>) with(%bias, %half : !tdim.tensor<[j: ?], f32>, f32)
      outs(%mm : !tdim.tensor<[r: ?, j: ?], f32>) epilogue {
  ^bb0(%sum: f32, %cb: f32, %hv: f32):
    %plus = arith.addf %sum, %cb : f32
    %times = arith.mulf %plus, %hv : f32
    tdim.yield %times : f32
  }
  // CHECK: tdim.softmax ins(%x : {{.*}}) outs(%y : {{.*}}) over c
  tdim.softmax ins(%x : !m) outs(%y : !m) over c
  // CHECK: tdim.log_softmax ins(%x : {{.*}}) outs(%y : {{.*}}) over c
  tdim.log_softmax ins(%x : !m) outs(%y : !m) over c
  // CHECK: tdim.layer_norm ins(%x : {{.*}}) weight(%w : {{.*}}) bias(%b : {{.*}}) outs(%y : {{.*}}) over [c] eps 1.000000e-05
  tdim.layer_norm ins(%x : !m) weight(%w : !v) bias(%b : !v) outs(%y : !m) over [c] eps 1.0e-05
  // CHECK: tdim.layer_norm ins(%x : {{.*}}) outs(%y : {{.*}}) over [c] eps 1.000000e-03
  tdim.layer_norm ins(%x : !m) outs(%y : !m) over [c] eps 1.0e-03
  tdim.return
}
