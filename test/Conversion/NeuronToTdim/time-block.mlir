// RUN: nerve-opt %s --convert-neuron-to-tdim="time-block=4" --cse --split-input-file | FileCheck %s
// RUN: nerve-opt %s --convert-neuron-to-tdim --split-input-file | FileCheck %s --check-prefix=AUTO
// RUN: not nerve-opt %s --convert-neuron-to-tdim="time-block=129" --split-input-file 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: time-block must be between 0 (automatic) and 128, not 129

// Automatic forward blocks hold 64 bytes of loads per thread (16 steps of
// one f32 stream), loaded a block ahead; f32 backward blocks are 16 steps
// (64 bytes of each stream), each loading its own steps first (no scf.if
// of a look-ahead).
// AUTO-LABEL: tdim.kernel @forward
// AUTO: step 16
// AUTO-LABEL: tdim.kernel @backward
// AUTO-NOT: scf.if
// AUTO: step 16
// AUTO-NOT: scf.if
// AUTO-LABEL: tdim.kernel @quadratic
// AUTO: step 16

!seq = !tdim.tensor<[t: ?, n: ?], f32>

// Forward: whole blocks of 4 steps. The first block's loads come before
// the loop (when there is a whole block); each iteration issues the next
// block's 4 loads before any arithmetic of its own block, whose loaded
// values it carries in. The remaining steps run one at a time, carrying v.
// CHECK-LABEL: tdim.kernel @forward
// CHECK:      %[[T:.*]] = tdim.size %x[t]
// CHECK:      %[[ZERO:.*]] = tdim.const 0 : !tdim.index<t>
// CHECK:      %[[BLOCKS:.*]] = tdim.fold %[[T]] : !tdim.index<t> to !tdim.index<t/4>
// CHECK:      %[[WHOLE:.*]] = tdim.unfold %[[BLOCKS]] : !tdim.index<t/4> to !tdim.index<t>
// CHECK:      %[[ANY:.*]] = tdim.cmp gt, %[[WHOLE]], %[[ZERO]] : !tdim.index<t>
// CHECK:      %[[FIRST:.*]]:4 = scf.if %[[ANY]] -> (f32, f32, f32, f32) {
// CHECK-COUNT-4: tdim.load %x
// CHECK:      } else {
// CHECK:      %[[V:.*]]:5 = tdim.for %[[B:.*]] over t from %[[ZERO]] to %[[WHOLE]] step 4 iter_args(%{{.*}} = %{{.*}}, %[[X0:.*]] = %[[FIRST]]#0, %{{.*}} = %[[FIRST]]#1, %{{.*}} = %[[FIRST]]#2, %{{.*}} = %[[FIRST]]#3)
// CHECK:        %[[AFTER:.*]] = tdim.add %[[B]], %{{.*}} : !tdim.index<t>
// CHECK:        tdim.cmp lt, %[[AFTER]], %[[WHOLE]]
// CHECK-COUNT-4: tdim.load %x
// CHECK-NOT:    tdim.load
// CHECK:        arith.subf %[[X0]]
// CHECK-COUNT-4: tdim.store
// CHECK:        tdim.yield
// CHECK:      tdim.for %{{.*}} over t from %[[WHOLE]] to %[[T]] iter_args(%{{.*}} = %[[V]]#0)
// CHECK:        tdim.load %x
// CHECK:        tdim.store
tdim.kernel @forward(%x: !seq) -> (%s: !seq) {
  neuron.lif ins(%x : !seq) outs(%s : !seq) time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

// Backward walks time in reverse: the partial block at the end first, then
// the whole blocks from the last; each iteration loads the block before it
// (h and the spike gradient of 4 steps) ahead of its own arithmetic, which
// walks its steps in reverse.
// CHECK-LABEL: tdim.kernel @backward
// CHECK:      %[[WHOLE:.*]] = tdim.unfold
// CHECK:      %[[G:.*]] = tdim.for %{{.*}} over t from %[[WHOLE]] to %{{.*}} reverse iter_args
// CHECK:      scf.if
// CHECK-COUNT-8: tdim.load
// CHECK:      tdim.for %[[B:.*]] over t from %{{.*}} to %[[WHOLE]] step 4 reverse iter_args(%{{.*}} = %[[G]]
// CHECK:        tdim.cmp gt, %[[B]]
// CHECK:        tdim.sub %[[B]]
// CHECK-COUNT-8: tdim.load
// CHECK-NOT:    tdim.load
// CHECK:        tdim.store %{{.*}}, %gx[n = %{{.*}}, t = %{{.*}}]
// CHECK-COUNT-2: tdim.store
// CHECK:        tdim.store %{{.*}}, %gx[n = %{{.*}}, t = %[[B]]]
tdim.kernel @backward(%h: !seq, %gs: !seq) -> (%gx: !seq) {
  neuron.if_grad ins(%h : !seq) grad_spike(%gs : !seq) outs(%gx : !seq)
      time t {v_threshold = 1.0, v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}

// -----

!seq = !tdim.tensor<[t: ?, n: ?], f32>

// A charge function reading V[t-1]: inside a block V[t-1] comes from the h
// the neighbouring step loaded, and for the first step of a block from the
// block loaded ahead (v_init at t = 0): the whole blocks load nothing else.
// CHECK-LABEL: tdim.kernel @quadratic
// CHECK:      tdim.for %{{.*}} step 4 reverse
// CHECK-COUNT-8: tdim.load
// CHECK-NOT:  tdim.load
// CHECK:      tdim.cmp eq
// CHECK-NOT:  tdim.load
// CHECK:      tdim.yield
tdim.kernel @quadratic(%h: !seq, %x: !seq) -> (%gx: !seq) {
  neuron.generic_grad ins(%h : !seq) x(%x : !seq) outs(%gx : !seq)
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

// RUN: nerve-opt %s --convert-neuron-to-tdim="time-block=9" --split-input-file | FileCheck %s --check-prefix=PLAIN
// Blocks of 9 backward steps carry 36 values: too many to load a block
// ahead; each block loads its own 9 steps first.
// PLAIN-LABEL: tdim.kernel @plain
// PLAIN-NOT:   scf.if
// PLAIN:       tdim.for %[[B:.*]] over t from %{{.*}} step 9 reverse iter_args(%{{.*}} = %{{.*}}) -> (f32)
// PLAIN-COUNT-18: tdim.load
// PLAIN-NOT:   tdim.load
// PLAIN:       tdim.yield
tdim.kernel @plain(%h: !seq, %gs: !seq) -> (%gx: !seq) {
  neuron.if_grad ins(%h : !seq) grad_spike(%gs : !seq) outs(%gx : !seq)
      time t {v_threshold = 1.0, v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}

// -----

// Backward blocks load 64 bytes of each stream, at most 96 loads a thread:
// 32 steps for f16 with three streams (h and both upstream gradients), 16
// with four (PLIF's derivatives read x as well).
// AUTO-LABEL: tdim.kernel @backward_f16
// AUTO-NOT:   scf.if
// AUTO:       step 32 reverse
// AUTO-LABEL: tdim.kernel @plif_backward_f16
// AUTO:       step 16 reverse
!seq = !tdim.tensor<[t: ?, n: ?], f16>
!scalar = !tdim.tensor<[], f32>
tdim.kernel @backward_f16(%h: !seq, %gs: !seq, %gv: !seq) -> (%gx: !seq) {
  neuron.lif_grad ins(%h : !seq) grad_spike(%gs : !seq) grad_v_seq(%gv : !seq) outs(%gx : !seq)
      time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}
tdim.kernel @plif_backward_f16(%h: !seq, %x: !seq, %w: !scalar, %gs: !seq, %gv: !seq)
    -> (%gx: !seq, %gw: !scalar) {
  neuron.plif_grad ins(%h : !seq) x(%x : !seq) w(%w : !scalar) grad_spike(%gs : !seq)
      grad_v_seq(%gv : !seq) outs(%gx : !seq) grad_w(%gw : !scalar)
      time t {v_threshold = 1.0, v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}

// -----

// Time-minor ([n, t]: time is the contiguous dimension): blocks span 256
// bytes of each row (64 f32 steps, 128 f16 ones) and each loads its own
// steps (no look-ahead), so that the GPU mapping can stage them through
// shared memory.
// AUTO-LABEL: tdim.kernel @time_minor_forward
// AUTO-NOT:   scf.if
// AUTO:       step 64 iter_args
// AUTO-COUNT-64: tdim.load %x
// AUTO-LABEL: tdim.kernel @time_minor_backward_f16
// AUTO-NOT:   scf.if
// AUTO:       step 128 reverse
!seq = !tdim.tensor<[n: ?, t: ?], f32>
!half = !tdim.tensor<[n: ?, t: ?], f16>
tdim.kernel @time_minor_forward(%x: !seq) -> (%s: !seq) {
  neuron.lif ins(%x : !seq) outs(%s : !seq) time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0}
  tdim.return
}
tdim.kernel @time_minor_backward_f16(%h: !half, %gs: !half) -> (%gx: !half) {
  neuron.if_grad ins(%h : !half) grad_spike(%gs : !half) outs(%gx : !half)
      time t {v_threshold = 1.0, v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid>}
  tdim.return
}
