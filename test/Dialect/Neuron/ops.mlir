// Every neuron op and every surrogate parses, prints and parses again.
// RUN: nerve-opt %s | FileCheck %s
// RUN: nerve-opt %s | nerve-opt | FileCheck %s
// RUN: nerve-opt %s --mlir-print-op-generic | nerve-opt | FileCheck %s

!seq = !tdim.tensor<[t: ?, n: ?], f32>
!state = !tdim.tensor<[n: ?], f32>
!one = !tdim.tensor<[], f32>

// CHECK-LABEL: tdim.kernel @forward
tdim.kernel @forward(%x: !seq, %v0: !state, %w: !one) -> (%s: !seq, %v: !seq, %h: !seq, %last: !state) {
  // CHECK: neuron.if ins(%x : !tdim.tensor<[t: ?, n: ?], f32>) outs(%s : {{.*}}) time t {v_reset = 0.000000e+00 : f64}
  neuron.if ins(%x : !seq) outs(%s : !seq) time t {v_reset = 0.0}
  // CHECK: neuron.lif ins(%x : {{.*}}) init(%v0 : {{.*}}) outs(%s : {{.*}}) v_seq(%v : {{.*}}) h_seq(%h : {{.*}}) v_last(%last : {{.*}}) time t {decay_input = false, tau = 3.000000e+00 : f64, v_threshold = 5.000000e-01 : f64}
  neuron.lif ins(%x : !seq) init(%v0 : !state) outs(%s : !seq) v_seq(%v : !seq) h_seq(%h : !seq) v_last(%last : !state)
      time t {tau = 3.0, decay_input = false, v_threshold = 0.5}
  // CHECK: neuron.plif ins(%x : {{.*}}) w(%w : !tdim.tensor<[], f32>) outs(%s : {{.*}}) time t {v_reset = -2.000000e-01 : f64}
  neuron.plif ins(%x : !seq) w(%w : !one) outs(%s : !seq) time t {v_reset = -0.2}
  // CHECK: neuron.generic ins(%x : {{.*}}) params(%w : {{.*}}) outs(%s : {{.*}}) time t {v_reset = 0.000000e+00 : f64} charge {
  // CHECK: neuron.yield %{{.*}} : f32
  neuron.generic ins(%x : !seq) params(%w : !one) outs(%s : !seq) time t {v_reset = 0.0} charge {
  ^bb0(%vv: f32, %xx: f32, %ww: f32):
    %m = arith.mulf %vv, %ww : f32
    %r = arith.addf %m, %xx : f32
    neuron.yield %r : f32
  }
  tdim.return
}

// CHECK-LABEL: tdim.kernel @backward
tdim.kernel @backward(%x: !seq, %v0: !state, %w: !one, %h: !seq, %gs: !seq, %gv: !seq) -> (%gx: !seq, %gv0: !state, %gw: !one) {
  // CHECK: neuron.if_grad ins(%h : {{.*}}) grad_spike(%gs : {{.*}}) outs(%gx : {{.*}}) time t {surrogate = #neuron.surrogate<sigmoid, alpha = 4.000000e+00>}
  neuron.if_grad ins(%h : !seq) grad_spike(%gs : !seq) outs(%gx : !seq) time t {surrogate = #neuron.surrogate<sigmoid>}
  // CHECK: neuron.lif_grad ins(%h : {{.*}}) grad_v_seq(%gv : {{.*}}) outs(%gx : {{.*}}) grad_v_init(%gv0 : {{.*}}) time t {detach_reset, surrogate = #neuron.surrogate<atan, alpha = 3.000000e+00>, v_reset = 0.000000e+00 : f64}
  neuron.lif_grad ins(%h : !seq) grad_v_seq(%gv : !seq) outs(%gx : !seq) grad_v_init(%gv0 : !state)
      time t {v_reset = 0.0, detach_reset, surrogate = #neuron.surrogate<atan, alpha = 3.0>}
  // CHECK: neuron.lif_grad ins(%h : {{.*}}) grad_spike(%gs : {{.*}}) grad_v_last(%v0 : {{.*}}) outs(%gx : {{.*}}) time t
  neuron.lif_grad ins(%h : !seq) grad_spike(%gs : !seq) grad_v_last(%v0 : !state) outs(%gx : !seq)
      time t {v_reset = 0.0, surrogate = #neuron.surrogate<atan>}
  // CHECK: neuron.plif_grad ins(%h : {{.*}}) x(%x : {{.*}}) init(%v0 : {{.*}}) w(%w : {{.*}}) grad_spike(%gs : {{.*}}) grad_v_seq(%gv : {{.*}}) outs(%gx : {{.*}}) grad_v_init(%gv0 : {{.*}}) grad_w(%gw : {{.*}}) time t
  neuron.plif_grad ins(%h : !seq) x(%x : !seq) init(%v0 : !state) w(%w : !one) grad_spike(%gs : !seq) grad_v_seq(%gv : !seq)
      outs(%gx : !seq) grad_v_init(%gv0 : !state) grad_w(%gw : !one) time t {surrogate = #neuron.surrogate<erf>}
  // CHECK: neuron.generic_grad ins(%h : {{.*}}) x(%x : {{.*}}) params(%w : {{.*}}) grad_spike(%gs : {{.*}}) outs(%gx : {{.*}}) grad_params(%gw : {{.*}}) time t {surrogate = #neuron.surrogate<soft_sign, alpha = 2.000000e+00>} charge {
  neuron.generic_grad ins(%h : !seq) x(%x : !seq) params(%w : !one) grad_spike(%gs : !seq) outs(%gx : !seq) grad_params(%gw : !one)
      time t {surrogate = #neuron.surrogate<soft_sign>} charge {
  ^bb0(%vv: f32, %xx: f32, %ww: f32):
    %m = arith.mulf %vv, %ww : f32
    %r = arith.addf %m, %xx : f32
    neuron.yield %r : f32
  }
  tdim.return
}

// All 13 surrogates with their SpikingJelly defaults, written out in full.
// CHECK-LABEL: func.func private @surrogates
// CHECK-SAME: #neuron.surrogate<sigmoid, alpha = 4.000000e+00>
// CHECK-SAME: #neuron.surrogate<atan, alpha = 2.000000e+00>
// CHECK-SAME: #neuron.surrogate<piecewise_leaky_relu, w = 1.000000e+00, c = 1.000000e-02>
// CHECK-SAME: #neuron.surrogate<s2nn, alpha = 4.000000e+00, beta = 1.000000e+00>
// CHECK-SAME: #neuron.surrogate<q_pseudo_spike, alpha = 2.000000e+00>
// CHECK-SAME: #neuron.surrogate<leaky_k_relu, leak = 0.000000e+00, k = 1.000000e+00>
// CHECK-SAME: #neuron.surrogate<fake_numerical_gradient, alpha = 3.000000e-01>
// CHECK-SAME: #neuron.surrogate<log_tailed_relu, alpha = 0.000000e+00>
// CHECK-SAME: #neuron.surrogate<piecewise_quadratic, alpha = 1.000000e+00>
// CHECK-SAME: #neuron.surrogate<piecewise_exp, alpha = 1.000000e+00>
// CHECK-SAME: #neuron.surrogate<soft_sign, alpha = 2.000000e+00>
// CHECK-SAME: #neuron.surrogate<super_spike, alpha = 1.000000e+00>
// CHECK-SAME: #neuron.surrogate<erf, alpha = 2.000000e+00>
// CHECK-SAME: #neuron.surrogate<s2nn, alpha = 2.500000e+00, beta = -1.000000e+00>
func.func private @surrogates() attributes {s = [
  #neuron.surrogate<sigmoid>, #neuron.surrogate<atan>, #neuron.surrogate<piecewise_leaky_relu>,
  #neuron.surrogate<s2nn>, #neuron.surrogate<q_pseudo_spike>, #neuron.surrogate<leaky_k_relu>,
  #neuron.surrogate<fake_numerical_gradient>, #neuron.surrogate<log_tailed_relu>,
  #neuron.surrogate<piecewise_quadratic>, #neuron.surrogate<piecewise_exp>,
  #neuron.surrogate<soft_sign>, #neuron.surrogate<super_spike>, #neuron.surrogate<erf>,
  #neuron.surrogate<s2nn, beta = -1.0, alpha = 2.5>]}
