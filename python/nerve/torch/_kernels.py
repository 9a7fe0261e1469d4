"""Compiled neuron kernels, ready to launch with the fewest host steps.

A `Launcher` is one kernel of one spec prepared for one call shape (a C API
launch plan: sizes, strides and the dimensions they bind are checked and
packed once), so a call passes only the data pointers. Launchers live as
long as the process, keyed by everything that shapes the arguments; modules
are keyed by their spec text (and nerve's own caches answer a repeated spec
from memory or disk).
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from typing import Dict, Optional, Sequence, Tuple

from .. import _capi
from .._capi import ArgValue, Handle, NerveError, lib
from .._module import Entry, Module, compile as _compile, plan_launch as _launch
from ._layout import TensorLayout

_modules: Dict[Tuple[str, str], Module] = {}
_modules_lock = threading.Lock()
_VP = ctypes.c_void_p


def entry(spec: str, target: str, name: str) -> Entry:
    """Kernel `name` of `spec` compiled for `target` ("cpu" or "cuda")."""
    key = (spec, target)
    with _modules_lock:
        module = _modules.get(key)
    if module is None:
        module = _compile(spec, target=target)
        with _modules_lock:
            module = _modules.setdefault(key, module)
    return module[name]


class Launcher:
    """A kernel prepared for one call shape. Tensors are given by layout
    (None: a 0-d tensor); a call gives their data pointers in that order."""

    def __init__(self, kernel: Entry, layouts: Sequence[Optional[TensorLayout]]):
        count = len(layouts)
        args = (ArgValue * count)()
        keep = []
        for slot, layout in zip(args, layouts):
            slot.kind = _capi.ARG_TENSOR
            if layout is None:
                continue
            rank = len(layout.dims)
            sizes = (ctypes.c_int64 * rank)(*layout.sizes)
            strides = (ctypes.c_int64 * rank)(*layout.strides)
            keep += [sizes, strides]
            slot.rank, slot.sizes, slot.strides = rank, sizes, strides
        plan = Handle()
        _capi.check(lib.nerveLaunchPlanCreate(kernel._compiled.handle, kernel._handle, args,
                                              count, ctypes.byref(plan)))
        self._plan = plan.ptr
        self._count = count
        self._pointers = _VP * count
        # Plans are freed with their launcher, but not at interpreter exit,
        # when the CUDA context they would unload from may be gone.
        weakref.finalize(self, lib.nerveLaunchPlanDestroy, plan).atexit = False

    def __call__(self, pointers: Sequence[int], stream: int) -> None:
        status = _launch(self._plan, self._pointers(*pointers), self._count, stream)
        if status:
            raise NerveError(_capi.message_of(Handle(status)))
