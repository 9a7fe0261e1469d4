"""SpikingJelly's neuron modules, run by nerve's kernels.

`IFNode`, `LIFNode` and `ParametricLIFNode` take SpikingJelly's constructor
options and keep the membrane potential between calls as its memory modules
do: `v` starts as a float (v_reset, or 0 for soft reset), becomes the last
potential after a call, and `reset()` (which SpikingJelly's
``functional.reset_net`` calls) puts it back. ``step_mode='m'`` takes
``[T, N, *]`` sequences; ``'s'`` one step ``[N, *]``. With ``store_v_seq``
the potentials of every step are kept in `v_seq`. ``time_dim`` places time
elsewhere (``-1`` for time-minor ``[N, *, T]``). The ``backend`` argument is
accepted for SpikingJelly's signature; nerve always runs its own kernels.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Union

import torch
from torch import nn

from . import neuron_kernel as _nk
from ._ops import _is_compiling
from .surrogate import Sigmoid, resolve

__all__ = ["BaseNode", "IFNode", "LIFNode", "ParametricLIFNode"]

Tensor = torch.Tensor
_BACKENDS = ("nerve", "torch", "cupy", "triton", "inductor")


class StepModes:
    """SpikingJelly's step modes over `multi_step_forward`: 'm' takes a
    sequence, 's' one step (time inserted at `time_dim`)."""

    def single_step_forward(self, x: Tensor) -> Tensor:
        td = self.time_dim if self.time_dim >= 0 else x.dim() + 1 + self.time_dim
        return self.multi_step_forward(x.unsqueeze(td)).squeeze(td)

    def forward(self, x: Tensor) -> Tensor:
        if self.step_mode == "m":
            return self.multi_step_forward(x)
        return self.single_step_forward(x)


class BaseNode(StepModes, nn.Module):
    """What every neuron module shares: state, reset, step modes."""

    def __init__(self, v_threshold: float = 1.0, v_reset: Optional[float] = 0.0,
                 surrogate_function: Any = None, detach_reset: bool = False,
                 step_mode: str = "s", backend: str = "nerve", store_v_seq: bool = False,
                 time_dim: int = 0):
        super().__init__()
        if step_mode not in ("s", "m"):
            raise ValueError(f"step_mode must be 's' (one step) or 'm' (a sequence), not "
                             f"{step_mode!r}")
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(_BACKENDS)}, not {backend!r}")
        self.v_threshold = _nk._number("v_threshold", v_threshold)
        self.v_reset = None if v_reset is None else _nk._number("v_reset", v_reset)
        self.surrogate_function = Sigmoid() if surrogate_function is None else surrogate_function
        resolve(self.surrogate_function)  # an unknown surrogate fails here, not mid-training
        self.detach_reset = bool(detach_reset)
        self.step_mode = step_mode
        self.backend = backend
        self.store_v_seq = bool(store_v_seq)
        self.time_dim = int(time_dim)
        self.v: Union[float, Tensor] = self._v_rest
        self.v_seq: Optional[Tensor] = None

    @property
    def _v_rest(self) -> float:
        return 0.0 if self.v_reset is None else self.v_reset

    def _set_state(self, v: Union[float, Tensor], v_seq: Optional[Tensor]) -> None:
        """Sets v and v_seq, plain attributes (never parameters, buffers or
        modules), past nn.Module.__setattr__'s registry checks in eager mode:
        a layer sets them at every call and every reset. torch.compile
        traces the plain assignments."""
        if _is_compiling():
            self.v, self.v_seq = v, v_seq
            return
        state = self.__dict__
        state["v"] = v
        state["v_seq"] = v_seq

    def reset(self) -> None:
        """Back to the resting potential (SpikingJelly's ``reset_net`` calls
        this for every module that has it)."""
        self._set_state(self._v_rest, None)

    def detach(self) -> None:
        """Cuts the state from the graph (truncated BPTT)."""
        if isinstance(self.v, torch.Tensor):
            self.v = self.v.detach()

    def extra_repr(self) -> str:
        return (f"v_threshold={self.v_threshold}, v_reset={self.v_reset}, "
                f"detach_reset={self.detach_reset}, step_mode={self.step_mode}, "
                f"backend={self.backend}, store_v_seq={self.store_v_seq}")

    def _key(self) -> str:
        raise NotImplementedError

    def _param(self) -> Optional[Tensor]:
        return None

    def _initial_v(self, x_seq: Tensor, time_dim: int) -> Optional[Tensor]:
        """The potential to start from: None for the resting one (the kernel
        starts there itself), else a tensor of x's dtype and device; a state
        of another shape (a new batch size) starts again from rest."""
        v = self.v
        if not isinstance(v, torch.Tensor):
            if v == self._v_rest:
                return None
            return torch.full_like(x_seq.select(time_dim, 0), float(v))
        shape = x_seq.shape[:time_dim] + x_seq.shape[time_dim + 1:]
        if v.shape != shape:
            return None
        if v.dtype != x_seq.dtype or v.device != x_seq.device:
            v = v.to(dtype=x_seq.dtype, device=x_seq.device)
        return v

    def multi_step_forward(self, x_seq: Tensor) -> Tensor:
        td = _nk.check_sequence(x_seq, self.time_dim)
        v_init = self._initial_v(x_seq, td)
        param = self._param()
        if param is not None:
            _nk.check_param("w", param, x_seq)
        spike, v = _nk.run(self._key(), x_seq, v_init, param, td, self.store_v_seq)
        if self.store_v_seq:
            self._set_state(v.select(td, x_seq.shape[td] - 1), v)
        else:
            self._set_state(v, None)
        return spike


class IFNode(BaseNode):
    """Integrate-and-fire: h = v + x."""

    def __init__(self, v_threshold: float = 1.0, v_reset: Optional[float] = 0.0,
                 surrogate_function: Any = None, detach_reset: bool = False,
                 step_mode: str = "s", backend: str = "nerve", store_v_seq: bool = False,
                 time_dim: int = 0):
        super().__init__(v_threshold, v_reset, surrogate_function, detach_reset, step_mode,
                         backend, store_v_seq, time_dim)

    def _key(self) -> str:
        return _nk.neuron_key("if", self.v_threshold, self.v_reset, self.detach_reset,
                              resolve(self.surrogate_function))


class LIFNode(BaseNode):
    """Leaky integrate-and-fire: h = v + (x - (v - v_reset)) / tau with
    `decay_input`, else h = v - (v - v_reset) / tau + x."""

    def __init__(self, tau: float = 2.0, decay_input: bool = True, v_threshold: float = 1.0,
                 v_reset: Optional[float] = 0.0, surrogate_function: Any = None,
                 detach_reset: bool = False, step_mode: str = "s", backend: str = "nerve",
                 store_v_seq: bool = False, time_dim: int = 0):
        super().__init__(v_threshold, v_reset, surrogate_function, detach_reset, step_mode,
                         backend, store_v_seq, time_dim)
        self.tau = _nk._number("tau", tau)
        self.decay_input = bool(decay_input)
        self._key()  # a bad tau fails here

    def extra_repr(self) -> str:
        return super().extra_repr() + f", tau={self.tau}, decay_input={self.decay_input}"

    def _key(self) -> str:
        return _nk.neuron_key("lif", self.v_threshold, self.v_reset, self.detach_reset,
                              resolve(self.surrogate_function), self.tau, self.decay_input)


class ParametricLIFNode(BaseNode):
    """LIF whose decay sigmoid(w) is learned: `w` is a 0-d parameter,
    initialised to -ln(init_tau - 1) so that the decay starts at 1 / init_tau.
    Its gradient is summed over neurons and steps in a fixed order."""

    def __init__(self, init_tau: float = 2.0, decay_input: bool = True,
                 v_threshold: float = 1.0, v_reset: Optional[float] = 0.0,
                 surrogate_function: Any = None, detach_reset: bool = False,
                 step_mode: str = "s", backend: str = "nerve", store_v_seq: bool = False,
                 time_dim: int = 0):
        super().__init__(v_threshold, v_reset, surrogate_function, detach_reset, step_mode,
                         backend, store_v_seq, time_dim)
        init_tau = _nk._number("init_tau", init_tau)
        if not init_tau > 1:
            raise ValueError(f"init_tau must be greater than 1, not {init_tau}")
        self.decay_input = bool(decay_input)
        self.w = nn.Parameter(torch.as_tensor(-math.log(init_tau - 1.0)))

    def extra_repr(self) -> str:
        with torch.no_grad():
            tau = 1.0 / self.w.sigmoid().item()
        return super().extra_repr() + f", tau={tau}, decay_input={self.decay_input}"

    def _key(self) -> str:
        return _nk.neuron_key("plif", self.v_threshold, self.v_reset, self.detach_reset,
                              resolve(self.surrogate_function), 2.0, self.decay_input)

    def _param(self) -> Optional[Tensor]:
        return self.w
