"""Comparing nerve's results with the float64 reference.

Tolerances are docs/neuron.md's and the golden README's, relative to the
largest expected magnitude: f64 1e-10, f32 1e-5, f16 1e-2, bf16 5e-2. Spikes
must match exactly, except in a neuron some step of which charged to within
four units of the storage format's rounding of the threshold: backward
recomputes its spikes from the stored h_seq, so such a neuron may fire
differently there, and it is left out of every comparison.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import torch

Tensor = torch.Tensor

TOLERANCE = {torch.float64: 1e-10, torch.float32: 1e-5, torch.float16: 1e-2,
             torch.bfloat16: 5e-2}
EPSILON = {torch.float64: 2.0 ** -52, torch.float32: 2.0 ** -23, torch.float16: 2.0 ** -10,
           torch.bfloat16: 2.0 ** -7}


def unsure_neurons(h_ref: Tensor, v_threshold: float, dtype: torch.dtype,
                   time_dim: int = 0, surrogate: Optional[Tuple[str, Dict]] = None) -> Tensor:
    """Neurons (a mask over the non-time dimensions) that charged within
    rounding of a step of backward's math at some step: the threshold
    (backward recomputes the spike) or a jump of the surrogate
    (piecewise_leaky_relu jumps at |u| = w, log_tailed_relu at u = 1)."""
    jumps = [0.0]
    if surrogate is not None and surrogate[0] == "piecewise_leaky_relu":
        w = dict(surrogate[1]).get("w", 1.0)
        jumps += [w, -w]
    if surrogate is not None and surrogate[0] == "log_tailed_relu":
        jumps.append(1.0)
    # Four units of rounding (half an ulp each) of values near the threshold.
    margin = 2 * EPSILON[dtype] * torch.clamp(h_ref.abs(), min=abs(v_threshold))
    u = h_ref - v_threshold
    near = torch.zeros_like(u, dtype=torch.bool)
    for jump in jumps:
        near |= (u - jump).abs() <= margin
    return near.any(dim=time_dim)


def assert_close(name: str, got: Tensor, want: Tensor, dtype: torch.dtype,
                 keep: Optional[Tensor] = None, time_dim: Optional[int] = 0) -> None:
    """`got` (any dtype, any device) against the float64 `want`, on the
    neurons `keep` selects (a mask over the non-time dimensions)."""
    got = got.detach().to("cpu", torch.float64)
    want = want.detach().to("cpu", torch.float64)
    assert got.shape == want.shape, f"{name}: shape {list(got.shape)} != {list(want.shape)}"
    if keep is not None:
        mask = keep.unsqueeze(time_dim) if (time_dim is not None and got.dim() > keep.dim()) \
            else keep
        mask = mask.expand_as(got)
        got, want = got[mask], want[mask]
    if want.numel() == 0:
        return
    scale = max(want.abs().max().item(), 1e-30)
    error = (got - want).abs().max().item()
    assert error <= TOLERANCE[dtype] * scale, (
        f"{name}: max |error| {error:.3g} exceeds {TOLERANCE[dtype]:g} x {scale:.3g} ({dtype})")


def assert_spikes_equal(got: Tensor, want: Tensor, keep: Optional[Tensor] = None,
                        time_dim: int = 0) -> None:
    got = got.detach().to("cpu", torch.float64)
    want = want.detach().to("cpu", torch.float64)
    if keep is not None:
        mask = keep.unsqueeze(time_dim).expand_as(got)
        got, want = got[mask], want[mask]
    wrong = (got != want).sum().item()
    assert wrong == 0, f"spikes: {wrong} of {got.numel()} differ"


def random_case(shape, dtype: torch.dtype, device: str, seed: int,
                with_v_init: bool = True) -> Dict[str, Tensor]:
    """Inputs and upstream gradients, rounded to `dtype` once (the reference
    starts from the same values)."""
    g = torch.Generator().manual_seed(seed)
    state = shape[1:]
    case = {
        "x": torch.randn(shape, generator=g, dtype=torch.float64) * 0.8 + 0.45,
        "grad_spike": torch.randn(shape, generator=g, dtype=torch.float64),
        "grad_v": torch.randn(shape, generator=g, dtype=torch.float64) * 0.5,
    }
    if with_v_init:
        case["v_init"] = torch.rand(state, generator=g, dtype=torch.float64) * 0.6 - 0.1
    return {k: v.to(dtype).to(device) for k, v in case.items()}
