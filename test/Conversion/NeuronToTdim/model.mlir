// RUN: nerve-opt %s --convert-neuron-to-tdim="time-block=1" --canonicalize --split-input-file | FileCheck %s

// A two-state model: v charges from x and w, w from the charged v; a
// spike resets v to 0 and adds b to w.
neuron.model @izh states(v = 0.0, w = 0.5) inputs(x) params(tau = 2.0, a = 0.25, b = 0.125)
    threshold(1.0) reset(v = hard 0.0, w = add b) charge {
^bb0(%v: f32, %w: f32, %x: f32, %tau: f32, %a: f32, %b: f32):
  %d = arith.subf %x, %w : f32
  %s = arith.divf %d, %tau : f32
  %h = arith.addf %v, %s : f32
  %ah = arith.mulf %a, %h : f32
  %w1 = arith.addf %w, %ah : f32
  neuron.yield %h, %w1 : f32, f32
}

!seq = !tdim.tensor<[t: ?, n: ?], f32>
!state = !tdim.tensor<[n: ?], f32>

// Forward carries both states through time, starting from the model's
// initial values; the models are gone after lowering.
// CHECK-NOT: neuron.model
// CHECK-LABEL: tdim.kernel @forward
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[B:.*]] = arith.constant 1.250000e-01 : f32
// CHECK: tdim.for %[[N:.*]] over n {{.*}} parallel {
// CHECK:   %[[LAST:.*]]:2 = tdim.for %[[T:.*]] over t {{.*}} iter_args(%[[V:.*]] = %[[ZERO]], %[[W:.*]] = %[[HALF]]) -> (f32, f32) {
// CHECK:     %[[X:.*]] = tdim.load %x[n = %[[N]], t = %[[T]]]
// CHECK:     %[[D:.*]] = arith.subf %[[X]], %[[W]]
// CHECK:     %[[H:.*]] = arith.addf %[[V]], %{{.*}}
// CHECK:     %[[AH:.*]] = arith.mulf %[[H]], %{{.*}}
// CHECK:     %[[W1:.*]] = arith.addf %[[W]], %[[AH]]
// CHECK:     %[[U:.*]] = arith.subf %[[H]], %[[ONE]]
// CHECK:     %[[FIRED:.*]] = arith.cmpf oge, %[[U]], %[[ZERO]]
// CHECK:     %[[VN:.*]] = arith.select %[[FIRED]], %[[ZERO]], %[[H]]
// CHECK:     %[[WB:.*]] = arith.addf %[[W1]], %[[B]]
// CHECK:     %[[WN:.*]] = arith.select %[[FIRED]], %[[WB]], %[[W1]]
// CHECK:     %[[S:.*]] = arith.select %[[FIRED]], %[[ONE]], %[[ZERO]]
// CHECK:     tdim.store %[[S]], %s[n = %[[N]], t = %[[T]]]
// CHECK:     tdim.store %[[H]], %h[n = %[[N]], t = %[[T]]]
// CHECK:     tdim.store %[[WN]], %ws[n = %[[N]], t = %[[T]]]
// CHECK:     tdim.yield %[[VN]], %[[WN]] : f32, f32
// CHECK:   tdim.store %[[LAST]]#1, %wl[n = %[[N]]]
tdim.kernel @forward(%x: !seq) -> (%s: !seq, %ws: !seq, %h: !seq, %wl: !state) {
  neuron.forward @izh ins(x = %x : !seq) outs(%s : !seq) seq(w = %ws : !seq) h_seq(v = %h : !seq)
      last(w = %wl : !state) time t
  tdim.return
}

// Backward without parameter gradients: the step's derivatives read
// neither x nor the states before the step (v and w enter linearly), so
// it loads only h and the upstream gradient, and carries one gradient per
// state.
// CHECK-LABEL: tdim.kernel @backward
// CHECK-NOT: tdim.load %x
// CHECK: tdim.for %[[N:.*]] over n {{.*}} parallel {
// CHECK:   %[[G:.*]]:2 = tdim.for %[[T:.*]] over t {{.*}} reverse iter_args(%[[GV:.*]] = %{{.*}}, %[[GW:.*]] = %{{.*}}) -> (f32, f32) {
// CHECK:     tdim.load %h[n = %[[N]], t = %[[T]]]
// CHECK:     tdim.load %gs[n = %[[N]], t = %[[T]]]
// CHECK-NOT: tdim.load
// CHECK:     tdim.store %{{.*}}, %gx[n = %[[N]], t = %[[T]]]
// CHECK:     tdim.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK:   tdim.store %[[G]]#0, %gv0[n = %[[N]]]
// CHECK:   tdim.store %[[G]]#1, %gw0[n = %[[N]]]
tdim.kernel @backward(%h: !seq, %gs: !seq, %x: !seq) -> (%gx: !seq, %gv0: !state, %gw0: !state) {
  neuron.backward @izh h_seq(v = %h : !seq) ins(x = %x : !seq) grad_spike(%gs : !seq)
      grad_ins(x = %gx : !seq) grad_init(v = %gv0 : !state, w = %gw0 : !state)
      time t {surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}

// A state's last-value gradient starts its carried gradient (the other
// state's starts at zero).
// CHECK-LABEL: tdim.kernel @backward_last
// CHECK: tdim.for %[[N:.*]] over n {{.*}} parallel {
// CHECK:   %[[GWL:.*]] = tdim.load %gwl[n = %[[N]]]
// CHECK:   tdim.for %{{.*}} over t {{.*}} reverse iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[GWL]]) -> (f32, f32) {
tdim.kernel @backward_last(%h: !seq, %gs: !seq, %x: !seq, %gwl: !state) -> (%gx: !seq) {
  neuron.backward @izh h_seq(v = %h : !seq) ins(x = %x : !seq) grad_spike(%gs : !seq)
      grad_last(w = %gwl : !state) grad_ins(x = %gx : !seq)
      time t {surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}

// -----

neuron.model @lif states(v = 0.0) inputs(x) params(tau = 2.0)
    threshold(1.0) reset(v = soft) charge {
^bb0(%v: f32, %x: f32, %tau: f32):
  %d = arith.subf %x, %v : f32
  %s = arith.divf %d, %tau : f32
  %h = arith.addf %v, %s : f32
  neuron.yield %h : f32
}

!seq = !tdim.tensor<[t: ?, b: ?, n: ?], f32>
!pn = !tdim.tensor<[n: ?], f32>

// A parameter per neuron of `n`, shared along `b`: read at the neuron's
// `n`; its gradient needs x - v (so backward reads x and the potential
// before each step, reset from the previous h), summed over time per
// neuron, then over `b`.
// CHECK-LABEL: tdim.kernel @per_neuron
// CHECK: %[[PART:.*]] = tdim.alloc
// CHECK: tdim.for %[[B:.*]] over b {{.*}} parallel {
// CHECK:   tdim.for %[[N:.*]] over n {{.*}} parallel {
// CHECK:     %[[TAU:.*]] = tdim.load %tau[n = %[[N]]]
// CHECK:     %[[R:.*]]:2 = tdim.for {{.*}} reverse
// CHECK:       tdim.load %h
// CHECK:       tdim.load %x
// CHECK:     tdim.store %[[R]]#1, %[[PART]][b = %[[B]], n = %[[N]]]
// CHECK: tdim.reduce ins(%[[PART]] : {{.*}}) outs(%gtau : !tdim.tensor<[n: ?], f32>) over [b]
tdim.kernel @per_neuron(%h: !seq, %x: !seq, %tau: !pn, %gs: !seq) -> (%gtau: !pn) {
  neuron.backward @lif h_seq(v = %h : !seq) ins(x = %x : !seq) params(tau = %tau : !pn)
      grad_spike(%gs : !seq) grad_params(tau = %gtau : !pn) time t {surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}
