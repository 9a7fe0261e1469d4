"""A neuron model's definition and what nerve says about it: its spec text
(the C API's nerveNeuronModelSpec, nerveBuiltinNeuronDef) and what its
backward reads (nerveNeuronModelSaves). Plain data, cached per model."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping, Optional, Sequence, Tuple, Union

from .. import _capi
from .._capi import StringRef, lib
from . import _specs
from .neuron_kernel import _number
from .surrogate import Sigmoid, SurrogateSpec

def _pairs(values: Union[Mapping[str, float], Iterable[Tuple[str, float]]], what: str
           ) -> Tuple[Tuple[str, float], ...]:
    items = values.items() if isinstance(values, Mapping) else values
    return tuple((str(k), _number(f"{what} {k}", v)) for k, v in items)


def _named(text: str) -> Tuple[Tuple[str, float], ...]:
    out = []
    for item in filter(None, (i.strip() for i in text.split(","))):
        name, _, value = item.partition("=")
        out.append((name.strip(), float(value)))
    return tuple(out)


@dataclass(frozen=True)
class NeuronModel:
    """A neuron's definition (see the module's docstring). Plain data: two
    equal models compile to the same kernels."""
    states: Tuple[Tuple[str, float], ...]
    params: Tuple[Tuple[str, float], ...]
    charge: str
    threshold: str = "1.0"
    resets: Tuple[str, ...] = ()
    inputs: Tuple[str, ...] = ("x",)

    @staticmethod
    def define(states: Mapping[str, float], charge: str,
               params: Mapping[str, float] = None, threshold: Union[str, float] = 1.0,
               resets: Sequence[str] = (), inputs: Sequence[str] = ("x",)) -> "NeuronModel":
        """A model from Python: `states` and their initial values (the first
        fires), `params` and their values, `charge` statements run in order
        (each state's charged value is its name's value after them),
        `threshold` a number or an expression of the states before the step
        and the parameters, `resets` like "v = hard 0.0", "v = soft",
        "w = add b". Checked (and compiled once) at its first use; `spec`
        checks it now."""
        model = NeuronModel(_pairs(states, "state"), _pairs(params or {}, "parameter"),
                            str(charge), str(threshold), tuple(str(r) for r in resets),
                            tuple(str(i) for i in inputs))
        if not model.states:
            raise ValueError("a neuron model needs at least one state, its potential")
        return model

    @staticmethod
    def builtin(kind: str, params: Mapping[str, float] = None, v_threshold: float = 1.0,
                v_reset: Optional[float] = 0.0) -> "NeuronModel":
        """A built-in neuron (qif, eif, izhikevich, alif, adex) with
        `params` overriding its defaults: the definition nerve's C++ API
        gives, compiled like any other."""
        text = ", ".join(f"{k} = {_number(k, v)!r}" for k, v in (params or {}).items())
        hard = v_reset is not None
        definition = _capi.with_string(lambda cb, user: lib.nerveBuiltinNeuronDef(
            StringRef.of(kind), StringRef.of(text), _number("v_threshold", v_threshold), hard,
            _number("v_reset", v_reset) if hard else 0.0, cb, user))
        fields = dict(line.split(": ", 1) if ": " in line else (line.rstrip(":"), "")
                      for line in definition.splitlines())
        return NeuronModel(_named(fields["states"]), _named(fields["params"]),
                           fields["charge"], fields["threshold"],
                           tuple(r.strip() for r in fields["resets"].split(",") if r.strip()),
                           tuple(i.strip() for i in fields["inputs"].split(",") if i.strip()))

    def with_states(self, **initial: float) -> "NeuronModel":
        """The model with other initial values for some states."""
        known = dict(self.states)
        for name in initial:
            if name not in known:
                raise ValueError(f"the model has no state {name!r} (its states: "
                                 f"{', '.join(known)})")
        return NeuronModel(tuple((n, float(initial.get(n, v))) for n, v in self.states),
                           self.params, self.charge, self.threshold, self.resets, self.inputs)

    @property
    def state_names(self) -> Tuple[str, ...]:
        return tuple(n for n, _ in self.states)

    @property
    def param_names(self) -> Tuple[str, ...]:
        return tuple(n for n, _ in self.params)

    def spec(self, compute: str = "f32") -> str:
        """The `neuron.model @model` spec text computing in `compute`."""
        return _model_spec(self, compute)

    def saves(self, grad_inputs: Sequence[str] = ("x",), grad_params: Sequence[str] = (),
              surrogate: SurrogateSpec = Sigmoid().spec, detach_reset: bool = False,
              detach_threshold: bool = False, compute: str = "f32"
              ) -> Tuple[Tuple[str, ...], Tuple[str, ...], Tuple[str, ...]]:
        """What backward reads for these gradients, as nerve plans it: the
        states whose charged values (h_seq) and sequences (seq) forward must
        save, and the inputs backward reads."""
        return _saves(self, compute, tuple(grad_inputs), tuple(grad_params), surrogate,
                      bool(detach_reset), bool(detach_threshold))


@lru_cache(maxsize=None)
def _model_spec(model: NeuronModel, compute: str) -> str:
    def joined(pairs):
        return ", ".join(f"{k} = {v!r}" for k, v in pairs)
    return _capi.with_string(lambda cb, user: lib.nerveNeuronModelSpec(
        StringRef.of("model"), StringRef.of(compute), StringRef.of(joined(model.states)),
        StringRef.of(", ".join(model.inputs)), StringRef.of(joined(model.params)),
        StringRef.of(model.charge), StringRef.of(model.threshold),
        StringRef.of(", ".join(model.resets)), cb, user))


def _surrogate_attr(surrogate: SurrogateSpec) -> str:
    name, params = surrogate
    spelled = "".join(f", {p} = {_specs.float_literal(v)}" for p, v in params)
    return f"#neuron.surrogate<{name}{spelled}>"


@lru_cache(maxsize=None)
def _saves(model: NeuronModel, compute: str, grad_inputs: Tuple[str, ...],
           grad_params: Tuple[str, ...], surrogate: SurrogateSpec, detach_reset: bool,
           detach_threshold: bool) -> Tuple[Tuple[str, ...], Tuple[str, ...], Tuple[str, ...]]:
    text = _capi.with_string(lambda cb, user: lib.nerveNeuronModelSaves(
        StringRef.of(_model_spec(model, compute)), StringRef.of("model"),
        StringRef.of(", ".join(grad_inputs)), StringRef.of(", ".join(grad_params)),
        StringRef.of(_surrogate_attr(surrogate)), detach_reset, detach_threshold, cb, user))
    lines = dict(line.split(":", 1) for line in text.splitlines())
    return tuple(tuple(n.strip() for n in lines[k].split(",") if n.strip())
                 for k in ("h_seq", "seq", "ins"))



@lru_cache(maxsize=None)
def _model_json(model: NeuronModel) -> str:
    """The model as a string (what the modules keep, for torch.compile)."""
    return json.dumps([[list(p) for p in model.states], [list(p) for p in model.params],
                       model.charge, model.threshold, list(model.resets), list(model.inputs)])
