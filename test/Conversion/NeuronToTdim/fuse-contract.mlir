// RUN: nerve-opt %s --convert-neuron-to-tdim --split-input-file | FileCheck %s

// A neuron that alone reads a linear layer's product over time becomes the
// product's epilogue, scanning time: the sum rounded as the product's
// tensor held it, the charge, fire and reset, the spike yielded with the
// potential carried (from v_reset); the tensor and the neuron's loops go.
// A parameter (PLIF's w) is a `with` input.
!x = !tdim.tensor<[t: ?, b: ?, k: ?], f16>
!w = !tdim.tensor<[j: ?, k: ?], f16>
!y = !tdim.tensor<[t: ?, b: ?, j: ?], f16>
// CHECK-LABEL: tdim.kernel @linear_plif
// CHECK-NOT: tdim.alloc
// CHECK-NOT: tdim.for
// CHECK: tdim.contract ins(%x, %w : {{.*}}) with(%p : !tdim.tensor<[], f32>) outs(%s : {{.*}}) scan t carry [0.000000e+00 : f32] epilogue {
// CHECK-NEXT: ^bb0(%[[SUM:.*]]: f32, %[[P:.*]]: f32, %[[V:.*]]: f32):
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK-NEXT: %[[X:.*]] = arith.extf %[[R]] : f16 to f32
// CHECK: math.exp
// CHECK: %[[FIRED:.*]] = arith.cmpf oge
// CHECK: %[[NEXT:.*]] = arith.select %[[FIRED]], %{{.*}}, %[[H:.*]] : f32
// CHECK: %[[ONE:.*]] = arith.select %[[FIRED]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[SPIKE:.*]] = arith.truncf %[[ONE]] : f32 to f16
// CHECK: tdim.yield %[[SPIKE]], %[[NEXT]] : f16, f32
// CHECK-NOT: tdim.for
tdim.kernel @linear_plif(%x: !x, %w: !w, %p: !tdim.tensor<[], f32>) -> (%s: !y) {
  %nt = tdim.size %x[t] : !x
  %nb = tdim.size %x[b] : !x
  %nj = tdim.size %w[j] : !w
  %h = tdim.alloc(%nt, %nb, %nj) : !y
  tdim.contract ins(%x, %w : !x, !w) outs(%h : !y)
  neuron.plif ins(%h : !y) w(%p : !tdim.tensor<[], f32>) outs(%s : !y) time t {v_threshold = 1.0, v_reset = 0.0}
  tdim.return
}

// -----

// Left to the neuron's loops: a neuron writing more than its spikes (what
// backward reads), one starting from a given potential, and a product read
// twice.
!x = !tdim.tensor<[t: ?, b: ?, k: ?], f16>
!w = !tdim.tensor<[j: ?, k: ?], f16>
!y = !tdim.tensor<[t: ?, b: ?, j: ?], f16>
!v = !tdim.tensor<[b: ?, j: ?], f16>
// CHECK-LABEL: tdim.kernel @unfused
// CHECK-NOT: scan
// CHECK-COUNT-3: tdim.contract ins(%x, %w : {{.*}}) outs(%{{[0-9]+}} : {{.*}})
// CHECK-NOT: scan
tdim.kernel @unfused(%x: !x, %w: !w, %v0: !v) -> (%s: !y, %hs: !y, %s2: !y, %s3: !y, %z: !y) {
  %nt = tdim.size %x[t] : !x
  %nb = tdim.size %x[b] : !x
  %nj = tdim.size %w[j] : !w
  %h = tdim.alloc(%nt, %nb, %nj) : !y
  tdim.contract ins(%x, %w : !x, !w) outs(%h : !y)
  neuron.lif ins(%h : !y) outs(%s : !y) h_seq(%hs : !y) time t {tau = 2.0}
  %h2 = tdim.alloc(%nt, %nb, %nj) : !y
  tdim.contract ins(%x, %w : !x, !w) outs(%h2 : !y)
  neuron.lif ins(%h2 : !y) init(%v0 : !v) outs(%s2 : !y) time t {tau = 2.0}
  %h3 = tdim.alloc(%nt, %nb, %nj) : !y
  tdim.contract ins(%x, %w : !x, !w) outs(%h3 : !y)
  neuron.lif ins(%h3 : !y) outs(%s3 : !y) time t {tau = 2.0}
  tdim.map ins(%h3 : !y) outs(%z : !y) {
  ^bb0(%a: f32):
    tdim.yield %a : f32
  }
  tdim.return
}

// -----

// A neuron written once fuses the same way, every state carried from the
// model's initial values, a parameter bound to a tensor a `with` input.
neuron.model @adaptive states(v = 0.0, a = 0.5) inputs(x) params(tau = 2.0, b = 0.1)
    threshold(1.0) reset(v = hard 0.0, a = add b) charge {
^bb0(%v: f32, %a: f32, %x: f32, %tau: f32, %b: f32):
  %d = arith.subf %x, %a : f32
  %s = arith.divf %d, %tau : f32
  %h = arith.addf %v, %s : f32
  neuron.yield %h, %a : f32, f32
}
!x = !tdim.tensor<[t: ?, b: ?, k: ?], bf16>
!w = !tdim.tensor<[j: ?, k: ?], bf16>
!y = !tdim.tensor<[t: ?, b: ?, j: ?], bf16>
// CHECK-LABEL: tdim.kernel @linear_model
// CHECK-NOT: tdim.for
// CHECK: tdim.contract ins(%x, %w : {{.*}}) with(%tau : !tdim.tensor<[], f32>) outs(%s : {{.*}}) scan t carry [0.000000e+00 : f32, 5.000000e-01 : f32] epilogue {
// CHECK-NEXT: ^bb0(%[[SUM:.*]]: f32, %[[TAU:.*]]: f32, %[[V:.*]]: f32, %[[A:.*]]: f32):
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK: tdim.yield %{{.*}}, %{{.*}}, %{{.*}} : bf16, f32, f32
// CHECK-NOT: tdim.for
tdim.kernel @linear_model(%x: !x, %w: !w, %tau: !tdim.tensor<[], f32>) -> (%s: !y) {
  %nt = tdim.size %x[t] : !x
  %nb = tdim.size %x[b] : !x
  %nj = tdim.size %w[j] : !w
  %h = tdim.alloc(%nt, %nb, %nj) : !y
  tdim.contract ins(%x, %w : !x, !w) outs(%h : !y)
  neuron.forward @adaptive ins(x = %h : !y) params(tau = %tau : !tdim.tensor<[], f32>) outs(%s : !y) time t
  tdim.return
}
