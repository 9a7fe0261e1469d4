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

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import torch
from torch import nn

from .. import _capi
from .._capi import StringRef, lib
from . import _kernels, _layout, _specs
from ._ops import CUSTOM_OPS, _is_compiling, _stream, _target, _tdim_type
from .neuron import StepModes
from .neuron_kernel import _constant_result, _number, check_sequence
from .surrogate import Sigmoid, SurrogateSpec, resolve

__all__ = ["NeuronModel", "multistep_model", "NeuronNode", "QIFNode", "EIFNode",
           "IzhikevichNode", "ALIFNode", "AdExNode"]

Tensor = torch.Tensor
_FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


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


# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class _Call:
    """Everything that shapes a layer's kernels besides sizes and strides."""
    model: NeuronModel
    surrogate: SurrogateSpec
    detach_reset: bool
    detach_threshold: bool
    tensor_params: Tuple[str, ...]   # parameters bound to tensors, in the model's order
    time_dim: int


def _compute_type(x: Tensor) -> str:
    return "f64" if x.dtype == torch.float64 else "f32"


def _group(keyword: str, entries: Sequence[Tuple[str, str, str]]) -> str:
    """`keyword(name = %arg : type, ...)`, or nothing."""
    if not entries:
        return ""
    return f" {keyword}(" + ", ".join(f"{n} = %{a} : {t}" for n, a, t in entries) + ")"


class _Tensors:
    """A kernel's tensors by argument name, with their layouts and types."""

    def __init__(self, shape: Sequence[int], time_dim: int):
        self.shape, self.time_dim = tuple(shape), time_dim
        self.names: List[str] = []
        self.tensors: List[Tensor] = []
        self.kinds: List[Optional[bool]] = []  # sequence, state, or None (0-d)

    def add(self, name: str, t: Tensor, sequence: Optional[bool]) -> None:
        self.names.append(name)
        self.tensors.append(t)
        self.kinds.append(sequence)

    def layouts(self) -> List[Optional[_layout.TensorLayout]]:
        operands = [None if k is None else _layout.Operand(tuple(t.stride()), k)
                    for t, k in zip(self.tensors, self.kinds)]
        return _layout.plan(self.shape, self.time_dim, operands)

    def types(self, layouts) -> Dict[str, str]:
        out = {}
        for name, t, layout in zip(self.names, self.tensors, layouts):
            dims, unit = layout.pattern() if layout is not None else ((), True)
            out[name] = _specs.tensor_type(dims, unit, _tdim_type(t))
        return out


_launchers: Dict[tuple, _kernels.Launcher] = {}


def _launch(spec: str, entry: str, ins: _Tensors, outs: _Tensors, device_of: Tensor) -> None:
    """Runs kernel `entry` of `spec` on `ins` then `outs` (the argument order)."""
    layouts = ins.layouts() + outs.layouts()
    key = (spec, entry, tuple(layouts), device_of.get_device())
    launcher = _launchers.get(key)
    if launcher is None:
        kernel = _kernels.entry(spec, _target(device_of), entry)
        launcher = _kernels.Launcher(kernel, layouts)
        _launchers[key] = launcher
    pointers = [t.data_ptr() for t in ins.tensors + outs.tensors]
    launcher(pointers, _stream(device_of.get_device()))


def _signature(ins: _Tensors, outs: _Tensors, types: Dict[str, str], entry: str) -> str:
    args = ", ".join(f"%{n}: {types[n]}" for n in ins.names)
    results = ", ".join(f"%{n}: {types[n]}" for n in outs.names)
    return f"tdim.kernel @{entry}({args}) -> ({results}) {{"


def _run_forward(call: _Call, x: Tensor, inits: Dict[str, Tensor], params: Dict[str, Tensor],
                 seq_states: Sequence[str], last_states: Sequence[str],
                 h_states: Sequence[str]) -> Tuple[Tensor, Dict[str, Tensor], Dict[str, Tensor],
                                                   Dict[str, Tensor]]:
    """Spikes, the sequences, last values and charged values asked for."""
    td = call.time_dim
    ins, outs = _Tensors(x.shape, td), _Tensors(x.shape, td)
    ins.add("x", x, True)
    for s in call.model.state_names:
        if s in inits:
            ins.add("init_" + s, inits[s], False)
    for p in call.tensor_params:
        ins.add("p_" + p, params[p], None if params[p].dim() == 0 else False)
    spike = torch.empty_like(x)
    outs.add("spike", spike, True)
    seqs = {s: torch.empty_like(x) for s in seq_states}
    lasts = {s: torch.empty_like(x.select(td, 0)) for s in last_states}
    hs = {s: torch.empty_like(x) for s in h_states}
    for s in seq_states:
        outs.add("seq_" + s, seqs[s], True)
    for s in last_states:
        outs.add("last_" + s, lasts[s], False)
    for s in h_states:
        outs.add("h_" + s, hs[s], True)
    types = ins.types(ins.layouts())
    types.update(outs.types(outs.layouts()))
    group = lambda kw, prefix, names: _group(kw, [(n, prefix + n, types[prefix + n])
                                                  for n in names])
    op = ("  neuron.forward @model ins(x = %x : " + types["x"] + ")" +
          group("init", "init_", [s for s in call.model.state_names if s in inits]) +
          group("params", "p_", call.tensor_params) + f" outs(%spike : {types['spike']})" +
          group("seq", "seq_", seq_states) + group("h_seq", "h_", h_states) +
          group("last", "last_", last_states) + " time t")
    spec = "\n".join([call.model.spec(_compute_type(x)), _signature(ins, outs, types, "forward"),
                      op, "  tdim.return", "}"])
    _launch(spec, "forward", ins, outs, x)
    return spike, seqs, lasts, hs


def _run_backward(call: _Call, saved_h: Dict[str, Tensor], saved_seq: Dict[str, Tensor],
                  x: Optional[Tensor], inits: Dict[str, Tensor], params: Dict[str, Tensor],
                  grad_spike: Optional[Tensor], grad_seq: Dict[str, Tensor], need_x: bool,
                  grad_init_states: Sequence[str], grad_params: Sequence[str]
                  ) -> Tuple[Optional[Tensor], Dict[str, Tensor], Dict[str, Tensor]]:
    ref = next(iter(saved_h.values())) if saved_h else next(iter(saved_seq.values()))
    td = call.time_dim
    names = call.model.state_names
    ins, outs = _Tensors(ref.shape, td), _Tensors(ref.shape, td)
    for s in names:
        if s in saved_h:
            ins.add("h_" + s, saved_h[s], True)
    for s in names:
        if s in saved_seq:
            ins.add("seq_" + s, saved_seq[s], True)
    if x is not None:
        ins.add("x", x, True)
    for s in names:
        if s in inits:
            ins.add("init_" + s, inits[s], False)
    for p in call.tensor_params:
        ins.add("p_" + p, params[p], None if params[p].dim() == 0 else False)
    if grad_spike is not None:
        ins.add("grad_spike", grad_spike, True)
    for s in names:
        if s in grad_seq:
            ins.add("gseq_" + s, grad_seq[s], True)
    grad_x = torch.empty_like(ref) if need_x else None
    if grad_x is not None:
        outs.add("grad_x", grad_x, True)
    grad_inits = {s: (torch.empty_like(inits[s]) if s in inits else
                      torch.empty_like(ref.select(td, 0))) for s in grad_init_states}
    for s in grad_init_states:
        outs.add("ginit_" + s, grad_inits[s], False)
    grads = {p: torch.empty_like(params[p]) for p in grad_params}
    for p in grad_params:
        outs.add("gp_" + p, grads[p], None if grads[p].dim() == 0 else False)
    types = ins.types(ins.layouts())
    types.update(outs.types(outs.layouts()))
    group = lambda kw, prefix, ns: _group(kw, [(n, prefix + n, types[prefix + n]) for n in ns])
    attrs = "surrogate = " + _surrogate_attr(call.surrogate)
    if call.detach_reset:
        attrs += ", detach_reset"
    if call.detach_threshold:
        attrs += ", detach_threshold"
    op = ("  neuron.backward @model" + group("h_seq", "h_", [s for s in names if s in saved_h]) +
          group("seq", "seq_", [s for s in names if s in saved_seq]) +
          (f" ins(x = %x : {types['x']})" if x is not None else "") +
          group("init", "init_", [s for s in names if s in inits]) +
          group("params", "p_", call.tensor_params) +
          (f" grad_spike(%grad_spike : {types['grad_spike']})" if grad_spike is not None else "") +
          group("grad_seq", "gseq_", [s for s in names if s in grad_seq]) +
          (f" grad_ins(x = %grad_x : {types['grad_x']})" if need_x else "") +
          group("grad_init", "ginit_", grad_init_states) + group("grad_params", "gp_", grad_params) +
          " time t {" + attrs + "}")
    spec = "\n".join([call.model.spec(_compute_type(ref)),
                      _signature(ins, outs, types, "backward"), op, "  tdim.return", "}"])
    _launch(spec, "backward", ins, outs, ref)
    return grad_x, grad_inits, grads


# --------------------------------------------------------------------------
# Autograd: an autograd.Function for eager calls on plain tensors, and
# torch.library custom operators (PyTorch >= 2.4) that torch.compile records
# whole, over the same two implementations.
# --------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _model_json(model: NeuronModel) -> str:
    """The model as a string (what the modules keep, for torch.compile)."""
    return json.dumps([[list(p) for p in model.states], [list(p) for p in model.params],
                       model.charge, model.threshold, list(model.resets), list(model.inputs)])


@_constant_result
def _call_key(model_json: str, surrogate: SurrogateSpec, detach_reset: bool,
              detach_threshold: bool, tensor_params: Tuple[str, ...], time_dim: int) -> str:
    """A call's settings as a string (a custom operator's argument)."""
    return json.dumps([json.loads(model_json), surrogate[0], [list(p) for p in surrogate[1]],
                       detach_reset, detach_threshold, list(tensor_params), time_dim])


@lru_cache(maxsize=None)
def _call_of(key: str) -> _Call:
    (model_fields, sg_name, sg_params, detach_reset, detach_threshold, tensor_params,
     time_dim) = json.loads(key)
    states, params, charge, threshold, resets, inputs = model_fields
    model = NeuronModel(tuple(tuple(p) for p in states), tuple(tuple(p) for p in params),
                        charge, threshold, tuple(resets), tuple(inputs))
    return _Call(model, (sg_name, tuple(tuple(p) for p in sg_params)), detach_reset,
                 detach_threshold, tuple(tensor_params), time_dim)


@_constant_result
def _plan_key(key: str, compute: str, need_x: bool, need_params: Tuple[bool, ...],
              need_any: bool) -> str:
    """What forward keeps for these gradients: [h_seq states, seq states,
    whether x], as nerve's planner says (nothing when nothing needs one)."""
    call = _call_of(key)
    if not need_any:
        return json.dumps([[], [], False])
    grad_params = tuple(p for p, n in zip(call.tensor_params, need_params) if n)
    h_states, seq_saved, inputs = call.model.saves(
        ("x",) if need_x else (), grad_params, call.surrogate, call.detach_reset,
        call.detach_threshold, compute)
    if not h_states and not seq_saved:  # backward takes its shape from one
        h_states = call.model.state_names[:1]
    order = call.model.state_names
    return json.dumps([list(h_states), [s for s in order if s in seq_saved], bool(inputs)])


@lru_cache(maxsize=None)
def _plan_of(plan: str) -> Tuple[Tuple[str, ...], Tuple[str, ...], bool]:
    h_states, seq_saved, keep_x = json.loads(plan)
    return tuple(h_states), tuple(seq_saved), keep_x


def _unmask(given: Sequence[Tensor], mask: Sequence[bool]) -> List[Optional[Tensor]]:
    """One entry per state: the given tensors where `mask` is set."""
    it = iter(given)
    return [next(it) if m else None for m in mask]


def forward_impl(x: Tensor, inits: List[Tensor], init_mask: List[bool], params: List[Tensor],
                 key: str, store_seq: bool, plan: str) -> List[Tensor]:
    """[spike, each state's output (sequence with `store_seq`, else last
    value), the charged sequences kept, the state sequences kept (unless
    they are outputs already)]. `inits` holds the initial states whose
    `init_mask` entry is set."""
    call = _call_of(key)
    inits = _unmask(inits, init_mask)
    states = call.model.state_names
    h_states, seq_saved, _ = _plan_of(plan)
    seq_states = states if store_seq else seq_saved
    last_states = () if store_seq else states
    init_map = {s: t for s, t in zip(states, inits) if t is not None}
    spike, seqs, lasts, hs = _run_forward(call, x, init_map, dict(zip(call.tensor_params, params)),
                                          seq_states, last_states, h_states)
    outs = [spike] + ([seqs[s] for s in states] if store_seq else [lasts[s] for s in states])
    outs += [hs[s] for s in h_states]
    if not store_seq:
        outs += [seqs[s] for s in seq_saved]
    return outs


def forward_fake(x: Tensor, inits: List[Tensor], init_mask: List[bool], params: List[Tensor],
                 key: str, store_seq: bool, plan: str) -> List[Tensor]:
    call = _call_of(key)
    states = call.model.state_names
    h_states, seq_saved, _ = _plan_of(plan)
    td = call.time_dim
    outs = [torch.empty_like(x)]
    outs += [torch.empty_like(x) if store_seq else torch.empty_like(x.select(td, 0))
             for _ in states]
    outs += [torch.empty_like(x) for _ in h_states]
    if not store_seq:
        outs += [torch.empty_like(x) for _ in seq_saved]
    return outs


def _kept(call: _Call, plan: str, store_seq: bool, outs: Sequence[Tensor]
          ) -> Tuple[List[Tensor], List[Tensor]]:
    """The charged and state sequences backward reads, from forward's outputs."""
    states = call.model.state_names
    h_states, seq_saved, _ = _plan_of(plan)
    n = len(states)
    hs = list(outs[1 + n:1 + n + len(h_states)])
    if store_seq:
        seqs = [outs[1 + states.index(s)] for s in seq_saved]
    else:
        seqs = list(outs[1 + n + len(h_states):])
    return hs, seqs


def backward_impl(saved_h: List[Tensor], saved_seq: List[Tensor], x: Optional[Tensor],
                  inits: List[Optional[Tensor]], params: List[Tensor],
                  grad_spike: Optional[Tensor], grad_states: List[Optional[Tensor]], key: str,
                  plan: str, store_seq: bool, need_x: bool, need_inits: List[bool],
                  need_params: List[bool]) -> List[Tensor]:
    """[grad_x, a gradient per state's initial value, per tensor parameter],
    an empty tensor where none is asked for."""
    call = _call_of(key)
    states = call.model.state_names
    h_states, seq_saved, _ = _plan_of(plan)
    ref = saved_h[0] if saved_h else saved_seq[0]
    td = call.time_dim
    grad_seq: Dict[str, Tensor] = {}
    for s, g in zip(states, grad_states):
        if g is None:
            continue
        if store_seq:
            grad_seq[s] = g
        else:  # a gradient on the last value only: a zero sequence with it last
            full = torch.zeros_like(ref)
            full.select(td, ref.shape[td] - 1).copy_(g)
            grad_seq[s] = full
    init_map = {s: t for s, t in zip(states, inits) if t is not None}
    grad_init_states = tuple(s for s, need in zip(states, need_inits) if need)
    grad_params = tuple(p for p, need in zip(call.tensor_params, need_params) if need)
    grad_x, grad_inits, grads = _run_backward(
        call, dict(zip(h_states, saved_h)), dict(zip(seq_saved, saved_seq)), x, init_map,
        dict(zip(call.tensor_params, params)), grad_spike, grad_seq, need_x, grad_init_states,
        grad_params)
    empty = ref.new_empty((0,))
    return ([grad_x if grad_x is not None else empty] +
            [grad_inits.get(s, empty) for s in states] +
            [grads.get(p, empty) for p in call.tensor_params])


def backward_fake(saved_h: List[Tensor], saved_seq: List[Tensor], x: Optional[Tensor],
                  inits: List[Optional[Tensor]], params: List[Tensor],
                  grad_spike: Optional[Tensor], grad_states: List[Optional[Tensor]], key: str,
                  plan: str, store_seq: bool, need_x: bool, need_inits: List[bool],
                  need_params: List[bool]) -> List[Tensor]:
    call = _call_of(key)
    ref = saved_h[0] if saved_h else saved_seq[0]
    empty = ref.new_empty((0,))
    td = call.time_dim
    out = [torch.empty_like(ref) if need_x else empty]
    for t, need in zip(inits, need_inits):
        out.append((torch.empty_like(t) if t is not None else torch.empty_like(ref.select(td, 0)))
                   if need else empty)
    out += [torch.empty_like(p) if need else empty for p, need in zip(params, need_params)]
    return out


def _grads_of(outs: List[Tensor], need: Sequence[bool]) -> List[Optional[Tensor]]:
    return [g if n else None for g, n in zip(outs, need)]


class _ModelFunction(torch.autograd.Function):
    """The eager autograd (and all of it before PyTorch 2.4). Arguments
    after the settings: x, one tensor per state whose `init_mask` is set,
    then one per tensor parameter."""

    @staticmethod
    def forward(ctx: Any, key: str, init_mask: Tuple[bool, ...], store_seq: bool, plan: str,
                x: Tensor, *tensors: Tensor) -> Tuple[Tensor, ...]:
        call = _call_of(key)
        params = list(tensors[sum(init_mask):])
        outs = forward_impl(x, list(tensors[:sum(init_mask)]), list(init_mask), params, key,
                            store_seq, plan)
        hs, seqs = _kept(call, plan, store_seq, outs)
        ctx.key, ctx.init_mask, ctx.store_seq, ctx.plan = key, init_mask, store_seq, plan
        ctx.counts = (len(hs), len(seqs))
        keep_x = _plan_of(plan)[2]
        ctx.save_for_backward(*hs, *seqs, x if keep_x else None, *tensors)
        ctx.set_materialize_grads(False)
        return tuple(outs[:1 + len(call.model.state_names)])

    @staticmethod
    def backward(ctx: Any, grad_spike: Optional[Tensor], *grad_states: Optional[Tensor]
                 ) -> tuple:
        nh, ns = ctx.counts
        saved = ctx.saved_tensors
        hs, seqs, x, rest = saved[:nh], saved[nh:nh + ns], saved[nh + ns], saved[nh + ns + 1:]
        mask = ctx.init_mask
        given = iter(rest[:sum(mask)])
        inits = [next(given) if m else None for m in mask]
        params = list(rest[sum(mask):])
        needs = ctx.needs_input_grad
        need_inits_given = list(needs[5:5 + sum(mask)])
        it = iter(need_inits_given)
        need_inits = [bool(next(it)) if m else False for m in mask]
        need_params = [bool(n) for n in needs[5 + sum(mask):]]
        outs = backward_impl(list(hs), list(seqs), x, inits, params, grad_spike,
                             list(grad_states), ctx.key, ctx.plan, ctx.store_seq,
                             bool(needs[4]), need_inits, need_params)
        n = len(mask)
        grad_inits = [g for g, m, need in zip(outs[1:1 + n], mask, need_inits) if m]
        grad_inits = [g if need else None for g, need in
                      zip(grad_inits, [nd for nd, m in zip(need_inits, mask) if m])]
        return (None, None, None, None, outs[0] if needs[4] else None, *grad_inits,
                *_grads_of(outs[1 + n:], need_params))


FORWARD_SCHEMA = ("model_forward(Tensor x, Tensor[] inits, bool[] init_mask, Tensor[] params, "
                  "str key, bool store_seq, str plan) -> Tensor[]")
BACKWARD_SCHEMA = ("model_backward(Tensor[] saved_h, Tensor[] saved_seq, Tensor? x, "
                   "Tensor?[] inits, Tensor[] params, Tensor? grad_spike, "
                   "Tensor?[] grad_states, str key, str plan, bool store_seq, bool need_x, "
                   "bool[] need_inits, bool[] need_params) -> Tensor[]")


def _setup_context(ctx: Any, inputs: tuple, output: List[Tensor]) -> None:
    x, inits, init_mask, params, key, store_seq, plan = inputs
    call = _call_of(key)
    n = len(call.model.state_names)
    hs, seqs = _kept(call, plan, store_seq, output)
    ctx.mark_non_differentiable(*output[1 + n:])
    ctx.set_materialize_grads(False)
    keep_x = _plan_of(plan)[2]
    ctx.init_mask = list(init_mask)
    ctx.save_for_backward(*hs, *seqs, x if keep_x else None, *inits, *params)
    ctx.counts = (len(hs), len(seqs), len(params))
    ctx.key, ctx.store_seq, ctx.plan = key, store_seq, plan


def _flags(flag: Any, count: int) -> List[bool]:
    """needs_input_grad of a list input: a flag per element, or one for all."""
    if isinstance(flag, (list, tuple)):
        return [bool(f) for f in flag]
    return [bool(flag)] * count


def _op_backward(ctx: Any, *grads: Any) -> tuple:
    if len(grads) == 1 and isinstance(grads[0], (list, tuple)):
        grads = tuple(grads[0])
    call = _call_of(ctx.key)
    n = len(call.model.state_names)
    nh, ns, np_ = ctx.counts
    saved = ctx.saved_tensors
    hs, seqs, x = saved[:nh], saved[nh:nh + ns], saved[nh + ns]
    given = iter(saved[nh + ns + 1:len(saved) - np_])
    inits = [next(given) if m else None for m in ctx.init_mask]
    params = list(saved[len(saved) - np_:])
    need_x, need_given, _, need_params = ctx.needs_input_grad[:4]
    need_given = iter(_flags(need_given, sum(ctx.init_mask)))
    need_inits = [bool(next(need_given)) if m else False for m in ctx.init_mask]
    need_params = _flags(need_params, np_)
    outs = torch.ops.nerve.model_backward.default(
        list(hs), list(seqs), x, inits, params, grads[0], list(grads[1:1 + n]), ctx.key,
        ctx.plan, ctx.store_seq, bool(need_x), need_inits, need_params)
    grad_inits = [g for g, m in zip(_grads_of(outs[1:1 + n], need_inits), ctx.init_mask) if m]
    return (outs[0] if need_x else None, grad_inits, None,
            _grads_of(outs[1 + n:], need_params), None, None, None)


if CUSTOM_OPS:
    _library = torch.library.Library("nerve", "FRAGMENT")
    _library.define(FORWARD_SCHEMA)
    _library.define(BACKWARD_SCHEMA)
    for _dispatch_key in ("CPU", "CUDA"):
        _library.impl("model_forward", forward_impl, _dispatch_key)
        _library.impl("model_backward", backward_impl, _dispatch_key)
    torch.library.register_fake("nerve::model_forward", forward_fake)
    torch.library.register_fake("nerve::model_backward", backward_fake)
    torch.library.register_autograd("nerve::model_forward", _op_backward,
                                    setup_context=_setup_context)

_PLAIN = torch.Tensor


def _apply(key: str, n: int, x: Tensor, inits: List[Optional[Tensor]], params: List[Tensor],
           store_seq: bool) -> List[Tensor]:
    """Spikes and the `n` states' outputs: the custom operator while
    torch.compile traces (or on tensor subclasses), the autograd.Function
    otherwise."""
    grad = torch.is_grad_enabled()
    need_x = grad and x.requires_grad
    need_params = tuple(grad and p.requires_grad for p in params)
    need_inits = any(grad and t is not None and t.requires_grad for t in inits)
    plan = _plan_key(key, _compute_type(x), need_x, need_params,
                     need_x or any(need_params) or need_inits)
    mask = tuple(t is not None for t in inits)
    if CUSTOM_OPS and (type(x) is not _PLAIN or _is_compiling()):
        return torch.ops.nerve.model_forward.default(
            x, [t for t in inits if t is not None], list(mask), params, key, store_seq,
            plan)[:1 + n]
    return list(_ModelFunction.apply(key, mask, store_seq, plan, x,
                                     *[t for t in inits if t is not None], *params))


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
