"""SpikingJelly's multi-step neuron functions, run by nerve's kernels.

The signatures and results are those of
``spikingjelly.activation_based.triton_kernel.neuron_kernel``, so code written
for SpikingJelly switches by changing an import:

    from nerve.torch import multistep_lif
    spike_seq, v_seq = multistep_lif(x_seq, v_init, True, 2.0, 1.0, 0.0, False,
                                     surrogate.Sigmoid())

`v_reset=None` is soft reset. Gradients flow to x_seq, v_init and (PLIF)
r_tau through autograd. Beyond SpikingJelly: any layout runs without a copy
(time-major or, with ``time_dim``, time-minor; channels-last; sliced views),
`v_init` may be None (the neurons start at v_reset, or 0 for soft reset),
and float64 works too.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import torch

from . import _ops
from ._specs import Neuron
from .surrogate import SurrogateSpec, resolve

__all__ = ["multistep_if", "multistep_lif", "multistep_plif"]

Tensor = torch.Tensor
_FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


def _constant_result(fn):
    """Marks `fn` for torch.compile as a function of constants that tracing
    calls rather than traces, its result a constant (it builds a string with
    json from the neuron's Python-number constants; json would break the
    graph)."""
    compiler = getattr(torch, "compiler", None)
    mark = getattr(compiler, "assume_constant_result", None)
    return mark(fn) if mark is not None else fn


_keys: dict = {}


@_constant_result
def neuron_key(kind: str, v_threshold: float, v_reset: Optional[float], detach_reset: bool,
               surrogate: SurrogateSpec, tau: float = 2.0, decay_input: bool = True) -> str:
    """The custom operators' name for a neuron, after checking its constants
    (remembered: a layer asks for it at every call)."""
    args = (kind, v_threshold, v_reset, detach_reset, surrogate, tau, decay_input)
    key = _keys.get(args)
    if key is None:
        key = _make_key(*args)
        _keys[args] = key
    return key


def _make_key(kind: str, v_threshold: float, v_reset: Optional[float], detach_reset: bool,
              surrogate: SurrogateSpec, tau: float, decay_input: bool) -> str:
    for name, value in (("v_threshold", v_threshold), ("v_reset", v_reset), ("tau", tau)):
        if value is not None and not (value == value and abs(value) != float("inf")):
            raise ValueError(f"{name} must be finite, not {value}")
    if kind == "lif" and not tau > 1:
        raise ValueError(f"tau must be greater than 1 (1 / tau is the fraction of the gap to "
                         f"v_reset closed per step), not {tau}")
    return Neuron(kind, v_threshold, v_reset, detach_reset, surrogate, tau, decay_input).key()


def _number(name: str, value: Any) -> float:
    if isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a Python number, not a tensor (nerve compiles it "
                        f"into the kernel)")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}") from None


def check_sequence(x_seq: Any, time_dim: int) -> int:
    """`time_dim` as a non-negative position, after checking x_seq."""
    if not isinstance(x_seq, torch.Tensor):
        raise TypeError(f"x_seq must be a torch.Tensor, not {type(x_seq).__name__}")
    if x_seq.dtype not in _FLOATS:
        raise TypeError(f"x_seq is {str(x_seq.dtype).replace('torch.', '')}; nerve's neurons "
                        f"take float32, float16, bfloat16 or float64")
    rank = x_seq.dim()
    if rank < 1 or not -rank <= time_dim < rank:
        raise ValueError(f"x_seq has {rank} dimensions (shape {list(x_seq.shape)}) and no "
                         f"time dimension {time_dim}")
    return time_dim % rank


def check_state(name: str, v: Optional[Tensor], x_seq: Tensor, time_dim: int) -> None:
    if v is None:
        return
    if not isinstance(v, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor or None, not {type(v).__name__}")
    shape = x_seq.shape[:time_dim] + x_seq.shape[time_dim + 1:]
    if v.shape != shape:
        raise ValueError(f"{name} has shape {list(v.shape)} but x_seq without its time "
                         f"dimension has {list(shape)}")
    if v.dtype != x_seq.dtype:
        raise TypeError(f"{name} is {str(v.dtype).replace('torch.', '')} but x_seq is "
                        f"{str(x_seq.dtype).replace('torch.', '')}")
    if v.device != x_seq.device:
        raise ValueError(f"{name} is on {v.device} but x_seq is on {x_seq.device}")


def check_param(name: str, p: Any, x_seq: Tensor) -> None:
    if not isinstance(p, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor with one element, not "
                        f"{type(p).__name__}")
    if p.numel() != 1:
        raise ValueError(f"{name} must have one element, not shape {list(p.shape)}")
    if p.dtype not in _FLOATS:
        raise TypeError(f"{name} is {str(p.dtype).replace('torch.', '')}, not a float type")
    if p.device != x_seq.device:
        raise ValueError(f"{name} is on {p.device} but x_seq is on {x_seq.device}")


def run(key: str, x_seq: Tensor, v_init: Optional[Tensor], param: Optional[Tensor],
        time_dim: int, store_v_seq: bool) -> Tuple[Tensor, Tensor]:
    """Spikes and v (v_seq, or the last potential), keeping h_seq for
    backward when autograd needs it."""
    need_grad = torch.is_grad_enabled() and (
        x_seq.requires_grad or (v_init is not None and v_init.requires_grad)
        or (param is not None and param.requires_grad))
    if param is not None and param.dim() != 0:
        param = param.reshape(())
    spike, v, _ = _ops.neuron_forward(x_seq, v_init, param, key, time_dim, need_grad,
                                      bool(store_v_seq))
    return spike, v


def multistep_if(x_seq: Tensor, v_init: Optional[Tensor], v_threshold: float,
                 v_reset: Optional[float], detach_reset: bool, surrogate_function: Any,
                 store_v_seq: bool = True, *, time_dim: int = 0) -> Tuple[Tensor, Tensor]:
    """Multi-step integrate-and-fire: h = v + x. Returns (spike_seq, v_seq),
    or (spike_seq, v) with the last potential when not `store_v_seq`."""
    td = check_sequence(x_seq, time_dim)
    check_state("v_init", v_init, x_seq, td)
    key = neuron_key("if", _number("v_threshold", v_threshold),
                     None if v_reset is None else _number("v_reset", v_reset),
                     bool(detach_reset), resolve(surrogate_function))
    return run(key, x_seq, v_init, None, td, store_v_seq)


def multistep_lif(x_seq: Tensor, v_init: Optional[Tensor], decay_input: bool, tau: float,
                  v_threshold: float, v_reset: Optional[float], detach_reset: bool,
                  surrogate_function: Any, store_v_seq: bool = True, *,
                  time_dim: int = 0) -> Tuple[Tensor, Tensor]:
    """Multi-step leaky integrate-and-fire: h = v + (x - (v - v_reset)) / tau
    with `decay_input`, else h = v - (v - v_reset) / tau + x."""
    td = check_sequence(x_seq, time_dim)
    check_state("v_init", v_init, x_seq, td)
    key = neuron_key("lif", _number("v_threshold", v_threshold),
                     None if v_reset is None else _number("v_reset", v_reset),
                     bool(detach_reset), resolve(surrogate_function), _number("tau", tau),
                     bool(decay_input))
    return run(key, x_seq, v_init, None, td, store_v_seq)


def multistep_plif(x_seq: Tensor, v_init: Optional[Tensor], r_tau: Tensor, decay_input: bool,
                   v_threshold: float, v_reset: Optional[float], detach_reset: bool,
                   surrogate_function: Any, *, time_dim: int = 0) -> Tuple[Tensor, Tensor]:
    """Multi-step parametric LIF whose decay `r_tau` (1 / tau, a one-element
    tensor, usually ``w.sigmoid()``) is read on the device and learned:
    h = v + (x - (v - v_reset)) r_tau with `decay_input`. Returns
    (spike_seq, v_seq); r_tau's gradient is summed in a fixed order (the
    same bits every run)."""
    td = check_sequence(x_seq, time_dim)
    check_state("v_init", v_init, x_seq, td)
    check_param("r_tau", r_tau, x_seq)
    key = neuron_key("plif_decay", _number("v_threshold", v_threshold),
                     None if v_reset is None else _number("v_reset", v_reset),
                     bool(detach_reset), resolve(surrogate_function), 2.0, bool(decay_input))
    return run(key, x_seq, v_init, r_tau, td, True)
