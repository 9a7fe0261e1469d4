"""Layouts run as they are: time-minor, channels-last 5-D, sliced and permuted
views, gradients that arrive broadcast or in another layout. The kernels get
the caller's data pointers (no copy) and outputs keep the input's layout."""

from __future__ import annotations

import pytest
import torch

import nerve.torch as nt
from nerve.torch import _kernels, _layout, _specs, surrogate

import reference
from checks import assert_close, assert_spikes_equal


@pytest.fixture
def launched(monkeypatch):
    """The data pointers of every launch, in kernel argument order."""
    calls = []
    original = _kernels.Launcher.__call__

    def spy(self, pointers, stream):
        calls.append(list(pointers))
        return original(self, pointers, stream)

    monkeypatch.setattr(_kernels.Launcher, "__call__", spy)
    return calls


def _check_against_reference(x_view, time_dim, device):
    """LIF on `x_view` matches the reference on the same values, forward and
    backward, and gradients come back in x's layout."""
    x = x_view.detach().requires_grad_()
    spike, v = nt.multistep_lif(x, None, True, 2.0, 1.0, 0.0, False, surrogate.Sigmoid(),
                                time_dim=time_dim)
    g = torch.linspace(-1, 1, x.numel(), device=device).reshape(x.shape)
    ((spike * g).sum() + v.sum()).backward()
    xr = x.detach().double().cpu().movedim(time_dim, 0).requires_grad_()
    s_ref, v_ref, _ = reference.run("lif", xr, None)
    gr = g.double().cpu().movedim(time_dim, 0)
    ((s_ref * gr).sum() + v_ref.sum()).backward()
    assert_spikes_equal(spike.movedim(time_dim, 0), s_ref)
    assert_close("v_seq", v.movedim(time_dim, 0), v_ref, torch.float32)
    assert_close("grad_x", x.grad.movedim(time_dim, 0), xr.grad, torch.float32)
    return spike, v, x


def test_channels_last_video_is_not_copied(device, launched):
    """[T, B, C, H, W] stored as [T, B, H, W, C]: SpikingJelly makes it
    contiguous; nerve reads it in place and writes channels-last outputs."""
    base = torch.randn(4, 2, 5, 6, 3, device=device) * 0.8 + 0.5  # [T, B, H, W, C]
    x = base.permute(0, 1, 4, 2, 3)  # logical [T, B, C, H, W]
    assert not x.is_contiguous()
    spike, v, xg = _check_against_reference(x, 0, device)
    assert launched[0][0] == x.data_ptr()
    assert spike.stride() == x.stride() and v.stride() == x.stride()
    assert xg.grad.stride() == x.stride()


def test_sliced_view_is_not_copied(device, launched):
    big = torch.randn(6, 10, 40, device=device) * 0.8 + 0.5
    x = big[:, 2:9, 5:37]  # strides of the big tensor
    spike, v, _ = _check_against_reference(x, 0, device)
    assert launched[0][0] == x.data_ptr()
    assert spike.shape == x.shape


def test_time_minor_and_permuted(device, launched):
    x = torch.randn(7, 30, 5, device=device) * 0.8 + 0.5  # [N, M, T]: time innermost
    _check_against_reference(x, 2, device)
    assert launched[0][0] == x.data_ptr()
    y = torch.randn(5, 30, 7, device=device).permute(2, 1, 0) * 0.8 + 0.5  # [N?, M, T] view
    _check_against_reference(y, 2, device)


def test_broadcast_gradients(device):
    """loss = spikes.sum() hands backward a stride-0 gradient."""
    x = (torch.randn(5, 4, 9, device=device) * 0.8 + 0.5).requires_grad_()
    spike, v = nt.multistep_if(x, None, 1.0, 0.0, False, surrogate.ATan())
    (spike.sum() + v.sum()).backward()
    xr = x.detach().double().cpu().requires_grad_()
    s_ref, v_ref, _ = reference.run("if", xr, None, surrogate=("atan", {"alpha": 2.0}))
    (s_ref.sum() + v_ref.sum()).backward()
    assert_close("grad_x", x.grad, xr.grad, torch.float32)


def test_gradient_in_another_layout(device):
    """The upstream gradient is contiguous while x is channels-last."""
    x = (torch.randn(3, 2, 4, 4, 6, device=device) * 0.8 + 0.5).permute(0, 1, 4, 2, 3)
    x = x.detach().requires_grad_()
    spike, v = nt.multistep_lif(x, None, True, 2.0, 1.0, None, False, surrogate.Erf())
    g = torch.randn(x.shape, device=device)  # contiguous in the logical order
    (spike * g).sum().backward()
    xr = x.detach().double().cpu().requires_grad_()
    s_ref, _, _ = reference.run("lif", xr, None, v_reset=None,
                                surrogate=("erf", {"alpha": 2.0}))
    (s_ref * g.double().cpu()).sum().backward()
    assert_close("grad_x", x.grad, xr.grad, torch.float32)


def test_plan_merges_what_every_tensor_stores_contiguously():
    # [T, B, C, H, W] channels-last: B, H, W and C merge into one dimension.
    shape, strides = (4, 2, 3, 5, 6), (180, 90, 1, 18, 3)
    (x,) = _layout.plan(shape, 0, [_layout.Operand(strides, True)])
    assert x.dims == ("t", "n0") and x.sizes == (4, 180) and x.strides == (180, 1)
    # A sliced view keeps the sliced dimension apart.
    (x,) = _layout.plan((6, 7, 32), 0, [_layout.Operand((400, 40, 1), True)])
    assert x.dims == ("t", "n0", "n1") and x.strides == (400, 40, 1)
    # Time-minor, and a state tensor beside it.
    x, v = _layout.plan((7, 30, 5), 2, [_layout.Operand((150, 5, 1), True),
                                        _layout.Operand((30, 1), False)])
    assert x.dims == ("n0", "t") and x.sizes == (210, 5) and x.strides == (5, 1)
    assert v.dims == ("n0",) and v.strides == (1,)
    # A broadcast gradient (stride 0) merges with anything.
    x, g = _layout.plan((3, 4, 5), 0, [_layout.Operand((20, 5, 1), True),
                                       _layout.Operand((0, 0, 0), True)])
    assert x.dims == ("t", "n0") and g.strides == (0, 0) and not g.unit_innermost
    # One neuron.
    (x,) = _layout.plan((9, 1), 0, [_layout.Operand((1, 1), True)])
    assert x.dims == ("n0", "t") and x.sizes == (1, 9) and x.unit_innermost


def test_short_gpu_sequences_are_compiled_for_their_length():
    """T is bound at launch, except on the GPU for sequences of at most 32
    steps, whose kernels are compiled for T (one block of every step)."""
    assert _specs.static_sizes(4, "cuda") == {"t": 4}
    assert _specs.static_sizes(_specs.SHORT_SEQUENCE, "cuda") == {"t": _specs.SHORT_SEQUENCE}
    assert _specs.static_sizes(_specs.SHORT_SEQUENCE + 1, "cuda") == {}
    assert _specs.static_sizes(4, "cpu") == {}
    assert _specs.static_sizes(0, "cuda") == {}
    assert (_specs.tensor_type(("n0", "t"), True, "f32", {"t": 5}) ==
            "!tdim.tensor<[n0: ?, t: 5], f32, strides = [?, 1]>")
    assert (_specs.tensor_type(("t", "n0"), False, "bf16") ==
            "!tdim.tensor<[t: ?, n0: ?], bf16, strides = [?, ?]>")
