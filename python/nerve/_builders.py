"""CuPy-style kernels from declarations and expressions (nerve/Builders.h).

    axpy = nerve.elementwise_kernel("axpy", "f32 x[n], f32 y[n], f32 a", "f32 z[n]",
                                    "z = a * x + y")
    z = axpy(x, y, 2.0)                       # torch tensors, NumPy or CuPy arrays

The expression language is the C++ builders' (docs/api.md): it is parsed
and turned into a tdim spec by libnerve, compiled like any spec and cached.
"""

from __future__ import annotations

from typing import Any

from . import _capi
from ._capi import StringRef, lib
from ._module import Entry, compile as _compile


def elementwise_kernel(name: str, inputs: str, outputs: str, body: str, target: str = "auto",
                       **options: Any) -> Entry:
    """An elementwise kernel: `inputs` and `outputs` declare typed, named
    dimensions ("f32 x[b, n], f32 alpha"), `body` assigns the outputs. Returns
    the kernel, callable on tensors; dimensions are matched by name, so an
    input without one of the output's dimensions is broadcast along it."""
    text = _capi.with_string(lambda cb, user: lib.nerveElementwiseSpec(
        StringRef.of(name), StringRef.of(inputs), StringRef.of(outputs), StringRef.of(body),
        cb, user))
    return _compile(text, target=target, **options)[name]


def reduction_kernel(name: str, inputs: str, output: str, map: str, combine: str,
                     identity: str, post: str = "a", target: str = "auto",
                     **options: Any) -> Entry:
    """A reduction, as CuPy's ReductionKernel: `map` turns the inputs at one
    point into a value, `combine` merges `a` and `b`, `identity` is its
    neutral value and `post` turns the result `a` (and `count`, the number
    of values combined) into the output. The output's dimensions are kept;
    every other input dimension is reduced."""
    text = _capi.with_string(lambda cb, user: lib.nerveReductionSpec(
        StringRef.of(name), StringRef.of(inputs), StringRef.of(output), StringRef.of(map),
        StringRef.of(combine), StringRef.of(identity), StringRef.of(post), cb, user))
    return _compile(text, target=target, **options)[name]
