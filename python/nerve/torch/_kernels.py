"""Compiled neuron kernels, ready to launch with the fewest Python steps.

A `Launcher` is one kernel of one spec together with the argument array of
one call shape: sizes and strides are written once, so a call only sets the
data pointers and calls `nerveEntryLaunch`. Launchers live as long as the
process, keyed by everything that shapes the arguments; modules are keyed by
their spec text (and nerve's own caches answer a repeated spec from memory
or disk).
"""

from __future__ import annotations

import ctypes
import threading
from typing import Dict, List, Optional, Sequence, Tuple

from .. import _capi
from .._capi import ArgValue, NerveError, lib
from .._module import Entry, Module, compile as _compile
from ._layout import TensorLayout

_modules: Dict[Tuple[str, str], Module] = {}
_modules_lock = threading.Lock()
_DATA_OFFSET = ArgValue.data.offset
# nerveEntryLaunch with its two handles passed as the pointers they wrap (a
# struct of one pointer is passed as that pointer by the C calling
# conventions of x86-64 and AArch64): ctypes converts plain integers faster
# than structs.
_VP = ctypes.c_void_p
_launch = ctypes.CFUNCTYPE(_VP, _VP, _VP, _VP, ctypes.c_ssize_t, _VP)(("nerveEntryLaunch", lib))


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
    """A kernel and the argument array for one call shape. Tensors are given
    by layout (None: a 0-d tensor)."""

    def __init__(self, kernel: Entry, layouts: Sequence[Optional[TensorLayout]]):
        self.kernel = kernel  # keeps the module alive
        self._module, self._entry = kernel._compiled.handle.ptr, kernel._handle.ptr
        self._count = len(layouts)
        self._template = (ArgValue * self._count)()
        self._keep: List[object] = []
        for slot, layout in zip(self._template, layouts):
            slot.kind = _capi.ARG_TENSOR
            if layout is None:
                continue
            rank = len(layout.dims)
            sizes = (ctypes.c_int64 * rank)(*layout.sizes)
            strides = (ctypes.c_int64 * rank)(*layout.strides)
            self._keep += [sizes, strides]
            slot.rank, slot.sizes, slot.strides = rank, sizes, strides
        self._local = threading.local()

    def _arguments(self) -> Tuple[ctypes.Array, List[ctypes.c_void_p]]:
        """This thread's copy of the argument array (ctypes releases the GIL
        during the call) and views of its data pointers."""
        local = self._local
        args = type(self._template).from_buffer_copy(self._template)
        size = ctypes.sizeof(ArgValue)
        local.pointers = [ctypes.c_void_p.from_buffer(args, i * size + _DATA_OFFSET)
                          for i in range(self._count)]
        local.args = args
        return args, local.pointers

    def __call__(self, pointers: Sequence[int], stream: int) -> None:
        local = self._local
        try:
            args, slots = local.args, local.pointers
        except AttributeError:
            args, slots = self._arguments()
        for slot, pointer in zip(slots, pointers):
            slot.value = pointer
        status = _launch(self._module, self._entry, args, self._count, stream)
        if status:
            raise NerveError(_capi.message_of(_capi.Handle(status)))
