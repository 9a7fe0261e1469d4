"""ctypes bindings of nerve's C API (include/nerve-c/nerve.h).

The library is found, in order, at $NERVE_LIBRARY, beside the package
(``<prefix>/lib/libnerve.so.*`` for ``<prefix>/python/nerve``: the build tree,
an install tree and the portable bundle are all laid out so), or wherever the
dynamic loader finds ``libnerve.so``. Nothing here is compiled against Python:
the same files run on any CPython 3 with ctypes.
"""

from __future__ import annotations

import ctypes
import glob
import os
from ctypes import (POINTER, Structure, c_bool, c_char, c_double, c_int, c_int32,
                    c_int64, c_size_t, c_ssize_t, c_uint64, c_void_p)
from typing import Callable, Optional

C_API_VERSION = 5


class NerveError(RuntimeError):
    """A failure nerve reported: a spec that does not compile, a launch the
    driver refused, a cache it could not write. The message is nerve's."""


class StringRef(Structure):
    _fields_ = [("data", c_void_p), ("length", c_size_t)]

    @staticmethod
    def of(text: str) -> "StringRef":
        raw = text.encode("utf-8")
        # ctypes keeps `raw` alive through the buffer object it points into.
        buffer = ctypes.create_string_buffer(raw, len(raw))
        ref = StringRef(ctypes.cast(buffer, c_void_p), len(raw))
        ref._keep = buffer
        return ref

    def text(self) -> str:
        if not self.data or not self.length:
            return ""
        return ctypes.string_at(self.data, self.length).decode("utf-8", "replace")


class Handle(Structure):
    """Every opaque handle: a struct around one pointer."""
    _fields_ = [("ptr", c_void_p)]

    def __bool__(self) -> bool:
        return bool(self.ptr)


class ArgValue(Structure):
    """NerveArgValue: one launch argument."""
    _fields_ = [
        ("kind", c_int32),
        ("rank", c_int32),
        ("data", c_void_p),
        ("sizes", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("floatValue", c_double),
        ("intValue", c_int64),
    ]


class ArgLayout(Structure):
    _fields_ = [("order", POINTER(c_int32)), ("rank", c_int32), ("unitInnermost", c_bool)]


class CacheStatsStruct(Structure):
    _fields_ = [(name, c_uint64) for name in
                ("memoryHits", "diskHits", "misses", "stores", "discarded")]


class CudaDeviceInfoStruct(Structure):
    _fields_ = [
        ("ordinal", c_int32),
        ("computeCapability", c_int32),
        ("multiprocessors", c_int32),
        ("driverVersion", c_int32),
        ("name", c_char * 256),
    ]


ARG_TENSOR, ARG_FLOAT, ARG_INT = 0, 1, 2
TARGET_AUTO, TARGET_CPU, TARGET_CUDA = 0, 1, 2
STRING_CALLBACK = ctypes.CFUNCTYPE(None, StringRef, c_void_p)


def _candidates() -> list:
    explicit = os.environ.get("NERVE_LIBRARY")
    if explicit:
        return [explicit]
    here = os.path.dirname(os.path.abspath(__file__))
    lib = os.path.normpath(os.path.join(here, "..", "..", "lib"))
    found = sorted(glob.glob(os.path.join(lib, "libnerve.so*")), key=len)
    return found + ["libnerve.so", "libnerve.so.0.1"]


def _load() -> ctypes.CDLL:
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("nerve: cannot load libnerve.so (set NERVE_LIBRARY to its path): "
                      + "; ".join(errors))


def _declare(lib: ctypes.CDLL) -> None:
    H = Handle
    S = StringRef
    signatures = {
        "nerveStatusGetMessage": (S, [H]),
        "nerveStatusDestroy": (None, [H]),
        "nerveGetCAPIVersion": (c_int, []),
        "nerveGetVersion": (S, []),
        "nerveCompileOptionsCreate": (H, []),
        "nerveCompileOptionsDestroy": (None, [H]),
        "nerveCompileOptionsSetTarget": (None, [H, c_int]),
        "nerveCompileOptionsSetChip": (None, [H, S]),
        "nerveCompileOptionsSetOptLevel": (None, [H, c_int]),
        "nerveCompileOptionsSetFastMath": (None, [H, c_bool]),
        "nerveCompileOptionsSetExactMath": (None, [H, c_bool]),
        "nerveCompileOptionsSetTensorCores": (None, [H, c_bool]),
        "nerveCompileOptionsSetTF32": (None, [H, c_bool]),
        "nerveCompileOptionsSetLazyKernels": (None, [H, c_bool]),
        "nerveCompileOptionsSetSpecializeSizes": (None, [H, c_bool]),
        "nerveCompileOptionsSetStaticSize": (None, [H, S, c_int64]),
        "nerveCompileOptionsSetEntry": (None, [H, S]),
        "nerveCompileOptionsSetLibdevice": (None, [H, S]),
        "nerveCompileOptionsSetNeuronTimeBlock": (None, [H, c_int]),
        "nerveCompileOptionsSetCpuThreads": (None, [H, c_int]),
        "nerveCompileOptionsSetSourceName": (None, [H, S]),
        "nerveCompileOptionsSetCache": (None, [H, c_bool]),
        "nerveCompileOptionsSetCacheDir": (None, [H, S]),
        "nerveCompileOptionsSetCacheMaxBytes": (None, [H, c_int64]),
        "nerveCompile": (H, [S, H, POINTER(H)]),
        "nerveCompileFile": (H, [S, H, POINTER(H)]),
        "nerveModuleDestroy": (None, [H]),
        "nerveModuleGetTarget": (c_int, [H]),
        "nerveModuleGetNumEntries": (c_ssize_t, [H]),
        "nerveModuleGetEntry": (H, [H, c_ssize_t]),
        "nerveModuleLookupEntry": (H, [H, S]),
        "nerveModuleGetPTX": (S, [H]),
        "nerveModuleGetLLVMIR": (S, [H]),
        "nerveModuleGetNumCompileTimes": (c_ssize_t, [H]),
        "nerveModuleGetCompileTime": (None, [H, c_ssize_t, POINTER(S), POINTER(c_double)]),
        "nerveEntryGetName": (S, [H]),
        "nerveEntryGetNumArgs": (c_ssize_t, [H]),
        "nerveEntryGetArg": (H, [H, c_ssize_t]),
        "nerveEntryGetNumVariableDims": (c_ssize_t, [H]),
        "nerveEntryGetVariableDim": (S, [H, c_ssize_t]),
        "nerveArgInfoGetName": (S, [H]),
        "nerveArgInfoIsOutput": (c_bool, [H]),
        "nerveArgInfoIsTensor": (c_bool, [H]),
        "nerveArgInfoGetDType": (c_int, [H]),
        "nerveArgInfoGetRank": (c_ssize_t, [H]),
        "nerveArgInfoGetDimName": (S, [H, c_ssize_t]),
        "nerveArgInfoGetStaticSize": (c_int64, [H, c_ssize_t]),
        "nerveArgInfoHasStrides": (c_bool, [H]),
        "nerveArgInfoGetStride": (c_int64, [H, c_ssize_t]),
        "nerveArgInfoGetOffset": (c_int64, [H]),
        "nerveEntryLaunch": (H, [H, H, c_void_p, c_ssize_t, c_void_p]),
        "nerveEntryRun": (H, [H, H, c_void_p, c_ssize_t]),
        "nerveLaunchPlanCreate": (H, [H, H, c_void_p, c_ssize_t, POINTER(H)]),
        "nerveLaunchPlanGetNumTensors": (c_ssize_t, [H]),
        "nerveLaunchPlanLaunch": (H, [H, c_void_p, c_ssize_t, c_void_p]),
        "nerveLaunchPlanDestroy": (None, [H]),
        "nerveSpecializeLayouts": (H, [S, S, POINTER(ArgLayout), c_ssize_t, STRING_CALLBACK,
                                       c_void_p]),
        "nerveElementwiseSpec": (H, [S, S, S, S, STRING_CALLBACK, c_void_p]),
        "nerveReductionSpec": (H, [S, S, S, S, S, S, S, STRING_CALLBACK, c_void_p]),
        "nerveNeuronModelSpec": (H, [S, S, S, S, S, S, S, S, STRING_CALLBACK, c_void_p]),
        "nerveBuiltinNeuronDef": (H, [S, S, c_double, c_bool, c_double, STRING_CALLBACK,
                                      c_void_p]),
        "nerveNeuronModelSaves": (H, [S, S, S, S, S, c_bool, c_bool, STRING_CALLBACK,
                                      c_void_p]),
        "nerveCacheGetStats": (CacheStatsStruct, []),
        "nerveCacheClearMemory": (None, []),
        "nerveCacheGetDirectory": (None, [H, STRING_CALLBACK, c_void_p]),
        "nerveCacheIsDiskEnabled": (c_bool, [H]),
        "nerveCacheClearDisk": (H, [H, POINTER(c_int64)]),
        "nerveCudaGetDevice": (H, [POINTER(CudaDeviceInfoStruct)]),
        "nerveCudaSelectDevice": (H, [c_int]),
        "nerveGetCpuThreads": (c_int, []),
        "nerveSetCpuThreads": (H, [c_int]),
        "nerveChipForComputeCapability": (S, [c_int]),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


lib = _load()
_declare(lib)
if lib.nerveGetCAPIVersion() != C_API_VERSION:
    raise ImportError(f"nerve: libnerve's C API is version {lib.nerveGetCAPIVersion()} but "
                      f"this package needs version {C_API_VERSION}: the library and the "
                      f"package come from different builds")


def message_of(status: Handle) -> Optional[str]:
    """The message of a failed status (freeing it), None for success."""
    if not status.ptr:
        return None
    text = lib.nerveStatusGetMessage(status).text()
    lib.nerveStatusDestroy(status)
    return text


def check(status: Handle, error: Callable[[str], Exception] = NerveError) -> None:
    """Raises `error(message)` when `status` failed."""
    text = message_of(status)
    if text is not None:
        raise error(text)


def with_string(call: Callable[[object, None], Handle]) -> str:
    """Runs a C function that hands back a string through a callback."""
    out: list = []

    def collect(ref: StringRef, _user: int) -> None:
        out.append(ref.text())

    callback = STRING_CALLBACK(collect)
    check(call(callback, None))
    return out[0] if out else ""


def version() -> str:
    """nerve's and LLVM's versions."""
    return lib.nerveGetVersion().text()
