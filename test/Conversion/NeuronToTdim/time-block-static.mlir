// RUN: nerve-opt %s --convert-neuron-to-tdim --split-input-file | FileCheck %s

// A sequence whose type fixes it shorter than the automatic block is one
// block: its steps load together, none is left to the one-at-a-time loop,
// and nothing is loaded ahead (there is no next block).
// CHECK-LABEL: tdim.kernel @forward_short
// CHECK-NOT:  scf.if
// CHECK:      tdim.for %[[B:.*]] over t from %{{.*}} to %{{.*}} step 4 iter_args
// CHECK-COUNT-4: tdim.load %x
// CHECK-NOT:  tdim.load
// CHECK:      arith.subf
// CHECK-COUNT-8: tdim.store
// CHECK:      tdim.yield
!short = !tdim.tensor<[t: 4, n: ?], f32, strides = [?, 1]>
tdim.kernel @forward_short(%x: !short) -> (%s: !short, %h: !short) {
  neuron.lif ins(%x : !short) outs(%s : !short) h_seq(%h : !short)
      time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0}
  tdim.return
}

// -----

// Backward too: the 4 steps' h and spike gradients load before any
// arithmetic, walked from the last step.
// CHECK-LABEL: tdim.kernel @backward_short
// CHECK-NOT:  scf.if
// CHECK:      tdim.for %{{.*}} over t from %{{.*}} to %{{.*}} step 4 reverse iter_args
// CHECK-COUNT-8: tdim.load
// CHECK-NOT:  tdim.load
// CHECK:      tdim.store %{{.*}}, %gx
// CHECK-COUNT-3: tdim.store %{{.*}}, %gx
// CHECK:      tdim.yield
!short = !tdim.tensor<[t: 4, n: ?], f32>
tdim.kernel @backward_short(%h: !short, %gs: !short) -> (%gx: !short) {
  neuron.lif_grad ins(%h : !short) grad_spike(%gs : !short) outs(%gx : !short)
      time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0, surrogate = #neuron.surrogate<atan>}
  tdim.return
}

// -----

// 16-bit blocks are 32 steps: 24 of bf16 are one block.
// CHECK-LABEL: tdim.kernel @forward_bf16
// CHECK:      step 24
// CHECK-COUNT-24: tdim.load %x
// CHECK-NOT:  tdim.load
// CHECK:      arith.extf
!bf = !tdim.tensor<[t: 24, n: ?], bf16>
tdim.kernel @forward_bf16(%x: !bf) -> (%s: !bf) {
  neuron.if ins(%x : !bf) outs(%s : !bf) time t {v_threshold = 1.0, v_reset = 0.0}
  tdim.return
}

// -----

// A fixed length longer than the block keeps the automatic block (16 f32
// steps), loaded a block ahead.
// CHECK-LABEL: tdim.kernel @forward_long
// CHECK:      scf.if
// CHECK:      step 16
!long = !tdim.tensor<[t: 20, n: ?], f32>
tdim.kernel @forward_long(%x: !long) -> (%s: !long) {
  neuron.lif ins(%x : !long) outs(%s : !long) time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0}
  tdim.return
}

// -----

// Time-minor sequences (time contiguous) take the whole short sequence as
// their block as well.
// CHECK-LABEL: tdim.kernel @forward_time_minor
// CHECK:      step 8
// CHECK-COUNT-8: tdim.load %x
!minor = !tdim.tensor<[n: ?, t: 8], f32>
tdim.kernel @forward_time_minor(%x: !minor) -> (%s: !minor) {
  neuron.lif ins(%x : !minor) outs(%s : !minor) time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0}
  tdim.return
}
