// RUN: nerve-opt %s | nerve-opt | FileCheck %s

// A neuron written once: Izhikevich's two states, its parameters, one
// charge region for both, the threshold and a reset per state.

// CHECK-LABEL: neuron.model @izhikevich
// CHECK-SAME: states(v = 0.000000e+00, w = 0.000000e+00) inputs(x)
// CHECK-SAME: params(tau = 2.000000e+00, a = 5.000000e-01, b = 1.000000e-01)
// CHECK-SAME: threshold(1.000000e+00) reset(v = hard 0.000000e+00 value_grad, w = add b) charge {
// CHECK: ^bb0(%[[V:.*]]: f32, %[[W:.*]]: f32, %[[X:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: neuron.yield %{{.*}}, %{{.*}} : f32, f32
neuron.model @izhikevich states(v = 0.0, w = 0.0) inputs(x) params(tau = 2.0, a = 0.5, b = 0.1)
    threshold(1.0) reset(v = hard 0.0 value_grad, w = add b) charge {
^bb0(%v: f32, %w: f32, %x: f32, %tau: f32, %a: f32, %b: f32):
  %d = arith.subf %x, %w : f32
  %s = arith.divf %d, %tau : f32
  %h = arith.addf %v, %s : f32
  %ah = arith.mulf %a, %h : f32
  %w1 = arith.addf %w, %ah : f32
  neuron.yield %h, %w1 : f32, f32
}

// Numbers may be written as integers.
// CHECK-LABEL: neuron.model @integers
// CHECK-SAME: states(v = -1.000000e+00) inputs(x) threshold(2.000000e+00) reset(v = hard -1.000000e+00)
neuron.model @integers states(v = -1) inputs(x) threshold(2) reset(v = hard -1) charge {
^bb0(%v: f32, %x: f32):
  %h = arith.addf %v, %x : f32
  neuron.yield %h : f32
}

// An adaptive threshold is a region of the states and parameters.
// CHECK-LABEL: neuron.model @alif
// CHECK-SAME: threshold {
// CHECK: neuron.yield %{{.*}} : f32
// CHECK: } reset(v = soft, a = add 1.000000e+00) charge {
neuron.model @alif states(v = 0.0, a = 0.0) inputs(x) params(beta = 1.8)
    threshold {
^bb0(%v: f32, %a: f32, %beta: f32):
  %one = arith.constant 1.0 : f32
  %ba = arith.mulf %beta, %a : f32
  %th = arith.addf %one, %ba : f32
  neuron.yield %th : f32
} reset(v = soft, a = add 1.0) charge {
^bb0(%v: f32, %a: f32, %x: f32, %beta: f32):
  %h = arith.addf %v, %x : f32
  neuron.yield %h, %a : f32, f32
}

!seq = !tdim.tensor<[t: ?, n: ?], f32>
!half = !tdim.tensor<[t: ?, n: ?], f16>
!st = !tdim.tensor<[n: ?], f32>
!p = !tdim.tensor<[], f32>
!pn = !tdim.tensor<[n: ?], f32>

// Operands come in named groups; f16 storage computes in the f32 model.
// CHECK-LABEL: tdim.kernel @use
// CHECK: neuron.forward @izhikevich ins(x = %{{.*}} : !tdim.tensor<[t: ?, n: ?], f16>) init(w = %{{.*}} : {{.*}}) params(a = %{{.*}} : !tdim.tensor<[n: ?], f32>) outs(%{{.*}} : {{.*}}) seq(v = %{{.*}} : {{.*}}, w = %{{.*}} : {{.*}}) h_seq(v = %{{.*}} : {{.*}}) last(w = %{{.*}} : {{.*}}) time t
// CHECK: neuron.backward @izhikevich h_seq(v = {{.*}}) seq(w = {{.*}}) params(a = {{.*}}) grad_spike({{.*}}) grad_seq(w = {{.*}}) grad_ins(x = {{.*}}) grad_init(v = {{.*}}, w = {{.*}}) grad_params(a = {{.*}}) time t {detach_reset, surrogate = #neuron.surrogate<atan, alpha = 2.000000e+00>}
tdim.kernel @use(%x: !half, %w0: !st, %a: !pn, %gs: !seq, %gw: !seq)
    -> (%s: !seq, %v: !seq, %w: !seq, %h: !seq, %wl: !st, %gx: !seq, %gv0: !st, %gw0: !st, %ga: !pn) {
  neuron.forward @izhikevich ins(x = %x : !half) init(w = %w0 : !st) params(a = %a : !pn)
      outs(%s : !seq) seq(v = %v : !seq, w = %w : !seq) h_seq(v = %h : !seq) last(w = %wl : !st) time t
  neuron.backward @izhikevich h_seq(v = %h : !seq) seq(w = %w : !seq) params(a = %a : !pn)
      grad_spike(%gs : !seq) grad_seq(w = %gw : !seq) grad_ins(x = %gx : !seq)
      grad_init(v = %gv0 : !st, w = %gw0 : !st) grad_params(a = %ga : !pn)
      time t {surrogate = #neuron.surrogate<atan>, detach_reset}
  tdim.return
}
