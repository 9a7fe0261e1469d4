"""The two neuron operators and their autograd.

``neuron_forward(x, v_init, param, neuron, time_dim, keep_h, v_seq)`` runs a
layer through time and returns (spike, v, h): v is the whole v_seq or, when
not `v_seq`, the last potential; h is h_seq when `keep_h` (what backward
needs), else an empty tensor. ``neuron_backward`` walks back through time
from h_seq and the upstream gradients. `neuron` is a `Neuron.key()` string.

On PyTorch >= 2.4 both are `torch.library` operators (``torch.ops.nerve.*``)
with fake implementations and registered autograd, which torch.compile
records whole; eager calls on plain tensors (and every call on older
PyTorch) run the same implementations through a `torch.autograd.Function`.
Outputs are allocated with `torch.empty_like` (the input's layout:
channels-last stays channels-last), in the fake implementations too.
Shapes are checked when a call shape is first seen (the launchers are keyed
by them), so the operators called directly fail as the functions do.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import torch

from .._module import use_cuda_device
from . import _kernels, _layout, _specs
from ._specs import Neuron, neuron_from_key

Tensor = torch.Tensor
_EMPTY_SHAPE = (0,)


def _target(x: Tensor) -> str:
    if x.device.type == "cuda":
        use_cuda_device(x.device.index, "x_seq")
        return "cuda"
    if x.device.type == "cpu":
        return "cpu"
    raise ValueError(f"x_seq is on {x.device}: nerve runs on the CPU and on CUDA GPUs")


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _stream(device: int) -> int:
    """The CUstream of PyTorch's current stream on CUDA device `device` (a
    tensor's get_device(): -1, the CPU, has none)."""
    if device < 0:
        return 0
    if _raw_stream is not None:
        return _raw_stream(device)
    return torch.cuda.current_stream(device).cuda_stream


def _state_like(x: Tensor, time_dim: int) -> Tensor:
    return torch.empty_like(x.select(time_dim, 0))


def _operand(t: Optional[Tensor], sequence: bool) -> Optional[_layout.Operand]:
    return None if t is None else _layout.Operand(tuple(t.stride()), sequence)


def _types(names, layouts, dtypes, sizes) -> dict:
    out = {}
    for name, layout, dtype in zip(names, layouts, dtypes):
        if layout is None and dtype is None:
            continue
        dims, unit = layout.pattern() if layout is not None else ((), True)
        out[name] = _specs.tensor_type(dims, unit, dtype, sizes)
    return out


def _tdim_type(t: Tensor) -> str:
    name = str(t.dtype).replace("torch.", "")
    try:
        return _specs.TDIM_TYPES[name]
    except KeyError:
        raise TypeError(f"nerve's neurons run on float32, float16, bfloat16 and float64 "
                        f"tensors, not {name}") from None


def _meta(t: Tensor) -> tuple:
    """What a launcher's key holds of a tensor beside the sequence: everything
    `_check_shapes` checks when the key is new (a later call that differs in
    any of it is a new key, so checked too)."""
    return t.shape, t.stride(), t.dtype, t.get_device()


# The launchers of calls seen before, by everything that shapes their arguments.
_forward_launchers: dict = {}
_backward_launchers: dict = {}


def _forward_launcher(key: tuple, x: Tensor, v_init: Optional[Tensor], param: Optional[Tensor],
                      outs: Tuple[Tensor, ...], neuron: Neuron, time_dim: int,
                      keep_h: bool, v_seq: bool) -> _kernels.Launcher:
    spike, v, h = outs
    _check_shapes(x, time_dim, (("v_init", v_init),), (("param", param),))
    names = ("x", "v_init", "param", "spike", "v_seq", "h_seq", "v_last")
    tensors = (x, v_init, None, spike, v if v_seq else None, h if keep_h else None,
               None if v_seq else v)
    sequences = (True, False, False, True, True, True, False)
    layouts = _layout.plan(x.shape, time_dim, [_operand(t, s) for t, s in
                                              zip(tensors, sequences)])
    dtypes = [None if t is None else _tdim_type(t) for t in tensors]
    dtypes[2] = _tdim_type(param) if param is not None else None
    target = _target(x)
    sizes = _specs.static_sizes(x.shape[time_dim], target)
    spec = _specs.forward_spec(neuron, _types(names, layouts, dtypes, sizes))
    kernel = _kernels.entry(spec, target, "forward")
    order = [layouts[i] for i, t in enumerate(tensors) if t is not None or
             (i == 2 and param is not None)]
    launcher = _kernels.Launcher(kernel, order)
    _forward_launchers[key] = launcher
    return launcher


def run_forward(x: Tensor, v_init: Optional[Tensor], param: Optional[Tensor], neuron: str,
                time_dim: int, keep_h: bool, v_seq: bool
                ) -> Tuple[Tensor, Tensor, Optional[Tensor]]:
    """(spike, v, h_seq or None): the forward kernel on fresh outputs."""
    spike, v, h = _forward_outputs(x, time_dim, keep_h, v_seq)
    device = x.get_device()
    key = (neuron, x.dtype, device, x.shape, x.stride(), time_dim, keep_h, v_seq,
           None if v_init is None else _meta(v_init), None if param is None else _meta(param))
    launcher = _forward_launchers.get(key)
    if launcher is None:
        launcher = _forward_launcher(key, x, v_init, param, (spike, v, h),
                                     neuron_from_key(neuron), time_dim, keep_h, v_seq)
    # The kernel's arguments: x, v_init, param; spike, v_seq, h_seq, v_last.
    pointers = [x.data_ptr()]
    if v_init is not None:
        pointers.append(v_init.data_ptr())
    if param is not None:
        pointers.append(param.data_ptr())
    pointers.append(spike.data_ptr())
    if v_seq:
        pointers.append(v.data_ptr())
    if h is not None:
        pointers.append(h.data_ptr())
    if not v_seq:
        pointers.append(v.data_ptr())
    launcher(pointers, _stream(device))
    return spike, v, h


def forward_impl(x: Tensor, v_init: Optional[Tensor], param: Optional[Tensor], neuron: str,
                 time_dim: int, keep_h: bool, v_seq: bool) -> Tuple[Tensor, Tensor, Tensor]:
    """The operator's implementation: h is an empty tensor unless `keep_h`."""
    spike, v, h = run_forward(x, v_init, param, neuron, time_dim, keep_h, v_seq)
    return (spike, v) + _filled(x, (h,))


def _forward_outputs(x: Tensor, time_dim: int, keep_h: bool, v_seq: bool
                     ) -> Tuple[Tensor, Tensor, Optional[Tensor]]:
    """spike, v (v_seq or v_last) and h_seq (or None), laid out like x."""
    spike = torch.empty_like(x)
    v = torch.empty_like(x) if v_seq else _state_like(x, time_dim)
    return spike, v, torch.empty_like(x) if keep_h else None


def forward_fake(x: Tensor, v_init: Optional[Tensor], param: Optional[Tensor], neuron: str,
                 time_dim: int, keep_h: bool, v_seq: bool) -> Tuple[Tensor, Tensor, Tensor]:
    spike, v, h = _forward_outputs(x, time_dim, keep_h, v_seq)
    return (spike, v) + _filled(x, (h,))


def _backward_launcher(key: tuple, tensors: Tuple[Optional[Tensor], ...], neuron: Neuron,
                       time_dim: int) -> _kernels.Launcher:
    h = tensors[0]
    _check_shapes(h, time_dim, (("v_init", tensors[1]), ("grad_v", tensors[5])),
                  (("param", tensors[2]),),
                  (("grad_spike", tensors[3]), ("grad_v", tensors[4])))
    names = ("h_seq", "v_init", "param", "grad_spike", "grad_v_seq", "grad_v_last", "grad_x",
             "grad_v_init", "grad_param")
    sequences = (True, False, False, True, True, False, True, False, False)
    params = (2, 8)
    layouts = _layout.plan(h.shape, time_dim, [
        None if i in params else _operand(t, s) for i, (t, s) in
        enumerate(zip(tensors, sequences))])
    dtypes = [None if t is None else _tdim_type(t) for t in tensors]
    target = _target(h)
    sizes = _specs.static_sizes(h.shape[time_dim], target)
    spec = _specs.backward_spec(neuron, _types(names, layouts, dtypes, sizes))
    kernel = _kernels.entry(spec, target, "backward")
    launcher = _kernels.Launcher(kernel, [layouts[i] for i, t in enumerate(tensors)
                                          if t is not None])
    _backward_launchers[key] = launcher
    return launcher


def _check_shapes(seq: Tensor, time_dim: int, states, params, sequences=()) -> None:
    """What the kernel's plan takes from `seq` must hold for the others: the
    same shape (sequences), that shape without time (states), one element
    (parameters), the same device."""
    shape = seq.shape
    state = shape[:time_dim] + shape[time_dim + 1:]
    for group, want in ((sequences, shape), (states, state), (params, None)):
        for name, t in group:
            if t is None:
                continue
            if t.device != seq.device:
                raise ValueError(f"{name} is on {t.device} but the sequence is on {seq.device}")
            if want is None and t.numel() != 1:
                raise ValueError(f"{name} must have one element, not shape {list(t.shape)}")
            if want is not None and t.shape != want:
                raise ValueError(f"{name} has shape {list(t.shape)} but {list(want)} was "
                                 f"expected")


def run_backward(h: Tensor, grad_spike: Optional[Tensor], grad_v: Optional[Tensor],
                 v_init: Optional[Tensor], param: Optional[Tensor], neuron: str, time_dim: int,
                 v_seq: bool, need_grad_v_init: bool, need_grad_param: bool
                 ) -> Tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
    """(grad_x, grad_v_init, grad_param): the backward kernel on fresh
    outputs, None for a gradient not asked for (PLIF's kernel always sums
    grad_param)."""
    config = neuron_from_key(neuron)
    need_grad_param = need_grad_param or config.kind == "plif"
    grad_x, grad_v_init, grad_param = _backward_outputs(h, v_init, param, time_dim,
                                                        need_grad_v_init, need_grad_param)
    if grad_spike is None and grad_v is None:
        return tuple(None if t is None else t.zero_() for t in (grad_x, grad_v_init, grad_param))
    # The last potential's gradient (v_seq=False) starts the kernel's walk
    # back through time: no sequence of zeros around it.
    grad_v_seq, grad_v_last = (grad_v, None) if v_seq else (None, grad_v)
    v_in = v_init if config.has_param else None
    tensors = (h, v_in, param, grad_spike, grad_v_seq, grad_v_last, grad_x, grad_v_init,
               grad_param)
    device = h.get_device()
    key = (neuron, h.dtype, device, h.shape, h.stride(), time_dim,
           tuple(None if t is None else _meta(t) for t in tensors[1:6]),
           need_grad_v_init, need_grad_param)
    launcher = _backward_launchers.get(key)
    if launcher is None:
        launcher = _backward_launcher(key, tensors, config, time_dim)
    launcher([t.data_ptr() for t in tensors if t is not None], _stream(device))
    return grad_x, grad_v_init, grad_param


def backward_impl(h: Tensor, grad_spike: Optional[Tensor], grad_v: Optional[Tensor],
                  v_init: Optional[Tensor], param: Optional[Tensor], neuron: str, time_dim: int,
                  v_seq: bool, need_grad_v_init: bool, need_grad_param: bool
                  ) -> Tuple[Tensor, Tensor, Tensor]:
    """The operator's implementation: a gradient not asked for is an empty
    tensor."""
    return _filled(h, run_backward(h, grad_spike, grad_v, v_init, param, neuron, time_dim,
                                   v_seq, need_grad_v_init, need_grad_param))


def backward_fake(h: Tensor, grad_spike: Optional[Tensor], grad_v: Optional[Tensor],
                  v_init: Optional[Tensor], param: Optional[Tensor], neuron: str, time_dim: int,
                  v_seq: bool, need_grad_v_init: bool, need_grad_param: bool
                  ) -> Tuple[Tensor, Tensor, Tensor]:
    need_grad_param = need_grad_param or neuron_from_key(neuron).kind == "plif"
    return _filled(h, _backward_outputs(h, v_init, param, time_dim, need_grad_v_init,
                                        need_grad_param))


def _backward_outputs(h: Tensor, v_init: Optional[Tensor], param: Optional[Tensor],
                      time_dim: int, need_grad_v_init: bool, need_grad_param: bool
                      ) -> Tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
    """grad_x (laid out like h_seq), grad_v_init and grad_param (None when
    not needed)."""
    grad_v_init = ((torch.empty_like(v_init) if v_init is not None else
                    _state_like(h, time_dim)) if need_grad_v_init else None)
    grad_param = torch.empty_like(param) if need_grad_param else None
    return torch.empty_like(h), grad_v_init, grad_param


def _filled(h: Tensor, grads: Tuple[Optional[Tensor], ...]) -> Tuple[Tensor, ...]:
    """The operator's outputs: an empty tensor for each gradient not asked for."""
    return tuple(h.new_empty(_EMPTY_SHAPE) if g is None else g for g in grads)


# --------------------------------------------------------------------------
# Autograd
# --------------------------------------------------------------------------

def _setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
    x, v_init, param, neuron, time_dim, keep_h, v_seq = inputs
    ctx.mark_non_differentiable(output[2])
    ctx.set_materialize_grads(False)
    ctx.save_for_backward(output[2], v_init, param)
    ctx.neuron, ctx.time_dim, ctx.v_seq = neuron, time_dim, v_seq


def _backward(ctx: Any, grad_spike: Optional[Tensor], grad_v: Optional[Tensor],
              _grad_h: Optional[Tensor]) -> tuple:
    h, v_init, param = ctx.saved_tensors
    if h.numel() == 0 and h.dim() == 1:
        raise RuntimeError("nerve::neuron_forward ran with keep_h=False and kept nothing to "
                           "differentiate: call it with keep_h=True when inputs need gradients")
    need_x, need_v_init, need_param = ctx.needs_input_grad[:3]
    grad_x, grad_v_init, grad_param = neuron_backward(
        h, grad_spike, grad_v, v_init, param, ctx.neuron, ctx.time_dim, ctx.v_seq,
        bool(need_v_init), bool(need_param))
    return (grad_x if need_x else None, grad_v_init if need_v_init else None,
            grad_param if need_param else None, None, None, None, None)


class _NeuronFunction(torch.autograd.Function):
    """The eager autograd (and all of it before PyTorch 2.4): the operator's
    but with h_seq kept as a saved intermediate rather than a third output,
    which autograd would wrap and track at every call."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, v_init: Optional[Tensor], param: Optional[Tensor],
                neuron: str, time_dim: int, v_seq: bool) -> tuple:
        spike, v, h = run_forward(x, v_init, param, neuron, time_dim, True, v_seq)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(h, v_init, param)
        ctx.neuron, ctx.time_dim, ctx.v_seq = neuron, time_dim, v_seq
        return spike, v

    @staticmethod
    def backward(ctx: Any, grad_spike: Optional[Tensor], grad_v: Optional[Tensor]) -> tuple:
        return _backward(ctx, grad_spike, grad_v, None)[:6]


FORWARD_SCHEMA = ("neuron_forward(Tensor x, Tensor? v_init, Tensor? param, str neuron, "
                  "int time_dim, bool keep_h, bool v_seq) -> (Tensor, Tensor, Tensor)")
BACKWARD_SCHEMA = ("neuron_backward(Tensor h, Tensor? grad_spike, Tensor? grad_v, "
                   "Tensor? v_init, Tensor? param, str neuron, int time_dim, bool v_seq, "
                   "bool need_grad_v_init, bool need_grad_param) -> (Tensor, Tensor, Tensor)")


def _has_custom_ops() -> bool:
    library = torch.library
    return hasattr(library, "register_fake") and hasattr(library, "register_autograd")


CUSTOM_OPS = _has_custom_ops()

if CUSTOM_OPS:
    _library = torch.library.Library("nerve", "DEF")
    _library.define(FORWARD_SCHEMA)
    _library.define(BACKWARD_SCHEMA)
    for _key in ("CPU", "CUDA"):
        _library.impl("neuron_forward", forward_impl, _key)
        _library.impl("neuron_backward", backward_impl, _key)
    torch.library.register_fake("nerve::neuron_forward", forward_fake)
    torch.library.register_fake("nerve::neuron_backward", backward_fake)
    torch.library.register_autograd("nerve::neuron_forward", _backward,
                                    setup_context=_setup_context)
    _forward_op = torch.ops.nerve.neuron_forward.default
    _backward_op = torch.ops.nerve.neuron_backward.default
else:
    _forward_op = None
    _backward_op = None


_compiler = getattr(torch, "compiler", None)
_is_compiling = getattr(_compiler, "is_compiling", None) or (lambda: False)
_PLAIN = torch.Tensor


def neuron_forward(x: Tensor, v_init: Optional[Tensor], param: Optional[Tensor], neuron: str,
                   time_dim: int, keep_h: bool, v_seq: bool
                   ) -> Tuple[Tensor, Tensor, Optional[Tensor]]:
    """Runs the layer, keeping h_seq for backward when `keep_h`. The
    operator returns h (an empty tensor without `keep_h`); the eager paths
    return None for it (autograd holds h_seq itself).

    While torch.compile traces (and for tensor subclasses: fake, functional
    and other wrapped tensors) this is the custom operator, which the graph
    records whole. Eager calls on plain tensors skip the dispatcher's round
    trips through Python (docs/decisions.md measures them) and run the same
    implementation directly, with the autograd.Function when gradients are
    needed; on PyTorch before 2.4 that is the only path."""
    if _forward_op is not None and (type(x) is not _PLAIN or _is_compiling()):
        return _forward_op(x, v_init, param, neuron, time_dim, keep_h, v_seq)
    if keep_h:
        spike, v = _NeuronFunction.apply(x, v_init, param, neuron, time_dim, v_seq)
        return spike, v, None
    return run_forward(x, v_init, param, neuron, time_dim, keep_h, v_seq)


def neuron_backward(h: Tensor, grad_spike: Optional[Tensor], grad_v: Optional[Tensor],
                    v_init: Optional[Tensor], param: Optional[Tensor], neuron: str,
                    time_dim: int, v_seq: bool, need_grad_v_init: bool, need_grad_param: bool
                    ) -> Tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
    """Backward through time: the custom operator while torch.compile traces
    (or on tensor subclasses, where a gradient not asked for is an empty
    tensor), the implementation itself otherwise (where it is None)."""
    if _backward_op is not None and (type(h) is not _PLAIN or _is_compiling()):
        return _backward_op(h, grad_spike, grad_v, v_init, param, neuron, time_dim, v_seq,
                            need_grad_v_init, need_grad_param)
    return run_backward(h, grad_spike, grad_v, v_init, param, neuron, time_dim, v_seq,
                        need_grad_v_init, need_grad_param)
