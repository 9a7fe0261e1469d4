"""Surrogate gradients: SpikingJelly's 13, by its class names and defaults.

A neuron fires with the Heaviside step; backward uses the surrogate's
derivative g'(h - v_threshold). nerve compiles the derivative into its
backward kernel (docs/neuron.md lists the formulas), so a surrogate here is a
description, not code: `SurrogateSpec` is what nerve needs. A neuron also
accepts SpikingJelly's own surrogate objects, recognised by class name and
parameters without importing SpikingJelly.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

__all__ = [
    "ATan", "Erf", "FakeNumericalGradient", "LeakyKReLU", "LogTailedReLU", "PiecewiseExp",
    "PiecewiseLeakyReLU", "PiecewiseQuadratic", "QPseudoSpike", "S2NN", "Sigmoid", "SoftSign",
    "SuperSpike", "SurrogateFunction", "resolve",
]

# SpikingJelly's class name -> (nerve's name, parameters in order with defaults).
_KNOWN: Dict[str, Tuple[str, Tuple[Tuple[str, float], ...]]] = {
    "Sigmoid": ("sigmoid", (("alpha", 4.0),)),
    "ATan": ("atan", (("alpha", 2.0),)),
    "PiecewiseLeakyReLU": ("piecewise_leaky_relu", (("w", 1.0), ("c", 0.01))),
    "S2NN": ("s2nn", (("alpha", 4.0), ("beta", 1.0))),
    "QPseudoSpike": ("q_pseudo_spike", (("alpha", 2.0),)),
    "LeakyKReLU": ("leaky_k_relu", (("leak", 0.0), ("k", 1.0))),
    "FakeNumericalGradient": ("fake_numerical_gradient", (("alpha", 0.3),)),
    "LogTailedReLU": ("log_tailed_relu", (("alpha", 0.0),)),
    "PiecewiseQuadratic": ("piecewise_quadratic", (("alpha", 1.0),)),
    "PiecewiseExp": ("piecewise_exp", (("alpha", 1.0),)),
    "SoftSign": ("soft_sign", (("alpha", 2.0),)),
    "SuperSpike": ("super_spike", (("alpha", 1.0),)),
    "Erf": ("erf", (("alpha", 2.0),)),
}

# A resolved surrogate: nerve's name and its parameters, in order.
SurrogateSpec = Tuple[str, Tuple[Tuple[str, float], ...]]


class SurrogateFunction:
    """Base of nerve's surrogates: a name and parameters."""

    def __init__(self, **params: float):
        name, defaults = _KNOWN[type(self).__name__]
        unknown = set(params) - {p for p, _ in defaults}
        if unknown:
            raise TypeError(f"{type(self).__name__} has no parameter "
                            f"{', '.join(sorted(unknown))}")
        values = []
        for param, default in defaults:
            value = params.get(param, default)
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise TypeError(f"{type(self).__name__}: {param} must be a number, not "
                                f"{type(value).__name__}") from None
            values.append((param, value))
        self.spec: SurrogateSpec = (name, tuple(values))
        self.spiking = True

    def __getattr__(self, name: str) -> float:
        for param, value in self.__dict__.get("spec", ("", ()))[1]:
            if param == name:
                return value
        raise AttributeError(name)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, SurrogateFunction) and self.spec == other.spec

    def __hash__(self) -> int:
        return hash(self.spec)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v}' for k, v in self.spec[1])})"


def _surrogate_class(class_name: str) -> type:
    defaults = _KNOWN[class_name][1]
    signature = ", ".join(f"{p}={d}" for p, d in defaults)
    doc = f"SpikingJelly's {class_name}({signature}): nerve's `{_KNOWN[class_name][0]}`."

    def __init__(self: SurrogateFunction, *args: float, **kwargs: float) -> None:
        if len(args) > len(defaults):
            raise TypeError(f"{class_name} takes at most {len(defaults)} parameters")
        for (param, _), value in zip(defaults, args):
            if param in kwargs:
                raise TypeError(f"{class_name}: {param} was given twice")
            kwargs[param] = value
        if not kwargs.pop("spiking", True):
            _not_spiking(class_name)
        SurrogateFunction.__init__(self, **kwargs)

    return type(class_name, (SurrogateFunction,), {"__init__": __init__, "__doc__": doc})


def _not_spiking(class_name: str) -> None:
    raise ValueError(f"{class_name}(spiking=False) is not a spiking function: nerve's neurons "
                     f"fire with the Heaviside step and use the surrogate only for gradients")


Sigmoid = _surrogate_class("Sigmoid")
ATan = _surrogate_class("ATan")
PiecewiseLeakyReLU = _surrogate_class("PiecewiseLeakyReLU")
S2NN = _surrogate_class("S2NN")
QPseudoSpike = _surrogate_class("QPseudoSpike")
LeakyKReLU = _surrogate_class("LeakyKReLU")
FakeNumericalGradient = _surrogate_class("FakeNumericalGradient")
LogTailedReLU = _surrogate_class("LogTailedReLU")
PiecewiseQuadratic = _surrogate_class("PiecewiseQuadratic")
PiecewiseExp = _surrogate_class("PiecewiseExp")
SoftSign = _surrogate_class("SoftSign")
SuperSpike = _surrogate_class("SuperSpike")
Erf = _surrogate_class("Erf")


def resolve(surrogate: Any) -> SurrogateSpec:
    """nerve's description of a surrogate: one of this module's objects, or
    a SpikingJelly surrogate object (by class name and parameters). Anything
    else is a TypeError that says which surrogates nerve knows."""
    if isinstance(surrogate, SurrogateFunction):
        return surrogate.spec
    if surrogate is None:
        raise TypeError("surrogate_function is None: give one of nerve.torch.surrogate's "
                        "(or SpikingJelly's) surrogates, e.g. Sigmoid()")
    class_name = type(surrogate).__name__
    known = _KNOWN.get(class_name)
    if known is None:
        raise TypeError(f"surrogate_function {class_name} is not one nerve knows; it knows "
                        f"{', '.join(_KNOWN)} (nerve.torch.surrogate or SpikingJelly's)")
    if not getattr(surrogate, "spiking", True):
        _not_spiking(class_name)
    name, defaults = known
    params = getattr(surrogate, "_sg_params", None)
    values = []
    for param, default in defaults:
        value = params.get(param, default) if isinstance(params, dict) else getattr(
            surrogate, param, default)
        try:
            values.append((param, float(value)))
        except (TypeError, ValueError):
            raise TypeError(f"surrogate_function {class_name}: {param} must be a number, not "
                            f"{type(value).__name__}") from None
    return name, tuple(values)
