"""CUDA specifics: kernels run on the current stream (a side stream's kernel
sees what its producer wrote there), CuPy arrays and DLPack objects, and a
kernel that outlives nothing it needs."""

from __future__ import annotations

import pytest
import torch

import nerve
import nerve.torch as nt
from nerve.torch import surrogate

import reference
from checks import assert_close, assert_spikes_equal

pytestmark = pytest.mark.gpu


def test_side_stream_sees_the_producer(cuda):
    """The producer fills x on a side stream after a long delay; nerve,
    launched on that stream (the current one), must see the values."""
    side = torch.cuda.Stream()
    want = torch.randn(64, 4096, device="cuda") * 0.8 + 0.5
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        x = torch.zeros(64, 4096, device="cuda")
        torch.cuda._sleep(50_000_000)  # ~ tens of ms on the side stream
        x.copy_(want)
        spike, v = nt.multistep_lif(x, None, True, 2.0, 1.0, 0.0, False, surrogate.Sigmoid())
    side.synchronize()
    s_ref, v_ref, _ = reference.run("lif", want.double().cpu(), None)
    assert_spikes_equal(spike, s_ref)
    assert_close("v_seq", v, v_ref, torch.float32)


def test_backward_runs_on_the_current_stream(cuda):
    side = torch.cuda.Stream()
    x = (torch.randn(16, 1000, device="cuda") + 0.4).requires_grad_()
    with torch.cuda.stream(side):
        spike, v = nt.multistep_if(x, None, 1.0, 0.0, False, surrogate.ATan())
        (spike.sum() + v.sum()).backward()
    torch.cuda.synchronize()
    xr = x.detach().double().cpu().requires_grad_()
    s_ref, v_ref, _ = reference.run("if", xr, None, surrogate=("atan", {"alpha": 2.0}))
    (s_ref.sum() + v_ref.sum()).backward()
    assert_close("grad_x", x.grad, xr.grad, torch.float32)


def test_cupy_arrays_and_dlpack(cuda):
    cupy = pytest.importorskip("cupy")
    axpy = nerve.elementwise_kernel("axpy", "f32 x[n], f32 y[n], f32 a", "f32 z[n]",
                                    "z = a * x + y", target="cuda")
    x = cupy.arange(10, dtype=cupy.float32)
    y = cupy.ones(10, dtype=cupy.float32)
    z = axpy(x, y, 3.0)
    assert isinstance(z, cupy.ndarray)
    cupy.testing.assert_allclose(z, 3 * x + 1)
    z2 = axpy(x[::2], y[1::2], 3.0)  # strided views, through a specialisation
    cupy.testing.assert_allclose(z2, 3 * x[::2] + 1)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        z3 = axpy(x, y, -1.0)
    stream.synchronize()
    cupy.testing.assert_allclose(z3, 1 - x)

    class OnlyDLPack:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__()

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    t = torch.arange(10, dtype=torch.float32, device="cuda")
    out = axpy(OnlyDLPack(t), OnlyDLPack(torch.ones_like(t)), 2.0)
    torch.testing.assert_close(out, 2 * t + 1)


def test_large_batch_and_odd_sizes(cuda):
    """Odd neuron counts need no padding (SpikingJelly's half2 path pads)."""
    for n in (1, 31, 65537):
        x = (torch.randn(9, n, device="cuda", dtype=torch.float16) * 0.8 + 0.5)
        spike, v = nt.multistep_lif(x, None, True, 2.0, 1.0, 0.0, False, surrogate.Sigmoid())
        s_ref, v_ref, _ = reference.run("lif", x.double().cpu(), None)
        assert_close("v_seq", v, v_ref, torch.float16)
