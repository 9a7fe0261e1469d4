"""The kernels of neurons of any model and their autograd: an
autograd.Function for eager calls on plain tensors, and torch.library
custom operators (PyTorch >= 2.4, ``torch.ops.nerve.model_forward`` /
``model_backward``) that torch.compile records whole, over the same two
implementations. A call's settings travel as a string (`_call_key`), what
forward keeps for backward as another (`_plan_key`, nerve's planner)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from . import _kernels, _layout, _specs
from ._model_def import NeuronModel, _surrogate_attr
from ._ops import CUSTOM_OPS, _is_compiling, _stream, _target, _tdim_type
from .neuron_kernel import _constant_result
from .surrogate import SurrogateSpec

Tensor = torch.Tensor

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

    def types(self, layouts, sizes: Dict[str, int]) -> Dict[str, str]:
        """Each tensor's tdim type, with the static `sizes` the kernel is
        compiled for."""
        out = {}
        for name, t, layout in zip(self.names, self.tensors, layouts):
            dims, unit = layout.pattern() if layout is not None else ((), True)
            out[name] = _specs.tensor_type(dims, unit, _tdim_type(t), sizes)
        return out


# Launchers by everything that shapes a call's kernel and its arguments:
# the call, the entry, and each tensor's name, shape, strides and dtype
# (its layout and type follow from them). A repeated call finds its
# launcher without planning layouts or writing the spec again.
_launchers: Dict[tuple, _kernels.Launcher] = {}


def _launch(call: _Call, entry: str, ins: _Tensors, outs: _Tensors, device_of: Tensor,
            spec_of: Callable[[Dict[str, str]], str]) -> None:
    """Runs kernel `entry` on `ins` then `outs` (the argument order); the
    first call of a kind writes its spec with `spec_of(types)`. Calls are
    interned by `_call_of` (kept for the process), so their identity names
    them."""
    device = device_of.get_device()
    tensors = ins.tensors + outs.tensors
    facts = (id(call), entry, device, tuple(ins.names), tuple(outs.names),
             tuple((t.shape, t.stride(), t.dtype) for t in tensors))
    launcher = _launchers.get(facts)
    if launcher is None:
        target = _target(device_of)
        sizes = _specs.static_sizes(ins.shape[ins.time_dim], target)
        in_layouts, out_layouts = ins.layouts(), outs.layouts()
        types = ins.types(in_layouts, sizes)
        types.update(outs.types(out_layouts, sizes))
        kernel = _kernels.entry(spec_of(types), target, entry)
        launcher = _kernels.Launcher(kernel, in_layouts + out_layouts)
        _launchers[facts] = launcher
    launcher([t.data_ptr() for t in tensors], _stream(device))


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

    def spec_of(types: Dict[str, str]) -> str:
        group = lambda kw, prefix, names: _group(kw, [(n, prefix + n, types[prefix + n])
                                                      for n in names])
        op = ("  neuron.forward @model ins(x = %x : " + types["x"] + ")" +
              group("init", "init_", [s for s in call.model.state_names if s in inits]) +
              group("params", "p_", call.tensor_params) + f" outs(%spike : {types['spike']})" +
              group("seq", "seq_", seq_states) + group("h_seq", "h_", h_states) +
              group("last", "last_", last_states) + " time t")
        return "\n".join([call.model.spec(_compute_type(x)),
                          _signature(ins, outs, types, "forward"), op, "  tdim.return", "}"])

    _launch(call, "forward", ins, outs, x, spec_of)
    return spike, seqs, lasts, hs


def _run_backward(call: _Call, saved_h: Dict[str, Tensor], saved_seq: Dict[str, Tensor],
                  x: Optional[Tensor], inits: Dict[str, Tensor], params: Dict[str, Tensor],
                  grad_spike: Optional[Tensor], grad_seq: Dict[str, Tensor],
                  grad_last: Dict[str, Tensor], need_x: bool,
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
    for s in names:
        if s in grad_last:
            ins.add("glast_" + s, grad_last[s], False)
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

    def spec_of(types: Dict[str, str]) -> str:
        group = lambda kw, prefix, ns: _group(kw, [(n, prefix + n, types[prefix + n])
                                                   for n in ns])
        attrs = "surrogate = " + _surrogate_attr(call.surrogate)
        if call.detach_reset:
            attrs += ", detach_reset"
        if call.detach_threshold:
            attrs += ", detach_threshold"
        op = ("  neuron.backward @model" +
              group("h_seq", "h_", [s for s in names if s in saved_h]) +
              group("seq", "seq_", [s for s in names if s in saved_seq]) +
              (f" ins(x = %x : {types['x']})" if x is not None else "") +
              group("init", "init_", [s for s in names if s in inits]) +
              group("params", "p_", call.tensor_params) +
              (f" grad_spike(%grad_spike : {types['grad_spike']})"
               if grad_spike is not None else "") +
              group("grad_seq", "gseq_", [s for s in names if s in grad_seq]) +
              group("grad_last", "glast_", [s for s in names if s in grad_last]) +
              (f" grad_ins(x = %grad_x : {types['grad_x']})" if need_x else "") +
              group("grad_init", "ginit_", grad_init_states) +
              group("grad_params", "gp_", grad_params) + " time t {" + attrs + "}")
        return "\n".join([call.model.spec(_compute_type(ref)),
                          _signature(ins, outs, types, "backward"), op, "  tdim.return", "}"])

    _launch(call, "backward", ins, outs, ref, spec_of)
    return grad_x, grad_inits, grads


# --------------------------------------------------------------------------
# Autograd: an autograd.Function for eager calls on plain tensors, and
# torch.library custom operators (PyTorch >= 2.4) that torch.compile records
# whole, over the same two implementations.
# --------------------------------------------------------------------------

@_constant_result
def _call_key(model_json: str, surrogate: SurrogateSpec, detach_reset: bool,
              detach_threshold: bool, tensor_params: Tuple[str, ...], time_dim: int) -> str:
    """A call's settings as a string (a custom operator's argument),
    remembered: a layer asks for it at every call."""
    return _call_key_of(model_json, surrogate, detach_reset, detach_threshold, tensor_params,
                        time_dim)


@lru_cache(maxsize=None)
def _call_key_of(model_json: str, surrogate: SurrogateSpec, detach_reset: bool,
                 detach_threshold: bool, tensor_params: Tuple[str, ...], time_dim: int) -> str:
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
    whether x], as nerve's planner says (nothing when nothing needs one);
    remembered, as `_call_key`."""
    return _plan_key_of(key, compute, need_x, need_params, need_any)


@lru_cache(maxsize=None)
def _plan_key_of(key: str, compute: str, need_x: bool, need_params: Tuple[bool, ...],
                 need_any: bool) -> str:
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
    # Per state, a gradient of its sequence (store_seq) or of its last value
    # alone (which starts the kernel's walk back through time).
    given = {s: g for s, g in zip(states, grad_states) if g is not None}
    grad_seq = given if store_seq else {}
    grad_last = {} if store_seq else given
    init_map = {s: t for s, t in zip(states, inits) if t is not None}
    grad_init_states = tuple(s for s, need in zip(states, need_inits) if need)
    grad_params = tuple(p for p, need in zip(call.tensor_params, need_params) if need)
    grad_x, grad_inits, grads = _run_backward(
        call, dict(zip(h_states, saved_h)), dict(zip(seq_saved, saved_seq)), x, init_map,
        dict(zip(call.tensor_params, params)), grad_spike, grad_seq, grad_last, need_x,
        grad_init_states, grad_params)
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


def _save(ctx: Any, key: str, init_mask: Sequence[bool], store_seq: bool, plan: str,
          x: Tensor, inits: Sequence[Tensor], params: Sequence[Tensor],
          outs: Sequence[Tensor]) -> None:
    """Keeps for backward what the plan says it reads, the given initial
    states and the parameters."""
    hs, seqs = _kept(_call_of(key), plan, store_seq, outs)
    ctx.save_for_backward(*hs, *seqs, x if _plan_of(plan)[2] else None, *inits, *params)
    ctx.counts = (len(hs), len(seqs), len(inits), len(params))
    ctx.key, ctx.init_mask, ctx.store_seq, ctx.plan = key, list(init_mask), store_seq, plan
    ctx.set_materialize_grads(False)


def _saved_backward(ctx: Any, run: Any, grad_spike: Optional[Tensor],
                    grad_states: Sequence[Optional[Tensor]], need_x: bool,
                    need_given: Sequence[bool], need_params: Sequence[bool]) -> tuple:
    """(grad_x, the given initial states' gradients, the parameters'), by
    `run`, backward_impl's signature, from what `_save` kept."""
    nh, ns, ni, _ = ctx.counts
    saved = ctx.saved_tensors
    hs, seqs, x = saved[:nh], saved[nh:nh + ns], saved[nh + ns]
    inits = _unmask(saved[nh + ns + 1:nh + ns + 1 + ni], ctx.init_mask)
    params = list(saved[nh + ns + 1 + ni:])
    need_inits = [bool(f) if f is not None else False for f in _unmask(need_given, ctx.init_mask)]
    n = len(ctx.init_mask)
    outs = run(list(hs), list(seqs), x, inits, params, grad_spike, list(grad_states), ctx.key,
               ctx.plan, ctx.store_seq, bool(need_x), need_inits, list(need_params))
    grad_inits = [g for g, m in zip(_grads_of(outs[1:1 + n], need_inits), ctx.init_mask) if m]
    return outs[0] if need_x else None, grad_inits, _grads_of(outs[1 + n:], need_params)


class _ModelFunction(torch.autograd.Function):
    """The eager autograd (and all of it before PyTorch 2.4). Arguments
    after the settings: x, one tensor per state whose `init_mask` is set,
    then one per tensor parameter."""

    @staticmethod
    def forward(ctx: Any, key: str, init_mask: Tuple[bool, ...], store_seq: bool, plan: str,
                x: Tensor, *tensors: Tensor) -> Tuple[Tensor, ...]:
        given = sum(init_mask)
        outs = forward_impl(x, list(tensors[:given]), list(init_mask), list(tensors[given:]),
                            key, store_seq, plan)
        _save(ctx, key, init_mask, store_seq, plan, x, tensors[:given], tensors[given:], outs)
        return tuple(outs[:1 + len(init_mask)])

    @staticmethod
    def backward(ctx: Any, grad_spike: Optional[Tensor], *grad_states: Optional[Tensor]
                 ) -> tuple:
        needs = ctx.needs_input_grad
        given = ctx.counts[2]
        grad_x, grad_inits, grad_params = _saved_backward(
            ctx, backward_impl, grad_spike, grad_states, needs[4], needs[5:5 + given],
            [bool(n) for n in needs[5 + given:]])
        return (None, None, None, None, grad_x, *grad_inits, *grad_params)


FORWARD_SCHEMA = ("model_forward(Tensor x, Tensor[] inits, bool[] init_mask, Tensor[] params, "
                  "str key, bool store_seq, str plan) -> Tensor[]")
BACKWARD_SCHEMA = ("model_backward(Tensor[] saved_h, Tensor[] saved_seq, Tensor? x, "
                   "Tensor?[] inits, Tensor[] params, Tensor? grad_spike, "
                   "Tensor?[] grad_states, str key, str plan, bool store_seq, bool need_x, "
                   "bool[] need_inits, bool[] need_params) -> Tensor[]")


def _setup_context(ctx: Any, inputs: tuple, output: List[Tensor]) -> None:
    x, inits, init_mask, params, key, store_seq, plan = inputs
    ctx.mark_non_differentiable(*output[1 + len(init_mask):])
    _save(ctx, key, init_mask, store_seq, plan, x, inits, params, output)


def _flags(flag: Any, count: int) -> List[bool]:
    """needs_input_grad of a list input: a flag per element, or one for all."""
    if isinstance(flag, (list, tuple)):
        return [bool(f) for f in flag]
    return [bool(flag)] * count


def _op_backward(ctx: Any, *grads: Any) -> tuple:
    if len(grads) == 1 and isinstance(grads[0], (list, tuple)):
        grads = tuple(grads[0])
    n = len(ctx.init_mask)
    need_x, need_given, _, need_params = ctx.needs_input_grad[:4]
    grad_x, grad_inits, grad_params = _saved_backward(
        ctx, torch.ops.nerve.model_backward.default, grads[0], grads[1:1 + n], need_x,
        _flags(need_given, ctx.counts[2]), _flags(need_params, ctx.counts[3]))
    return grad_x, grad_inits, None, grad_params, None, None, None


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
