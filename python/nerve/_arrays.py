"""What a kernel argument is, whatever framework it comes from.

A launch needs, per tensor, a data pointer, sizes and strides in elements,
the element type and where the memory lives. `describe` reads them from a
torch tensor, a NumPy array, anything with ``__cuda_array_interface__``
(CuPy, Numba) or ``__dlpack__`` (through torch's zero-copy importer), without
copying or importing a framework the caller did not use.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Optional, Tuple

# nerve's element types (NerveDType) and their names, NumPy type strings and
# sizes in bytes.
DTYPE_NAMES = ("f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "index")
DTYPE_BYTES = (4, 2, 2, 8, 1, 1, 4, 8, 8)
_TYPESTR_TO_DTYPE = {"<f4": 0, "<f2": 1, "<f8": 3, "|b1": 4, "|i1": 5, "<i4": 6, "<i8": 7}
_DTYPE_TO_TYPESTR = {v: k for k, v in _TYPESTR_TO_DTYPE.items()}
_DTYPE_TO_TYPESTR[8] = "<i8"  # index arguments are 64-bit on every target nerve has


def dtype_name(code: int) -> str:
    return DTYPE_NAMES[code] if 0 <= code < len(DTYPE_NAMES) else f"dtype#{code}"


@dataclass
class ArrayInfo:
    """One tensor argument as nerve needs it."""
    obj: Any
    kind: str  # "torch", "numpy" or "cai"
    ptr: int
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]  # in elements
    dtype: int  # NerveDType; -1 when nerve has no such type
    dtype_text: str  # the framework's name for it, for messages
    device: Optional[int]  # CUDA ordinal, None for host memory


def _torch_dtype_code(dtype: Any) -> int:
    torch = sys.modules["torch"]
    table = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2, torch.float64: 3,
             torch.bool: 4, torch.int8: 5, torch.int32: 6, torch.int64: 7}
    return table.get(dtype, -1)


def torch_dtype(code: int) -> Any:
    import torch
    return (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.bool,
            torch.int8, torch.int32, torch.int64, torch.int64)[code]


def numpy_dtype(code: int) -> Any:
    import numpy
    if code == 2:
        raise TypeError("NumPy has no bfloat16: pass a torch tensor for a bf16 argument")
    return numpy.dtype(_DTYPE_TO_TYPESTR[code])


def _from_torch(obj: Any) -> ArrayInfo:
    device = obj.device
    return ArrayInfo(obj, "torch", obj.data_ptr(), tuple(obj.shape), tuple(obj.stride()),
                     _torch_dtype_code(obj.dtype), str(obj.dtype).replace("torch.", ""),
                     device.index if device.type == "cuda" else None)


def _from_numpy(obj: Any) -> ArrayInfo:
    itemsize = obj.dtype.itemsize
    if any(s % itemsize for s in obj.strides):
        raise ValueError("strides that are not whole elements")
    typestr = obj.dtype.str if obj.dtype.byteorder != ">" else "big-endian"
    return ArrayInfo(obj, "numpy", obj.ctypes.data, tuple(obj.shape),
                     tuple(s // itemsize for s in obj.strides),
                     _TYPESTR_TO_DTYPE.get(typestr, -1), str(obj.dtype), None)


def _from_cai(obj: Any) -> ArrayInfo:
    cai = obj.__cuda_array_interface__
    shape = tuple(cai["shape"])
    typestr = cai["typestr"]
    itemsize = int(typestr[2:])
    if cai.get("strides") is None:
        strides, step = [], 1
        for size in reversed(shape):
            strides.append(step)
            step *= max(size, 1)
        strides = tuple(reversed(strides))
    else:
        if any(s % itemsize for s in cai["strides"]):
            raise ValueError("strides that are not whole elements")
        strides = tuple(s // itemsize for s in cai["strides"])
    device = getattr(obj, "device", None)
    ordinal = getattr(device, "id", None)
    return ArrayInfo(obj, "cai", int(cai["data"][0] or 0), shape, strides,
                     _TYPESTR_TO_DTYPE.get(typestr, -1), typestr,
                     ordinal if isinstance(ordinal, int) else -1)


def is_array(obj: Any) -> bool:
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        return True
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(obj, numpy.ndarray):
        return True
    return hasattr(obj, "__cuda_array_interface__") or hasattr(obj, "__dlpack__")


def describe(obj: Any) -> ArrayInfo:
    """The ArrayInfo of a tensor-like object; TypeError when it is none."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        return _from_torch(obj)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(obj, numpy.ndarray):
        return _from_numpy(obj)
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_cai(obj)
    if hasattr(obj, "__dlpack__"):
        import torch.utils.dlpack
        return _from_torch(torch.utils.dlpack.from_dlpack(obj))
    raise TypeError(f"a {type(obj).__name__} is not a tensor (expected a torch tensor, a "
                    f"NumPy array, or an object with __cuda_array_interface__ or __dlpack__)")


def allocate(like: ArrayInfo, shape: Tuple[int, ...], dtype: int) -> Any:
    """A new row-major array of the framework and device of `like`."""
    if like.kind == "torch":
        import torch
        return torch.empty(shape, dtype=torch_dtype(dtype), device=like.obj.device)
    if like.kind == "numpy":
        import numpy
        return numpy.empty(shape, dtype=numpy_dtype(dtype))
    module = sys.modules.get(type(like.obj).__module__.split(".")[0])
    if module is not None and hasattr(module, "empty"):
        return module.empty(shape, dtype=numpy_dtype(dtype))
    raise TypeError(f"cannot allocate an output like a {type(like.obj).__name__}: pass it")
