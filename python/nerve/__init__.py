"""nerve from Python: compile typed-dimension and spiking-neuron specs and run
their kernels on torch tensors, NumPy arrays and CUDA arrays (CuPy).

    import nerve
    m = nerve.compile(open("examples/neuron/lif_forward.mlir").read(), target="cpu")
    spike, v_seq = m.lif_forward(x)

A thin layer over libnerve's C API through ctypes: nothing is compiled
against Python or PyTorch. `nerve.torch` holds SpikingJelly-compatible
neurons for PyTorch models.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from . import _capi
from ._builders import elementwise_kernel, reduction_kernel
from ._capi import NerveError, version
from ._module import Argument, CompileOptions, Entry, Module, compile, default_chip

__all__ = [
    "Argument", "CacheStats", "CompileOptions", "CudaDevice", "Entry", "Module", "NerveError",
    "cache_directory", "cache_stats", "clear_disk_cache", "clear_memory_cache", "compile",
    "cuda_available", "cuda_device", "default_chip", "elementwise_kernel", "get_num_threads",
    "reduction_kernel", "select_cuda_device", "set_num_threads", "version",
]

__version__ = version().split()[1] if len(version().split()) > 1 else "0"


@dataclass(frozen=True)
class CacheStats:
    """What the kernel caches did in this process."""
    memory_hits: int
    disk_hits: int
    misses: int
    stores: int
    discarded: int


def cache_stats() -> CacheStats:
    s = _capi.lib.nerveCacheGetStats()
    return CacheStats(s.memoryHits, s.diskHits, s.misses, s.stores, s.discarded)


def clear_memory_cache() -> None:
    """Forgets the modules compiled in this process (those in use stay)."""
    _capi.lib.nerveCacheClearMemory()


def cache_directory() -> str:
    """The disk cache's directory ($NERVE_CACHE_DIR, else ~/.cache/nerve)."""
    out: list = []
    callback = _capi.STRING_CALLBACK(lambda ref, _user: out.append(ref.text()))
    _capi.lib.nerveCacheGetDirectory(_capi.Handle(None), callback, None)
    return out[0] if out else ""


def clear_disk_cache() -> int:
    """Deletes every entry of the disk cache; returns how many there were."""
    removed = ctypes.c_int64(0)
    _capi.check(_capi.lib.nerveCacheClearDisk(_capi.Handle(None), ctypes.byref(removed)))
    return removed.value


@dataclass(frozen=True)
class CudaDevice:
    """The GPU nerve runs kernels on."""
    ordinal: int
    name: str
    compute_capability: int
    multiprocessors: int
    driver_version: int


def cuda_device() -> CudaDevice:
    """Opens the GPU nerve uses and describes it; NerveError when there is no
    usable driver or device."""
    info = _capi.CudaDeviceInfoStruct()
    _capi.check(_capi.lib.nerveCudaGetDevice(ctypes.byref(info)))
    return CudaDevice(info.ordinal, info.name.decode("utf-8", "replace"),
                      info.computeCapability, info.multiprocessors, info.driverVersion)


def cuda_available() -> bool:
    """Whether a CUDA driver and device are usable."""
    try:
        cuda_device()
        return True
    except NerveError:
        return False


def select_cuda_device(ordinal: int) -> None:
    """Chooses the GPU nerve uses, before its first use of CUDA in the
    process (later, only the one in use can be chosen: one GPU a process).
    Kernels called on tensors choose their device themselves."""
    _capi.check(_capi.lib.nerveCudaSelectDevice(int(ordinal)), ValueError)


def get_num_threads() -> int:
    """The threads the CPU target's kernels run on in this process: the last
    set_num_threads, else $NERVE_NUM_THREADS, else the cores this process may
    run on (as torch.get_num_threads for PyTorch's own CPU ops)."""
    return int(_capi.lib.nerveGetCpuThreads())


def set_num_threads(threads: int) -> None:
    """Sets the threads the CPU target's kernels run on, for the launches that
    follow (0 goes back to the default). Results do not depend on it:
    reductions combine in an order fixed by the shape alone."""
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"threads must be an int, not {type(threads).__name__}")
    _capi.check(_capi.lib.nerveSetCpuThreads(threads), ValueError)
