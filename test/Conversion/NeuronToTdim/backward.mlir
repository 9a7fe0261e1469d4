// RUN: nerve-opt %s --convert-neuron-to-tdim="time-block=1" --canonicalize --split-input-file | FileCheck %s

!seq = !tdim.tensor<[t: ?, n: ?], f32>
!state = !tdim.tensor<[n: ?], f32>

// LIF: the charge function's derivatives are constants (kappa = 1 - 1/tau,
// beta = 1/tau), so backward reads only h_seq and the upstream gradients:
// no x, no earlier step.
// CHECK-LABEL: tdim.kernel @lif
// CHECK-NOT: tdim.load %x
// CHECK: tdim.for %[[N:.*]] over n {{.*}} parallel {
// CHECK:   %[[G0:.*]] = tdim.for %[[T:.*]] over t from %{{.*}} to %{{.*}} reverse iter_args(%[[CARRY:.*]] = %{{.*}}) -> (f32) {
// CHECK:     %[[H:.*]] = tdim.load %h[n = %[[N]], t = %[[T]]]
// CHECK:     %[[GS:.*]] = tdim.load %gs[n = %[[N]], t = %[[T]]]
// CHECK:     %[[GV:.*]] = tdim.load %gv[n = %[[N]], t = %[[T]]]
// CHECK:     %[[SUM:.*]] = arith.addf %[[GV]], %[[CARRY]] : f32
// CHECK:     %[[GA:.*]] = arith.mulf %[[SUM]], %{{.*}} : f32
// CHECK:     %[[GP:.*]] = arith.mulf %[[GS]], %{{.*}} : f32
// CHECK:     %[[GH:.*]] = arith.addf %[[GA]], %[[GP]] : f32
// CHECK:     %[[GX:.*]] = arith.mulf %[[GH]], %{{.*}} : f32
// CHECK:     tdim.store %[[GX]], %gx[n = %[[N]], t = %[[T]]]
// CHECK:     %[[NEXT:.*]] = arith.mulf %[[GH]], %{{.*}} : f32
// CHECK:     tdim.yield %[[NEXT]] : f32
// CHECK:   tdim.store %[[G0]], %gv0[n = %[[N]]]
tdim.kernel @lif(%h: !seq, %gs: !seq, %gv: !seq, %x: !seq) -> (%gx: !seq, %gv0: !state) {
  neuron.lif_grad ins(%h : !seq) grad_spike(%gs : !seq) grad_v_seq(%gv : !seq) outs(%gx : !seq) grad_v_init(%gv0 : !state)
      time t {v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>
!state = !tdim.tensor<[n: ?], f32>

// The last potential's gradient starts the reverse walk: dL/dV carried
// into the last step is loaded per neuron, not zero.
// CHECK-LABEL: tdim.kernel @last_potential
// CHECK: tdim.for %[[N:.*]] over n {{.*}} parallel {
// CHECK:   %[[GL:.*]] = tdim.load %gl[n = %[[N]]]
// CHECK:   tdim.for %{{.*}} over t from %{{.*}} to %{{.*}} reverse iter_args(%[[CARRY:.*]] = %[[GL]]) -> (f32) {
// CHECK:     tdim.load %gs
// CHECK:     arith.addf %[[CARRY]], %{{.*}} : f32
tdim.kernel @last_potential(%h: !seq, %gs: !seq, %gl: !state) -> (%gx: !seq) {
  neuron.lif_grad ins(%h : !seq) grad_spike(%gs : !seq) grad_v_last(%gl : !state) outs(%gx : !seq)
      time t {v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

// A charge function whose derivative depends on the potential and the
// input: backward rebuilds V[t-1] from h_seq[t-1] (v_init at t = 0) and
// reads x[t].
// CHECK-LABEL: tdim.kernel @quadratic
// CHECK: tdim.for %[[T:.*]] over t {{.*}} reverse
// CHECK:   tdim.load %x[n = %{{.*}}, t = %[[T]]]
// CHECK:   %[[FIRST:.*]] = tdim.cmp eq, %[[T]], %{{.*}} : !tdim.index<t>
// CHECK:   %[[PREV:.*]] = tdim.load %h[n = %{{.*}}, t = %{{.*}}]
// CHECK:   %[[VAFTER:.*]] = arith.select %{{.*}}, %{{.*}}, %[[PREV]] : f32
// CHECK:   %[[VPREV:.*]] = arith.select %[[FIRST]], %{{.*}}, %[[VAFTER]] : f32
tdim.kernel @quadratic(%h: !seq, %x: !seq, %gs: !seq) -> (%gx: !seq) {
  neuron.generic_grad ins(%h : !seq) x(%x : !seq) grad_spike(%gs : !seq) outs(%gx : !seq)
      time t {v_reset = 0.0, surrogate = #neuron.surrogate<atan>} charge {
  ^bb0(%v: f32, %in: f32):
    %vv = arith.mulf %v, %v : f32
    %xv = arith.mulf %in, %v : f32
    %h1 = arith.addf %vv, %xv : f32
    neuron.yield %h1 : f32
  }
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>
!one = !tdim.tensor<[], f32>

// PLIF's grad_w: each neuron sums its contributions over time in a
// register, the partial sums go to a buffer, and one tdim.reduce adds them
// up in a fixed order. Given x, backward reads it for dh/dw.
// CHECK-LABEL: tdim.kernel @plif
// CHECK: %[[PARTIAL:.*]] = tdim.alloc(%{{.*}}) : !tdim.tensor<[n: ?], f32>
// CHECK: tdim.for %[[N:.*]] over n {{.*}} parallel {
// CHECK:   %[[W:.*]] = tdim.load %w[] : !tdim.tensor<[], f32>
// CHECK:   %{{.*}}:2 = tdim.for %{{.*}} over t {{.*}} reverse iter_args(%{{.*}} = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (f32, f32) {
// CHECK:     tdim.load %x[n = %[[N]], t = %{{.*}}]
// CHECK:   %[[SUM:.*]] = arith.mulf %{{.*}}#1, %{{.*}} : f32
// CHECK:   tdim.store %[[SUM]], %[[PARTIAL]][n = %[[N]]]
// CHECK: tdim.reduce ins(%[[PARTIAL]] : !tdim.tensor<[n: ?], f32>) outs(%gw : !tdim.tensor<[], f32>) over [n] init [0.000000e+00 : f32] combine {
// CHECK:   arith.addf
tdim.kernel @plif(%h: !seq, %x: !seq, %w: !one, %gs: !seq) -> (%gx: !seq, %gw: !one) {
  neuron.plif_grad ins(%h : !seq) x(%x : !seq) w(%w : !one) grad_spike(%gs : !seq) outs(%gx : !seq) grad_w(%gw : !one)
      time t {v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>
!one = !tdim.tensor<[], f32>

// PLIF's grad_w without x: x reaches h = v + (x - v) * d through steps
// that can each be undone, so dh/dd's x - v is (h - v) * (1 / d), the way
// SpikingJelly computes it. The factors that read only w (1 / d and
// dd/dw) multiply each neuron's sum over time once, after its loop: a step
// adds g * (h - v). Backward loads h and the upstream gradient at step t
// and h at t - 1 (for v), nothing more.
// CHECK-LABEL: tdim.kernel @plif_recovered
// CHECK:   %[[SUMS:.*]]:2 = tdim.for %[[T:.*]] over t {{.*}} reverse
// CHECK:     %[[H:.*]] = tdim.load %h[n = %{{.*}}, t = %[[T]]]
// CHECK:     tdim.load %gs[n = %{{.*}}, t = %[[T]]]
// CHECK-NOT: tdim.load
// CHECK:     %[[FIRST:.*]] = tdim.cmp eq, %[[T]], %{{.*}} : !tdim.index<t>
// CHECK:     tdim.load %h[n = %{{.*}}, t = %{{.*}}]
// CHECK-NOT: tdim.load
// CHECK:     %[[V:.*]] = arith.select %[[FIRST]], %{{.*}}, %{{.*}} : f32
// CHECK:     %[[HV:.*]] = arith.subf %[[H]], %[[V]] : f32
// CHECK-NOT: tdim.load
// CHECK:     %[[GHV:.*]] = arith.mulf %{{.*}}, %[[HV]] : f32
// CHECK:     %[[ACC:.*]] = arith.addf %{{.*}}, %[[GHV]] : f32
// CHECK:     tdim.yield %{{.*}}, %[[ACC]] : f32, f32
// CHECK:   arith.mulf %[[SUMS]]#1, %{{.*}} : f32
tdim.kernel @plif_recovered(%h: !seq, %w: !one, %gs: !seq) -> (%gx: !seq, %gw: !one) {
  neuron.plif_grad ins(%h : !seq) w(%w : !one) grad_spike(%gs : !seq) outs(%gx : !seq) grad_w(%gw : !one)
      time t {v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>
!one = !tdim.tensor<[], f32>

// Every kind of step on x's path is undone from h, top down: here
// h = -(v - x / w), so x / w = v - (-h) and dh/dw = (x / w) / w reads no x.
// CHECK-LABEL: tdim.kernel @undone_path
// CHECK-NOT: tdim.load %x
// CHECK:     %[[H:.*]] = tdim.load %h[n = %{{.*}}, t = %{{.*}}]
// CHECK:     %[[FIRST:.*]] = tdim.cmp eq
// CHECK:     %[[V:.*]] = arith.select %[[FIRST]], %{{.*}}, %{{.*}} : f32
// CHECK:     %[[NH:.*]] = arith.negf %[[H]] : f32
// CHECK:     %[[XW:.*]] = arith.subf %[[V]], %[[NH]] : f32
// CHECK:     arith.negf %[[XW]] : f32
// CHECK-NOT: tdim.load
// CHECK:     tdim.yield
tdim.kernel @undone_path(%h: !seq, %w: !one, %gs: !seq) -> (%gx: !seq, %gw: !one) {
  neuron.generic_grad ins(%h : !seq) params(%w : !one) grad_spike(%gs : !seq) outs(%gx : !seq) grad_params(%gw : !one)
      time t {v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>} charge {
  ^bb0(%v: f32, %in: f32, %p: f32):
    %d = arith.divf %in, %p : f32
    %s = arith.subf %v, %d : f32
    %h1 = arith.negf %s : f32
    neuron.yield %h1 : f32
  }
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>
!one = !tdim.tensor<[], f32>

// x reaches h = v + x * w + x twice, so its path cannot be undone step by
// step; the charge is still affine in x with slope w + 1, so backward
// recovers x as a whole: (h - A) * (1 / (w + 1)), A the charge at x = 0.
// CHECK-LABEL: tdim.kernel @affine_recovered
// CHECK-NOT: tdim.load %x
// CHECK:     %[[H:.*]] = tdim.load %h[n = %{{.*}}, t = %{{.*}}]
// CHECK:     %[[FIRST:.*]] = tdim.cmp eq
// CHECK:     %[[V:.*]] = arith.select %[[FIRST]], %{{.*}}, %{{.*}} : f32
// CHECK:     %[[A:.*]] = arith.addf %[[V]], %{{.*}} : f32
// CHECK:     %[[A0:.*]] = arith.addf %[[A]], %{{.*}} : f32
// CHECK:     %[[HA:.*]] = arith.subf %[[H]], %[[A0]] : f32
// CHECK:     arith.mulf %[[HA]], %{{.*}} : f32
// CHECK-NOT: tdim.load
// CHECK:     tdim.yield
tdim.kernel @affine_recovered(%h: !seq, %w: !one, %gs: !seq) -> (%gx: !seq, %gw: !one) {
  neuron.generic_grad ins(%h : !seq) params(%w : !one) grad_spike(%gs : !seq) outs(%gx : !seq) grad_params(%gw : !one)
      time t {v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>} charge {
  ^bb0(%v: f32, %in: f32, %p: f32):
    %xw = arith.mulf %in, %p : f32
    %a = arith.addf %v, %xw : f32
    %h1 = arith.addf %a, %in : f32
    neuron.yield %h1 : f32
  }
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

// The sigmoid surrogate alpha * s * (1 - s) is built as alpha * t / (1 + t)^2
// with t = exp(-|alpha * u|), computed as exp(-|alpha| * |u|) (the same
// bits): the divisor stays in [1, 2] however far the potential is below the
// threshold (IF's drifts without bound). With v_reset = 0, dV/dH through the
// spike is (1 - spike) - h * psi.
// CHECK-LABEL: tdim.kernel @if_sigmoid
// CHECK:     %[[H:.*]] = tdim.load %h
// CHECK:     %[[U:.*]] = arith.subf %[[H]], %[[ONE:.*]] : f32
// CHECK:     %[[MAG:.*]] = math.absf %[[U]] : f32
// CHECK:     %[[NEG:.*]] = arith.mulf %[[MAG]], %[[MINUSALPHA:.*]] : f32
// CHECK:     %[[T:.*]] = math.exp %[[NEG]] : f32
// CHECK:     %[[DEN:.*]] = arith.addf %[[T]], %[[ONE]] : f32
// CHECK:     %[[R:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK:     %[[AT:.*]] = arith.mulf %[[T]], %[[ALPHA:.*]] : f32
// CHECK:     %[[RR:.*]] = arith.mulf %[[R]], %[[R]] : f32
// CHECK:     %[[PSI:.*]] = arith.mulf %[[AT]], %[[RR]] : f32
// CHECK:     %[[NOTFIRED:.*]] = arith.subf %[[ONE]], %{{.*}} : f32
// CHECK:     %[[HPSI:.*]] = arith.mulf %[[H]], %[[PSI]] : f32
// CHECK:     arith.subf %[[NOTFIRED]], %[[HPSI]] : f32
tdim.kernel @if_sigmoid(%h: !seq, %gs: !seq) -> (%gx: !seq) {
  neuron.if_grad ins(%h : !seq) grad_spike(%gs : !seq) outs(%gx : !seq)
      time t {v_threshold = 1.0, v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid, alpha = 4.0>}
  tdim.return
}
