#!/usr/bin/env python3
"""tdim.contract against cuBLAS (torch.matmul, F.linear), and Linear -> LIF, in one process.

16-bit products run on tensor cores (mma.sync; wgmma on sm_90); f32 as IEEE
fused multiply-adds (the fma tiling) against cuBLAS in IEEE f32 (TF32 off);
"tf32" is f32 compiled with tf32=True (wgmma on sm_90) against cuBLAS with
allow_tf32; --no-tensor-cores measures the
general loops for every dtype.

Rows, each in f16, bf16, f32 and tf32:
  matmul   [i, k] x [k, j] at 4096^3 and 8192^3;
  linear   [b, k] x [j, k] (nn.Linear's weight layout, no transpose) plus a
           bias, at tokens x in x out shapes from 4096 x 1024 x 1024 to
           32768 x 8192 x 8192;
  linear+relu  the same with a relu after it: nerve's one kernel (bias and relu
           in the product's epilogue) against F.linear then torch.relu;
  linear+lif  x [T, B, in] through a linear layer into a LIF neuron over T:
           nerve's one spec (one kernel: the neuron is the product's epilogue,
           scanning time) against F.linear followed by nerve.torch's LIF, nerve's
           product (t and b merged into its rows) followed by the same LIF (the
           two kernels the fusion replaces), and SpikingJelly's triton LIF after
           F.linear (with --spikingjelly).
Times are medians of CUDA-event timed calls after warm-up; a nerve row
whose first call takes longer than --budget seconds is timed once. TFLOP/s
count 2 x i x j x k. Every kernel is first checked against a float64
reference at odd sizes (not multiples of any tile; one row; k = 1).

    PYTHONPATH=build/python python3 bench/contract.py --out /tmp/contract

--device cpu runs the same rows on the CPU at --cpu-scale of the sizes (a
smoke run: the CPU has no tensor cores).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch

import nerve
import nerve.torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
          "tf32": torch.float32}
MATMUL = """
tdim.kernel @matmul(%a: !tdim.tensor<[i: ?, k: ?], T>, %b: !tdim.tensor<[k: ?, j: ?], T>)
    -> (%c: !tdim.tensor<[i: ?, j: ?], T>) {
  tdim.contract ins(%a, %b : !tdim.tensor<[i: ?, k: ?], T>, !tdim.tensor<[k: ?, j: ?], T>)
      outs(%c : !tdim.tensor<[i: ?, j: ?], T>)
  tdim.return
}
"""
LINEAR = """
tdim.kernel @linear(%x: !tdim.tensor<[b: ?, k: ?], T>, %w: !tdim.tensor<[j: ?, k: ?], T>,
                    %bias: !tdim.tensor<[j: ?], T>) -> (%y: !tdim.tensor<[b: ?, j: ?], T>) {
  tdim.broadcast ins(%bias : !tdim.tensor<[j: ?], T>) outs(%y : !tdim.tensor<[b: ?, j: ?], T>)
  tdim.contract ins(%x, %w : !tdim.tensor<[b: ?, k: ?], T>, !tdim.tensor<[j: ?, k: ?], T>)
      outs(%y : !tdim.tensor<[b: ?, j: ?], T>) accumulate
  tdim.return
}
"""
LINEAR_RELU = """
!x = !tdim.tensor<[b: ?, k: ?], T>
!w = !tdim.tensor<[j: ?, k: ?], T>
!y = !tdim.tensor<[b: ?, j: ?], T>
tdim.kernel @linear_relu(%x: !x, %w: !w, %bias: !tdim.tensor<[j: ?], T>) -> (%y: !y) {
  %nb = tdim.size %x[b] : !x
  %nj = tdim.size %w[j] : !w
  %h = tdim.alloc(%nb, %nj) : !y
  tdim.broadcast ins(%bias : !tdim.tensor<[j: ?], T>) outs(%h : !y)
  tdim.contract ins(%x, %w : !x, !w) outs(%h : !y) accumulate
  tdim.map ins(%h : !y) outs(%y : !y) {
  ^bb0(%v: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %zero : f32
    tdim.yield %r : f32
  }
  tdim.return
}
"""
LINEAR_LIF = """
!x = !tdim.tensor<[t: ?, b: ?, k: ?], T>
!w = !tdim.tensor<[j: ?, k: ?], T>
!y = !tdim.tensor<[t: ?, b: ?, j: ?], T>
tdim.kernel @linear_lif(%x: !x, %w: !w) -> (%spike: !y) {
  %nt = tdim.size %x[t] : !x
  %nb = tdim.size %x[b] : !x
  %nj = tdim.size %w[j] : !w
  %h = tdim.alloc(%nt, %nb, %nj) : !y
  tdim.contract ins(%x, %w : !x, !w) outs(%h : !y)
  neuron.lif ins(%h : !y) outs(%spike : !y) time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0}
  tdim.return
}
"""
LINEAR_TB = """
!x = !tdim.tensor<[t: ?, b: ?, k: ?], T>
!w = !tdim.tensor<[j: ?, k: ?], T>
!y = !tdim.tensor<[t: ?, b: ?, j: ?], T>
tdim.kernel @linear_tb(%x: !x, %w: !w) -> (%h: !y) {
  tdim.contract ins(%x, %w : !x, !w) outs(%h : !y)
  tdim.return
}
"""
MATMUL_SIZES = (4096, 8192)
LINEAR_SHAPES = ((4096, 1024, 1024), (4096, 4096, 4096), (16384, 4096, 4096),
                 (32768, 4096, 1024), (32768, 8192, 8192))
LIF_SHAPES = ((8, 512, 1024, 1024), (8, 2048, 4096, 4096))  # T, B, in, out
CHECKS = ((257, 129, 65), (1, 300, 33), (130, 1, 70))  # rows, k, cols


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtypes", default="f16,bf16,f32,tf32")
    p.add_argument("--rows", default="matmul,linear,linear+relu,linear+lif")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--budget", type=float, default=2.0,
                   help="seconds a nerve call may take and still be timed --runs times")
    p.add_argument("--spikingjelly", default=None, help="the folder holding SpikingJelly")
    p.add_argument("--device", default="cuda")
    p.add_argument("--cpu-scale", type=float, default=1 / 16)
    p.add_argument("--check-only", action="store_true")
    p.add_argument("--no-tensor-cores", action="store_true",
                   help="compile every contraction as the general loops (the baseline)")
    p.add_argument("--out", default=None)
    return p.parse_args()


class Timer:
    def __init__(self, device, runs, budget):
        self.cuda = device.type == "cuda"
        self.runs, self.budget = runs, budget

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def once(self, fn):
        self.sync()
        start = time.perf_counter()
        fn()
        self.sync()
        return time.perf_counter() - start

    def median_ms(self, fn, guard=False):
        """Median ms of fn after a warm-up call; with `guard`, one timed call
        when the warm-up took longer than the budget."""
        first = self.once(fn)
        if guard and first > self.budget:
            return self.once(fn) * 1e3, 1
        if self.cuda:
            return common.torch_median_ms(torch, fn, self.runs, flush="none", warmup=0), self.runs
        return statistics.median(self.once(fn) * 1e3 for _ in range(self.runs)), self.runs


def kernels(dtype, target, tensor_cores=True):
    """The specs in `dtype` (tf32: f32 compiled with tf32=True), compiled for
    `target` ("cuda" or "cpu")."""
    element = "f32" if dtype == "tf32" else dtype
    return {name: nerve.compile(spec.replace("], T>", "], %s>" % element), target=target,
                                tensor_cores=tensor_cores, tf32=dtype == "tf32")
            for name, spec in (("matmul", MATMUL), ("linear", LINEAR),
                               ("linear+relu", LINEAR_RELU), ("linear+lif", LINEAR_LIF),
                               ("linear_tb", LINEAR_TB))}


def lif_reference(h):
    v = torch.zeros_like(h[0])
    out = []
    for step in h:
        charged = v + (step - v) / 2.0
        spike = (charged >= 1.0).to(h.dtype)
        v = charged * (1.0 - spike)
        out.append(spike)
    return torch.stack(out)


def check(mods, dtype, device):
    """Each kernel against float64 at odd sizes; returns failures."""
    tol = {"f16": 2e-2, "bf16": 8e-2, "f32": 1e-4, "tf32": 2e-2}[dtype]
    dt = DTYPES[dtype]
    g = torch.Generator().manual_seed(5)
    failures = []
    for rows, k, cols in CHECKS:
        a = torch.randn(rows, k, generator=g).to(dt)
        b = torch.randn(k, cols, generator=g).to(dt)
        w = torch.randn(cols, k, generator=g).to(dt)
        bias = torch.randn(cols, generator=g).to(dt)
        got = mods["matmul"].matmul(a=a.to(device), b=b.to(device)).double().cpu()
        want = a.double() @ b.double()
        if not torch.allclose(got, want, rtol=tol, atol=tol * k ** 0.5):
            failures.append("matmul %dx%dx%d" % (rows, k, cols))
        got = mods["linear"].linear(x=a.to(device), w=w.to(device),
                                    bias=bias.to(device)).double().cpu()
        want = a.double() @ w.double().t() + bias.double()
        if not torch.allclose(got, want, rtol=tol, atol=tol * k ** 0.5):
            failures.append("linear %dx%dx%d" % (rows, k, cols))
        got = mods["linear+relu"].linear_relu(x=a.to(device), w=w.to(device),
                                              bias=bias.to(device)).double().cpu()
        if not torch.allclose(got, want.clamp(min=0), rtol=tol, atol=tol * k ** 0.5):
            failures.append("linear+relu %dx%dx%d" % (rows, k, cols))
    # Spikes: compare where the charge is not within rounding of the threshold.
    x = torch.randn(5, 3, 17, generator=g).to(dt)
    w = (torch.randn(9, 17, generator=g) / 2).to(dt)
    got = mods["linear+lif"].linear_lif(x=x.to(device), w=w.to(device)).double().cpu()
    want = lif_reference(torch.einsum("tbk,jk->tbj", x.double(), w.double()))
    if (got != want).double().mean() > 0.02:
        failures.append("linear+lif: %.1f%% of spikes differ" %
                        (100 * (got != want).double().mean()))
    return failures


def rows_for(args, mods, dtype, device, timer, sj):
    dt = DTYPES[dtype]
    scale = args.cpu_scale if device.type == "cpu" else 1.0
    out = []

    def sized(v):
        return max(int(v * scale) // 8 * 8, 8)

    def row(kind, shape, flops, nerve_fn, peers):
        r = {"kind": kind, "shape": shape, "dtype": dtype}
        r["nerve_ms"], r["nerve_runs"] = timer.median_ms(nerve_fn, guard=True)
        for name, fn in peers.items():
            r[name + "_ms"] = timer.median_ms(fn)[0]
        r["nerve_tflops"] = flops / r["nerve_ms"] / 1e9
        base = next(iter(peers))
        r["vs_" + base] = r[base + "_ms"] / r["nerve_ms"]
        print(format_row(r), flush=True)
        out.append(r)

    wanted = set(args.rows.split(","))
    if "matmul" in wanted:
        for n in MATMUL_SIZES:
            n = sized(n)
            a = torch.randn(n, n, device=device, dtype=dt)
            b = torch.randn(n, n, device=device, dtype=dt)
            row("matmul", "%d^3" % n, 2.0 * n ** 3, lambda: mods["matmul"].matmul(a=a, b=b),
                {"torch": lambda: torch.matmul(a, b)})
    if "linear" in wanted:
        for tokens, k, j in LINEAR_SHAPES:
            tokens, k, j = sized(tokens), sized(k), sized(j)
            x = torch.randn(tokens, k, device=device, dtype=dt)
            w = torch.randn(j, k, device=device, dtype=dt)
            bias = torch.randn(j, device=device, dtype=dt)
            row("linear", "%dx%dx%d" % (tokens, k, j), 2.0 * tokens * k * j,
                lambda: mods["linear"].linear(x=x, w=w, bias=bias),
                {"torch": lambda: torch.nn.functional.linear(x, w, bias)})
    if "linear+relu" in wanted:
        for tokens, k, j in LINEAR_SHAPES[:3]:
            tokens, k, j = sized(tokens), sized(k), sized(j)
            x = torch.randn(tokens, k, device=device, dtype=dt)
            w = torch.randn(j, k, device=device, dtype=dt)
            bias = torch.randn(j, device=device, dtype=dt)
            row("linear+relu", "%dx%dx%d" % (tokens, k, j), 2.0 * tokens * k * j,
                lambda: mods["linear+relu"].linear_relu(x=x, w=w, bias=bias),
                {"torch": lambda: torch.relu(torch.nn.functional.linear(x, w, bias))})
    if "linear+lif" in wanted:
        for steps, batch, k, j in LIF_SHAPES:
            batch, k, j = sized(batch), sized(k), sized(j)
            x = torch.randn(steps, batch, k, device=device, dtype=dt)
            w = torch.randn(j, k, device=device, dtype=dt) / k ** 0.5
            node = nerve.torch.LIFNode(tau=2.0, step_mode="m")
            peers = {"linear_then_nerve_lif":
                     lambda: (node(torch.nn.functional.linear(x, w)), node.reset()),
                     "nerve_linear_then_nerve_lif":
                     lambda: (node(mods["linear_tb"].linear_tb(x=x, w=w)), node.reset())}
            if sj is not None and device.type == "cuda":
                sj_node = sj.LIFNode(tau=2.0, step_mode="m", backend="triton")
                peers["linear_then_sj_triton_lif"] = \
                    lambda: (sj_node(torch.nn.functional.linear(x, w)), sj_node.reset())
            with torch.no_grad():
                row("linear+lif", "T%d x %dx%dx%d" % (steps, batch, k, j),
                    2.0 * steps * batch * k * j,
                    lambda: mods["linear+lif"].linear_lif(x=x, w=w), peers)
    return out


def format_row(r):
    peers = " | ".join("%s %.3f" % (k[:-3], v) for k, v in r.items()
                       if k.endswith("_ms") and k != "nerve_ms")
    ratio = next(v for k, v in r.items() if k.startswith("vs_"))
    return "| %s | %s | %s | %.3f%s | %.1f | %s | %.1f%% |" % (
        r["kind"], r["shape"], r["dtype"], r["nerve_ms"],
        "" if r["nerve_runs"] > 1 else " (1 run)", r["nerve_tflops"], peers, 100 * ratio)


def main():
    args = parse_args()
    device = torch.device(args.device)
    sj = None
    if args.spikingjelly:
        sys.path.insert(0, os.path.abspath(args.spikingjelly))
        from spikingjelly.activation_based import neuron as sj
    timer = Timer(device, args.runs, args.budget)
    print("| op | shape | dtype | nerve ms | nerve TFLOP/s | peers ms | nerve's speed "
          "against the first peer |")
    print("|---|---|---|---|---|---|---|")
    rows, failures = [], []
    for dtype in args.dtypes.split(","):
        if device.type == "cuda":  # f32 rows against IEEE f32, tf32 rows against tf32
            torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        mods = kernels(dtype, device.type, not args.no_tensor_cores)
        failed = check(mods, dtype, device)
        failures += ["%s: %s" % (dtype, f) for f in failed]
        print("check %s: %s" % (dtype, "ok" if not failed else "FAILED " + "; ".join(failed)),
              flush=True)
        if not args.check_only:
            rows += rows_for(args, mods, dtype, device, timer, sj)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "contract.json"), "w") as f:
            json.dump({"device": str(device), "rows": rows, "failures": failures}, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
