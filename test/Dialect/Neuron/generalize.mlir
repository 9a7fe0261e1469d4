// Each named neuron becomes neuron.generic with its charge function spelled
// out as SpikingJelly's torch reference computes it.
// RUN: nerve-opt %s --neuron-generalize --split-input-file | FileCheck %s

!seq = !tdim.tensor<[t: ?, n: ?], f32>

// IF: h = v + x
// CHECK-LABEL: tdim.kernel @if
// CHECK: neuron.generic ins(%x : {{.*}}) outs(%s : {{.*}}) time t {v_reset = 0.000000e+00 : f64} charge {
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[X:.*]]: f32):
// CHECK-NEXT: %[[H:.*]] = arith.addf %[[V]], %[[X]] : f32
// CHECK-NEXT: neuron.yield %[[H]] : f32
tdim.kernel @if(%x: !seq) -> (%s: !seq) {
  neuron.if ins(%x : !seq) outs(%s : !seq) time t {v_reset = 0.0}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f16>

// LIF with decay_input and a nonzero v_reset, f16 storage: f32 arithmetic,
// h = v + (x - (v - v_reset)) / tau.
// CHECK-LABEL: tdim.kernel @lif
// CHECK-DAG: %[[VR:.*]] = arith.constant -5.000000e-01 : f32
// CHECK-DAG: %[[TAU:.*]] = arith.constant 4.000000e+00 : f32
// CHECK: neuron.generic {{.*}} charge {
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[X:.*]]: f32):
// CHECK: %[[GAP:.*]] = arith.subf %[[V]], %[[VR]] : f32
// CHECK: %[[IN:.*]] = arith.subf %[[X]], %[[GAP]] : f32
// CHECK: %[[STEP:.*]] = arith.divf %[[IN]], %[[TAU]] : f32
// CHECK: %[[H:.*]] = arith.addf %[[V]], %[[STEP]] : f32
// CHECK: neuron.yield %[[H]] : f32
tdim.kernel @lif(%x: !seq) -> (%s: !seq) {
  neuron.lif ins(%x : !seq) outs(%s : !seq) time t {tau = 4.0, v_reset = -0.5}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

// LIF without decay_input, soft reset: h = v - v / tau + x.
// CHECK-LABEL: tdim.kernel @lif_soft
// CHECK: ^bb0(%[[V:.*]]: f32, %[[X:.*]]: f32):
// CHECK: %[[LEAK:.*]] = arith.divf %[[V]], %{{.*}} : f32
// CHECK: %[[D:.*]] = arith.subf %[[V]], %[[LEAK]] : f32
// CHECK: %[[H:.*]] = arith.addf %[[D]], %[[X]] : f32
tdim.kernel @lif_soft(%x: !seq) -> (%s: !seq) {
  neuron.lif ins(%x : !seq) outs(%s : !seq) time t {decay_input = false}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>
!one = !tdim.tensor<[], f32>

// PLIF: the decay sigmoid(w) is computed from the parameter w, in the
// charge function, so backward differentiates through it.
// CHECK-LABEL: tdim.kernel @plif
// CHECK: neuron.generic ins(%x : {{.*}}) params(%w : {{.*}}) outs(%s : {{.*}})
// CHECK: ^bb0(%[[V:.*]]: f32, %[[X:.*]]: f32, %[[W:.*]]: f32):
// CHECK: %[[NW:.*]] = arith.negf %[[W]] : f32
// CHECK: %[[E:.*]] = math.exp %[[NW]] : f32
// CHECK: %[[DEN:.*]] = arith.addf %[[E]], %{{.*}} : f32
// CHECK: %[[SIG:.*]] = arith.divf %{{.*}}, %[[DEN]] : f32
// CHECK: arith.mulf %{{.*}}, %[[SIG]] : f32
// CHECK: neuron.generic_grad ins(%h : {{.*}}) x(%x : {{.*}}) params(%w : {{.*}}) grad_spike(%gs : {{.*}}) outs(%gx : {{.*}}) grad_params(%gw : {{.*}}) time t {detach_reset, surrogate = #neuron.surrogate<atan, alpha = 2.000000e+00>, v_reset = 0.000000e+00 : f64} charge {
tdim.kernel @plif(%x: !seq, %w: !one, %gs: !seq) -> (%s: !seq, %h: !seq, %gx: !seq, %gw: !one) {
  neuron.plif ins(%x : !seq) w(%w : !one) outs(%s : !seq) h_seq(%h : !seq) time t {v_reset = 0.0}
  neuron.plif_grad ins(%h : !seq) x(%x : !seq) w(%w : !one) grad_spike(%gs : !seq) outs(%gx : !seq) grad_w(%gw : !one)
      time t {v_reset = 0.0, detach_reset, surrogate = #neuron.surrogate<atan>}
  tdim.return
}
