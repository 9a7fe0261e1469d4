#!/usr/bin/env python3
"""Multi-step IF / LIF / PLIF on the GPU: nerve's inference and training
step against the device's copy bandwidth measured in the same process, a
PyTorch eager loop (and torch.compile of it, where asked) measured in this
run, and SpikingJelly's fastest backend (triton) as ../shared/targets.md
measured it on an H200.

Settings (issue 7): tau 2, decay_input, v_threshold 1, hard reset to 0,
sigmoid(4) surrogate; plus LIF with soft reset and LIF with detach_reset;
sizes T x N in 32x4096, 64x65536, 256x65536, 1024x65536; f32, f16 and bf16
storage (arithmetic in f32); LIF over a time-minor [n, t] and a
channels-last [t, b, h, w, c] layout in each storage type at 1024 x 65536,
run as they are (no copy).

Bytes counted (the fewest the operation must move):
  inference: read x, write spikes and v_seq                    = 3 passes
  training:  forward reads x, writes spikes, v_seq, h_seq; backward reads
             h_seq, grad_spike, grad_v_seq and writes grad_x    = 8 passes
             (PLIF's grad_w takes x - (v - v_reset) as (h - v) / d, as
             SpikingJelly does: backward is given no x)

Before timing, every configuration runs once at T x N = 16 x 2048 on random
inputs and is checked against a float64 reference computed here: spikes
exactly, potentials and gradients within the storage type's tolerance, for
the neurons whose potential never comes within the type's rounding of the
threshold (a spike there may legitimately differ).

usage: bench/neuron.py [--nerve-run PATH] [--runs 20] [--quick]
                       [--torch-compile] [--out DIR]
                       [--check-only [--wrap "compute-sanitizer --tool memcheck"]]
                       [--neurons if,lif,plif] [--dtypes f32,f16,bf16]
                       [--modes infer,train] [--sizes 256x65536,...]
                       [--time-blocks 0,8,16] [--no-extra]
                       [--layouts time-major,time-minor,channels-last]

--check-only runs only the correctness checks (every benchmark kernel at the
small size), each nerve-run under --wrap's command when given: the way
scripts/gpu-suite.sh runs the benchmark kernels under compute-sanitizer.

--neurons, --dtypes, --modes, --sizes and --layouts narrow the run;
--no-extra leaves out the soft-reset, detach_reset and (unless --layouts
names them) the other layouts' rows; --time-blocks times each
configuration with each of nerve-run's --time-block values (0: the
compiler's choice), the way the automatic choice was tuned.
"""
import argparse
import csv
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import common
from common import find_tool, run_bench, torch_median_ms

SIZES = [(32, 4096), (64, 65536), (256, 65536), (1024, 65536)]
WIDTH = {"f32": 4, "f16": 2, "bf16": 2}
# SpikingJelly triton, LIF, ms (infer, train), targets.md.
TRITON = {
    ("f32", 32, 4096): (0.073, 1.19), ("f32", 64, 65536): (0.097, 1.23),
    ("f32", 256, 65536): (0.190, 1.27), ("f32", 1024, 65536): (0.584, 1.86),
    ("f16", 64, 65536): (0.072, 1.15), ("f16", 256, 65536): (0.171, 0.957),
    ("f16", 1024, 65536): (0.497, 1.70), ("bf16", 64, 65536): (0.075, 1.16),
    ("bf16", 256, 65536): (0.167, 1.18), ("bf16", 1024, 65536): (0.494, 1.67),
}
TAU, VTH = 2.0, 1.0


# ----------------------------------------------------------------------------
# Specs
# ----------------------------------------------------------------------------

def layout_types(layout, dtype):
    if layout == "time-minor":
        return "!tdim.tensor<[n: ?, t: ?], %s>" % dtype
    if layout == "channels-last":
        return "!tdim.tensor<[t: ?, b: ?, h: ?, w: ?, c: ?], %s>" % dtype
    return "!tdim.tensor<[t: ?, n: ?], %s>" % dtype


def layout_dims(layout, t, n):
    if layout == "channels-last":
        side = round(n ** 0.25)
        assert side ** 4 == n, "channels-last needs N = side^4"
        return {"t": t, "b": side, "h": side, "w": side, "c": side}
    return {"t": t, "n": n}


def attrs(neuron, variant, grad):
    a = []
    if neuron == "lif":
        a.append("tau = %.1f" % TAU)
    a.append("v_threshold = %.1f" % VTH)
    if variant != "soft":
        a.append("v_reset = 0.0")
    if grad:
        if variant == "detach":
            a.append("detach_reset")
        a.append("surrogate = #neuron.surrogate<sigmoid, alpha = 4.0>")
    return "{" + ", ".join(a) + "}"


def spec(neuron, variant, dtype, layout, mode):
    seq = layout_types(layout, dtype)
    w_in = ", %w: !tdim.tensor<[], f32>" if neuron == "plif" else ""
    w_use = " w(%w : !tdim.tensor<[], f32>)" if neuron == "plif" else ""
    fwd = ("  neuron.{n} ins(%x : !seq){w} outs(%spike : !seq) v_seq(%v_seq : !seq){h}\n"
           "      time t {a}\n")
    if mode == "infer":
        body = fwd.format(n=neuron, w=w_use, h="", a=attrs(neuron, variant, False))
        sig = "tdim.kernel @infer(%x: !seq{w}) -> (%spike: !seq, %v_seq: !seq)".format(w=w_in)
    else:
        body = fwd.format(n=neuron, w=w_use, h=" h_seq(%h_seq : !seq)",
                          a=attrs(neuron, variant, False))
        gw_out = ", %grad_w: !tdim.tensor<[], f32>" if neuron == "plif" else ""
        gw_use = " grad_w(%grad_w : !tdim.tensor<[], f32>)" if neuron == "plif" else ""
        body += ("  neuron.{n}_grad ins(%h_seq : !seq){w} grad_spike(%grad_spike : !seq)"
                 " grad_v_seq(%grad_v_seq : !seq)\n      outs(%grad_x : !seq){gw} time t {a}\n").format(
            n=neuron, w=w_use, gw=gw_use, a=attrs(neuron, variant, True))
        sig = ("tdim.kernel @train(%x: !seq, %grad_spike: !seq, %grad_v_seq: !seq{w})\n"
               "    -> (%spike: !seq, %v_seq: !seq, %h_seq: !seq, %grad_x: !seq{gw})").format(
            w=w_in, gw=gw_out)
    return "!seq = %s\n%s {\n%s  tdim.return\n}\n" % (seq, sig, body)


# ----------------------------------------------------------------------------
# Reference (float64, from the inputs nerve saved)
# ----------------------------------------------------------------------------

def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def reference(neuron, variant, inp, time_axis):
    x = np.moveaxis(inp["x"].astype(np.float64), time_axis, 0)
    vr = None if variant == "soft" else 0.0
    leak_to = 0.0 if vr is None else vr
    if neuron == "if":
        d = None
    elif neuron == "lif":
        d = 1.0 / TAU
    else:
        d = sigmoid(float(inp["w"]))
    v = np.full(x.shape[1:], leak_to)
    hs, ss, vs, vprev = [], [], [], []
    for t in range(x.shape[0]):
        vprev.append(v)
        h = v + x[t] if d is None else v + (x[t] - (v - leak_to)) * d
        s = (h - VTH >= 0).astype(np.float64)
        v = np.where(s > 0, vr, h) if vr is not None else h - VTH * s
        hs.append(h), ss.append(s), vs.append(v)
    out = {"h_seq": np.stack(hs), "spike": np.stack(ss), "v_seq": np.stack(vs)}
    if "grad_spike" in inp:
        gs = np.moveaxis(inp["grad_spike"].astype(np.float64), time_axis, 0)
        gv = np.moveaxis(inp["grad_v_seq"].astype(np.float64), time_axis, 0)
        kappa = 1.0 if d is None else 1.0 - d
        beta = 1.0 if d is None else d
        carry = np.zeros(x.shape[1:])
        grad_x = np.zeros_like(x)
        grad_d = 0.0
        for t in reversed(range(x.shape[0])):
            h = out["h_seq"][t]
            u = h - VTH
            s = (u >= 0).astype(np.float64)
            sg = sigmoid(4.0 * u)
            psi = 4.0 * sg * (1.0 - sg)
            if vr is not None:
                a = (1 - s) if variant == "detach" else (1 - s) + (vr - h) * psi
            else:
                a = np.ones_like(u) if variant == "detach" else 1 - VTH * psi
            g = (gv[t] + carry) * a + gs[t] * psi
            grad_x[t] = beta * g
            if neuron == "plif":
                grad_d += float(np.sum(g * (x[t] - (vprev[t] - leak_to))))
            carry = kappa * g
        out["grad_x"] = grad_x
        if neuron == "plif":
            out["grad_w"] = grad_d * d * (1 - d)
    return {k: (np.moveaxis(v, 0, time_axis) if np.ndim(v) else v) for k, v in out.items()}


BAND = {"f32": 1e-4, "f16": 4e-3, "bf16": 3e-2}
TOL = {"f32": 2e-4, "f16": 1e-2, "bf16": 5e-2}


def check(neuron, variant, dtype, layout, mode, nerve_run, work, wrap=()):
    """Runs the configuration small and compares; returns (ok, detail)."""
    t, n = 16, 2048
    if layout == "channels-last":
        n = 4096
    path = os.path.join(work, "check.mlir")
    with open(path, "w") as f:
        f.write(spec(neuron, variant, dtype, layout, mode))
    out = os.path.join(work, "check-out")
    shutil.rmtree(out, ignore_errors=True)
    cmd = list(wrap) + [nerve_run, path, "--target", "cuda", "--random", "7", "--save-inputs",
                        "--output-dir", out]
    for k, v in layout_dims(layout, t, n).items():
        cmd += ["--dim", "%s=%d" % (k, v)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return False, (proc.stderr or proc.stdout).strip().splitlines()[-1]
    ok, detail = compare(neuron, variant, dtype, layout, mode, out)
    return ok, detail + sanitizer_summary(proc.stdout + proc.stderr)


def sanitizer_summary(output):
    """compute-sanitizer's summary line, when the run was wrapped in it."""
    lines = [l for l in output.splitlines() if re.search(r"(ERROR|RACECHECK) SUMMARY", l)]
    return "; " + lines[-1].strip("= ") if lines else ""


def compare(neuron, variant, dtype, layout, mode, out):
    """Compares the outputs in `out` with the float64 reference."""
    load = lambda name: np.load(os.path.join(out, name + ".npy"))
    inp = {k: load(k) for k in ("x", "grad_spike", "grad_v_seq", "w")
           if os.path.exists(os.path.join(out, k + ".npy"))}
    time_axis = 1 if layout == "time-minor" else 0
    ref = reference(neuron, variant, inp, time_axis)
    # Neurons whose potential comes within the type's rounding of the
    # threshold are left out (their spikes may legitimately differ).
    near = np.abs(ref["h_seq"] - VTH) <= BAND[dtype]
    near_neuron = near.any(axis=time_axis)
    keep = ~np.expand_dims(near_neuron, time_axis)
    worst = 0.0
    names = ["spike", "v_seq"] + (["h_seq", "grad_x"] if mode == "train" else [])
    for name in names:
        got = load(name).astype(np.float64)
        want = ref[name]
        mask = np.broadcast_to(keep, got.shape)
        if name == "spike":
            if np.any(got[mask] != want[mask]):
                return False, "spikes differ away from the threshold"
            continue
        scale = max(np.max(np.abs(want[mask])), 1e-30) if mask.any() else 1.0
        err = np.max(np.abs(got[mask] - want[mask])) / scale if mask.any() else 0.0
        worst = max(worst, err)
        if err > TOL[dtype]:
            return False, "%s differs by %.2g (relative to its largest value)" % (name, err)
    if neuron == "plif" and mode == "train" and not near_neuron.any():
        got, want = float(load("grad_w")), ref["grad_w"]
        err = abs(got - want) / max(abs(want), 1e-30)
        worst = max(worst, err)
        if err > 10 * TOL[dtype]:
            return False, "grad_w differs by %.2g" % err
    return True, "worst %.1e, %d of %d neurons near the threshold left out" % (
        worst, int(near_neuron.sum()), near_neuron.size)


# ----------------------------------------------------------------------------
# PyTorch references (measured here; not a dependency of nerve)
# ----------------------------------------------------------------------------

def torch_times(t, n, dtype, mode, runs, compiled):
    try:
        import torch
        if not torch.cuda.is_available():
            return None
    except Exception:
        return None
    tdtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]

    class Spike(torch.autograd.Function):
        @staticmethod
        def forward(ctx, u):
            ctx.save_for_backward(u)
            return (u >= 0).to(u.dtype)

        @staticmethod
        def backward(ctx, g):
            (u,) = ctx.saved_tensors
            s = torch.sigmoid(4.0 * u)
            return g * 4.0 * s * (1 - s)

    def lif(x):
        v = torch.zeros_like(x[0])
        spikes, vs = [], []
        for step in range(x.shape[0]):
            h = v + (x[step] - v) / TAU
            s = Spike.apply(h - VTH)
            v = h * (1 - s)
            spikes.append(s), vs.append(v)
        return torch.stack(spikes), torch.stack(vs)

    fn = lif
    if compiled:
        if mode == "train":
            return None  # custom autograd.Function under compile: not measured
        fn = torch.compile(lif)
    x = torch.randn(t, n, device="cuda", dtype=tdtype, requires_grad=(mode == "train"))
    gs = torch.randn(t, n, device="cuda", dtype=tdtype)
    gv = torch.randn(t, n, device="cuda", dtype=tdtype)

    def step():
        if mode == "infer":
            with torch.no_grad():
                fn(x)
        else:
            s, v = fn(x)
            torch.autograd.backward([s, v], [gs, gv])
    return torch_median_ms(torch, step, runs)


# ----------------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nerve-run")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--l2-flush", choices=common.L2_FLUSH_MODES, default=common.L2_FLUSH,
                   help="how L2 is emptied before each timed run, for nerve and PyTorch alike")
    p.add_argument("--quick", action="store_true", help="LIF f32 only")
    p.add_argument("--torch-compile", action="store_true",
                   help="also time torch.compile (inference, T <= 64)")
    p.add_argument("--out", default="bench-results")
    p.add_argument("--check-only", action="store_true", help="run the checks, time nothing")
    p.add_argument("--wrap", default="", help="a command to run each checked nerve-run under")
    p.add_argument("--neurons", default="if,lif,plif")
    p.add_argument("--dtypes", default="f32,f16,bf16")
    p.add_argument("--modes", default="infer,train")
    p.add_argument("--sizes", default=",".join("%dx%d" % s for s in SIZES))
    p.add_argument("--time-blocks", default="0", help="comma-separated --time-block values")
    p.add_argument("--no-extra", action="store_true",
                   help="leave out the soft/detach variants and the other layouts")
    p.add_argument("--layouts", default=None,
                   help="comma-separated layouts: time-major (every neuron, dtype and size), "
                        "time-minor, channels-last (LIF, each dtype, 1024 x 65536); default: "
                        "all three, time-major alone with --no-extra")
    args = p.parse_args()
    common.L2_FLUSH = args.l2_flush
    sizes_wanted = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    time_blocks = [int(v) for v in args.time_blocks.split(",")]
    nerve_run = find_tool("nerve-run", args.nerve_run)
    work = tempfile.mkdtemp(prefix="nerve-bench-")
    os.makedirs(args.out, exist_ok=True)

    if args.layouts is None:
        args.layouts = "time-major" if args.no_extra else "time-major,time-minor,channels-last"
    wanted_layouts = args.layouts.split(",")
    dtypes = ["f32"] if args.quick else args.dtypes.split(",")
    configs = []  # (neuron, variant, dtype, layout)
    if "time-major" in wanted_layouts:
        for neuron in (["lif"] if args.quick else args.neurons.split(",")):
            for dtype in dtypes:
                configs.append((neuron, "hard", dtype, "time-major"))
        if not args.no_extra:
            configs += [("lif", "soft", "f32", "time-major"),
                        ("lif", "detach", "f32", "time-major")]
    layouts = [("lif", "hard", dtype, layout) for layout in ("time-minor", "channels-last")
               if layout in wanted_layouts for dtype in dtypes]

    rows = []
    copy = None
    failed_checks = 0
    for config in configs + layouts:
        neuron, variant, dtype, layout = config
        sizes = sizes_wanted if layout == "time-major" else [(1024, 65536)]
        for mode in args.modes.split(","):
            ok, detail = check(neuron, variant, dtype, layout, mode, nerve_run, work,
                               shlex.split(args.wrap))
            print("check %-4s %-6s %-4s %-13s %-5s: %s (%s)" % (
                neuron, variant, dtype, layout, mode, "ok" if ok else "FAILED", detail), flush=True)
            failed_checks += 0 if ok else 1
            if args.check_only:
                continue
            path = os.path.join(work, "bench.mlir")
            with open(path, "w") as f:
                f.write(spec(neuron, variant, dtype, layout, mode))
            for (t, n), block in itertools.product(sizes, time_blocks):
                r = run_bench(nerve_run, path, layout_dims(layout, t, n), args.runs,
                              ["--time-block", str(block)] if block else [])
                if r is None:
                    continue
                ms, copy, same = r
                passes = 3 if mode == "infer" else 8
                moved = passes * t * n * WIDTH[dtype]
                gbs = moved / (ms * 1e-3) / 1e9
                row = {"neuron": neuron, "variant": variant, "dtype": dtype, "layout": layout,
                       "mode": mode, "T": t, "N": n, "time block": block or "auto", "ms": ms,
                       "bytes": moved, "GB/s": gbs,
                       "copy GB/s": copy, "fraction of copy": gbs / copy,
                       "same-size copy ms": same,
                       "fraction of same-size copy": same / ms if same else None, "check": ok}
                if neuron == "lif" and variant == "hard" and layout == "time-major":
                    peer = TRITON.get((dtype, t, n))
                    row["triton ms (targets.md)"] = peer[0 if mode == "infer" else 1] if peer else None
                    if dtype == "f32":
                        row["torch eager ms"] = torch_times(t, n, dtype, mode, min(args.runs, 10),
                                                            False)
                        if args.torch_compile and t <= 64:
                            row["torch.compile ms"] = torch_times(t, n, dtype, mode, args.runs, True)
                rows.append(row)
                print("  %s %s %s %s %s %dx%d%s: %.4f ms, %.1f%% of copy, %s of a same-size copy" % (
                    neuron, variant, dtype, layout, mode, t, n,
                    " time-block %d" % block if block else "", ms, 100 * gbs / copy,
                    "%.1f%%" % (100 * same / ms) if same else "-"), flush=True)

    if args.check_only:
        print("%d checks failed" % failed_checks)
        return 1 if failed_checks else 0
    with open(os.path.join(args.out, "neuron.json"), "w") as f:
        json.dump({"copy GB/s": copy, "L2 flush": common.L2_FLUSH,
                   "driver PTX JIT": sorted(common.JIT_LEVELS), "rows": rows}, f, indent=1)
    keys = sorted({k for r in rows for k in r}, key=lambda k: list(rows[0]).index(k)
                  if k in rows[0] else 99)
    with open(os.path.join(args.out, "neuron.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)

    print()
    print("| neuron | variant | dtype | layout | mode | T x N | time block | ms | GB/s | % copy | % same-size copy | triton ms | torch eager ms | torch.compile ms | check |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    fmt = lambda v: "-" if v is None else "%.4f" % v
    for r in rows:
        same = r.get("fraction of same-size copy")
        print("| %s | %s | %s | %s | %s | %dx%d | %s | %.4f | %.0f | %.1f%% | %s | %s | %s | %s | %s |" % (
            r["neuron"], r["variant"], r["dtype"], r["layout"], r["mode"], r["T"], r["N"],
            r["time block"],
            r["ms"], r["GB/s"], 100 * r["fraction of copy"],
            "%.1f%%" % (100 * same) if same else "-", fmt(r.get("triton ms (targets.md)")),
            fmt(r.get("torch eager ms")), fmt(r.get("torch.compile ms")),
            "ok" if r["check"] else "FAILED"))
    print("\ncopy bandwidth (same process as the last row): %.0f GB/s" % (copy or 0))
    print("the driver compiled nerve's PTX at: %s" % common.jit_levels())
    return 0 if all(r["check"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
