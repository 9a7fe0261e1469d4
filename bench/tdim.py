#!/usr/bin/env python3
"""Row-wise tdim kernels on the GPU against the device's copy bandwidth
measured in the same process, and against PyTorch eager measured in this
run when torch with CUDA is importable.

Bytes counted: the input read once and the output written once (plus the
weight and bias of layer_norm), as ../shared/targets.md counts them.

Before timing, each kernel runs at 37 x 4097 on random inputs and its result
is checked against float64 (test/Integration/Inputs/check.py).

usage: bench/tdim.py [--nerve-run PATH] [--runs 20] [--shapes 16384x4096,...]
                     [--check-only [--wrap "compute-sanitizer --tool memcheck"]]

--check-only runs only the checks, each nerve-run under --wrap's command
when given (scripts/gpu-suite.sh runs the kernels under compute-sanitizer so).
"""
import argparse
import os
import shlex
import subprocess
import sys
import tempfile

from common import ROOT, find_tool, run_bench, torch_median_ms

EX = os.path.join(ROOT, "examples", "tdim")
LOG_SOFTMAX = """
!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @log_softmax(%x: !m) -> (%y: !m) {
  tdim.log_softmax ins(%x : !m) outs(%y : !m) over c
  tdim.return
}
"""


def ops(work):
    path = os.path.join(work, "log_softmax.mlir")
    with open(path, "w") as f:
        f.write(LOG_SOFTMAX)
    # name: (spec, entry, bytes(r, c), torch function or None, reference)
    return {
        "softmax": (os.path.join(EX, "softmax.mlir"), None, lambda r, c: 8 * r * c,
                    lambda t, x: t.softmax(x, -1), ["y = softmax(x, 'c')"]),
        "log_softmax": (path, None, lambda r, c: 8 * r * c, lambda t, x: t.log_softmax(x, -1),
                        ["y = log_softmax(x, 'c')"]),
        "layer_norm": (os.path.join(EX, "layer_norm.mlir"), None,
                       lambda r, c: 8 * r * c + 8 * c,
                       lambda t, x: t.nn.functional.layer_norm(
                           x, x.shape[-1:], t.ones(x.shape[-1], device=x.device),
                           t.zeros(x.shape[-1], device=x.device)),
                       ["y = layer_norm(x, ['c'], w, b, 1e-5)", "--atol=5e-5"]),
        "row_sum": (os.path.join(EX, "reductions.mlir"), "row_sum", lambda r, c: 4 * r * c + 4 * r,
                    lambda t, x: x.sum(-1), ["sum = sum(x, 'c')"]),
        "a*2+sigmoid(a)": (os.path.join(EX, "elementwise.mlir"), "scale_plus_sigmoid",
                           lambda r, c: 8 * r * c, lambda t, x: x * 2 + t.sigmoid(x),
                           ["y = a * 2 + sigmoid(a)"]),
    }


def check(nerve_run, spec, entry, reference, work, wrap=()):
    """Runs the kernel at 37 x 4097 and compares with float64; (ok, detail)."""
    out = os.path.join(work, "check-out")
    cmd = list(wrap) + [nerve_run, spec, "--target", "cuda", "--random", "3", "--dim", "r=37",
                        "--dim", "c=4097", "--save-inputs", "--output-dir", out]
    if entry:
        cmd += ["--entry", entry]
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


def torch_ms(fn, r, c, runs):
    try:
        import torch
        if not torch.cuda.is_available():
            return None
    except Exception:
        return None
    x = torch.randn(r, c, device="cuda")
    return torch_median_ms(torch, lambda: fn(torch, x), runs)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nerve-run")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--shapes", default="16384x4096,4096x65536,65536x1024")
    p.add_argument("--check-only", action="store_true", help="run the checks, time nothing")
    p.add_argument("--wrap", default="", help="a command to run each checked nerve-run under")
    args = p.parse_args()
    nerve_run = find_tool("nerve-run", args.nerve_run)
    work = tempfile.mkdtemp(prefix="nerve-bench-")
    copy = None
    failed = 0
    for name, (spec, entry, nbytes, fn, reference) in ops(work).items():
        ok, detail = check(nerve_run, spec, entry, reference, work, shlex.split(args.wrap))
        failed += 0 if ok else 1
        print("check %-16s: %s (%s)" % (name, "ok" if ok else "FAILED", detail), flush=True)
        if args.check_only:
            continue
        print("%-16s %-12s %10s %8s %10s %12s %9s" % ("op", "shape", "ms", "%copy", "%same-size", "torch ms",
                                                  "%copy"))
        for shape in args.shapes.split(","):
            r, c = (int(v) for v in shape.split("x"))
            res = run_bench(nerve_run, spec, {"r": r, "c": c}, args.runs, entry=entry)
            if res is None:
                continue
            ms, copy, same = res
            pct = lambda t: 100.0 * nbytes(r, c) / (t * 1e-3) / (copy * 1e9)
            tms = torch_ms(fn, r, c, args.runs)
            print("%-16s %-12s %10.4f %7.1f%% %10s %12s %9s" % (
                name, shape, ms, pct(ms), "%.1f%%" % (100 * same / ms) if same else "-",
                "%.4f" % tms if tms else "-",
                "%.1f%%" % pct(tms) if tms else "-"), flush=True)
    if copy:
        print("copy bandwidth (same process, last run): %.0f GB/s" % copy)
    print("%d checks failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
