#!/usr/bin/env python3
"""Checks nerve-run's outputs against references computed here in float64.

usage: check.py DIR 'y = expr' ['z = expr' ...] [--rtol R] [--atol A]

DIR holds what `nerve-run --save-inputs` wrote: entry.json (the kernel's
signature) and one NAME.npy per argument. Each assignment computes the
expected value of an output from the inputs. Arrays are *named*: they carry
their dimension names, operators broadcast by name like tdim.map does, and
the helpers reduce over names:

    sum(x, 'c')  amax(x, 'c')  amin(x, 'c')  mean(x, 'c')  argmax(x, 'c')
    softmax(x, 'c')  log_softmax(x, 'c')  layer_norm(x, ['c'], w, b, eps)
    contract(a, b, keep=['i', 'j'])  concat([a, b], 'c')  where(cond, a, b)
    exp log log1p sqrt tanh abs sigmoid softplus erf maximum minimum clip

so a reference reads like the op it checks. An assignment to a name that is
not an output binds a helper for the ones after it; for neurons:

    sim = simulate(x, 't', charge=lambda v, x: v + (x - v) / 2, v_th=1, v_reset=0)
    spike = sim.spike
    grads = bptt(sim, gS=grad_spike, gV=None, surrogate=('sigmoid', 4.0))
    grad_x = grads.grad_x

With `params=(w,)` the charge function takes them after x, and
`grads.grad_params` holds each one's gradient (summed over every neuron).
`bptt` differentiates the charge function numerically (central differences
in float64), independently of nerve's own differentiation. The tolerance
follows the output's element type unless given. Exits 1 with a line per
mismatch.
"""
import json
import math
import os
import sys

import numpy as np

TOLERANCE = {"f64": (1e-10, 1e-12), "f32": (2e-5, 2e-6), "f16": (4e-3, 4e-3),
             "bf16": (3e-2, 3e-2), "i1": (0, 0), "i8": (0, 0), "i32": (0, 0),
             "i64": (0, 0), "index": (0, 0)}


class Named:
    """An array whose axes have names."""

    def __init__(self, data, dims):
        self.data = np.asarray(data)
        self.dims = tuple(dims)
        assert self.data.ndim == len(self.dims), (self.data.shape, dims)

    def aligned(self, dims):
        """The data broadcast-ready for the dimension order `dims`."""
        order = [self.dims.index(d) for d in dims if d in self.dims]
        data = np.transpose(self.data, order)
        shape = [self.data.shape[self.dims.index(d)] if d in self.dims else 1 for d in dims]
        return data.reshape(shape)

    def _binary(self, other, fn):
        other = other if isinstance(other, Named) else Named(np.asarray(other), ())
        dims = list(self.dims) + [d for d in other.dims if d not in self.dims]
        return Named(fn(self.aligned(dims), other.aligned(dims)), dims)

    def _rbinary(self, other, fn):
        return Named(np.asarray(other), ())._binary(self, fn)

    __add__ = lambda s, o: s._binary(o, np.add)
    __radd__ = lambda s, o: s._rbinary(o, np.add)
    __sub__ = lambda s, o: s._binary(o, np.subtract)
    __rsub__ = lambda s, o: s._rbinary(o, np.subtract)
    __mul__ = lambda s, o: s._binary(o, np.multiply)
    __rmul__ = lambda s, o: s._rbinary(o, np.multiply)
    __truediv__ = lambda s, o: s._binary(o, np.divide)
    __rtruediv__ = lambda s, o: s._rbinary(o, np.divide)
    __pow__ = lambda s, o: s._binary(o, np.power)
    __gt__ = lambda s, o: s._binary(o, np.greater)
    __ge__ = lambda s, o: s._binary(o, np.greater_equal)
    __lt__ = lambda s, o: s._binary(o, np.less)
    __le__ = lambda s, o: s._binary(o, np.less_equal)
    __neg__ = lambda s: Named(-s.data, s.dims)


def _unary(fn):
    return lambda x: Named(fn(x.data), x.dims) if isinstance(x, Named) else fn(x)


def _axes(x, over):
    over = [over] if isinstance(over, str) else list(over)
    return tuple(x.dims.index(d) for d in over), [d for d in x.dims if d not in over]


def _reduce(fn):
    def reduce(x, over):
        axes, kept = _axes(x, over)
        return Named(fn(x.data, axis=axes), kept)
    return reduce


def argmax(x, over):
    axis = x.dims.index(over)
    return Named(np.argmax(x.data, axis=axis), [d for d in x.dims if d != over])


def softmax(x, over):
    m = amax(x, over)
    e = exp(x - m)
    return e / sum(e, over)


def log_softmax(x, over):
    m = amax(x, over)
    return x - m - log(sum(exp(x - m), over))


def layer_norm(x, over, w=None, b=None, eps=1e-5):
    mu = mean(x, over)
    var = mean((x - mu) * (x - mu), over)
    y = (x - mu) / sqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def contract(a, b, keep):
    letters = {d: chr(ord("a") + i) for i, d in enumerate(dict.fromkeys(a.dims + b.dims))}
    spec = "".join(letters[d] for d in a.dims) + "," + "".join(letters[d] for d in b.dims) + \
        "->" + "".join(letters[d] for d in keep)
    return Named(np.einsum(spec, a.data, b.data), keep)


def concat(parts, along):
    dims = parts[0].dims
    return Named(np.concatenate([p.aligned(dims) for p in parts], axis=dims.index(along)), dims)


def where(cond, a, b):
    dims = list(dict.fromkeys(cond.dims + getattr(a, "dims", ()) + getattr(b, "dims", ())))
    al = lambda v: v.aligned(dims) if isinstance(v, Named) else v
    return Named(np.where(al(cond), al(a), al(b)), dims)


def _binary_fn(fn):
    def apply(a, b):
        if isinstance(a, Named):
            return a._binary(b, fn)
        return Named(np.asarray(a), ())._binary(b, fn)
    return apply


exp, log, sqrt, tanh, abs_ = (_unary(np.exp), _unary(np.log), _unary(np.sqrt),
                              _unary(np.tanh), _unary(np.abs))
sigmoid = _unary(lambda v: 1 / (1 + np.exp(-v)))
softplus = _unary(lambda v: np.maximum(v, 0) + np.log1p(np.exp(-np.abs(v))))
erf = _unary(np.vectorize(math.erf))
log1p = _unary(np.log1p)
sum, amax, amin, mean = (_reduce(np.sum), _reduce(np.max), _reduce(np.min), _reduce(np.mean))
maximum, minimum = _binary_fn(np.maximum), _binary_fn(np.minimum)


def clip(x, lo, hi):
    return Named(np.clip(x.data, lo, hi), x.dims)


SURROGATES = {
    "sigmoid": lambda u, a: a * (1 / (1 + np.exp(-a * u))) * (1 - 1 / (1 + np.exp(-a * u))),
    "atan": lambda u, a: (a / 2) / (1 + (np.pi / 2 * a * u) ** 2),
    "piecewise_exp": lambda u, a: (a / 2) * np.exp(-a * np.abs(u)),
    "erf": lambda u, a: (a / np.sqrt(np.pi)) * np.exp(-(a * u) ** 2),
}


class _Record:
    pass


def simulate(x, time, charge, v_th=1.0, v_reset=None, v0=None, params=()):
    """Forward of a neuron over the time dimension of x (float64)."""
    dims = (time,) + tuple(d for d in x.dims if d != time)
    xs = x.aligned(dims)
    params = tuple(float(p.data) if isinstance(p, Named) else p for p in params)
    v = np.full(xs.shape[1:], 0.0 if v_reset is None else v_reset) if v0 is None \
        else v0.aligned(dims[1:]).astype(np.float64).copy()
    r = _Record()
    r.x, r.dims, r.charge, r.v_th, r.v_reset, r.params = xs, dims, charge, v_th, v_reset, params
    r.v0 = v.copy()
    hs, ss, vs = [], [], []
    for t in range(xs.shape[0]):
        h = charge(v, xs[t], *params)
        s = (h - v_th >= 0).astype(np.float64)
        v = np.where(s > 0, v_reset, h) if v_reset is not None else h - v_th * s
        hs.append(h), ss.append(s), vs.append(v)
    r.h, r.spike, r.v = (Named(np.stack(a), dims) for a in (hs, ss, vs))
    r.v_last = Named(v, dims[1:])
    return r


def bptt(sim, gS=None, gV=None, surrogate=("sigmoid", 4.0), detach=False, eps=1e-6):
    """Backward through time with the surrogate; the charge function's
    derivatives come from central differences."""
    name, alpha = surrogate
    psi_fn = SURROGATES[name]
    h = sim.h.aligned(sim.dims)
    steps = h.shape[0]
    gs = np.zeros_like(h) if gS is None else gS.aligned(sim.dims)
    gv = np.zeros_like(h) if gV is None else gV.aligned(sim.dims)
    v_prev = [sim.v0] + [sim.v.aligned(sim.dims)[t] for t in range(steps - 1)]
    f = sim.charge
    kappa = [(f(vp + eps, x, *sim.params) - f(vp - eps, x, *sim.params)) / (2 * eps)
             for vp, x in zip(v_prev, sim.x)]
    beta = [(f(vp, x + eps, *sim.params) - f(vp, x - eps, *sim.params)) / (2 * eps)
            for vp, x in zip(v_prev, sim.x)]
    # dh/dp for each parameter p (scalars): a parameter's gradient sums
    # g * dh/dp over every step and neuron.
    dparams = []
    for k, p in enumerate(sim.params):
        def at(delta, vp, x):
            shifted = list(sim.params)
            shifted[k] = p + delta
            return f(vp, x, *shifted)
        dparams.append([(at(eps, vp, x) - at(-eps, vp, x)) / (2 * eps)
                        for vp, x in zip(v_prev, sim.x)])
    grad_params = [0.0] * len(sim.params)
    grad_x = np.zeros_like(h)
    carry = np.zeros_like(h[0])
    for t in reversed(range(steps)):
        u = h[t] - sim.v_th
        s = (u >= 0).astype(np.float64)
        psi = psi_fn(u, alpha)
        if sim.v_reset is not None:
            a = 1 - s if detach else (1 - s) + (sim.v_reset - h[t]) * psi
        else:
            a = np.ones_like(u) if detach else 1 - sim.v_th * psi
        g = (gv[t] + carry) * a + gs[t] * psi
        grad_x[t] = beta[t] * g
        carry = kappa[t] * g
        for k in range(len(grad_params)):
            grad_params[k] += float(np.sum(g * dparams[k][t]))
    r = _Record()
    r.grad_x = Named(grad_x, sim.dims)
    r.grad_params = grad_params
    r.grad_v_init = Named(carry, sim.dims[1:])
    return r


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) for a in argv if a.startswith("--"))
    directory, assignments = args[0], args[1:]
    with open(os.path.join(directory, "entry.json")) as f:
        entry = json.load(f)
    env = {k: v for k, v in globals().items() if not k.startswith("_")}
    env["abs"] = abs_
    outputs = {}
    for arg in entry["args"]:
        data = np.load(os.path.join(directory, arg["name"] + ".npy")).astype(np.float64)
        value = Named(data, arg["dims"]) if arg["tensor"] else float(data)
        (outputs if arg["output"] else env)[arg["name"]] = (value, arg)
    env.update({k: v[0] for k, v in env.items() if isinstance(v, tuple)})
    failures = 0
    for assignment in assignments:
        name, expr = (s.strip() for s in assignment.split("=", 1))
        if name not in outputs:
            env[name] = eval(expr, env)
            continue
        actual, arg = outputs[name]
        expected = eval(expr, env)
        expected = expected if isinstance(expected, Named) else Named(expected, ())
        if set(expected.dims) - set(actual.dims):
            print(f"{name}: reference has dims {expected.dims}, output {actual.dims}")
            failures += 1
            continue
        want = np.broadcast_to(expected.aligned(actual.dims), actual.data.shape)
        rtol, atol = TOLERANCE[arg["dtype"]]
        rtol, atol = float(opts.get("rtol", rtol)), float(opts.get("atol", atol))
        bad = ~np.isclose(actual.data, want, rtol=rtol, atol=atol, equal_nan=True)
        err = np.abs(actual.data - want)
        worst = float(np.nanmax(err)) if err.size else 0.0
        if bad.any():
            idx = np.argwhere(bad)[0]
            print(f"{name}: {int(bad.sum())} of {bad.size} elements differ; first at "
                  f"{tuple(int(i) for i in idx)}: got {actual.data[tuple(idx)]!r}, "
                  f"want {want[tuple(idx)]!r} (worst |error| {worst:.3g})")
            failures += 1
        else:
            print(f"{name}: ok ({actual.data.size} elements, worst |error| {worst:.3g})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
