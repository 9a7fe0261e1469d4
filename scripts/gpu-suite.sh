#!/usr/bin/env bash
# Runs on the GPU machine, from a checkout, with the portable bundle and the
# test tools (built by scripts/make-bundle.sh) in .carry/: unpacks them, then
# runs nerve-opt --version, one pipeline, the whole lit suite (GPU tests
# included), the golden cases on the GPU, the Python package's tests (GPU
# cases included, with the bundle's package) and a few benchmarks. Full logs
# go to $OUT/gpu-logs.tar.gz (or ./gpu-out); a short summary is printed last.
# SpikingJelly, the Python benchmark's peer, is read from .carry/peers when
# it was copied there; pytest from .carry/pylib when the machine lacks it.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
final="${OUT:-$root/gpu-out}"
out=/tmp/nerve-gpu-logs
rm -rf "$out" && mkdir -p "$out" "$final"
bundle=/tmp/nerve-bundle
rm -rf "$bundle" && mkdir -p "$bundle"
tar -C "$bundle" --strip-components=1 -xJf "$root"/.carry/nerve-*-linux-x86_64.tar.xz || exit 1
# The test tools (FileCheck, lit) serve the parts that run lit; a run of
# benchmarks alone may leave them out of .carry/ (its size is limited).
tools="$root"/.carry/nerve-test-tools.tar.xz
if [ -f "$tools" ]; then
  tar -C "$bundle" -xJf "$tools" || exit 1
elif [[ " ${NERVE_GPU_PARTS:-tests} " == *" tests "* || " ${NERVE_GPU_PARTS:-} " == *" lit "* ||
        " ${NERVE_GPU_PARTS:-} " == *" sanitize "* ]]; then
  echo "gpu-suite: .carry/nerve-test-tools.tar.xz is missing (parts tests, lit and sanitize need it)" >&2
  exit 1
fi
# NERVE_PYTHON_FROM_TREE=1: the checkout's Python package instead of the
# bundle's (a Python change needs no new bundle).
[ "${NERVE_PYTHON_FROM_TREE:-0}" = 1 ] && cp -r "$root/python/nerve" "$bundle/python/"
export PATH="$bundle/bin:$PATH"
summary=()

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  echo "== nerve-opt --version"; nerve-opt --version
  echo "== a pipeline: nerve-opt --nerve-to-ptx examples/neuron/lif_forward.mlir"
  nerve-opt --nerve-to-ptx "$root/examples/neuron/lif_forward.mlir" | grep -E "gpu.binary|llvm.func @lif_forward" | cut -c1-160
} >"$out/bundle.log" 2>&1
summary+=("$(head -2 "$out/bundle.log" | tail -1)")
summary+=("$(grep -m1 'nerve version' "$out/bundle.log")")

parts=" ${NERVE_GPU_PARTS:-tests python latency package bench-neuron bench-tdim bench-torch bench-models bench-cpu bench-network ddp bench-contract sanitize} "
site=/tmp/nerve-test

# The lit site, against the bundle's tools (parts tests and sanitize).
rm -rf "$site" && mkdir -p "$site/test"
cat >"$site/test/lit.site.cfg.py" <<CFG
config.llvm_tools_dir = "$bundle/bin"
config.nerve_src_root = "$root"
config.nerve_obj_root = "$site"
config.nerve_tools_dir = "$bundle/bin"
config.nerve_version = "$(nerve-opt --version | sed -n 's/nerve version \([^ ]*\).*/\1/p')"
config.llvm_version = "$(nerve-opt --version | sed -n 's/.*LLVM\/MLIR \(.*\)/\1/p')"
import lit.llvm
lit.llvm.initialize(lit_config, config)
lit_config.load_config(config, "$root/test/lit.cfg.py")
CFG
# Part `lit` runs the lit suite alone; NERVE_LIT_TESTS (paths under test/,
# e.g. "Integration/CUDA/row-programs.test") narrows it.
if [[ $parts == *" tests "* || $parts == *" lit "* ]]; then
lit_paths=("$site/test")
if [[ -n ${NERVE_LIT_TESTS:-} ]]; then
  lit_paths=()
  for t in $NERVE_LIT_TESTS; do lit_paths+=("$site/test/$t"); done
fi
# Every step has a time limit: a hang costs that step, not the session.
timeout 400 python3 "$bundle/share/lit/lit.py" -sv "${lit_paths[@]}" >"$out/lit.log" 2>&1
summary+=("lit: $(grep -E '^  (Passed|Failed|Unsupported|Unresolved)' "$out/lit.log" | tr -s ' ' | tr '\n' ' ')")
summary+=("$(grep -E '^(FAIL|UNRESOLVED):' "$out/lit.log" | tr '\n' ' ')")
fi
if [[ $parts == *" tests "* ]]; then

for dtype in f64 f32 f16 bf16; do
  timeout 120 nerve-golden "$root/test/data/golden/neuron" --target cuda --dtype $dtype >"$out/golden-$dtype.log" 2>&1
  summary+=("golden cuda $dtype: $(tail -1 "$out/golden-$dtype.log")")
  timeout 120 nerve-golden "$root/test/data/golden/multistate" --target cuda --dtype $dtype >"$out/golden-multistate-$dtype.log" 2>&1
  summary+=("golden multistate cuda $dtype: $(tail -1 "$out/golden-multistate-$dtype.log")")
  timeout 120 nerve-golden "$root/test/data/golden/models" --target cuda --dtype $dtype >"$out/golden-models-$dtype.log" 2>&1
  summary+=("golden models cuda $dtype: $(tail -1 "$out/golden-models-$dtype.log")")
done

# The unit tests (their CUDA cases run here).
for test in "$bundle"/unittests/Nerve*Tests; do
  timeout 200 "$test" >"$out/unit-$(basename "$test").log" 2>&1
  summary+=("$(basename "$test"): $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/unit-$(basename "$test").log" | tr -s ' ' | tr '\n' ' ')")
done

fi

# The Python package's pytest suite against the bundle's package and PyTorch
# here (its GPU cases run; NERVE_PYTEST_ARGS narrows it, e.g. "-k cuda").
if [[ $parts == *" python "* ]]; then
  pypath="$bundle/python"
  python3 -c "import pytest" 2>/dev/null || pypath="$pypath:$root/.carry/pylib"
  PYTHONPATH="$pypath" NERVE_CACHE_DIR=/tmp/nerve-pytest-cache timeout "${NERVE_PYTEST_TIMEOUT:-500}" \
    python3 -m pytest -q -p no:cacheprovider -rfE --junitxml="$out/pytest.xml" \
    "$root/test/python" ${NERVE_PYTEST_ARGS:-} >"$out/pytest.log" 2>&1
  summary+=("python: $(tail -1 "$out/pytest.log")")
  summary+=("$(grep -E '^(FAILED|ERROR) ' "$out/pytest.log" | head -20 | tr '\n' ' ')")
fi

# Spec to running kernel: cold, disk cache, memory cache, launch overhead.
if [[ $parts == *" latency "* ]]; then
  timeout 200 "$bundle/bench/nerve-bench-latency" --examples "$root/examples" --runs 7 >"$out/latency.log" 2>&1
  summary+=("latency: $(grep -A3 '^spec (ms)' "$out/latency.log" | tr -s ' ' | tr '\n' '|') $(grep '^launch' "$out/latency.log")")
  # Every example spec's cold compile and where it goes.
  timeout 200 "$bundle/bench/nerve-bench-latency" --examples "$root/examples" --runs 5 --all >"$out/latency-all.log" 2>&1
  summary+=("cold compiles (ms): $(grep -E '^(neuron|tdim)/' "$out/latency-all.log" | awk '{printf "%s %s; ", $1, $3}')")
  # The same with each kernel's PTX generated at its first launch.
  timeout 200 "$bundle/bench/nerve-bench-latency" --examples "$root/examples" --runs 5 --all \
    --lazy-kernels >"$out/latency-lazy.log" 2>&1
  summary+=("lazy kernels, compile / +1st launch (ms): $(grep -E '^(neuron|tdim)/' "$out/latency-lazy.log" | awk '{printf "%s %s/%s; ", $1, $2, $3}')")
  # Each kernel compiled at its first launch for that launch's sizes, next
  # to the eager compile at the same sizes (1024 in the first two
  # dimensions): compile plus first launch.
  timeout 300 "$bundle/bench/nerve-bench-latency" --examples "$root/examples" --runs 5 --all \
    --size 1024 >"$out/latency-1024.log" 2>&1
  timeout 300 "$bundle/bench/nerve-bench-latency" --examples "$root/examples" --runs 5 --all \
    --size 1024 --specialize-sizes >"$out/latency-specialized.log" 2>&1
  summary+=("at 1024, eager / specialized compile +1st launch (ms): $(paste <(grep -E '^(neuron|tdim)/' "$out/latency-1024.log") <(grep -E '^(neuron|tdim)/' "$out/latency-specialized.log") | awk '{printf "%s %s/%s; ", $1, $3, $11}')")
  for run in cold warm; do
    timeout 60 nerve-run "$root/examples/neuron/lif_train.mlir" --target cuda --random 1 --dim t=64 --dim n=65536 \
      --write-outputs=false --output-dir /tmp/bench-out --cache-dir /tmp/nerve-timing-cache --timing \
      >"$out/timing-$run.log" 2>&1
  done
fi

# The CPU target on this machine's cores against PyTorch on the CPU
# (bench/cpu.py), on one thread and on all of them; and nerve-run's LIF
# training step on the CPU.
if [[ $parts == *" bench-cpu "* ]]; then
  for threads in 1 $(nproc); do
    timeout 60 nerve-run "$root/examples/neuron/lif_train.mlir" --target cpu --random 1 --dim t=64 \
      --dim n=65536 --bench 20 --cpu-threads "$threads" --write-outputs=false \
      --output-dir /tmp/bench-out >"$out/cpu-lif-train-$threads.log" 2>&1
    summary+=("$(grep 'nerve-run: bench' "$out/cpu-lif-train-$threads.log")")
  done
  PYTHONPATH="$bundle/python" NERVE_CACHE_DIR=/tmp/nerve-bench-cache timeout "${NERVE_BENCH_CPU_TIMEOUT:-420}" \
    python3 "$root/bench/cpu.py" --out "$out/bench-cpu" ${NERVE_BENCH_CPU_ARGS:-} >"$out/bench-cpu.log" 2>&1
  summary+=("bench-cpu: rc=$? $(grep -c '^| ' "$out/bench-cpu.log") table lines")
fi

# A program built outside the tree against the bundle's CMake package.
if [[ $parts == *" package "* ]]; then
  if command -v cmake >/dev/null && command -v c++ >/dev/null; then
    rm -rf /tmp/nerve-embed
    { cmake -S "$root/examples/embed" -B /tmp/nerve-embed -DCMAKE_PREFIX_PATH="$bundle" &&
      cmake --build /tmp/nerve-embed && timeout 120 /tmp/nerve-embed/nerve-embed; } >"$out/embed.log" 2>&1
    summary+=("embed example against the bundle: rc=$? $(tail -1 "$out/embed.log")")
  else
    summary+=("embed example: no cmake or c++ here")
  fi
fi

# Benchmarks (bench/), and where compile time goes.
if [[ $parts == *" bench-neuron "* ]]; then
  # NERVE_NEURON_ARGS narrows or sweeps the run (e.g. "--dtypes f16 --time-blocks 0,4,8").
  timeout "${NERVE_BENCH_TIMEOUT:-560}" python3 "$root/bench/neuron.py" --nerve-run "$bundle/bin/nerve-run" --torch-compile \
    --out "$out/bench-results" ${NERVE_NEURON_ARGS:-} >"$out/bench-neuron.log" 2>&1
  summary+=("bench-neuron: $(grep -c '^check .*: ok' "$out/bench-neuron.log") checks ok, $(grep -c 'FAILED' "$out/bench-neuron.log") failed")
fi
if [[ $parts == *" bench-tdim "* ]]; then
  # NERVE_TDIM_ARGS narrows the run (e.g. "--dtypes f32 --no-torch-compile").
  timeout "${NERVE_BENCH_TIMEOUT:-560}" python3 "$root/bench/tdim.py" --nerve-run "$bundle/bin/nerve-run" \
    --out "$out/bench-results" ${NERVE_TDIM_ARGS:-} >"$out/bench-tdim.log" 2>&1
  summary+=("bench-tdim: $(grep -c '^check .*: ok' "$out/bench-tdim.log") checks ok, $(grep -c 'FAILED' "$out/bench-tdim.log") failed")
fi

# Neurons written once (QIF, EIF, Izhikevich, ALIF, AdEx) against the copy
# bandwidth and SpikingJelly's CuPy forward kernels.
if [[ $parts == *" bench-models "* ]]; then
  peer=()
  [ -d "$root/.carry/peers/spikingjelly" ] && peer=(--spikingjelly "$root/.carry/peers")
  CUPY_CACHE_DIR=/tmp/nerve-jitcache/cupy PYTHONPATH="$bundle/python" \
    timeout "${NERVE_BENCH_TIMEOUT:-560}" python3 "$root/bench/models.py" "${peer[@]}" \
    --out "$out/bench-results" ${NERVE_MODELS_ARGS:-} >"$out/bench-models.log" 2>&1
  summary+=("bench-models: $(grep -c ' train ' "$out/bench-models.log") rows")
fi

# nerve.torch against SpikingJelly's backends from PyTorch, in one process.
if [[ $parts == *" bench-torch "* ]]; then
  peer=()
  [ -d "$root/.carry/peers/spikingjelly" ] && peer=(--spikingjelly "$root/.carry/peers")
  # NERVE_TORCH_ARGS narrows the run (e.g. "--dtypes f32 --sizes 64x65536").
  # The peers' JIT caches (Triton's autotuned kernels, CuPy's NVRTC output)
  # cost 20-60 s a row on a fresh machine: they come back as
  # jitcache.tar.xz (xz: a third of gzip's size, and .carry/ is limited),
  # which .carry/ may hold for the next run.
  jit=/tmp/nerve-jitcache
  rm -rf "$jit" && mkdir -p "$jit/triton" "$jit/cupy"
  for cache in "$root"/.carry/jitcache.tar.*; do [ -f "$cache" ] && tar -C "$jit" -xf "$cache"; done
  TRITON_CACHE_DIR="$jit/triton" CUPY_CACHE_DIR="$jit/cupy" PYTHONPATH="$bundle/python" \
    timeout "${NERVE_BENCH_TIMEOUT:-560}" python3 "$root/bench/torch_neuron.py" \
    "${peer[@]}" --out "$out/bench-results" ${NERVE_TORCH_ARGS:-} >"$out/bench-torch.log" 2>&1
  XZ_OPT=-T0 tar -C "$jit" -cJf "$final/jitcache.tar.xz" triton cupy
  summary+=("bench-torch: $(grep -c '^check .*: ok' "$out/bench-torch.log") checks ok, $(grep -c 'FAILED' "$out/bench-torch.log") failed; $(grep '^nerve ahead' "$out/bench-torch.log")")
fi

# A SEW-ResNet18 trained with nerve's neurons and SpikingJelly's backends
# (bench/snn_network.py), eager and compiled, f32 and bf16. With four GPUs
# or more each backend runs on its own GPU at once (torch.compile's
# compiles take most of the time), on its own share of the host's cores:
# steps without CUDA graphs are bound by the host, and one backend's
# compile workers must not slow another's timed steps. NERVE_NETWORK_ARGS
# narrows the run, NERVE_NETWORK_BACKENDS (e.g. "nerve triton") its backends.
if [[ $parts == *" bench-network "* ]]; then
  peer=()
  [ -d "$root/.carry/peers/spikingjelly" ] && peer=(--spikingjelly "$root/.carry/peers")
  backends=(nerve)
  [ ${#peer[@]} -gt 0 ] && backends=(${NERVE_NETWORK_BACKENDS:-nerve cupy triton torch})
  gpus=$(nvidia-smi -L | wc -l)
  net="$out/bench-network"
  mkdir -p "$net"
  if [ "$gpus" -ge ${#backends[@]} ]; then
    share=$(( $(nproc) / ${#backends[@]} ))
    for i in "${!backends[@]}"; do
      b=${backends[$i]}
      taskset -c "$((i * share))-$((i * share + share - 1))" \
      env CUDA_VISIBLE_DEVICES=$i TRITON_CACHE_DIR=/tmp/nerve-jitcache/triton-$i \
        CUPY_CACHE_DIR=/tmp/nerve-jitcache/cupy-$i PYTHONPATH="$bundle/python" \
        NERVE_CACHE_DIR=/tmp/nerve-network-cache-$i timeout "${NERVE_BENCH_TIMEOUT:-560}" \
        python3 "$root/bench/snn_network.py" "${peer[@]}" --backends "$b" --out "$net/$b" \
        ${NERVE_NETWORK_ARGS:-} >"$out/bench-network-$b.log" 2>&1 &
    done
    wait
  else
    PYTHONPATH="$bundle/python" timeout "${NERVE_BENCH_TIMEOUT:-560}" \
      python3 "$root/bench/snn_network.py" "${peer[@]}" --backends "$(IFS=,; echo "${backends[*]}")" \
      --out "$net/all" ${NERVE_NETWORK_ARGS:-} >"$out/bench-network-all.log" 2>&1
  fi
  python3 "$root/bench/snn_network.py" --report "$net"/* >"$out/bench-network.log" 2>&1
  summary+=("bench-network: $(grep -c '^| [a-z]' "$out/bench-network.log") rows; $(grep 'nerve.s training step' "$out/bench-network.log" | tr '\n' ' ')")
fi

# Contractions against cuBLAS and a linear layer into a LIF neuron
# (bench/contract.py); NERVE_CONTRACT_ARGS narrows it.
if [[ $parts == *" bench-contract "* ]]; then
  peer=()
  [ -d "$root/.carry/peers/spikingjelly" ] && peer=(--spikingjelly "$root/.carry/peers")
  PYTHONPATH="$bundle/python" NERVE_CACHE_DIR=/tmp/nerve-contract-cache timeout "${NERVE_BENCH_TIMEOUT:-560}" \
    python3 "$root/bench/contract.py" "${peer[@]}" --out "$out/bench-results" ${NERVE_CONTRACT_ARGS:-} \
    >"$out/bench-contract.log" 2>&1
  summary+=("bench-contract: rc=$? $(grep -c '^| [a-z]' "$out/bench-contract.log") rows; $(grep '^check' "$out/bench-contract.log" | tr '\n' ' ')")
fi

# Data-parallel training over this machine's GPUs (torchrun, DDP over NCCL,
# multicast off): SEW-ResNet18 on nerve's neurons at 32 images a GPU on 1, 2,
# 4 ... GPUs, the first losses of one GPU and of all at one global batch
# (batch norm synchronised), and the digits example on 1, 2, 4 ... GPUs.
if [[ $parts == *" ddp "* ]]; then
  export NCCL_NVLS_ENABLE=0
  gpus=$(nvidia-smi -L | wc -l)
  ddp="$out/ddp"
  mkdir -p "$ddp"
  counts=(1); for g in 2 4 8; do [ "$g" -le "$gpus" ] && counts+=($g); done
  run() { PYTHONPATH="$bundle/python" NERVE_CACHE_DIR=/tmp/nerve-ddp-cache timeout "${NERVE_DDP_TIMEOUT:-300}" \
            python3 -m torch.distributed.run --standalone --nproc_per_node="$@"; }
  for g in "${counts[@]}"; do
    run "$g" "$root/bench/snn_network.py" --distributed --backend nerve --out "$ddp" \
      ${NERVE_DDP_ARGS:-} >"$out/ddp-sew-g$g.log" 2>&1
    run "$g" "$root/examples/python/train_digits.py" --device cuda --epochs 20 --log-steps 1000 \
      --json "$ddp/digits-nerve-g$g.json" >"$out/ddp-digits-g$g.log" 2>&1
  done
  for g in 1 "${counts[-1]}"; do
    run "$g" "$root/bench/snn_network.py" --distributed --backend nerve --sync-bn --batch 32 \
      --log-steps 8 --runs 5 --out "$ddp" >"$out/ddp-sew-sync-g$g.log" 2>&1
  done
  python3 "$root/bench/snn_network.py" --report "$ddp" >"$out/ddp.log" 2>&1
  summary+=("ddp: $(grep -c '^| nerve' "$out/ddp.log") scaling rows; $(grep -c 'test accuracy' "$out/ddp.log") digits runs")
fi

# compute-sanitizer's memcheck (with leak check), racecheck and initcheck
# over every example and golden case, the edge cases of the row programs,
# the time-minor neurons, the split reductions and the tiled transposes (the
# lit GPU tests, tools wrapped) and every benchmark kernel at its check size.
if [[ $parts == *" sanitize "* ]]; then
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
  if [ -z "$cs" ]; then
    summary+=("sanitize: no compute-sanitizer on this machine")
  else
    # NERVE_SANITIZE_TOOLS narrows the tools (e.g. "memcheck").
    for tool in ${NERVE_SANITIZE_TOOLS:-memcheck racecheck initcheck}; do
      wrap="$cs --tool $tool --error-exitcode 97 --print-limit 20"
      [ $tool = memcheck ] && wrap="$wrap --leak-check full"
      [ $tool = racecheck ] && wrap="$wrap --racecheck-report all"
      log="$out/sanitize-$tool"
      NERVE_COMPUTE_SANITIZER="$wrap" timeout 200 python3 "$bundle/share/lit/lit.py" -a \
        "$site/test/Integration/CUDA/examples.test" "$site/test/Integration/CUDA/golden.test" \
        "$site/test/Integration/CUDA/row-programs.test" "$site/test/Integration/CUDA/time-minor.test" \
        "$site/test/Integration/CUDA/split-reductions.test" \
        "$site/test/Integration/CUDA/tiled-transpose.test" \
        "$site/test/Integration/CUDA/lockstep-loops.test" >"$log-lit.log" 2>&1
      timeout 200 python3 "$root/bench/neuron.py" --check-only --wrap "$wrap" --nerve-run "$bundle/bin/nerve-run" >"$log-neuron.log" 2>&1
      timeout 300 python3 "$root/bench/tdim.py" --check-only --wrap "$wrap" --nerve-run "$bundle/bin/nerve-run" >"$log-tdim.log" 2>&1
      # Every sanitized process ends with a summary line; count them and the
      # ones that are not clean.
      runs=$(cat "$log"-*.log | grep -cE '(ERROR|RACECHECK) SUMMARY')
      clean=$(cat "$log"-*.log | grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards')
      summary+=("sanitize $tool: $runs sanitized processes, $clean clean | lit $(grep -E '^  (Passed|Failed)' "$log-lit.log" | tr -s ' ' | tr '\n' ' ')| bench neuron $(grep -c ': ok (' "$log-neuron.log") ok, $(tail -1 "$log-neuron.log") | bench tdim $(grep -c ': ok (' "$log-tdim.log") ok, $(tail -1 "$log-tdim.log")")
    done
  fi
fi

printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
# One archive: the device tool brings back only a few files.
tar -C "$out" -czf "$final/gpu-logs.tar.gz" .
