"""pytest setup for nerve's Python tests.

The package comes from $PYTHONPATH (the README's command sets it to
build/python) or, failing that, from this checkout's build/python. Kernels
compile into a fresh cache directory that the session removes. Tests that
need a GPU take the `device` fixture's "cuda" value, marked `gpu`: they run
where PyTorch and nerve both see a GPU and are skipped elsewhere (CI).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

_cache = tempfile.mkdtemp(prefix="nerve-pytest-cache-")
os.environ["NERVE_CACHE_DIR"] = _cache
os.environ.pop("NERVE_CACHE", None)

try:
    import nerve  # noqa: F401
except ImportError:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "build", "python"))
    import nerve  # noqa: F401

import torch  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped without one)")
    config.addinivalue_line("markers", "custom_ops: needs PyTorch >= 2.4 (torch.library ops)")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(_cache, ignore_errors=True)


def _gpu_reason() -> str:
    if not torch.cuda.is_available():
        return "PyTorch sees no CUDA GPU"
    if not nerve.cuda_available():
        return "nerve sees no usable CUDA driver and device"
    return ""


GPU_REASON = _gpu_reason()
HAS_GPU = not GPU_REASON

DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(
    not HAS_GPU, reason=GPU_REASON or "no GPU")])]


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def cuda() -> str:
    if not HAS_GPU:
        pytest.skip(GPU_REASON)
    return "cuda"
