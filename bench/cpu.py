#!/usr/bin/env python3
"""nerve's CPU target against PyTorch on the CPU, in one process, on any machine.

For each thread count asked (`--threads 1,all`: nerve.set_num_threads and
torch.set_num_threads alike), times
  neurons  IF, LIF and PLIF modules (step_mode='m', store_v_seq=True):
           infer (forward under no_grad: 12 bytes an f32 element) and train
           (forward keeping what backward needs, then backward from gradients
           on the spikes and v_seq through autograd: 32 bytes), nerve.torch's
           modules against an eager PyTorch loop of the same math
           (SpikingJelly's torch backend's, surrogate sigmoid(4x)) and
           torch.compile of that loop where the installed PyTorch has it;
  tdim     bench/tdim.py's ops (softmax, log_softmax, layer_norm, row and
           column sums and maxima, whole-tensor sums, elementwise maps,
           softmax over the first dimension and of a transposed view) in f32,
           nerve.compile(target="cpu") kernels against the same PyTorch op
           eager and under torch.compile;
each result checked against PyTorch first. The ratio to the host copy
bandwidth measured in the same run with the same threads (a 256 MiB
torch copy_, bytes read plus written) and the speed-up over eager are shown;
medians of --runs calls after two warm-up calls, each timed from the call to
its return (outputs allocated by each side as it does), twice the last-level
cache read before each call (by the side's own threads) so that none finds
its inputs in cache.

    PYTHONPATH=build/python /usr/bin/python3 bench/cpu.py --threads 1,all

Prints a markdown table and writes cpu.json and cpu.csv under --out.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tdim as tdim_bench  # noqa: E402  (the ops, their specs and torch forms)

import nerve  # noqa: E402
import nerve.torch  # noqa: E402

NEURONS = {"if": "IFNode", "lif": "LIFNode", "plif": "ParametricLIFNode"}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", default="1,all",
                   help="thread counts to run with, 'all' for every core this process may use")
    p.add_argument("--neurons", default="if,lif,plif")
    p.add_argument("--neuron-sizes", default="64x65536", help="T x N, f32")
    p.add_argument("--modes", default="infer,train")
    p.add_argument("--ops", default=",".join(tdim_bench.ops()))
    p.add_argument("--shapes", default="4096x4096", help="r x c of the tdim ops, f32")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--no-torch-compile", action="store_true")
    p.add_argument("--compile-neurons", default="lif",
                   help="neurons whose eager loop torch.compile also runs (its compile of a "
                        "64-step loop takes a minute)")
    p.add_argument("--compile-ops", default=None,
                   help="tdim ops torch.compile also runs (default: all of --ops)")
    p.add_argument("--out", default=None)
    return p.parse_args()


def last_level_cache_bytes():
    """The largest CPU cache of this machine (sysfs), 32 MiB when unknown."""
    best = 32 << 20
    base = "/sys/devices/system/cpu/cpu0/cache"
    for index in os.listdir(base) if os.path.isdir(base) else []:
        try:
            text = open(os.path.join(base, index, "size")).read().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text[:-1] if text[-1:] in "KMG" else text
        if digits.isdigit():
            best = max(best, int(digits) * scale)
    return best


FLUSH = {}


def flush_caches(side):
    """Reads twice the last-level cache, so that no timed call finds its
    inputs there (the 64 MB tensors of a 4096 x 4096 op fit in a server's
    L3), as the GPU benchmarks empty L2 first. Each side reads with its own
    threads (a nerve kernel, a torch sum): the other runtime's threads,
    still spinning after the read, would otherwise slow the timed call
    (nerve's OpenMP and PyTorch's are two thread pools)."""
    if not FLUSH:
        FLUSH["buffer"] = torch.ones(2 * last_level_cache_bytes() // 4)
        FLUSH["nerve"] = nerve.compile(tdim_bench.VECTOR_SUM.replace("{T}", "f32"),
                                       target="cpu").vector_sum
    if side == "nerve":
        FLUSH["nerve"](FLUSH["buffer"])
    else:
        FLUSH["buffer"].sum()


def median_ms(fn, runs, side):
    fn()
    fn()
    times = []
    for _ in range(runs):
        flush_caches(side)
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def copy_bandwidth():
    """GB/s (read + written) of a 256 MiB host copy on torch's threads."""
    src = torch.ones(1 << 26, dtype=torch.float32)
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src), 5, "torch")
    return 2 * src.numel() * 4 / ms / 1e6


# --- neurons -----------------------------------------------------------------

class _Heaviside(torch.autograd.Function):
    """Spike forward, sigmoid(4x)'s derivative backward (SpikingJelly's default)."""

    @staticmethod
    def forward(ctx, u):
        ctx.save_for_backward(u)
        return (u >= 0).to(u.dtype)

    @staticmethod
    def backward(ctx, grad):
        (u,) = ctx.saved_tensors
        s = torch.sigmoid(4.0 * u)
        return grad * 4.0 * s * (1 - s)


def eager_neuron(neuron, x, w=None, tau=2.0, v_th=1.0, v_reset=0.0):
    """SpikingJelly's torch multi-step loop (hard reset, decay_input), spikes
    and v_seq over the first dimension of x."""
    v = torch.zeros_like(x[0])
    spikes, vs = [], []
    for t in range(x.shape[0]):
        if neuron == "if":
            h = v + x[t]
        elif neuron == "lif":
            h = v + (x[t] - (v - v_reset)) / tau
        else:
            h = v + (x[t] - (v - v_reset)) * torch.sigmoid(w)
        s = _Heaviside.apply(h - v_th)
        v = h * (1 - s) + v_reset * s
        spikes.append(s)
        vs.append(v)
    return torch.stack(spikes), torch.stack(vs)


def nerve_node(neuron):
    return getattr(nerve.torch.neuron, NEURONS[neuron])(
        step_mode="m", store_v_seq=True, surrogate_function=nerve.torch.surrogate.Sigmoid())


def neuron_steps(neuron, mode, x, grads, compiled):
    """name -> callable for each side."""
    node = nerve_node(neuron)
    w = torch.tensor(0.0, requires_grad=True) if neuron == "plif" else None

    def nerve_call(xx):
        node.reset()
        s = node(xx)
        return s, node.v_seq

    sides = {"nerve": nerve_call, "eager": lambda xx: eager_neuron(neuron, xx, w)}
    if compiled is not None:
        sides["compile"] = compiled
    steps = {}
    for name, fn in sides.items():
        if mode == "infer":
            def step(fn=fn):
                with torch.no_grad():
                    fn(x)
        else:
            def step(fn=fn):
                xx = x.detach().requires_grad_(True)
                s, v = fn(xx)
                torch.autograd.backward((s, v), grads)
        steps[name] = step
    return steps


def check_neuron(neuron):
    """nerve's module against the eager loop in float64 at a small size."""
    x = torch.randn(16, 1000, dtype=torch.float64) * 1.5
    w = torch.tensor(0.0, dtype=torch.float64)
    s_ref, v_ref = eager_neuron(neuron, x, w)
    node = nerve_node(neuron).to(torch.float64)
    node.reset()
    s = node(x)
    ok = torch.equal(s, s_ref) and torch.allclose(node.v_seq, v_ref, atol=1e-9)
    return ok


def fresh_compile_cache():
    """Forgets what torch.compile compiled: every op's lambda shares one code
    object, whose recompilations past dynamo's limit would run eagerly."""
    dynamo = getattr(torch, "_dynamo", None)
    if dynamo is not None and hasattr(dynamo, "reset"):
        dynamo.reset()


def compiled_neuron(neuron, args):
    if not hasattr(torch, "compile"):
        return None, "torch.compile unavailable"
    if args.no_torch_compile or neuron not in args.compile_neurons.split(","):
        return None, None
    w = torch.tensor(0.0)
    fresh_compile_cache()
    fn = torch.compile(lambda xx: eager_neuron(neuron, xx, w))
    try:
        with torch.no_grad():
            fn(torch.randn(4, 64))
        return fn, None
    except Exception as e:  # inductor's CPU backend needs a C++ compiler
        return None, "torch.compile failed: %s" % str(e).splitlines()[0][:80]


def neuron_rows(args, threads, bandwidth):
    rows = []
    for neuron in filter(None, args.neurons.split(",")):
        ok = check_neuron(neuron)
        compiled, why = compiled_neuron(neuron, args)
        for size in args.neuron_sizes.split(","):
            t, n = (int(v) for v in size.split("x"))
            x = torch.randn(t, n) * 1.5
            grads = (torch.randn(t, n), torch.randn(t, n))
            for mode in args.modes.split(","):
                steps = neuron_steps(neuron, mode, x, grads, compiled)
                nbytes = t * n * (12 if mode == "infer" else 32)
                row = {"kind": "neuron", "op": "%s %s" % (neuron, mode), "shape": size,
                       "threads": threads, "checked": ok, "bytes": nbytes}
                for name, step in steps.items():
                    row[name + "_ms"] = median_ms(step, args.runs, name)
                if why:
                    row["compile_note"] = why
                rows.append(finish(row, bandwidth))
    return rows


# --- tdim ops ----------------------------------------------------------------

def tdim_inputs(name, r, c):
    g = torch.Generator().manual_seed(3)
    if name in tdim_bench.VECTOR_OPS:
        return {"x": torch.randn(r * c, generator=g)}
    if name == "layer_norm":
        return {"x": torch.randn(r, c, generator=g), "w": torch.randn(c, generator=g),
                "b": torch.randn(c, generator=g)}
    if name == "chain8+bcast":
        return {"a": torch.randn(r, c, generator=g), "bias": torch.randn(c, generator=g)}
    if name == "a*2+sigmoid(a)":
        return {"a": torch.randn(r, c, generator=g)}
    if name == "softmax(x^T)":
        return {"xt": torch.randn(c, r, generator=g).t()}
    return {"x": torch.randn(r, c, generator=g)}


def tdim_rows(args, threads, bandwidth):
    rows = []
    all_ops = tdim_bench.ops()
    for name in filter(None, args.ops.split(",")):
        spec, nbytes_of, _reference, torch_fn = all_ops[name]
        module = nerve.compile(spec.replace("{T}", "f32"), target="cpu")
        entry = next(iter(module.entries.values()))
        compiled = None
        wanted = args.compile_ops.split(",") if args.compile_ops else args.ops.split(",")
        if not args.no_torch_compile and hasattr(torch, "compile") and name in wanted:
            fresh_compile_cache()
            compiled = torch.compile(lambda i, fn=torch_fn: fn(torch, i))
        for shape in args.shapes.split(","):
            r, c = (int(v) for v in shape.split("x"))
            inputs = tdim_inputs(name, r, c)
            named = {("x" if k == "xt" else k): v for k, v in inputs.items()}
            got = entry(**named)
            want = torch_fn(torch, inputs)
            tol = 1e-2 if name.startswith("sum(") else 1e-4
            ok = torch.allclose(torch.as_tensor(got).reshape(want.shape), want, rtol=tol,
                                atol=tol)
            row = {"kind": "tdim", "op": name, "shape": shape, "threads": threads,
                   "checked": ok, "bytes": nbytes_of(r, c, 4)}
            row["nerve_ms"] = median_ms(lambda: entry(**named), args.runs, "nerve")
            row["eager_ms"] = median_ms(lambda: torch_fn(torch, inputs), args.runs, "torch")
            if compiled is not None:
                try:
                    row["compile_ms"] = median_ms(lambda: compiled(inputs), args.runs, "torch")
                except Exception as e:
                    row["compile_note"] = "torch.compile failed: %s" % \
                        str(e).splitlines()[0][:80]
                    compiled = None
            rows.append(finish(row, bandwidth))
    return rows


# --- report ------------------------------------------------------------------

def finish(row, bandwidth):
    row["copy_gbs"] = bandwidth
    for side in ("nerve", "eager", "compile"):
        ms = row.get(side + "_ms")
        if ms:
            row[side + "_pct_copy"] = 100 * row["bytes"] / (ms * 1e-3) / 1e9 / bandwidth
    row["speedup_vs_eager"] = row["eager_ms"] / row["nerve_ms"]
    if row.get("compile_ms"):
        row["speedup_vs_compile"] = row["compile_ms"] / row["nerve_ms"]
    return row


def table(rows):
    lines = ["| op | shape | threads | nerve ms (% copy) | eager ms (% copy) | "
             "compile ms (% copy) | nerve vs eager | nerve vs compile | checked |",
             "|---|---|---|---|---|---|---|---|---|"]

    def cell(row, side):
        ms = row.get(side + "_ms")
        return "%.3f (%.0f%%)" % (ms, row[side + "_pct_copy"]) if ms else \
            row.get("compile_note", "-") if side == "compile" else "-"

    for r in rows:
        lines.append("| %s | %s | %s | %s | %s | %s | %.2fx | %s | %s |" % (
            r["op"], r["shape"], r["threads"], cell(r, "nerve"), cell(r, "eager"),
            cell(r, "compile"), r["speedup_vs_eager"],
            "%.2fx" % r["speedup_vs_compile"] if "speedup_vs_compile" in r else "-",
            "ok" if r["checked"] else "MISMATCH"))
    return "\n".join(lines)


def main():
    args = parse_args()
    cores = len(os.sched_getaffinity(0))
    counts = [cores if t == "all" else int(t) for t in args.threads.split(",")]
    rows, copies = [], {}
    # glibc serves large blocks from fresh pages (page faults at each call)
    # until a block that large is freed, which raises its threshold (up to
    # 32 MiB): free a 24 MiB one first, so that the first rows timed (16 MiB
    # neuron tensors) pay what later ones do.
    block = torch.empty(6 << 20)
    del block
    for threads in dict.fromkeys(counts):
        nerve.set_num_threads(threads)
        torch.set_num_threads(threads)
        bandwidth = copy_bandwidth()
        copies[threads] = bandwidth
        print("threads %d: host copy %.1f GB/s" % (threads, bandwidth), flush=True)
        rows += neuron_rows(args, threads, bandwidth)
        rows += tdim_rows(args, threads, bandwidth)
    nerve.set_num_threads(0)
    header = ("nerve CPU target vs PyTorch %s eager%s on %s (%d cores), %s" % (
        torch.__version__, "" if args.no_torch_compile else " and torch.compile",
        platform.processor() or platform.machine(), cores,
        ", ".join("copy %.1f GB/s on %d thread%s" % (b, t, "" if t == 1 else "s")
                  for t, b in copies.items())))
    print(header)
    print(table(rows))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "cpu.json"), "w") as f:
            json.dump({"header": header, "rows": rows}, f, indent=1)
        keys = sorted({k for r in rows for k in r})
        with open(os.path.join(args.out, "cpu.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, keys)
            w.writeheader()
            w.writerows(rows)
    if not all(r["checked"] for r in rows):
        sys.exit("bench/cpu.py: some results differ from PyTorch's (MISMATCH above)")


if __name__ == "__main__":
    main()
