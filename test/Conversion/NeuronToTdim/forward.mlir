// RUN: nerve-opt %s --convert-neuron-to-tdim="time-block=1" --cse --split-input-file | FileCheck %s

!seq = !tdim.tensor<[t: ?, n: ?], f32>
!state = !tdim.tensor<[n: ?], f32>

// One parallel loop over the neurons around a sequential loop over time
// that carries the potential: load x, charge, fire, reset, store.
// CHECK-LABEL: tdim.kernel @lif
// CHECK: tdim.for %[[N:.*]] over n from %{{.*}} to %{{.*}} parallel {
// CHECK:   %[[V0:.*]] = tdim.load %v0[n = %[[N]]]
// CHECK:   %[[VT:.*]] = tdim.for %[[T:.*]] over t from %{{.*}} to %{{.*}} iter_args(%[[V:.*]] = %[[V0]]) -> (f32) {
// CHECK:     %[[X:.*]] = tdim.load %x[n = %[[N]], t = %[[T]]]
// CHECK:     %[[IN:.*]] = arith.subf %[[X]], %[[V]] : f32
// CHECK:     %[[STEP:.*]] = arith.divf %[[IN]], %{{.*}} : f32
// CHECK:     %[[H:.*]] = arith.addf %[[V]], %[[STEP]] : f32
// CHECK:     %[[U:.*]] = arith.subf %[[H]], %{{.*}} : f32
// CHECK:     %[[FIRED:.*]] = arith.cmpf oge, %[[U]], %{{.*}} : f32
// CHECK:     %[[NEXT:.*]] = arith.select %[[FIRED]], %{{.*}}, %[[H]] : f32
// CHECK:     tdim.store %{{.*}}, %s[n = %[[N]], t = %[[T]]]
// CHECK:     tdim.store %[[NEXT]], %v[n = %[[N]], t = %[[T]]]
// CHECK:     tdim.yield %[[NEXT]] : f32
// CHECK:   tdim.store %[[VT]], %last[n = %[[N]]]
tdim.kernel @lif(%x: !seq, %v0: !state) -> (%s: !seq, %v: !seq, %last: !state) {
  neuron.lif ins(%x : !seq) init(%v0 : !state) outs(%s : !seq) v_seq(%v : !seq) v_last(%last : !state)
      time t {v_reset = 0.0}
  tdim.return
}

// -----

// Soft reset subtracts the threshold; without v_init the potential starts at 0.
// CHECK-LABEL: tdim.kernel @soft
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: tdim.for %{{.*}} over t from %{{.*}} to %{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32) {
// CHECK:   %[[U:.*]] = arith.subf %[[H:.*]], %{{.*}} : f32
// CHECK:   %[[F:.*]] = arith.cmpf oge, %[[U]]
// CHECK:   arith.select %[[F]], %[[U]], %[[H]] : f32
tdim.kernel @soft(%x: !tdim.tensor<[t: ?, n: ?], f32>) -> (%s: !tdim.tensor<[t: ?, n: ?], f32>) {
  neuron.if ins(%x : !tdim.tensor<[t: ?, n: ?], f32>) outs(%s : !tdim.tensor<[t: ?, n: ?], f32>) time t {v_threshold = 0.5}
  tdim.return
}

// -----

// Time-minor and channels-last layouts: time is found by name. Every other
// dimension is a parallel loop, in the layout's order; f16 storage computes
// in f32; spikes may be stored as i1.
// CHECK-LABEL: tdim.kernel @channels_last
// CHECK: tdim.for %[[B:.*]] over b {{.*}} parallel {
// CHECK: tdim.for %[[H:.*]] over h {{.*}} parallel {
// CHECK: tdim.for %[[W:.*]] over w {{.*}} parallel {
// CHECK: tdim.for %[[C:.*]] over c {{.*}} parallel {
// CHECK: tdim.for %[[T:.*]] over t
// CHECK:   %[[X:.*]] = tdim.load %x[b = %[[B]], h = %[[H]], w = %[[W]], c = %[[C]], t = %[[T]]] : !tdim.tensor<[b: ?, h: ?, w: ?, c: ?, t: ?], f16>
// CHECK:   arith.extf %[[X]] : f16 to f32
// CHECK:   %[[F:.*]] = arith.cmpf oge
// CHECK:   tdim.store %[[F]], %s[{{.*}}] : !tdim.tensor<[b: ?, h: ?, w: ?, c: ?, t: ?], i1>
!cl = !tdim.tensor<[b: ?, h: ?, w: ?, c: ?, t: ?], f16>
tdim.kernel @channels_last(%x: !cl) -> (%s: !tdim.tensor<[b: ?, h: ?, w: ?, c: ?, t: ?], i1>) {
  neuron.lif ins(%x : !cl) outs(%s : !tdim.tensor<[b: ?, h: ?, w: ?, c: ?, t: ?], i1>) time t {v_reset = 0.0}
  tdim.return
}
