"""Any neuron, written once: multi-state models in PyTorch.

A `NeuronModel` is a neuron's definition — its states (the first fires),
parameters, a charge written as statements in the builders' expression
language, a threshold and per-state resets — from which nerve compiles the
forward kernel and derives the backward one (docs/neuron.md, "Neuron
models"). `multistep_model` runs one over a sequence with autograd;
`NeuronNode` is its module, with learnable parameters as `nn.Parameter`s;
`QIFNode`, `EIFNode` and `IzhikevichNode` take SpikingJelly's constructor
arguments, `ALIFNode` and `AdExNode` nerve's built-in definitions:

    model = NeuronModel.define(
        states={"v": 0.0, "a": 0.0}, params={"tau": 2.0, "beta": 1.8, "rho": 0.95},
        charge="v = v + (x - v) / tau; a = rho * a",
        threshold="1 + beta * a", resets=["v = soft", "a = add 1"])
    layer = NeuronNode(model, learnable=["tau"], step_mode="m")

Forward saves for backward exactly what nerve's planner says its backward
reads (`NeuronModel.saves`): for Izhikevich without parameter gradients,
the charged potential alone.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

import torch
from torch import nn

from ._model_def import NeuronModel, _model_json
from ._model_ops import _apply, _call_key
from ._ops import _is_compiling
from .neuron import StepModes
from .neuron_kernel import _number, check_sequence
from .surrogate import Sigmoid, resolve

__all__ = ["NeuronModel", "multistep_model", "NeuronNode", "QIFNode", "EIFNode",
           "IzhikevichNode", "ALIFNode", "AdExNode"]

Tensor = torch.Tensor
_FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


def multistep_model(model: NeuronModel, x_seq: Tensor,
                    init: Optional[Mapping[str, Tensor]] = None,
                    params: Optional[Mapping[str, Tensor]] = None,
                    surrogate_function: Any = None, detach_reset: bool = False,
                    detach_threshold: bool = False, store_seq: bool = False, *,
                    time_dim: int = 0) -> Tuple[Tensor, Dict[str, Tensor]]:
    """Runs `model` over `x_seq` (time at `time_dim`): returns the spikes and,
    per state, its last value (its whole sequence with `store_seq`).
    `init` gives initial-state tensors (the others start from the model's
    values); `params` binds parameters to tensors (one element, or one per
    neuron: x_seq's shape without time), which receive gradients."""
    return _multistep(model, _model_json(model), x_seq, init, params, surrogate_function,
                      detach_reset, detach_threshold, store_seq, time_dim)


def _multistep(model: NeuronModel, model_json: str, x_seq: Tensor,
               init: Optional[Mapping[str, Tensor]], params: Optional[Mapping[str, Tensor]],
               surrogate_function: Any, detach_reset: bool, detach_threshold: bool,
               store_seq: bool, time_dim: int) -> Tuple[Tensor, Dict[str, Tensor]]:
    td = check_sequence(x_seq, time_dim)
    init, params = dict(init or {}), dict(params or {})
    states = model.state_names
    state_shape = x_seq.shape[:td] + x_seq.shape[td + 1:]
    for name, t in init.items():
        if name not in states:
            raise ValueError(f"init: the model has no state {name!r} (its states: "
                             f"{', '.join(states)})")
        if not isinstance(t, torch.Tensor) or t.shape != state_shape:
            raise ValueError(f"init[{name!r}] must be a tensor of shape {list(state_shape)}")
        if t.dtype != x_seq.dtype or t.device != x_seq.device:
            raise ValueError(f"init[{name!r}] must have x_seq's dtype and device "
                             f"({x_seq.dtype}, {x_seq.device}), not ({t.dtype}, {t.device})")
    compute = torch.float64 if x_seq.dtype == torch.float64 else torch.float32
    bound = {}
    for name, t in params.items():
        if name not in model.param_names:
            raise ValueError(f"params: the model has no parameter {name!r} (its parameters: "
                             f"{', '.join(model.param_names) or 'none'})")
        if not isinstance(t, torch.Tensor) or t.dtype not in _FLOATS:
            raise TypeError(f"params[{name!r}] must be a float tensor")
        if t.device != x_seq.device:
            raise ValueError(f"params[{name!r}] is on {t.device} but x_seq is on "
                             f"{x_seq.device}")
        if t.numel() == 1:
            t = t.reshape(())
        elif t.shape != state_shape:
            raise ValueError(f"params[{name!r}] must have one element or x_seq's shape without "
                             f"time ({list(state_shape)}), not {list(t.shape)}")
        # Parameters are read in the type the model computes in.
        bound[name] = t if t.dtype == compute else t.to(compute)
    surrogate = resolve(Sigmoid() if surrogate_function is None else surrogate_function)
    tensor_params = tuple(p for p in model.param_names if p in bound)
    key = _call_key(model_json, surrogate, bool(detach_reset), bool(detach_threshold),
                    tensor_params, td)
    outputs = _apply(key, len(states), x_seq, [init.get(s) for s in states],
                     [bound[p] for p in tensor_params], bool(store_seq))
    return outputs[0], dict(zip(states, outputs[1:]))


# --------------------------------------------------------------------------
# Modules
# --------------------------------------------------------------------------

class NeuronNode(StepModes, nn.Module):
    """A layer of `model`'s neurons, SpikingJelly-style: the states persist
    between calls (attributes named after them, floats until the first
    call), `reset()` restores them, ``step_mode`` 's' or 'm'. Parameters
    named in `learnable` are `nn.Parameter`s (initialised from the model's
    values) with gradients; the others are compiled in."""

    def __init__(self, model: NeuronModel, learnable: Sequence[str] = (),
                 surrogate_function: Any = None, detach_reset: bool = False,
                 detach_threshold: bool = False, step_mode: str = "s",
                 backend: str = "nerve", store_v_seq: bool = False, time_dim: int = 0):
        super().__init__()
        if step_mode not in ("s", "m"):
            raise ValueError(f"step_mode must be 's' (one step) or 'm' (a sequence), not "
                             f"{step_mode!r}")
        self.model = model
        self._model_json = _model_json(model)
        values = dict(model.params)
        for name in learnable:
            if name not in values:
                raise ValueError(f"learnable: the model has no parameter {name!r} (its "
                                 f"parameters: {', '.join(values) or 'none'})")
        self.learnable = tuple(learnable)
        for name in self.learnable:
            setattr(self, name, nn.Parameter(torch.tensor(values[name])))
        self.surrogate_function = Sigmoid() if surrogate_function is None else surrogate_function
        resolve(self.surrogate_function)
        self.detach_reset = bool(detach_reset)
        self.detach_threshold = bool(detach_threshold)
        self.step_mode = step_mode
        self.backend = backend
        self.store_v_seq = bool(store_v_seq)
        self.time_dim = int(time_dim)
        self.v_seq: Optional[Tensor] = None
        self.reset()

    def reset(self) -> None:
        for name, value in self.model.states:
            self.__dict__[name] = value
        self.__dict__["v_seq"] = None

    def detach(self) -> None:
        for name in self.model.state_names:
            value = self.__dict__.get(name)
            if isinstance(value, torch.Tensor):
                self.__dict__[name] = value.detach()

    def _set(self, name: str, value: Any) -> None:
        """A state (a plain attribute, never a parameter or buffer), past
        nn.Module.__setattr__'s checks in eager mode; torch.compile traces
        the plain assignment."""
        if _is_compiling():
            setattr(self, name, value)
        else:
            self.__dict__[name] = value

    def _inits(self, x_seq: Tensor, td: int) -> Dict[str, Tensor]:
        shape = x_seq.shape[:td] + x_seq.shape[td + 1:]
        inits = {}
        for name, rest in self.model.states:
            value = getattr(self, name)
            if isinstance(value, torch.Tensor) and value.shape == shape:
                inits[name] = value.to(dtype=x_seq.dtype, device=x_seq.device)
            elif not isinstance(value, torch.Tensor) and value != rest:
                inits[name] = torch.full(shape, float(value), dtype=x_seq.dtype,
                                         device=x_seq.device)
        return inits

    def multi_step_forward(self, x_seq: Tensor) -> Tensor:
        td = check_sequence(x_seq, self.time_dim)
        params = {name: getattr(self, name) for name in self.learnable}
        spike, states = _multistep(self.model, self._model_json, x_seq,
                                   self._inits(x_seq, td), params, self.surrogate_function,
                                   self.detach_reset, self.detach_threshold, self.store_v_seq,
                                   td)
        for name, value in states.items():
            self._set(name, value.select(td, x_seq.shape[td] - 1) if self.store_v_seq
                      else value)
        if self.store_v_seq:
            self._set("v_seq", states[self.model.state_names[0]])
        return spike

    def extra_repr(self) -> str:
        return (f"states={self.model.state_names}, learnable={self.learnable}, "
                f"detach_reset={self.detach_reset}, step_mode={self.step_mode}")


def _builtin_node(kind: str, params: Dict[str, float], v_threshold: float,
                  v_reset: Optional[float], initial: Optional[Dict[str, float]] = None
                  ) -> NeuronModel:
    model = NeuronModel.builtin(kind, params, v_threshold, v_reset)
    return model.with_states(**initial) if initial else model


class QIFNode(NeuronNode):
    """Quadratic integrate-and-fire, SpikingJelly's QIFNode:
    h = v + (x + a0 (v - v_rest)(v - v_c)) / tau."""

    def __init__(self, tau: float = 2.0, v_c: float = 0.8, a0: float = 1.0,
                 v_threshold: float = 1.0, v_rest: float = 0.0,
                 v_reset: Optional[float] = -0.1, surrogate_function: Any = None,
                 detach_reset: bool = False, step_mode: str = "s", backend: str = "nerve",
                 store_v_seq: bool = False, *, learnable: Sequence[str] = (),
                 time_dim: int = 0):
        model = _builtin_node("qif", {"tau": tau, "v_c": v_c, "a0": a0, "v_rest": v_rest},
                              v_threshold, v_reset)
        super().__init__(model, learnable, surrogate_function, detach_reset, False, step_mode,
                         backend, store_v_seq, time_dim)


class EIFNode(NeuronNode):
    """Exponential integrate-and-fire, SpikingJelly's EIFNode:
    h = v + (x + v_rest - v + delta_T exp((v - theta_rh) / delta_T)) / tau."""

    def __init__(self, tau: float = 2.0, delta_T: float = 1.0, theta_rh: float = 0.8,
                 v_threshold: float = 1.0, v_rest: float = 0.0,
                 v_reset: Optional[float] = -0.1, surrogate_function: Any = None,
                 detach_reset: bool = False, step_mode: str = "s", backend: str = "nerve",
                 store_v_seq: bool = False, *, learnable: Sequence[str] = (),
                 time_dim: int = 0):
        model = _builtin_node("eif", {"tau": tau, "delta_t": delta_T, "theta_rh": theta_rh,
                                      "v_rest": v_rest}, v_threshold, v_reset)
        super().__init__(model, learnable, surrogate_function, detach_reset, False, step_mode,
                         backend, store_v_seq, time_dim)


class IzhikevichNode(NeuronNode):
    """Izhikevich's neuron, SpikingJelly's IzhikevichNode: states v and w,
    h = v + (x + a0 (v - v_rest)(v - v_c) - w) / tau,
    w' = w + (a (h - v_rest) - w) / tau_w + b s."""

    def __init__(self, tau: float = 2.0, v_c: float = 0.8, a0: float = 1.0,
                 v_threshold: float = 1.0, v_reset: Optional[float] = 0.0,
                 v_rest: float = -0.1, w_rest: float = 0.0, tau_w: float = 2.0, a: float = 0.0,
                 b: float = 0.0, surrogate_function: Any = None, detach_reset: bool = False,
                 step_mode: str = "s", backend: str = "nerve", store_v_seq: bool = False, *,
                 learnable: Sequence[str] = (), time_dim: int = 0):
        model = _builtin_node("izhikevich", {"tau": tau, "v_c": v_c, "a0": a0,
                                             "v_rest": v_rest, "tau_w": tau_w, "a": a, "b": b},
                              v_threshold, v_reset, {"w": _number("w_rest", w_rest)})
        super().__init__(model, learnable, surrogate_function, detach_reset, False, step_mode,
                         backend, store_v_seq, time_dim)


class ALIFNode(NeuronNode):
    """Adaptive LIF (Bellec et al. 2018): theta = v_threshold + beta a (a
    before the step), h = v + (x - (v - v_reset)) / tau, a' = exp(-1/tau_a) a + s."""

    def __init__(self, tau: float = 2.0, tau_a: float = 20.0, beta: float = 1.8,
                 v_threshold: float = 1.0, v_reset: Optional[float] = 0.0,
                 surrogate_function: Any = None, detach_reset: bool = False,
                 detach_threshold: bool = False, step_mode: str = "s", backend: str = "nerve",
                 store_v_seq: bool = False, *, learnable: Sequence[str] = (),
                 time_dim: int = 0):
        tau_a = _number("tau_a", tau_a)
        if not tau_a > 0:
            raise ValueError(f"tau_a must be positive, not {tau_a}")
        model = _builtin_node("alif", {"tau": tau, "rho": math.exp(-1.0 / tau_a),
                                       "beta": beta}, v_threshold, v_reset)
        super().__init__(model, learnable, surrogate_function, detach_reset, detach_threshold,
                         step_mode, backend, store_v_seq, time_dim)


class AdExNode(NeuronNode):
    """Adaptive exponential integrate-and-fire (Brette & Gerstner 2005):
    h = v + (x - (v - v_rest) + delta_T exp((v - theta_rh) / delta_T) - w) / tau,
    w' = w + (a (v - v_rest) - w) / tau_w + b s (v before the step)."""

    def __init__(self, tau: float = 2.0, delta_T: float = 1.0, theta_rh: float = 0.8,
                 v_rest: float = 0.0, tau_w: float = 2.0, a: float = 0.5, b: float = 0.1,
                 v_threshold: float = 1.0, v_reset: Optional[float] = 0.0,
                 surrogate_function: Any = None, detach_reset: bool = False,
                 step_mode: str = "s", backend: str = "nerve", store_v_seq: bool = False, *,
                 learnable: Sequence[str] = (), time_dim: int = 0):
        model = _builtin_node("adex", {"tau": tau, "delta_t": delta_T, "theta_rh": theta_rh,
                                       "v_rest": v_rest, "tau_w": tau_w, "a": a, "b": b},
                              v_threshold, v_reset)
        super().__init__(model, learnable, surrogate_function, detach_reset, False, step_mode,
                         backend, store_v_seq, time_dim)
