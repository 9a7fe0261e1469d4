"""SpikingJelly's multi-step neuron math in float64 PyTorch, the tests' reference.

Written from ../shared/neuron-semantics.md (§1-3), independently of nerve:
a loop over time with a Heaviside step whose backward is the surrogate's
derivative, and autograd for the gradients. It is slow and exact.
"""

from __future__ import annotations

import math
from typing import Dict, Optional, Tuple

import torch

Tensor = torch.Tensor


def surrogate_derivative(name: str, params: Dict[str, float], u: Tensor) -> Tensor:
    """g'(u) of SpikingJelly's torch surrogates."""
    a = params.get("alpha")
    if name == "sigmoid":
        s = torch.sigmoid(a * u)
        return a * s * (1 - s)
    if name == "atan":
        return (a / 2) / (1 + (math.pi / 2 * a * u) ** 2)
    if name == "piecewise_leaky_relu":
        w, c = params["w"], params["c"]
        return torch.where(u.abs() < w, torch.full_like(u, 1 / (2 * w)), torch.full_like(u, c))
    if name == "s2nn":
        s = torch.sigmoid(a * u)
        return torch.where(u < 0, a * s * (1 - s), params["beta"] / (u.clamp(min=0) + 1))
    if name == "q_pseudo_spike":
        return (1 + 2 * u.abs() / (a - 1)) ** (-a)
    if name == "leaky_k_relu":
        return torch.where(u >= 0, torch.full_like(u, params["k"]),
                           torch.full_like(u, params["leak"]))
    if name == "fake_numerical_gradient":
        return torch.clamp(1 / u.abs(), max=a)
    if name == "log_tailed_relu":
        safe = torch.where(u > 1, u, torch.ones_like(u))
        return torch.where(u <= 0, torch.full_like(u, a),
                           torch.where(u > 1, 1 / safe, torch.ones_like(u)))
    if name == "piecewise_quadratic":
        return torch.clamp(a - a * a * u.abs(), min=0)
    if name == "piecewise_exp":
        return a / 2 * torch.exp(-a * u.abs())
    if name == "soft_sign":
        return 1 / (2 * a * (1 / a + u.abs()) ** 2)
    if name == "super_spike":
        return a / (u.abs() + 1) ** 2
    if name == "erf":
        return a / math.sqrt(math.pi) * torch.exp(-(a * u) ** 2)
    raise ValueError(name)


class _Heaviside(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u: Tensor, name: str, params: Dict[str, float]) -> Tensor:
        ctx.save_for_backward(u)
        ctx.name, ctx.params = name, params
        return (u >= 0).to(u.dtype)

    @staticmethod
    def backward(ctx, grad: Tensor):
        (u,) = ctx.saved_tensors
        return grad * surrogate_derivative(ctx.name, ctx.params, u), None, None


def run(neuron: str, x: Tensor, v_init: Optional[Tensor], *, v_threshold: float = 1.0,
        v_reset: Optional[float] = 0.0, detach_reset: bool = False, tau: float = 2.0,
        decay_input: bool = True, decay: Optional[Tensor] = None,
        surrogate: Tuple[str, Dict[str, float]] = ("sigmoid", {"alpha": 4.0})
        ) -> Tuple[Tensor, Tensor, Tensor]:
    """Spikes, v_seq and h_seq of a time-major sequence `x`; differentiable
    in x, v_init and `decay` (PLIF's decay, sigmoid(w) or r_tau)."""
    vr = 0.0 if v_reset is None else v_reset
    v = v_init if v_init is not None else torch.full_like(x[0], vr)
    spikes, vs, hs = [], [], []
    for t in range(x.shape[0]):
        xt = x[t]
        if neuron == "if":
            h = v + xt
        elif neuron == "lif":
            h = v + (xt - (v - vr)) / tau if decay_input else v - (v - vr) / tau + xt
        else:
            h = v + (xt - (v - vr)) * decay if decay_input else v - (v - vr) * decay + xt
        s = _Heaviside.apply(h - v_threshold, surrogate[0], surrogate[1])
        sd = s.detach() if detach_reset else s
        v = h - sd * v_threshold if v_reset is None else (1 - sd) * h + sd * v_reset
        spikes.append(s)
        vs.append(v)
        hs.append(h)
    return torch.stack(spikes), torch.stack(vs), torch.stack(hs)
