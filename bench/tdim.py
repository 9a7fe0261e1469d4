#!/usr/bin/env python3
"""Row-wise tdim kernels on the GPU against the device's copy bandwidth
measured in the same process, and against PyTorch eager measured in this
run when torch with CUDA is importable.

Bytes counted: the input read once and the output written once (plus the
weight and bias of layer_norm), as ../shared/targets.md counts them.

usage: bench/tdim.py [--nerve-run PATH] [--runs 20] [--shapes 16384x4096,...]
"""
import argparse
import os
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
    # name: (spec, entry, bytes(r, c), torch function or None)
    return {
        "softmax": (os.path.join(EX, "softmax.mlir"), None, lambda r, c: 8 * r * c,
                    lambda t, x: t.softmax(x, -1)),
        "log_softmax": (path, None, lambda r, c: 8 * r * c, lambda t, x: t.log_softmax(x, -1)),
        "layer_norm": (os.path.join(EX, "layer_norm.mlir"), None,
                       lambda r, c: 8 * r * c + 8 * c,
                       lambda t, x: t.nn.functional.layer_norm(
                           x, x.shape[-1:], t.ones(x.shape[-1], device=x.device),
                           t.zeros(x.shape[-1], device=x.device))),
        "row_sum": (os.path.join(EX, "reductions.mlir"), "row_sum", lambda r, c: 4 * r * c + 4 * r,
                    lambda t, x: x.sum(-1)),
        "a*2+sigmoid(a)": (os.path.join(EX, "elementwise.mlir"), "scale_plus_sigmoid",
                           lambda r, c: 8 * r * c, lambda t, x: x * 2 + t.sigmoid(x)),
    }


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
    args = p.parse_args()
    nerve_run = find_tool("nerve-run", args.nerve_run)
    work = tempfile.mkdtemp(prefix="nerve-bench-")
    print("%-16s %-12s %10s %8s %12s %9s" % ("op", "shape", "ms", "%copy", "torch ms", "%copy"))
    copy = None
    for name, (spec, entry, nbytes, fn) in ops(work).items():
        for shape in args.shapes.split(","):
            r, c = (int(v) for v in shape.split("x"))
            res = run_bench(nerve_run, spec, {"r": r, "c": c}, args.runs, entry=entry)
            if res is None:
                continue
            ms, copy = res
            pct = lambda t: 100.0 * nbytes(r, c) / (t * 1e-3) / (copy * 1e9)
            tms = torch_ms(fn, r, c, args.runs)
            print("%-16s %-12s %10.4f %7.1f%% %12s %9s" % (
                name, shape, ms, pct(ms), "%.4f" % tms if tms else "-",
                "%.1f%%" % pct(tms) if tms else "-"), flush=True)
    if copy:
        print("copy bandwidth (same process, last run): %.0f GB/s" % copy)


if __name__ == "__main__":
    main()
