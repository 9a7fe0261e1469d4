#!/usr/bin/env python3
"""What exact math costs a 16-bit kernel (CompileOptions::exactMath).

A sigmoid over 2^26 elements in f16, bf16 and f32, compiled with and
without `exact_math`, timed as bench/common.py times (CUDA events, L2
emptied before each run, median), each first checked against float64; the
ratio is to the copy bandwidth measured in the same process. Needs the
Python package on PYTHONPATH and a GPU.

    python3 bench/exact_math.py [--elements N] [--runs R]
"""

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import nerve  # noqa: E402

SPEC = """
!h = !tdim.tensor<[n: ?], {t}>
tdim.kernel @sigmoid(%a: !h) -> (%y: !h) {{
  tdim.map ins(%a : !h) outs(%y : !h) {{
  ^bb0(%x: {t}):
    {widen}
    %nx = arith.negf %xf : f32
    %e = math.exp %nx : f32
    %one = arith.constant 1.0 : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    {narrow}
    tdim.yield %r : {t}
  }}
  tdim.return
}}
"""
TYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}


def spec(dtype: str) -> str:
    if dtype == "f32":  # the block argument is f32 already
        return SPEC.format(t="f32", widen="%xf = arith.addf %x, %x : f32",
                           narrow="%r = arith.addf %s, %s : f32")
    return SPEC.format(t=dtype, widen=f"%xf = arith.extf %x : {dtype} to f32",
                       narrow=f"%r = arith.truncf %s : f32 to {dtype}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--elements", type=int, default=1 << 26)
    p.add_argument("--runs", type=int, default=30)
    args = p.parse_args()
    copy = common.torch_copy_bandwidth(torch)
    print(f"GPU: {torch.cuda.get_device_name()}; copy bandwidth {copy:.0f} GB/s")
    print("| dtype | exact_math | ms | % of copy | max rel. error |")
    print("|---|---|---|---|---|")
    for dtype, torch_type in TYPES.items():
        x = (torch.rand(args.elements, device="cuda") * 12 - 6).to(torch_type)
        wide = x.double()
        want = torch.sigmoid(2 * wide) * 2 if dtype == "f32" else torch.sigmoid(wide)
        for exact in (False, True):
            m = nerve.compile(spec(dtype), target="cuda", exact_math=exact, cache=False)
            y = torch.empty_like(x)
            m.sigmoid(x, y)
            err = ((y.double() - want).abs() / want.abs()).max().item()
            ms = common.torch_median_ms(torch, lambda: m.sigmoid(x, y), args.runs)
            pct = 100 * 2 * x.numel() * x.element_size() / ms / 1e6 / copy
            print(f"| {dtype} | {exact} | {ms:.4f} | {pct:.1f}% | {err:.1e} |")


if __name__ == "__main__":
    main()
