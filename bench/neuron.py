#!/usr/bin/env python3
"""Multi-step LIF on the GPU, inference and training, against the device's
copy bandwidth measured in the same process, next to SpikingJelly's
fastest backend (triton) as ../shared/targets.md measured it on an H200.

Inference = forward writing spikes and v_seq: 3 tensors of T x N move.
Training = forward writing spikes, v_seq and h_seq, then backward reading
h_seq, grad_spike and grad_v_seq and writing grad_x: 8 tensors move (the
count targets.md uses: 32 bytes per element in f32).

usage: bench/neuron.py [--nerve-run PATH] [--runs 20] [--time-block 0 8 ...]
                       [--dtypes f32,f16,bf16] [--sizes 64x65536,...]
"""
import argparse
import os
import tempfile

from common import ROOT, WIDTH, find_tool, run_bench, spec_in_dtype

# SpikingJelly triton, ms (infer, train), targets.md.
TRITON = {
    ("f32", 32, 4096): (0.073, 1.19), ("f32", 64, 65536): (0.097, 1.23),
    ("f32", 256, 65536): (0.190, 1.27), ("f32", 1024, 65536): (0.584, 1.86),
    ("f16", 64, 65536): (0.072, 1.15), ("f16", 256, 65536): (0.171, 0.957),
    ("f16", 1024, 65536): (0.497, 1.70), ("bf16", 64, 65536): (0.075, 1.16),
    ("bf16", 256, 65536): (0.167, 1.18), ("bf16", 1024, 65536): (0.494, 1.67),
}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nerve-run")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--time-block", type=int, nargs="+", default=[0],
                   help="time blocks to try (0: nerve chooses)")
    p.add_argument("--dtypes", default="f32,f16,bf16")
    p.add_argument("--sizes", default="32x4096,64x65536,256x65536,1024x65536")
    args = p.parse_args()
    nerve_run = find_tool("nerve-run", args.nerve_run)
    work = tempfile.mkdtemp(prefix="nerve-bench-")
    specs = {"infer": os.path.join(ROOT, "examples", "neuron", "lif_forward.mlir"),
             "train": os.path.join(ROOT, "examples", "neuron", "lif_train.mlir")}
    tensors = {"infer": 3, "train": 8}
    copy = None

    print("%-12s %-5s %-6s %5s %10s %8s %12s %9s" %
          ("T x N", "dtype", "mode", "block", "ms", "%copy", "triton ms", "speed-up"))
    for dtype in args.dtypes.split(","):
        for size in args.sizes.split(","):
            t, n = (int(v) for v in size.split("x"))
            for mode in ("infer", "train"):
                spec = spec_in_dtype(specs[mode], dtype, work)
                for block in args.time_block:
                    r = run_bench(nerve_run, spec, {"t": t, "n": n}, args.runs,
                                  ["--time-block", str(block)])
                    if r is None:
                        continue
                    ms, copy = r
                    moved = tensors[mode] * t * n * WIDTH[dtype]
                    pct = 100.0 * moved / (ms * 1e-3) / (copy * 1e9)
                    peer = TRITON.get((dtype, t, n))
                    peer_ms = peer[0 if mode == "infer" else 1] if peer else None
                    print("%-12s %-5s %-6s %5s %10.4f %7.1f%% %12s %9s" % (
                        size, dtype, mode, block or "auto", ms, pct,
                        "%.3f" % peer_ms if peer_ms else "-",
                        "%.2fx" % (peer_ms / ms) if peer_ms else "-"), flush=True)
    if copy:
        print("copy bandwidth (same process, last run): %.0f GB/s" % copy)


if __name__ == "__main__":
    main()
