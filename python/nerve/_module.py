"""Compiled modules and their kernels, callable on tensors.

``nerve.compile(spec)`` returns a `Module`; its entries are `Entry` objects
that take torch tensors, NumPy arrays or CUDA arrays (CuPy), check them
against the kernel's signature (errors name the argument), allocate the
outputs not given, and launch on the current stream. A tensor whose layout is
not the spec's (permuted, sliced, channels-last) runs as it is: the entry is
recompiled once for that stride pattern (`nerveSpecializeLayouts`, cached),
never copied. A call on torch tensors whose signature (each tensor's dtype,
shape, strides and device; each scalar; outputs given or not) an earlier
call had reuses that call's launch plan: the checks passed for it, so only
the data pointers and the stream are read again.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _arrays, _capi
from ._capi import ArgValue, Handle, NerveError, StringRef, lib

TARGETS = {"auto": _capi.TARGET_AUTO, "cpu": _capi.TARGET_CPU, "cuda": _capi.TARGET_CUDA}
# nerveLaunchPlanLaunch with its handle passed as the pointer it wraps (a
# struct of one pointer is passed as that pointer by the C calling
# conventions of x86-64 and AArch64): ctypes converts plain integers faster
# than structs.
_VP = ctypes.c_void_p
plan_launch = ctypes.CFUNCTYPE(_VP, _VP, _VP, ctypes.c_ssize_t, _VP)(
    ("nerveLaunchPlanLaunch", lib))
# Call signatures an entry keeps launch plans for (past it, it starts over).
_PLANS_PER_ENTRY = 64


@dataclass(frozen=True)
class CompileOptions:
    """What `compile` passes to nerve (nerve::CompileOptions)."""
    target: str = "auto"
    chip: Optional[str] = None  # None: the GPU's own (sm_80, sm_89, sm_90, sm_100)
    opt_level: int = 3
    fast_math: bool = False
    exact_math: bool = False  # IEEE math in 16-bit kernels too (CompileOptions::exactMath)
    # Contractions as tiled kernels where they can: 16-bit on tensor cores, f32 with
    # IEEE fused multiply-adds (CompileOptions::tensorCores; False: the general loops).
    tensor_cores: bool = True
    # f32 contractions may read their operands as tf32 on tensor cores (10-bit mantissas,
    # f32 sums: torch's allow_tf32). CompileOptions::tf32.
    tf32: bool = False
    # Each kernel's PTX generated at its first launch (CompileOptions::lazyKernels).
    lazy_kernels: bool = False
    # Each kernel compiled at its launches for the sizes they bind
    # (CompileOptions::specializeSizes).
    specialize_sizes: bool = False
    # Dimension sizes fixed at compile time, (name, size) pairs
    # (CompileOptions::staticSizes); compile() also takes a dict.
    static_sizes: Tuple[Tuple[str, int], ...] = ()
    # Compile only this kernel (CompileOptions::entry); empty: all.
    entry: str = ""
    libdevice: str = ""
    neuron_time_block: int = 0
    # CPU target: threads this module's launches run on; 0 follows
    # nerve.get_num_threads() at each launch (CompileOptions::cpuThreads).
    cpu_threads: int = 0
    cache: bool = True
    cache_dir: str = ""
    cache_max_bytes: int = 0

    def handle(self, source_name: str = "spec") -> "_OptionsHandle":
        return _OptionsHandle(self, source_name)


class _OptionsHandle:
    """A NerveCompileOptions for the time of a `with` block."""

    def __init__(self, options: CompileOptions, source_name: str):
        if options.target not in TARGETS:
            raise ValueError(f"target must be one of {', '.join(TARGETS)}, not "
                             f"{options.target!r}")
        self.options, self.source_name = options, source_name

    def __enter__(self) -> Handle:
        o, h = self.options, lib.nerveCompileOptionsCreate()
        self.h = h
        lib.nerveCompileOptionsSetTarget(h, TARGETS[o.target])
        chip = o.chip
        if chip is None and o.target != "cpu":
            chip = default_chip()
        if chip:
            lib.nerveCompileOptionsSetChip(h, StringRef.of(chip))
        lib.nerveCompileOptionsSetOptLevel(h, int(o.opt_level))
        lib.nerveCompileOptionsSetFastMath(h, bool(o.fast_math))
        lib.nerveCompileOptionsSetExactMath(h, bool(o.exact_math))
        lib.nerveCompileOptionsSetTensorCores(h, bool(o.tensor_cores))
        lib.nerveCompileOptionsSetTF32(h, bool(o.tf32))
        lib.nerveCompileOptionsSetLazyKernels(h, bool(o.lazy_kernels))
        lib.nerveCompileOptionsSetSpecializeSizes(h, bool(o.specialize_sizes))
        for name, size in o.static_sizes:
            lib.nerveCompileOptionsSetStaticSize(h, StringRef.of(name), size)
        lib.nerveCompileOptionsSetEntry(h, StringRef.of(o.entry))
        lib.nerveCompileOptionsSetLibdevice(h, StringRef.of(o.libdevice))
        lib.nerveCompileOptionsSetNeuronTimeBlock(h, int(o.neuron_time_block))
        lib.nerveCompileOptionsSetCpuThreads(h, int(o.cpu_threads))
        lib.nerveCompileOptionsSetSourceName(h, StringRef.of(self.source_name))
        lib.nerveCompileOptionsSetCache(h, bool(o.cache))
        lib.nerveCompileOptionsSetCacheDir(h, StringRef.of(o.cache_dir))
        lib.nerveCompileOptionsSetCacheMaxBytes(h, int(o.cache_max_bytes))
        return h

    def __exit__(self, *exc: Any) -> None:
        lib.nerveCompileOptionsDestroy(self.h)


_chip_lock = threading.Lock()
_chip: Optional[str] = None


def default_chip() -> str:
    """The chip of the GPU nerve uses (sm_90 when there is none, for PTX
    emitted without a GPU)."""
    global _chip
    with _chip_lock:
        if _chip is None:
            info = _capi.CudaDeviceInfoStruct()
            if _capi.message_of(lib.nerveCudaGetDevice(ctypes.byref(info))) is None:
                # nerve's own table; a GPU older than any chip gets sm_80,
                # which its driver then refuses with a message.
                _chip = (lib.nerveChipForComputeCapability(info.computeCapability).text()
                         or "sm_80")
            else:
                _chip = "sm_90"
        return _chip


@dataclass(frozen=True)
class Argument:
    """A kernel argument as its spec declares it."""
    name: str
    is_output: bool
    is_tensor: bool
    dtype: str
    dims: Tuple[str, ...]  # layout order, outermost first
    sizes: Tuple[Optional[int], ...]  # None where bound at launch
    strides: Optional[Tuple[Optional[int], ...]]  # None: row-major; None entries: at launch
    dtype_code: int

    def describe(self) -> str:
        if not self.is_tensor:
            return f"a {self.dtype} scalar"
        return f"a {self.dtype} tensor over ({', '.join(self.dims)})"


def _read_argument(handle: Handle) -> Argument:
    rank = lib.nerveArgInfoGetRank(handle)
    dims = tuple(lib.nerveArgInfoGetDimName(handle, i).text() for i in range(rank))
    sizes = tuple(None if s < 0 else s for s in
                  (lib.nerveArgInfoGetStaticSize(handle, i) for i in range(rank)))
    strides = None
    if lib.nerveArgInfoHasStrides(handle):
        strides = tuple(None if s < 0 else s for s in
                        (lib.nerveArgInfoGetStride(handle, i) for i in range(rank)))
    code = lib.nerveArgInfoGetDType(handle)
    return Argument(lib.nerveArgInfoGetName(handle).text(), lib.nerveArgInfoIsOutput(handle),
                    lib.nerveArgInfoIsTensor(handle), _arrays.dtype_name(code), dims, sizes,
                    strides, code)


class _Compiled:
    """Owns one NerveModule."""

    def __init__(self, handle: Handle):
        self.handle = handle

    def __del__(self) -> None:
        if self.handle and lib is not None:
            lib.nerveModuleDestroy(self.handle)
            self.handle = Handle(None)


def _compile_text(text: str, options: CompileOptions, source_name: str) -> _Compiled:
    result = Handle()
    with options.handle(source_name) as h:
        _capi.check(lib.nerveCompile(StringRef.of(text), h, ctypes.byref(result)))
    return _Compiled(result)


class Module:
    """A compiled spec. Its kernels are `entries` (by name), also reachable as
    attributes (``module.lif_forward(x)``) and items (``module["lif_forward"]``)."""

    def __init__(self, spec: str, options: CompileOptions, source_name: str = "spec"):
        self.spec, self.options, self.source_name = spec, options, source_name
        self._compiled = _compile_text(spec, options, source_name)
        h = self._compiled.handle
        self.target = "cuda" if lib.nerveModuleGetTarget(h) == _capi.TARGET_CUDA else "cpu"
        self.entries: Dict[str, Entry] = {}
        for i in range(lib.nerveModuleGetNumEntries(h)):
            entry = Entry(self, self._compiled, lib.nerveModuleGetEntry(h, i))
            self.entries[entry.name] = entry
        self._specialized: Dict[Tuple, Tuple["Entry", Tuple]] = {}
        self._lock = threading.Lock()

    def __getitem__(self, name: str) -> "Entry":
        try:
            return self.entries[name]
        except KeyError:
            raise KeyError(f"the module has no kernel @{name} (it has "
                           f"{', '.join('@' + n for n in self.entries)})") from None

    def __getattr__(self, name: str) -> "Entry":
        entries = self.__dict__.get("entries")
        if entries is not None and name in entries:
            return entries[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        return f"<nerve.Module {self.target} {', '.join('@' + n for n in self.entries)}>"

    @property
    def ptx(self) -> str:
        return lib.nerveModuleGetPTX(self._compiled.handle).text()

    @property
    def llvm_ir(self) -> str:
        return lib.nerveModuleGetLLVMIR(self._compiled.handle).text()

    @property
    def compile_times(self) -> List[Tuple[str, float]]:
        """(stage, milliseconds) for every stage of compiling and loading."""
        h, out = self._compiled.handle, []
        for i in range(lib.nerveModuleGetNumCompileTimes(h)):
            stage, ms = StringRef(), ctypes.c_double()
            lib.nerveModuleGetCompileTime(h, i, ctypes.byref(stage), ctypes.byref(ms))
            out.append((stage.text(), ms.value))
        return out

    def specialized(self, entry: "Entry", orders: Tuple) -> "Entry":
        """`entry` compiled for the argument layouts `orders` (one (order,
        unit_innermost) or None per argument), cached."""
        key = (entry.name, orders)
        with self._lock:
            found = self._specialized.get(key)
        if found is not None:
            return found
        layouts = (_capi.ArgLayout * len(orders))()
        keep = []
        for i, layout in enumerate(orders):
            if layout is None:
                continue
            order, unit = layout
            array = (ctypes.c_int32 * len(order))(*order)
            keep.append(array)
            layouts[i] = _capi.ArgLayout(array, len(order), unit)
        text = _capi.with_string(lambda cb, user: lib.nerveSpecializeLayouts(
            StringRef.of(self.spec), StringRef.of(entry.name), layouts, len(orders), cb, user))
        compiled = _compile_text(text, self.options, self.source_name)
        found = Entry(self, compiled, lib.nerveModuleLookupEntry(compiled.handle,
                                                                 StringRef.of(entry.name)))
        with self._lock:
            self._specialized[key] = found
        return found


_selected_devices: set = set()


def use_cuda_device(ordinal: int, what: str) -> None:
    """Makes nerve use CUDA device `ordinal` (once per process)."""
    if ordinal in _selected_devices:
        return
    text = _capi.message_of(lib.nerveCudaSelectDevice(int(ordinal)))
    if text is not None:
        raise ValueError(f"{what} is on cuda:{ordinal}: {text}")
    _selected_devices.add(ordinal)


def current_stream(info: _arrays.ArrayInfo) -> int:
    """The stream kernels on `info`'s device run on: PyTorch's or CuPy's
    current one, else the default stream."""
    if info.kind == "torch":
        import torch
        return torch.cuda.current_stream(info.obj.device).cuda_stream
    module = sys.modules.get(type(info.obj).__module__.split(".")[0])
    cuda = getattr(module, "cuda", None)
    if cuda is not None and hasattr(cuda, "get_current_stream"):
        return cuda.get_current_stream().ptr
    return 0


def _stream_handle(stream: Any) -> int:
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    for attribute in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attribute, None)
        if isinstance(value, int):
            return value
    raise TypeError(f"stream must be an int (a CUstream), a torch.cuda.Stream or a CuPy "
                    f"stream, not a {type(stream).__name__}")


def _row_major(sizes: Sequence[int]) -> List[int]:
    strides, step = [0] * len(sizes), 1
    for d in range(len(sizes) - 1, -1, -1):
        strides[d] = step
        step *= max(sizes[d], 1)
    return strides


def _matches_layout(arg: Argument, shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether a tensor of this shape and these strides has `arg`'s layout
    (dimensions of size 1 have no stride that matters)."""
    expected: Sequence[Optional[int]] = (arg.strides if arg.strides is not None
                                         else _row_major(shape))
    return all(size <= 1 or want is None or want == got
               for size, want, got in zip(shape, expected, strides))


def _layout_of(shape: Sequence[int], strides: Sequence[int]) -> Tuple[Tuple[int, ...], bool]:
    """The memory order (outermost first) of a tensor, and whether its
    innermost dimension is contiguous. Dimensions of size 1 go outermost."""
    order = sorted(range(len(shape)),
                   key=lambda d: (shape[d] > 1, -abs(strides[d]) if shape[d] > 1 else 0, d))
    inner = order[-1] if order else None
    unit = inner is None or shape[inner] <= 1 or strides[inner] == 1
    return tuple(order), unit


def _non_overlapping(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether no two elements of a strided tensor share memory."""
    dims = sorted((abs(st), sz) for sz, st in zip(shape, strides) if sz > 1)
    extent = 1
    for stride, size in dims:
        if stride < extent:
            return False
        extent = stride * (size - 1) + extent
    return True


class Entry:
    """A kernel: call it with the inputs (and, optionally, outputs) as the
    spec declares them, positionally or by name; it returns the outputs."""

    def __init__(self, module: Module, compiled: _Compiled, handle: Handle):
        self.module, self._compiled, self._handle = module, compiled, handle
        self.name = lib.nerveEntryGetName(handle).text()
        self.arguments = tuple(_read_argument(lib.nerveEntryGetArg(handle, i))
                               for i in range(lib.nerveEntryGetNumArgs(handle)))
        self.inputs = tuple(a for a in self.arguments if not a.is_output)
        self.outputs = tuple(a for a in self.arguments if a.is_output)
        self.variable_dims = tuple(lib.nerveEntryGetVariableDim(handle, i).text()
                                   for i in range(lib.nerveEntryGetNumVariableDims(handle)))
        self._tensor_slots = tuple(i for i, a in enumerate(self.arguments) if a.is_tensor)
        self._output_slots = tuple(i for i, a in enumerate(self.arguments) if a.is_output)
        self._plans: Dict[Tuple, _CallPlan] = {}

    def __repr__(self) -> str:
        args = ", ".join(f"%{a.name}: {a.describe()}" for a in self.inputs)
        outs = ", ".join(f"%{a.name}: {a.describe()}" for a in self.outputs)
        return f"<nerve kernel @{self.name}({args}) -> ({outs})>"

    def _bind(self, args: Tuple, named: Dict[str, Any]) -> List[Any]:
        if len(args) > len(self.arguments):
            raise TypeError(f"kernel @{self.name} takes {len(self.inputs)} inputs and "
                            f"{len(self.outputs)} outputs but {len(args)} arguments were given")
        values: List[Any] = list(args) + [None] * (len(self.arguments) - len(args))
        names = [a.name for a in self.arguments]
        for key, value in named.items():
            if key not in names:
                raise TypeError(f"kernel @{self.name} has no argument %{key} (it has "
                                f"{', '.join('%' + n for n in names)})")
            if names.index(key) < len(args):
                raise TypeError(f"argument %{key} of kernel @{self.name} was given twice")
            values[names.index(key)] = value
        for arg, value in zip(self.arguments, values):
            if value is None and not arg.is_output:
                raise TypeError(f"kernel @{self.name}: input %{arg.name} ({arg.describe()}) "
                                f"was not given")
        return values

    def _check_tensor(self, arg: Argument, value: Any) -> _arrays.ArrayInfo:
        what = f"argument %{arg.name}"
        if not _arrays.is_array(value):
            raise TypeError(f"{what} is {arg.describe()} but a {type(value).__name__} "
                            f"was given")
        try:
            info = _arrays.describe(value)
        except ValueError as e:
            raise ValueError(f"{what} has {e}") from None
        if info.dtype != arg.dtype_code:
            raise TypeError(f"{what} is {arg.dtype} but a {info.dtype_text} tensor was given")
        if len(info.shape) != len(arg.dims):
            raise ValueError(f"{what} has {len(arg.dims)} dimensions ({', '.join(arg.dims)}) "
                             f"but a tensor with {len(info.shape)} was given "
                             f"(shape {list(info.shape)})")
        on_gpu = info.device is not None
        if self.module.target == "cuda" and not on_gpu:
            raise ValueError(f"{what} is in host memory but kernel @{self.name} runs on the "
                             f"GPU: move it to the GPU first")
        if self.module.target == "cpu" and on_gpu:
            raise ValueError(f"{what} is on the GPU but kernel @{self.name} was compiled "
                             f"for the CPU")
        if arg.is_output and not _non_overlapping(info.shape, info.strides):
            raise ValueError(f"{what} is an output whose elements overlap in memory "
                             f"(strides {list(info.strides)}): give it a tensor of its own")
        return info

    def _dim_sizes(self, infos: List[Optional[_arrays.ArrayInfo]]) -> Dict[str, int]:
        sizes: Dict[str, int] = {}
        for arg, info in zip(self.arguments, infos):
            if info is None:
                continue
            for dim, size in zip(arg.dims, info.shape):
                sizes.setdefault(dim, size)
        return sizes

    def _allocate(self, arg: Argument, sizes: Dict[str, int],
                  like: Optional[_arrays.ArrayInfo]) -> _arrays.ArrayInfo:
        shape = []
        for dim, static in zip(arg.dims, arg.sizes):
            size = static if static is not None else sizes.get(dim)
            if size is None and "/" in dim:
                base, factor = dim.split("/", 1)
                if base in sizes:
                    size = sizes[base] // int(factor)
            if size is None:
                raise ValueError(f"output %{arg.name} has dimension `{dim}`, whose size no "
                                 f"input gives: pass %{arg.name}")
            shape.append(size)
        if like is None:
            if self.module.target == "cuda":
                raise ValueError(f"kernel @{self.name} has no tensor input to allocate "
                                 f"output %{arg.name} like: pass it")
            import numpy
            return _arrays.describe(numpy.empty(tuple(shape),
                                                dtype=_arrays.numpy_dtype(arg.dtype_code)))
        return _arrays.describe(_arrays.allocate(like, tuple(shape), arg.dtype_code))

    def __call__(self, *args: Any, stream: Any = None, **named: Any) -> Any:
        values = self._bind(args, named)
        key = self._call_key(values, stream)
        plan = self._plans.get(key) if key is not None else None
        if plan is not None:
            plan.run(values, plan.stream_of(stream))
            return self._outputs_of(values)
        given = [v is not None for v in values]
        infos: List[Optional[_arrays.ArrayInfo]] = []
        for arg, value in zip(self.arguments, values):
            if arg.is_tensor and value is not None:
                infos.append(self._check_tensor(arg, value))
            else:
                infos.append(None)
        tensors = [i for i in infos if i is not None]
        like = tensors[0] if tensors else None
        sizes = self._dim_sizes(infos)
        for i, arg in enumerate(self.arguments):
            if arg.is_output and infos[i] is None:
                infos[i] = self._allocate(arg, sizes, like)
                values[i] = infos[i].obj
        launch_stream = self._prepare_device(infos, like, stream)
        entry, orders = self._entry_for(infos)
        plan = self._plan_for(key, entry, orders, values, infos, given, like)
        if plan is not None:
            plan.run(values, launch_stream)
        else:
            self._launch(entry, orders, values, infos, launch_stream)
        return self._outputs_of(values)

    def _outputs_of(self, values: List[Any]) -> Any:
        outputs = tuple(values[i] for i in self._output_slots)
        return outputs[0] if len(outputs) == 1 else outputs

    def _call_key(self, values: List[Any], stream: Any) -> Optional[Tuple]:
        """The call's signature when every tensor is a torch.Tensor (each
        one's dtype, shape, strides and device; each scalar's type and
        value; which outputs were given), else None."""
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        key: List[Any] = [stream is None]
        tensor = torch.Tensor
        for arg, value in zip(self.arguments, values):
            if value is None:
                key.append(None)
            elif type(value) is tensor:
                key.append((value.dtype, value.shape, value.stride(), value.device))
            elif not arg.is_tensor and type(value) in (int, float, bool):
                key.append((type(value), value))
            else:
                return None
        return tuple(key)

    def _plan_for(self, key: Optional[Tuple], entry: "Entry", orders: Tuple, values: List[Any],
                  infos: List[Optional[_arrays.ArrayInfo]], given: List[bool],
                  like: Optional[_arrays.ArrayInfo]) -> Optional["_CallPlan"]:
        """The launch plan of a checked call with signature `key`, kept for
        the calls that repeat it; None where there is no signature or the
        plan is refused (the call then launches as it is, and raises what
        it must)."""
        if key is None:
            return None
        allocations = {}
        for i in self._tensor_slots:
            if not given[i]:
                out = values[i]
                if type(out) is not sys.modules["torch"].Tensor:
                    return None  # allocated as a NumPy array: no tensor to allocate like
                allocations[i] = (tuple(out.shape), out.dtype, out.device)
        array, _keep = self._arg_values(orders, values, infos)
        handle = Handle()
        status = lib.nerveLaunchPlanCreate(entry._compiled.handle, entry._handle, array,
                                           len(self.arguments), ctypes.byref(handle))
        if _capi.message_of(status) is not None:
            return None
        cuda = self.module.target == "cuda"
        device = like.obj.device if cuda and like is not None else None
        if len(self._plans) >= _PLANS_PER_ENTRY:
            self._plans.clear()
        plan = self._plans[key] = _CallPlan(handle, self._tensor_slots, allocations, cuda, device)
        return plan

    def _prepare_device(self, infos: List[Optional[_arrays.ArrayInfo]],
                        like: Optional[_arrays.ArrayInfo], stream: Any) -> int:
        if self.module.target != "cuda":
            return 0
        devices = {(a.name, i.device) for a, i in zip(self.arguments, infos) if i is not None}
        ordinals = {d for _, d in devices if d is not None and d >= 0}
        if len(ordinals) > 1:
            where = ", ".join(f"%{n} on cuda:{d}" for n, d in sorted(devices) if d is not None)
            raise ValueError(f"kernel @{self.name}: the tensors are on different GPUs ({where})")
        if ordinals:
            ordinal = ordinals.pop()
            first = next(n for n, d in sorted(devices) if d == ordinal)
            use_cuda_device(ordinal, f"argument %{first}")
        if stream is not None:
            return _stream_handle(stream)
        return current_stream(like) if like is not None else 0

    def _entry_for(self, infos: List[Optional[_arrays.ArrayInfo]]) -> Tuple["Entry", Tuple]:
        orders = []
        for arg, info in zip(self.arguments, infos):
            if info is None or _matches_layout(arg, info.shape, info.strides):
                orders.append(None)
            else:
                orders.append(_layout_of(info.shape, info.strides))
        orders_key = tuple(orders)
        if all(o is None for o in orders):
            return self, orders_key
        return self.module.specialized(self, orders_key), orders_key

    def _launch(self, entry: "Entry", orders: Tuple, values: List[Any],
                infos: List[Optional[_arrays.ArrayInfo]], stream: int) -> None:
        array, _keep = self._arg_values(orders, values, infos)
        _capi.check(lib.nerveEntryLaunch(entry._compiled.handle, entry._handle, array,
                                         len(self.arguments), stream))

    def _arg_values(self, orders: Tuple, values: List[Any],
                    infos: List[Optional[_arrays.ArrayInfo]]) -> Tuple[Any, List[Any]]:
        """The C API's arguments of a call (tensors in `orders`' dimension
        order), and the ctypes arrays they point into."""
        n = len(self.arguments)
        array = (ArgValue * n)()
        keep: List[Any] = []
        for i, (arg, value, info) in enumerate(zip(self.arguments, values, infos)):
            slot = array[i]
            if info is None:
                self._scalar(arg, value, slot)
                continue
            order = orders[i][0] if orders[i] is not None else range(len(info.shape))
            sizes = (ctypes.c_int64 * len(info.shape))(*(info.shape[d] for d in order))
            strides = (ctypes.c_int64 * len(info.shape))(*(info.strides[d] for d in order))
            keep += [sizes, strides]
            slot.kind, slot.rank, slot.data = _capi.ARG_TENSOR, len(info.shape), info.ptr
            slot.sizes, slot.strides = sizes, strides
        return array, keep

    @staticmethod
    def _scalar(arg: Argument, value: Any, slot: ArgValue) -> None:
        if _arrays.is_array(value):
            raise TypeError(f"argument %{arg.name} is {arg.describe()} but a tensor was given")
        integral = arg.dtype in ("i1", "i8", "i32", "i64", "index")
        try:
            number = int(value) if integral else float(value)
        except (TypeError, ValueError):
            raise TypeError(f"argument %{arg.name} is {arg.describe()} but a "
                            f"{type(value).__name__} was given") from None
        if integral:
            slot.kind, slot.intValue = _capi.ARG_INT, number
        else:
            slot.kind, slot.floatValue = _capi.ARG_FLOAT, number


class _CallPlan:
    """A call signature's launch plan: the outputs it allocates (shape,
    dtype, device, by argument index), whether it runs on a stream (CUDA)
    and whose device's current one it takes, and the tensors whose data
    pointers a launch passes, in argument order."""

    __slots__ = ("plan", "slots", "allocations", "cuda", "device", "pointers", "__weakref__")

    def __init__(self, handle: Handle, slots: Tuple[int, ...],
                 allocations: Dict[int, Tuple], cuda: bool, device: Any):
        self.plan, self.slots, self.allocations = handle.ptr, slots, allocations
        self.cuda, self.device = cuda, device
        self.pointers = _VP * len(slots)
        # Freed with the plan, but not at interpreter exit, when the CUDA
        # context it would unload from may be gone.
        weakref.finalize(self, lib.nerveLaunchPlanDestroy, handle).atexit = False

    def stream_of(self, stream: Any) -> int:
        """The stream a call given `stream` launches on, as the checked path
        chooses it: none on the CPU; `stream`; the tensors' device's current
        one; with no tensor, the default."""
        if self.cuda and stream is not None:
            return _stream_handle(stream)
        if self.cuda and self.device is not None:
            return sys.modules["torch"].cuda.current_stream(self.device).cuda_stream
        return 0

    def run(self, values: List[Any], stream: int) -> None:
        """Allocates the outputs not given (into `values`) and launches on
        `stream` (a CUstream)."""
        torch = sys.modules["torch"]
        pointers = []
        for i in self.slots:
            value = values[i]
            if value is None:
                shape, dtype, device = self.allocations[i]
                value = values[i] = torch.empty(shape, dtype=dtype, device=device)
            pointers.append(value.data_ptr())
        status = plan_launch(self.plan, self.pointers(*pointers), len(self.slots), stream)
        if status:
            raise NerveError(_capi.message_of(Handle(status)))


def compile(spec: Union[str, os.PathLike], target: str = "auto", chip: Optional[str] = None,
            **options: Any) -> Module:
    """Compiles spec text, or the spec in a file (a path), into a Module.

    target: "auto" (CUDA when a GPU is usable, else the CPU), "cpu" or "cuda".
    chip: sm_80, sm_89, sm_90 or sm_100; None: the GPU's own.
    options: opt_level, fast_math, exact_math, tensor_cores, tf32, lazy_kernels, specialize_sizes,
    static_sizes (a dict of dimension sizes), entry, libdevice, neuron_time_block, cpu_threads,
    cache, cache_dir, cache_max_bytes (nerve::CompileOptions).
    """
    if "static_sizes" in options:
        options["static_sizes"] = _static_sizes(options["static_sizes"])
    opts = CompileOptions(target=target, chip=chip, **options)
    text, name = _spec_text(spec)
    return Module(text, opts, name)


def _static_sizes(sizes: Any) -> Tuple[Tuple[str, int], ...]:
    """static_sizes as CompileOptions keeps them, checked."""
    items = sizes.items() if isinstance(sizes, dict) else sizes
    try:
        pairs = [(name, size) for name, size in items]
    except (TypeError, ValueError):
        raise TypeError("static_sizes must map dimension names to sizes, not "
                        f"{type(sizes).__name__}") from None
    for name, size in pairs:
        if not isinstance(name, str):
            raise TypeError(f"static_sizes: dimension name {name!r} is not a str")
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"static_sizes[{name!r}] must be an int, not "
                            f"{type(size).__name__}")
        if size < 0:
            raise ValueError(f"static_sizes[{name!r}] is {size}: sizes are not negative")
    return tuple(sorted(pairs))


def _spec_text(spec: Union[str, os.PathLike]) -> Tuple[str, str]:
    if isinstance(spec, os.PathLike) or (isinstance(spec, str) and "\n" not in spec
                                          and spec.endswith(".mlir")):
        path = os.fspath(spec)
        try:
            with open(path, encoding="utf-8") as f:
                return f.read(), path
        except OSError as e:
            raise NerveError(f"cannot read the spec {path}: {e.strerror}") from None
    if not isinstance(spec, str):
        raise TypeError(f"spec must be spec text or a path, not a {type(spec).__name__}")
    return spec, "spec"
