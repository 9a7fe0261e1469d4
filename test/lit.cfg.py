# -*- Python -*-
# lit configuration for nerve's FileCheck and end-to-end tests.

import ctypes
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "nerve"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "data", "fuzz", "python", "CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.nerve_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%nerve_src", config.nerve_src_root))
config.substitutions.append(("%nerve_version", config.nerve_version))
config.substitutions.append(("%llvm_version", config.llvm_version))
def find_python():
    """A Python 3 that has NumPy: $NERVE_TEST_PYTHON, Debian's (where
    python3-numpy lives), or the first python3 on PATH."""
    import shutil
    import subprocess
    candidates = [os.environ.get("NERVE_TEST_PYTHON"), "/usr/bin/python3", shutil.which("python3")]
    for candidate in candidates:
        if candidate and os.path.exists(candidate) and subprocess.run(
                [candidate, "-c", "import numpy"], capture_output=True).returncode == 0:
            return candidate
    lit_config.warning("no python3 with numpy: end-to-end checks will fail")
    return "python3"


python = find_python()
config.nerve_python = python
config.substitutions.append(("%python", python))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.nerve_tools_dir, append_path=True)

# A stand-in libcuda.so.1 (test/stubs/FakeCuda.cpp): with its directory
# first in LD_LIBRARY_PATH, the CUDA path runs without a GPU.
fake_cuda = os.environ.get("NERVE_FAKE_CUDA_DIR", os.path.join(config.nerve_obj_root, "test", "fake-cuda"))
config.substitutions.append(("%fakecuda", "env LD_LIBRARY_PATH=" + fake_cuda))
# The fake driver is built with the tests; a suite run against installed
# tools (the GPU machine's bundle) has none.
if os.path.exists(os.path.join(fake_cuda, "libcuda.so.1")):
    config.available_features.add("fake-cuda")

# The kernel cache of a test run lives in the build tree and starts empty,
# so every run compiles cold first and never meets a developer's cache.
import shutil
kernel_cache = os.path.join(config.test_exec_root, "kernel-cache")
shutil.rmtree(kernel_cache, ignore_errors=True)
config.environment["NERVE_CACHE_DIR"] = kernel_cache
config.environment.pop("NERVE_CACHE", None)

tools = [ToolSubst("nerve-opt", unresolved="fatal")]
llvm_config.add_tool_substitutions(tools, [config.nerve_tools_dir])


def cuda_device_count():
    """Counts CUDA devices through the driver library, without any toolkit."""
    if os.environ.get("NERVE_TEST_NO_CUDA"):
        return 0
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    if cuda.cuInit(0) != 0:
        return 0
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


# Tests of linking libdevice say `REQUIRES: libdevice`: a CUDA toolkit is
# where nerve finds it ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda).
for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
    if root and os.path.exists(os.path.join(root, "nvvm", "libdevice", "libdevice.10.bc")):
        config.available_features.add("libdevice")
        break

# GPU tests say `REQUIRES: cuda`; without a device lit reports them as
# UNSUPPORTED, so the skip shows in the summary with its count.
if cuda_device_count() > 0:
    config.available_features.add("cuda")
else:
    lit_config.note("no CUDA device: tests marked `REQUIRES: cuda` are reported UNSUPPORTED")
