#!/usr/bin/env python3
"""Writes golden cases for adaptive LIF and AdEx (test/data/golden/models),
the two built-in neurons SpikingJelly lacks, in the format of
test/data/golden/multistate (its README), from a float64 reference written
here from docs/neuron.md ("Built-ins") independently of nerve.

The reference runs the step functions over time with PyTorch autograd in
float64; the spike is a Heaviside step whose backward is the surrogate's
derivative. Before writing, each neuron's gradients are checked by central
finite differences: with the Heaviside replaced by sigmoid(alpha u), whose
exact derivative is the sigmoid surrogate's, autograd's gradients of the
loss through every state, the threshold and the parameters must equal the
differences of the loss (relative error below 1e-6), so the reference's
backward is the derivative of its forward. Run with Debian's python3
(numpy, torch):

    /usr/bin/python3 scripts/make-model-golden.py test/data/golden/models
"""
import json
import math
import os
import sys

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
SHAPE = (8, 3, 37)


def surrogate_grad(name, alpha, u):
    if name == "sigmoid":
        s = torch.sigmoid(alpha * u)
        return alpha * s * (1 - s)
    if name == "atan":
        return (alpha / 2) / (1 + (math.pi / 2 * alpha * u) ** 2)
    raise ValueError(name)


class Heaviside(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, name, alpha):
        ctx.save_for_backward(u)
        ctx.name, ctx.alpha = name, alpha
        return (u >= 0).to(u.dtype)

    @staticmethod
    def backward(ctx, g):
        (u,) = ctx.saved_tensors
        return g * surrogate_grad(ctx.name, ctx.alpha, u), None, None


def alif_step(x, v, a, p, vth, vr, detach, fire):
    """theta = v_th + beta a (a before the step); h = v + (x - (v - leak)) / tau;
    a' = rho a + s; reset against theta."""
    theta = vth + p["beta"] * a
    leak = 0.0 if vr is None else vr
    h = v + (x - (v - leak)) / p["tau"]
    s = fire(h - theta)
    sd = s.detach() if detach else s
    v1 = (1 - sd) * h + sd * vr if vr is not None else h - sd * theta
    return s, h, v1, p["rho"] * a + s


def adex_step(x, v, w, p, vth, vr, detach, fire):
    """h = v + (x - (v - v_rest) + delta_t exp((v - theta_rh)/delta_t) - w) / tau;
    w' = w + (a (v - v_rest) - w) / tau_w + b s (v before the step)."""
    h = v + (x - (v - p["v_rest"]) + p["delta_t"] * torch.exp((v - p["theta_rh"]) / p["delta_t"])
             - w) / p["tau"]
    w1 = w + (p["a"] * (v - p["v_rest"]) - w) / p["tau_w"]
    s = fire(h - vth)
    sd = s.detach() if detach else s
    v1 = (1 - sd) * h + sd * vr if vr is not None else h - sd * vth
    return s, h, v1, w1 + p["b"] * s


NEURONS = {
    "alif": (alif_step, "a", {"tau": 2.0, "rho": 0.8, "beta": 0.3}),
    "adex": (adex_step, "w", {"tau": 2.0, "delta_t": 1.0, "theta_rh": 0.8, "v_rest": 0.0,
                              "tau_w": 2.0, "a": 0.5, "b": 0.1}),
}


def simulate(step, x, v0, s0, params, vth, vr, detach, fire):
    v, s2 = v0, s0
    out = {"spike": [], "h_seq": [], "v_seq": [], "second": []}
    for t in range(x.shape[0]):
        s, h, v, s2 = step(x[t], v, s2, params, vth, vr, detach, fire)
        for k, val in zip(("spike", "h_seq", "v_seq", "second"), (s, h, v, s2)):
            out[k].append(val)
    return {k: torch.stack(v) for k, v in out.items()}


def loss(out, grads):
    return ((out["spike"] * grads["spike"]).sum() + (out["v_seq"] * grads["v"]).sum()
            + (out["second"] * grads["second"]).sum())


def check_by_differences(name, rng):
    """The reference's gradients against central differences, with a smooth
    spike (sigmoid(4 u)) whose derivative is the sigmoid surrogate's."""
    step, second, defaults = NEURONS[name]
    fire = lambda u: torch.sigmoid(4.0 * u)  # noqa: E731
    x = torch.tensor(rng.uniform(0.0, 2.0, SHAPE))
    v0 = torch.tensor(rng.uniform(-0.2, 0.8, SHAPE[1:]))
    s0 = torch.tensor(rng.uniform(0.0, 0.5, SHAPE[1:]))
    grads = {k: torch.tensor(rng.standard_normal(SHAPE)) for k in ("spike", "v", "second")}
    for vr in (0.0, None):
        leaves = {"x": x.clone().requires_grad_(), "v0": v0.clone().requires_grad_(),
                  "s0": s0.clone().requires_grad_()}
        params = {k: torch.tensor(v, requires_grad=True) for k, v in defaults.items()}

        def f(leaves=leaves, params=params):
            return loss(simulate(step, leaves["x"], leaves["v0"], leaves["s0"], params, 1.0, vr,
                                 False, fire), grads)
        f().backward()
        worst = 0.0
        probes = [(leaves[k], tuple(rng.integers(0, n) for n in leaves[k].shape))
                  for k in leaves for _ in range(4)]
        probes += [(p, ()) for p in params.values()]
        for tensor, index in probes:
            with torch.no_grad():
                keep = tensor[index].item()
                tensor[index] = keep + 1e-6
                up = f().item()
                tensor[index] = keep - 1e-6
                down = f().item()
                tensor[index] = keep
            numeric = (up - down) / 2e-6
            analytic = tensor.grad[index].item()
            worst = max(worst, abs(numeric - analytic) / max(abs(numeric), 1e-3))
        print(f"{name} ({'soft' if vr is None else 'hard'} reset): autograd against central "
              f"differences, worst relative error {worst:.2e}")
        if worst > 1e-6:
            sys.exit(f"{name}: the reference's gradients disagree with finite differences")


def write_case(out_dir, index, name, vr, detach, surrogate, rng):
    step, second, params0 = NEURONS[name]
    sname, alpha = surrogate
    fire = lambda u: Heaviside.apply(u, sname, alpha)  # noqa: E731
    x = torch.tensor(rng.uniform(0.0, 2.2, SHAPE), requires_grad=True)
    v0 = torch.tensor(rng.uniform(-0.2, 0.8, SHAPE[1:]), requires_grad=True)
    s0 = torch.tensor(rng.uniform(0.0, 0.5, SHAPE[1:]), requires_grad=True)
    params = {k: torch.tensor(v, requires_grad=True) for k, v in params0.items()}
    grads = {k: torch.tensor(rng.standard_normal(SHAPE)) for k in ("spike", "v", "second")}
    out = simulate(step, x, v0, s0, params, 1.0, vr, detach, fire)
    loss(out, grads).backward()
    theta = (1.0 + params0["beta"] * torch.cat([s0[None], out["second"][:-1]]).detach()
             if name == "alif" else torch.ones(()))
    margin = (out["h_seq"].detach() - theta).abs().min().item()
    folder = os.path.join(out_dir, f"{index:03d}_{name}_{sname}")
    os.makedirs(folder, exist_ok=True)
    arrays = {"x": x, "v_init": v0, f"{second}_init": s0, "grad_spike": grads["spike"],
              "grad_v_seq": grads["v"], f"grad_{second}_seq": grads["second"],
              "spike": out["spike"], "v_seq": out["v_seq"], "h_seq": out["h_seq"],
              f"{second}_seq": out["second"], "grad_x": x.grad, "grad_v_init": v0.grad,
              f"grad_{second}_init": s0.grad}
    if name == "alif":  # the adaptive threshold each step fired against
        arrays["theta"] = theta * torch.ones(SHAPE)
    for key, value in arrays.items():
        np.save(os.path.join(folder, key + ".npy"), value.detach().numpy())
    case = {"name": os.path.basename(folder), "neuron": name, "params": params0,
            "param_grads": {k: p.grad.item() for k, p in params.items()},
            "v_threshold": 1.0, "v_reset": vr, "detach_reset": detach,
            "surrogate": {"name": sname, "params": {"alpha": alpha}}, "shape": list(SHAPE),
            "spike_rate": out["spike"].mean().item(), "min_abs_h_minus_vth": margin}
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump(case, f, indent=1, sort_keys=True)
    print(f"{case['name']}: v_reset {vr}, detach {detach}, spike rate {case['spike_rate']:.3f}, "
          f"min |h - theta| {margin:.2e}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    rng = np.random.default_rng(20261128)
    for name in NEURONS:
        check_by_differences(name, rng)
    index = 0
    for name in NEURONS:
        for vr, detach, surrogate in ((0.0, False, ("sigmoid", 4.0)), (None, False, ("sigmoid", 4.0)),
                                      (0.0, True, ("sigmoid", 4.0)), (None, True, ("atan", 2.0)),
                                      (-0.1, False, ("atan", 2.0))):
            write_case(out_dir, index, name, vr, detach, surrogate, rng)
            index += 1


if __name__ == "__main__":
    main()
