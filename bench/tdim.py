#!/usr/bin/env python3
"""Typed-tensor kernels on the GPU against the device's copy bandwidth
measured in the same process, and against PyTorch eager and torch.compile
measured in this run when torch with CUDA is importable.

Ops (specs below, written in each storage type; arithmetic is f32): softmax,
log_softmax and layer_norm (weight and bias) over the last dimension; sum and
max over the last dimension and over the first; the sum of the whole tensor
(one value, accumulated in f32), and of the same elements as one vector;
`a*2 + sigmoid(a)`; an
8-step elementwise chain with a broadcast operand; softmax over the first
(non-contiguous) dimension; softmax over the last dimension of a transposed
view (column-major storage, no copy).

Bytes counted: each input read once and each output written once, as
../shared/targets.md counts them.

Before timing, each kernel runs at 37 x 4097 (the whole-tensor sums at
521 x 4097) on random inputs and its
result is checked against float64 (test/Integration/Inputs/check.py), with
the tolerance of the storage type (the whole-tensor sum's are wider).

usage: bench/tdim.py [--nerve-run PATH] [--runs 20] [--shapes 16384x4096,...]
                     [--dtypes f32,f16,bf16] [--ops softmax,...] [--no-torch-compile]
                     [--out DIR] [--check-only [--wrap "compute-sanitizer ..."]]

Writes tdim.json and tdim.csv under --out and prints one table last.
--check-only runs only the checks, each nerve-run under --wrap's command
when given (scripts/gpu-suite.sh runs the kernels under compute-sanitizer so).
"""
import argparse
import csv
import json
import os
import shlex
import subprocess
import sys
import tempfile

import common
from common import ROOT, WIDTH, find_tool, run_bench, torch_median_ms

M = "!m = !tdim.tensor<[r: ?, c: ?], {T}>\n!v = !tdim.tensor<[c: ?], {T}>\n" \
    "!row = !tdim.tensor<[r: ?], {T}>\n!one = !tdim.tensor<[], {T}>\n"


def reduce_spec(name, over, out, init, combine):
    return M + """
tdim.kernel @{name}(%x: !m) -> (%s: {out}) {{
  tdim.reduce ins(%x : !m) outs(%s : {out}) over [{over}] init [{init} : f32]
    combine {{
    ^bb0(%a: f32, %b: f32):
      %m = arith.{combine} %a, %b : f32
      tdim.yield %m : f32
    }}
  tdim.return
}}
""".replace("{name}", name).replace("{over}", over).replace("{out}", out) \
        .replace("{init}", init).replace("{combine}", combine).replace("{{", "{") \
        .replace("}}", "}")


# The sum of a vector (one dimension, c): the tensor's elements in a row.
VECTOR_SUM = M + """
tdim.kernel @vector_sum(%x: !v) -> (%s: !one) {
  tdim.reduce ins(%x : !v) outs(%s : !one) over [c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %m = arith.addf %a, %b : f32
      tdim.yield %m : f32
    }
  tdim.return
}
"""


def softmax_spec(name, op, over, x="!m"):
    return M + "!t = !tdim.tensor<[r: ?, c: ?], {T}, strides = [1, ?]>\n" + (
        "tdim.kernel @%s(%%x: %s) -> (%%y: !m) {\n"
        "  tdim.%s ins(%%x : %s) outs(%%y : !m) over %s\n"
        "  tdim.return\n}\n" % (name, x, op, x, over))


LAYER_NORM = M + """
tdim.kernel @layer_norm(%x: !m, %w: !v, %b: !v) -> (%y: !m) {
  tdim.layer_norm ins(%x : !m) weight(%w : !v) bias(%b : !v) outs(%y : !m)
      over [c] eps 1.0e-05
  tdim.return
}
"""

SCALE_PLUS_SIGMOID = M + """
tdim.kernel @scale_plus_sigmoid(%a: !m) -> (%y: !m) {
  tdim.map ins(%a : !m) outs(%y : !m) {
  ^bb0(%x: f32):
    %two = arith.constant 2.0 : f32
    %one = arith.constant 1.0 : f32
    %scaled = arith.mulf %x, %two : f32
    %neg = arith.negf %x : f32
    %e = math.exp %neg : f32
    %den = arith.addf %one, %e : f32
    %sig = arith.divf %one, %den : f32
    %r = arith.addf %scaled, %sig : f32
    tdim.yield %r : f32
  }
  tdim.return
}
"""

# examples/tdim/elementwise.mlir's @chain: three maps the compiler fuses.
def chain_spec():
    text = open(os.path.join(ROOT, "examples", "tdim", "elementwise.mlir")).read()
    body = "tdim.kernel @chain" + text.split("tdim.kernel @chain", 1)[1]
    return M + body


def torch_chain(t, a, bias):
    s = a + bias
    sp = t.nn.functional.softplus(s)
    return t.clamp(t.tanh(sp * 0.5), -0.9, 0.9) - t.relu(a)


def ops():
    """name: (spec text, bytes(r, c, width), reference, torch fn(t, inputs))."""
    rc = lambda r, c, w: 2 * r * c * w
    return {
        "softmax": (softmax_spec("softmax", "softmax", "c"), rc, ["y = softmax(x, 'c')"],
                    lambda t, i: t.softmax(i["x"], -1)),
        "log_softmax": (softmax_spec("log_softmax", "log_softmax", "c"), rc,
                        ["y = log_softmax(x, 'c')"], lambda t, i: t.log_softmax(i["x"], -1)),
        "layer_norm": (LAYER_NORM, lambda r, c, w: 2 * r * c * w + 2 * c * w,
                       ["y = layer_norm(x, ['c'], w, b, 1e-5)", "--atol=5e-5"],
                       lambda t, i: t.nn.functional.layer_norm(i["x"], i["x"].shape[-1:],
                                                               i["w"], i["b"])),
        "row_sum": (reduce_spec("row_sum", "c", "!row", "0.0", "addf"),
                    lambda r, c, w: r * c * w + r * w, ["s = sum(x, 'c')"],
                    lambda t, i: i["x"].sum(-1)),
        "row_max": (reduce_spec("row_max", "c", "!row", "0xFF800000", "maximumf"),
                    lambda r, c, w: r * c * w + r * w, ["s = amax(x, 'c')"],
                    lambda t, i: i["x"].amax(-1)),
        "col_sum": (reduce_spec("col_sum", "r", "!v", "0.0", "addf"),
                    lambda r, c, w: r * c * w + c * w, ["s = sum(x, 'r')"],
                    lambda t, i: i["x"].sum(0)),
        "col_max": (reduce_spec("col_max", "r", "!v", "0xFF800000", "maximumf"),
                    lambda r, c, w: r * c * w + c * w, ["s = amax(x, 'r')"],
                    lambda t, i: i["x"].amax(0)),
        # One value for the whole tensor, accumulated in f32 and rounded to
        # the storage type (loose tolerances: the sum of 151K normal values).
        "sum(all)": (reduce_spec("total_sum", "r, c", "!one", "0.0", "addf"),
                     lambda r, c, w: r * c * w + w,
                     ["s = sum(x, ['r', 'c'])", "--rtol=4e-3", "--atol=1e-2"],
                     lambda t, i: i["x"].sum()),
        # The same elements as one vector of r * c (VECTOR_OPS).
        "sum(vec)": (VECTOR_SUM, lambda r, c, w: r * c * w + w,
                     ["s = sum(x, ['c'])", "--rtol=4e-3", "--atol=1e-2"],
                     lambda t, i: i["x"].reshape(-1).sum()),
        "a*2+sigmoid(a)": (SCALE_PLUS_SIGMOID, rc, ["y = a * 2 + sigmoid(a)"],
                           lambda t, i: i["a"] * 2 + t.sigmoid(i["a"])),
        "chain8+bcast": (chain_spec(), lambda r, c, w: 2 * r * c * w + c * w,
                         ["y = clip(tanh(softplus(a + bias) * 0.5), -0.9, 0.9) - maximum(a, 0)"],
                         lambda t, i: torch_chain(t, i["a"], i["bias"])),
        "softmax(dim 0)": (softmax_spec("softmax_rows", "softmax", "r"), rc,
                           ["y = softmax(x, 'r')"], lambda t, i: t.softmax(i["x"], 0)),
        "softmax(x^T)": (softmax_spec("softmax_view", "softmax", "c", "!t"), rc,
                         ["y = softmax(x, 'c')"], lambda t, i: t.softmax(i["xt"], -1)),
    }


def write_spec(work, name, text, dtype):
    path = os.path.join(work, "%s_%s.mlir" % ("".join(ch if ch.isalnum() else "_" for ch in name),
                                              dtype))
    with open(path, "w") as f:
        f.write(text.replace("{T}", dtype))
    return path


# Ops checked at another shape than 37 x 4097: the whole-tensor sums over
# 2^21 elements, a sum of that many f32 values (loose tolerances above).
CHECK_ROWS = {"sum(all)": 521, "sum(vec)": 521}
# Ops over a vector of the shape's r * c elements (their spec's dimension c).
VECTOR_OPS = {"sum(vec)"}


def dims_of(name, r, c):
    return {"c": r * c} if name in VECTOR_OPS else {"r": r, "c": c}


def check(nerve_run, spec, reference, work, wrap=(), dims=None):
    """Runs the kernel at `dims` (37 x 4097) and compares with float64; (ok, detail)."""
    out = os.path.join(work, "check-out")
    cmd = list(wrap) + [nerve_run, spec, "--target", "cuda", "--random", "3"]
    for d, size in (dims or {"r": 37, "c": 4097}).items():
        cmd += ["--dim", "%s=%d" % (d, size)]
    cmd += ["--save-inputs", "--output-dir", out]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return False, (proc.stderr or proc.stdout).strip().splitlines()[-1]
    sanitizer = [l.strip("= ") for l in (proc.stdout + proc.stderr).splitlines()
                 if "ERROR SUMMARY" in l or "RACECHECK SUMMARY" in l]
    checker = os.path.join(ROOT, "test", "Integration", "Inputs", "check.py")
    proc = subprocess.run([sys.executable, checker, out] + reference, capture_output=True,
                          text=True)
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    detail = lines[-1] if lines else "matches"
    return proc.returncode == 0, detail + ("; " + sanitizer[-1] if sanitizer else "")


def torch_inputs(torch, name, r, c, dtype):
    tdtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    x = torch.randn(r, c, device="cuda", dtype=tdtype)
    vec = lambda: torch.randn(c, device="cuda", dtype=tdtype)
    return {"x": x, "a": x, "w": vec(), "b": vec(), "bias": vec(),
            "xt": torch.randn(c, r, device="cuda", dtype=tdtype).t()}


def torch_times(fn, name, r, c, dtype, runs, compile_too):
    """(eager ms, torch.compile ms) or Nones when torch cannot run here."""
    try:
        import torch
        if not torch.cuda.is_available():
            return None, None
    except Exception:
        return None, None
    inputs = torch_inputs(torch, name, r, c, dtype)
    eager = torch_median_ms(torch, lambda: fn(torch, inputs), runs)
    compiled = None
    if compile_too:
        try:
            cfn = torch.compile(lambda i: fn(torch, i), dynamic=False)
            compiled = torch_median_ms(torch, lambda: cfn(inputs), runs)
        except Exception as e:  # no compiler toolchain: say so, keep going
            sys.stderr.write("torch.compile %s: %s\n" % (name, str(e).splitlines()[0]))
        finally:
            torch._dynamo.reset()
    del inputs
    torch.cuda.empty_cache()
    return eager, compiled


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nerve-run")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--l2-flush", choices=common.L2_FLUSH_MODES, default=common.L2_FLUSH,
                   help="how L2 is emptied before each timed run, for nerve and PyTorch alike")
    p.add_argument("--shapes", default="16384x4096,4096x65536,65536x1024")
    p.add_argument("--dtypes", default="f32,f16,bf16")
    p.add_argument("--ops", default="",
                   help="comma-separated subset of the ops (spaces in names optional)")
    p.add_argument("--no-torch-compile", action="store_true")
    p.add_argument("--out", default=os.path.join(ROOT, "bench-results"))
    p.add_argument("--check-only", action="store_true", help="run the checks, time nothing")
    p.add_argument("--wrap", default="", help="a command to run each checked nerve-run under")
    args = p.parse_args()
    common.L2_FLUSH = args.l2_flush
    nerve_run = find_tool("nerve-run", args.nerve_run)
    work = tempfile.mkdtemp(prefix="nerve-bench-")
    table = ops()
    # Names match without their spaces ("softmax(dim0)"), so that a list
    # passed through a shell variable (NERVE_TDIM_ARGS) needs no quoting.
    by_name = {name.replace(" ", ""): name for name in table}
    chosen = [o.replace(" ", "") for o in args.ops.split(",") if o]
    unknown = [o for o in chosen if o not in by_name]
    if unknown:
        p.error("unknown op(s) %s; the ops: %s" % (", ".join(unknown), ", ".join(by_name)))
    chosen = [by_name[o] for o in chosen] or list(table)
    rows, failed = [], 0
    copy = None
    for dtype in args.dtypes.split(","):
        for name in chosen:
            text, nbytes, reference, fn = table[name]
            spec = write_spec(work, name, text, dtype)
            ok, detail = check(nerve_run, spec, reference, work, shlex.split(args.wrap),
                               dims_of(name, CHECK_ROWS.get(name, 37), 4097))
            failed += 0 if ok else 1
            print("check %-16s %-4s: %s (%s)" % (name, dtype, "ok" if ok else "FAILED", detail),
                  flush=True)
            if args.check_only:
                continue
            for shape in args.shapes.split(","):
                r, c = (int(v) for v in shape.split("x"))
                res = run_bench(nerve_run, spec, dims_of(name, r, c), args.runs)
                if res is None:
                    failed += 1
                    continue
                ms, copy, same = res
                moved = nbytes(r, c, WIDTH[dtype])
                frac = lambda t: moved / (t * 1e-3) / (copy * 1e9) if t else None
                eager, compiled = torch_times(fn, name, r, c, dtype, args.runs,
                                              not args.no_torch_compile)
                row = {"op": name, "dtype": dtype, "shape": shape, "bytes": moved, "ms": ms,
                       "GB/s": moved / (ms * 1e-3) / 1e9, "copy GB/s": copy,
                       "fraction of copy": frac(ms), "same-size copy ms": same,
                       "fraction of same-size copy": same / ms if same else None,
                       "torch eager ms": eager, "torch eager fraction": frac(eager),
                       "torch.compile ms": compiled, "torch.compile fraction": frac(compiled),
                       "check": ok}
                rows.append(row)
                # Each row as it comes, so that a run cut short keeps what it measured.
                print("  %s %s %s: %.4f ms, %.1f%% of copy; eager %s ms, torch.compile %s ms"
                      % (name, dtype, shape, ms, 100 * frac(ms),
                         "-" if eager is None else "%.4f" % eager,
                         "-" if compiled is None else "%.4f" % compiled), flush=True)
    if args.check_only:
        print("%d checks failed" % failed)
        return 1 if failed else 0

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "tdim.json"), "w") as f:
        json.dump({"copy GB/s": copy, "L2 flush": common.L2_FLUSH,
                   "driver PTX JIT": sorted(common.JIT_LEVELS), "rows": rows}, f, indent=1)
    if rows:
        with open(os.path.join(args.out, "tdim.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    pct = lambda v: "-" if v is None else "%.1f%%" % (100 * v)
    ms = lambda v: "-" if v is None else "%.4f" % v
    print()
    print("| op | dtype | shape | ms | GB/s | % copy | % same-size copy | torch eager ms | "
          "eager % copy | torch.compile ms | compile % copy | ahead of both | check |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        peers = [t for t in (r["torch eager ms"], r["torch.compile ms"]) if t]
        ahead = "-" if not peers else ("yes" if r["ms"] <= min(peers) else "no")
        print("| %s | %s | %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["op"], r["dtype"], r["shape"], ms(r["ms"]), r["GB/s"], pct(r["fraction of copy"]),
            pct(r["fraction of same-size copy"]), ms(r["torch eager ms"]),
            pct(r["torch eager fraction"]), ms(r["torch.compile ms"]),
            pct(r["torch.compile fraction"]), ahead, "ok" if r["check"] else "FAILED"))
    print("\ncopy bandwidth (same process as the last row): %.0f GB/s" % (copy or 0))
    print("the driver compiled nerve's PTX at: %s" % common.jit_levels())
    print("%d checks failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
