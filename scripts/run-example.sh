#!/usr/bin/env bash
# nerve's main job: installs what is missing, builds nerve, then compiles and
# runs one LIF training step (examples/neuron/lif_train.mlir: forward through
# 64 time steps of 65536 neurons, then backward through time with a sigmoid
# surrogate) on the GPU when there is one, else on the CPU, checks every
# output against an independent float64 reference, and times it.
#
#   NERVE_EXAMPLE_TARGET=cpu|cuda|auto   where to run (default auto)
#   NERVE_EXAMPLE_DIMS="t=64 n=65536"     the problem size
set -u
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

nerve_install_deps
nerve_build nerve-run nerve-opt

target="${NERVE_EXAMPLE_TARGET:-auto}"
dims=()
for d in ${NERVE_EXAMPLE_DIMS:-t=64 n=65536}; do dims+=(--dim "$d"); done
out="$NERVE_BUILD_DIR/example-output"
spec="$NERVE_ROOT/examples/neuron/lif_train.mlir"
rm -rf "$out"

say "running $spec (${NERVE_EXAMPLE_DIMS:-t=64 n=65536}, target $target)"
"$NERVE_BUILD_DIR/bin/nerve-run" "$spec" --target "$target" --random 0 \
  "${dims[@]}" --save-inputs --output-dir "$out" --timing \
  || die "nerve-run failed (see the message above)"

say "checking every output against a float64 reference (test/Integration/Inputs/check.py)"
/usr/bin/python3 "$NERVE_ROOT/test/Integration/Inputs/check.py" "$out" \
  "sim = simulate(x, 't', charge=lambda v, x: v + (x - v) / 2, v_th=1.0, v_reset=0.0, v0=v_init)" \
  "spike = sim.spike" "v_seq = sim.v" "h_seq = sim.h" \
  "g = bptt(sim, gS=grad_spike, gV=grad_v_seq, surrogate=('sigmoid', 4.0))" \
  "grad_x = g.grad_x" "grad_v_init = g.grad_v_init" --atol=1e-4 --rtol=1e-4 \
  || die "the outputs differ from the reference (inputs and outputs are in $out)"

say "timing 20 runs"
"$NERVE_BUILD_DIR/bin/nerve-run" "$spec" --target "$target" --random 0 \
  "${dims[@]}" --bench 20 --output-dir "$out/bench" >"$out/bench.log" 2>&1 \
  || die "the timed runs failed: $(tail -1 "$out/bench.log")"
grep 'nerve-run: bench' "$out/bench.log" | sed 's/^nerve-run: /nerve: /'
say "done: inputs and outputs are in $out"
