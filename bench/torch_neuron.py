#!/usr/bin/env python3
"""nerve.torch against SpikingJelly from PyTorch, in one process, on the GPU.

For IF, LIF and PLIF modules (step_mode='m', store_v_seq=True, reset before
each step as a training loop's reset_net does) in f32, f16 and bf16 at the
sizes of ../shared/targets.md, times
  infer  forward under no_grad, spikes and v_seq out (12 bytes an f32 element),
  train  forward keeping what backward needs, then backward from gradients on
         the spikes and v_seq through autograd (32 bytes an f32 element),
for nerve.torch and SpikingJelly's torch, cupy and triton backends (and
torch.compile of its torch loop at the smallest size), every one timed the same
way (bench/common.py: CUDA events, L2 emptied first, median); plus a
channels-last [T, B, H, W, C] input, and the host overhead of one call. Each
(neuron, dtype) is first checked against SpikingJelly's torch backend in
float64. Prints a markdown table and writes CSV and JSON to --out.

    python3 bench/torch_neuron.py --spikingjelly ../shared/peers
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
NEURONS = {"if": "IFNode", "lif": "LIFNode", "plif": "ParametricLIFNode"}
COMPILE_MAX_T = 32


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--spikingjelly", default=None,
                   help="the folder holding SpikingJelly's package (../shared/peers); "
                        "without it, only nerve runs")
    p.add_argument("--neurons", default="if,lif,plif")
    p.add_argument("--dtypes", default="f32,f16,bf16")
    p.add_argument("--sizes", default="32x4096,64x65536,256x65536,1024x65536")
    p.add_argument("--modes", default="infer,train")
    p.add_argument("--backends", default="nerve,triton,cupy,torch,compile")
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--compile-neurons", default="lif",
                   help="neurons whose torch loop torch.compile also runs (f32, T <= 32: "
                        "its compile takes tens of seconds a row)")
    p.add_argument("--budget", type=float, default=0.6,
                   help="seconds of timed runs a slow backend gets at most per row")
    p.add_argument("--no-channels-last", action="store_true")
    p.add_argument("--channels-last-dtypes", default="f32,f16")
    p.add_argument("--channels-last-steps", default="64,256")
    p.add_argument("--no-overhead", action="store_true")
    p.add_argument("--overhead-only", action="store_true",
                   help="only the host time per call, with where it goes")
    p.add_argument("--out", default=None)
    return p.parse_args()


def copy_bandwidth():
    return common.torch_copy_bandwidth(torch)


def make_node(backend, neuron, sj):
    """A multi-step module of `backend`; None where that backend lacks it."""
    if backend == "nerve":
        import nerve.torch
        return getattr(nerve.torch.neuron, NEURONS[neuron])(step_mode="m", store_v_seq=True)
    if sj is None:
        return None
    sj_backend = "torch" if backend == "compile" else backend
    return getattr(sj.neuron, NEURONS[neuron])(step_mode="m", store_v_seq=True,
                                               backend=sj_backend)


def make_step(node, backend, mode, x, grads):
    """One call as a model makes it: reset, forward, (backward)."""
    forward = torch.compile(node) if backend == "compile" else node
    if mode == "infer":
        def step():
            node.reset()
            with torch.no_grad():
                forward(x)
                return node.v_seq
        return step
    xg = x.detach().requires_grad_()

    def step():
        node.reset()
        spikes = forward(xg)
        torch.autograd.backward([spikes, node.v_seq], list(grads))
        xg.grad = None
        return spikes
    return step


def check(neuron, dtype, sj, size):
    """nerve's spikes, v_seq and grad_x against SpikingJelly's torch backend
    in float64 (spike flips allowed only within rounding of the threshold)."""
    if sj is None:
        return "no reference (SpikingJelly not given)"
    T, N = size
    g = torch.Generator(device="cuda").manual_seed(0)
    x64 = torch.randn(T, N, device="cuda", dtype=torch.float64, generator=g) * 0.8 + 0.45
    gs = torch.randn(T, N, device="cuda", dtype=torch.float64, generator=g)
    gv = torch.randn(T, N, device="cuda", dtype=torch.float64, generator=g) * 0.5
    x = x64.to(dtype)
    ref = make_node("torch", neuron, sj).to("cuda", torch.float64)
    xr = x.double().requires_grad_()
    s_ref = ref(xr)
    torch.autograd.backward([s_ref, ref.v_seq], [gs, gv])
    node = make_node("nerve", neuron, sj).to("cuda")
    xn = x.clone().requires_grad_()
    s = node(xn)
    torch.autograd.backward([s, node.v_seq], [gs.to(dtype), gv.to(dtype)])
    tol = {torch.float32: 1e-4, torch.float16: 2e-2, torch.bfloat16: 8e-2}[dtype]
    flips = (s.double() != s_ref).sum().item()
    errors = {name: ((a.double() - b).abs().max() / b.abs().max().clamp(min=1e-30)).item()
              for name, a, b in (("v_seq", node.v_seq, ref.v_seq), ("grad_x", xn.grad, xr.grad))}
    allowed = max(1, int(1e-4 * s.numel())) if dtype != torch.float32 else 0
    ok = flips <= allowed and (dtype != torch.float32 or
                               all(e <= tol for e in errors.values()))
    detail = f"flips {flips}, " + ", ".join(f"{k} {v:.1e}" for k, v in errors.items())
    return ("ok (" if ok else "FAILED (") + detail + ")"


def bytes_per_element(dtype, mode):
    width = torch.tensor([], dtype=dtype).element_size()
    return width * (3 if mode == "infer" else 8)


def time_backend(backend, neuron, dtype, mode, x, grads, sj, runs, budget):
    node = make_node(backend, neuron, sj)
    if node is None:
        return None
    node = node.to("cuda")
    step = make_step(node, backend, mode, x, grads)
    try:
        step()  # compiles, autotunes
        torch.cuda.synchronize()
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        once = time.perf_counter() - start
    except Exception as e:  # a backend that cannot run this row says why
        return f"error: {type(e).__name__}: {str(e).splitlines()[0][:100]}"
    n = max(3, min(runs, int(budget / max(once, 1e-6))))
    return common.torch_median_ms(torch, step, n)


def run_rows(args, sj, bandwidth):
    rows = []
    backends = args.backends.split(",")
    compiled = args.compile_neurons.split(",")
    for neuron in args.neurons.split(","):
        for dname in args.dtypes.split(","):
            dtype = DTYPES[dname]
            status = check(neuron, dtype, sj, (32, 4096))
            print(f"check {neuron} {dname}: {status}", flush=True)
            for size in args.sizes.split(","):
                T, N = (int(v) for v in size.split("x"))
                x = (torch.randn(T, N, device="cuda") * 0.8 + 0.45).to(dtype)
                grads = (torch.randn(T, N, device="cuda").to(dtype),
                         torch.randn(T, N, device="cuda").to(dtype))
                for mode in args.modes.split(","):
                    row = {"neuron": neuron, "dtype": dname, "size": size, "layout": "[T, N]",
                           "mode": mode, "check": status}
                    for backend in backends:
                        if backend == "compile" and (T > COMPILE_MAX_T or dname != "f32" or
                                                     neuron not in compiled):
                            continue
                        if backend == "cupy" and dname == "bf16":
                            row[backend] = "no bf16"
                            continue
                        start = time.perf_counter()
                        row[backend] = time_backend(backend, neuron, dtype, mode, x, grads, sj,
                                                    args.runs, args.budget)
                        row[backend + " s"] = round(time.perf_counter() - start, 1)
                    finish(row, T * N * bytes_per_element(dtype, mode), bandwidth)
                    rows.append(row)
                    print(format_row(row), flush=True)
                    print("  seconds a backend took (its JIT included): " + ", ".join(
                        f"{b} {row[b + ' s']}" for b in backends if b + " s" in row),
                        flush=True)
                del x, grads
    return rows


def run_channels_last(args, sj, bandwidth):
    """LIF on [T, B, C, H, W] stored channels-last ([T, B, H, W, C])."""
    rows = []
    for dname in args.channels_last_dtypes.split(","):
        dtype = DTYPES[dname]
        for T in (int(t) for t in args.channels_last_steps.split(",")):
            base = (torch.randn(T, 4, 8, 8, 256, device="cuda") * 0.8 + 0.45).to(dtype)
            x = base.permute(0, 1, 4, 2, 3)
            grads = (torch.randn_like(base).permute(0, 1, 4, 2, 3),
                     torch.randn_like(base).permute(0, 1, 4, 2, 3))
            for mode in ("infer", "train"):
                row = {"neuron": "lif", "dtype": dname, "size": f"{T}x65536",
                       "layout": "[T, B, H, W, C]", "mode": mode, "check": ""}
                for backend in ("nerve", "triton", "cupy"):
                    row[backend] = time_backend(backend, "lif", dtype, mode, x, grads, sj,
                                                args.runs, args.budget)
                finish(row, x.numel() * bytes_per_element(dtype, mode), bandwidth)
                rows.append(row)
                print(format_row(row), flush=True)
    return rows


def finish(row, nbytes, bandwidth):
    peers = [row.get(b) for b in ("triton", "cupy", "torch", "compile")]
    peers = [p for p in peers if isinstance(p, float)]
    nerve_ms = row.get("nerve")
    row["bytes"] = nbytes
    if isinstance(nerve_ms, float):
        row["nerve_pct_copy"] = 100 * nbytes / nerve_ms / 1e6 / bandwidth
        if peers:
            row["best_peer_ms"] = min(peers)
            row["speedup"] = min(peers) / nerve_ms


def format_row(row):
    def ms(v):
        return f"{v:.4f}" if isinstance(v, float) else (v or "-")
    cells = [row["neuron"], row["dtype"], row["size"], row["layout"], row["mode"],
             ms(row.get("nerve")), f"{row.get('nerve_pct_copy', 0):.0f}%",
             ms(row.get("triton")), ms(row.get("cupy")), ms(row.get("torch")),
             ms(row.get("compile")),
             f"{row['speedup']:.2f}x" if "speedup" in row else "-"]
    return "| " + " | ".join(cells) + " |"


HEADER = ("| neuron | dtype | T x N | layout | mode | nerve ms | nerve %copy | SJ triton | "
          "SJ cupy | SJ torch | torch.compile | nerve vs best peer |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|")


def host_overhead(sj):
    """Microseconds of host time per call at a tiny size, where the GPU
    keeps up and the host sets the pace, beside PyTorch's own cost of a
    custom operator that only allocates its outputs."""
    import nerve.torch
    from nerve.torch import surrogate

    def per_call(fn, n=3000):
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - start) / n * 1e6

    x = torch.randn(4, 256, device="cuda")
    xg = x.clone().requires_grad_()
    sg = surrogate.Sigmoid()
    lif = nerve.torch.multistep_lif
    out = {}

    def infer():
        with torch.no_grad():
            lif(x, None, True, 2.0, 1.0, 0.0, False, sg)

    def train():
        spike, _ = lif(xg, None, True, 2.0, 1.0, 0.0, False, sg)
        spike.backward(x)
    out["nerve multistep_lif forward (no_grad)"] = per_call(infer)
    out["nerve multistep_lif forward + backward"] = per_call(train)
    out["nerve multistep_lif forward keeping h_seq (no backward)"] = per_call(
        lambda: lif(xg, None, True, 2.0, 1.0, 0.0, False, sg))
    node = nerve.torch.neuron.LIFNode(step_mode="m")

    def module_infer():
        node.reset()
        with torch.no_grad():
            node(x)
    out["nerve LIFNode reset + forward (no_grad)"] = per_call(module_infer)
    if nerve.torch.CUSTOM_OPS:
        key = nerve.torch.neuron_kernel.neuron_key("lif", 1.0, 0.0, False, sg.spec)
        op = torch.ops.nerve.neuron_forward.default
        out["nerve through torch.ops.nerve.neuron_forward (no_grad)"] = per_call(
            lambda: op(x, None, None, key, 0, False, True))
        lib = torch.library.Library("nerve_bench", "DEF")
        lib.define("noop(Tensor x, Tensor? v, Tensor? p, str n, int t, bool k, bool s)"
                   " -> (Tensor, Tensor, Tensor)")

        def noop(x, v, p, n, t, k, s):
            return torch.empty_like(x), torch.empty_like(x), x.new_empty((0,))
        lib.impl("noop", noop, "CUDA")
        noop_op = torch.ops.nerve_bench.noop.default
        out["PyTorch alone: a custom op that only allocates its outputs"] = per_call(
            lambda: noop_op(x, None, None, key, 0, False, True))
    out["PyTorch alone: torch.empty_like x2"] = per_call(
        lambda: (torch.empty_like(x), torch.empty_like(x)))
    class Trivial(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return torch.empty_like(x), torch.empty_like(x), torch.empty_like(x)

        @staticmethod
        def backward(ctx, *grads):
            return torch.empty_like(grads[0])

    def trivial_train():
        Trivial.apply(xg)[0].backward(x)
    out["PyTorch alone: a trivial autograd.Function (three empty_like) forward + backward"] = \
        per_call(trivial_train)
    out.update(host_breakdown(per_call, x, sg))
    if sj is not None:
        from spikingjelly.activation_based import surrogate as sj_surrogate
        from spikingjelly.activation_based.triton_kernel.neuron_kernel import (
            multistep_lif as sj_lif)
        v0 = torch.zeros(256, device="cuda")
        sj_sg = sj_surrogate.Sigmoid()

        def sj_infer():
            with torch.no_grad():
                sj_lif(x, v0, True, 2.0, 1.0, 0.0, False, sj_sg)
        out["SpikingJelly triton multistep_lif forward (no_grad)"] = per_call(sj_infer, 1000)
    return out


def host_breakdown(per_call, x, sg):
    """Where multistep_lif's host time goes: its steps timed alone."""
    from nerve.torch import _ops, neuron_kernel as nk
    out = {}
    key = nk.neuron_key("lif", 1.0, 0.0, False, nk.resolve(sg), 2.0, True)
    out["step: checks and the neuron's key"] = per_call(lambda: (
        nk.check_sequence(x, 0), nk.check_state("v_init", None, x, 0),
        nk.neuron_key("lif", 1.0, 0.0, False, nk.resolve(sg), 2.0, True)))
    out["step: allocating spike and v_seq"] = per_call(
        lambda: _ops._forward_outputs(x, 0, False, True))
    out["step: the current stream"] = per_call(lambda: _ops._stream(0))
    spike, v, _ = _ops.run_forward(x, None, None, key, 0, False, True)
    launcher = next(iter(_ops._forward_launchers.values()))
    pointers = [x.data_ptr(), spike.data_ptr(), v.data_ptr()]
    stream = _ops._stream(0)
    out["step: a prepared launch (ctypes and libnerve)"] = per_call(
        lambda: launcher(pointers, stream))
    out["step: run_forward (allocate, find the launcher, launch)"] = per_call(
        lambda: _ops.run_forward(x, None, None, key, 0, False, True))
    xg = x.clone().requires_grad_()
    spike, v, h = _ops.run_forward(xg.detach(), None, None, key, 0, True, True)
    out["step: run_backward alone (no autograd)"] = per_call(
        lambda: _ops.run_backward(h, x, None, None, None, key, 0, True, False, False))
    return out


def main():
    args = parse_args()
    sj = None
    if args.spikingjelly:
        sys.path.insert(0, os.path.abspath(args.spikingjelly))
        from spikingjelly.activation_based import neuron as sj_neuron
        sj = argparse.Namespace(neuron=sj_neuron)
    gpu = torch.cuda.get_device_name()
    bandwidth = copy_bandwidth()
    print(f"GPU: {gpu}; PyTorch {torch.__version__}; copy bandwidth {bandwidth:.0f} GB/s",
          flush=True)
    overhead = {} if args.no_overhead else host_overhead(sj)
    for what, us in overhead.items():
        print(f"overhead: {what}: {us:.1f} us per call", flush=True)
    if args.overhead_only:
        return
    print(HEADER, flush=True)
    rows = [] if args.no_channels_last else run_channels_last(args, sj, bandwidth)
    rows += run_rows(args, sj, bandwidth)
    timed = [r for r in rows if "speedup" in r]
    if timed:
        worst = min(timed, key=lambda r: r["speedup"])
        print(f"nerve ahead of the best peer on {sum(r['speedup'] > 1 for r in timed)} of "
              f"{len(timed)} rows; the closest: {format_row(worst)}")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        meta = {"gpu": gpu, "torch": torch.__version__, "copy_gbps": bandwidth,
                "overhead_us": overhead}
        with open(os.path.join(args.out, "torch_neuron.json"), "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
        keys = sorted({k for r in rows for k in r})
        with open(os.path.join(args.out, "torch_neuron.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
