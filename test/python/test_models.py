"""Neurons of any model from PyTorch: the built-in nodes and a neuron defined
from Python, against the float64 step functions written here from
neuron-semantics.md §7 and §10 (autograd through a Heaviside step whose
backward is the surrogate's derivative)."""

from __future__ import annotations

import math

import pytest
import torch

from nerve.torch import (AdExNode, ALIFNode, EIFNode, IzhikevichNode, NeuronModel, NeuronNode,
                         QIFNode, multistep_model, surrogate)
from reference import _Heaviside

SIG = ("sigmoid", {"alpha": 4.0})


def spike_of(u):
    return _Heaviside.apply(u, *SIG)


def qif(x, v, w, p, vth, vr, detach):
    h = v + (x + p["a0"] * (v - p["v_rest"]) * (v - p["v_c"])) / p["tau"]
    s = spike_of(h - vth)
    sd = s.detach() if detach else s
    return s, (1 - sd) * h + sd * vr if vr is not None else h - sd * vth, w


def izhikevich(x, v, w, p, vth, vr, detach):
    h = v + (x + p["a0"] * (v - p["v_rest"]) * (v - p["v_c"]) - w) / p["tau"]
    w1 = w + (p["a"] * (h - p["v_rest"]) - w) / p["tau_w"]
    s = spike_of(h - vth)
    sd = s.detach() if detach else s
    v1 = (1 - sd) * h + s * vr if vr is not None else h - sd * vth
    return s, v1, w1 + p["b"] * s


def alif(x, v, a, p, vth, vr, detach):
    theta = vth + p["beta"] * a
    leak = 0.0 if vr is None else vr
    h = v + (x - (v - leak)) / p["tau"]
    s = spike_of(h - theta)
    sd = s.detach() if detach else s
    v1 = (1 - sd) * h + sd * vr if vr is not None else h - sd * theta
    return s, v1, p["rho"] * a + s


def adex(x, v, w, p, vth, vr, detach):
    h = v + (x - (v - p["v_rest"]) + p["delta_t"] * torch.exp((v - p["theta_rh"]) / p["delta_t"])
             - w) / p["tau"]
    w1 = w + (p["a"] * (v - p["v_rest"]) - w) / p["tau_w"]
    s = spike_of(h - vth)
    sd = s.detach() if detach else s
    v1 = (1 - sd) * h + sd * vr if vr is not None else h - sd * vth
    return s, v1, w1 + p["b"] * s


def run_reference(step, x, params, vth, vr, detach, v0=0.0, w0=0.0):
    v = torch.full_like(x[0], v0)
    w = torch.full_like(x[0], w0)
    spikes, vs, ws = [], [], []
    for t in range(x.shape[0]):
        s, v, w = step(x[t], v, w, params, vth, vr, detach)
        spikes.append(s), vs.append(v), ws.append(w)
    return torch.stack(spikes), torch.stack(vs), torch.stack(ws)


CASES = [
    ("qif", QIFNode, dict(tau=2.0, v_c=0.8, a0=1.0, v_rest=0.0, v_reset=-0.1), qif,
     dict(tau=2.0, v_c=0.8, a0=1.0, v_rest=0.0), -0.1, None),
    ("izhikevich", IzhikevichNode, dict(a=0.5, b=0.1, v_reset=0.0), izhikevich,
     dict(tau=2.0, v_c=0.8, a0=1.0, v_rest=-0.1, tau_w=2.0, a=0.5, b=0.1), 0.0, "w"),
    ("alif", ALIFNode, dict(tau=2.0, tau_a=10.0, beta=0.3, v_reset=None), alif,
     dict(tau=2.0, rho=math.exp(-0.1), beta=0.3), None, "a"),
    ("adex", AdExNode, dict(v_reset=0.0), adex,
     dict(tau=2.0, delta_t=1.0, theta_rh=0.8, v_rest=0.0, tau_w=2.0, a=0.5, b=0.1), 0.0, "w"),
]


@pytest.mark.parametrize("name,cls,kwargs,step,params,v_reset,second", CASES,
                         ids=[c[0] for c in CASES])
@pytest.mark.parametrize("detach", [False, True])
def test_builtin_nodes_match_the_step_functions(device, name, cls, kwargs, step, params,
                                                v_reset, second, detach):
    torch.manual_seed(3)
    x = (torch.rand(9, 2, 17, dtype=torch.float64, device=device) * 2.4).requires_grad_()
    g = torch.randn(9, 2, 17, dtype=torch.float64, device=device)
    node = cls(**kwargs, surrogate_function=surrogate.Sigmoid(), detach_reset=detach,
               step_mode="m", store_v_seq=True)
    spike = node(x)
    (spike * g).sum().backward()
    grad_x = x.grad.clone()
    x.grad = None
    # The nodes start from v_reset (0 for soft reset), as SpikingJelly's do.
    ref_spike, ref_v, ref_w = run_reference(step, x, params, 1.0, v_reset, detach,
                                            v0=0.0 if v_reset is None else v_reset)
    (ref_spike * g).sum().backward()
    assert torch.equal(spike, ref_spike.detach())
    torch.testing.assert_close(node.v_seq, ref_v.detach(), rtol=1e-12, atol=1e-12)
    if second is not None:
        torch.testing.assert_close(getattr(node, second), ref_w[-1].detach(), rtol=1e-12,
                                   atol=1e-12)
    torch.testing.assert_close(grad_x, x.grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("detach", [False, True])
def test_last_values_carry_gradients(device, detach):
    """Without store_v_seq the states' last values are the outputs: their
    gradients start the walk back through time (both states here)."""
    torch.manual_seed(5)
    x = (torch.rand(6, 2, 13, dtype=torch.float64, device=device) * 2.4).requires_grad_()
    g, gv, gw = (torch.randn(*shape, dtype=torch.float64, device=device)
                 for shape in ((6, 2, 13), (2, 13), (2, 13)))
    node = IzhikevichNode(a=0.5, b=0.1, v_reset=0.0, surrogate_function=surrogate.Sigmoid(),
                          detach_reset=detach, step_mode="m")
    spike = node(x)
    ((spike * g).sum() + (node.v * gv).sum() + (node.w * gw).sum()).backward()
    params = dict(tau=2.0, v_c=0.8, a0=1.0, v_rest=-0.1, tau_w=2.0, a=0.5, b=0.1)
    xr = x.detach().clone().requires_grad_()
    s, v, w = run_reference(izhikevich, xr, params, 1.0, 0.0, detach)
    ((s * g).sum() + (v[-1] * gv).sum() + (w[-1] * gw).sum()).backward()
    torch.testing.assert_close(node.v, v[-1].detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-10, atol=1e-12)


def test_repeated_calls_reuse_their_kernels(device, monkeypatch):
    """A call whose tensors have the shapes, strides and types of an earlier
    one launches that call's kernel without writing its spec again; another
    shape gets its own."""
    from nerve.torch import _model_ops
    monkeypatch.setattr(_model_ops, "_launchers", {})
    written = []
    original = _model_ops._kernels.entry
    monkeypatch.setattr(_model_ops._kernels, "entry",
                        lambda spec, *a: written.append(spec) or original(spec, *a))
    node = IzhikevichNode(a=0.5, b=0.1, step_mode="m")
    x = torch.rand(5, 3, 7, device=device) * 2
    first = node(x)
    node.reset()
    again = node(x)
    assert len(written) == 1 and torch.equal(first, again)
    node.reset()
    node(torch.rand(5, 4, 7, device=device) * 2)
    assert len(written) == 2


def test_izhikevich_learns_its_parameters(device):
    torch.manual_seed(4)
    x = (torch.rand(7, 3, 11, dtype=torch.float64, device=device) * 2).requires_grad_()
    g = torch.randn(7, 3, 11, dtype=torch.float64, device=device)
    node = IzhikevichNode(a=0.5, b=0.1, step_mode="m", learnable=["tau", "a", "b"])
    node.to(device=device, dtype=torch.float64)
    (node(x) * g).sum().backward()
    # The learnable ones as the node holds them (created in the default
    # dtype, then made float64).
    params = dict(tau=2.0, v_c=0.8, a0=1.0, v_rest=-0.1, tau_w=2.0)
    for k in ("tau", "a", "b"):
        params[k] = getattr(node, k).detach().clone().requires_grad_()
    xr = x.detach().clone().requires_grad_()
    s, _, _ = run_reference(izhikevich, xr, params, 1.0, 0.0, False)
    (s * g).sum().backward()
    for name in ("tau", "a", "b"):
        torch.testing.assert_close(getattr(node, name).grad, params[name].grad, rtol=1e-10,
                                   atol=1e-12)
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-10, atol=1e-12)


def test_a_neuron_defined_from_python(device):
    # An adaptive threshold written as expressions; its states persist
    # between calls and reset() restores them.
    model = NeuronModel.define(
        states={"v": 0.0, "a": 0.0}, params={"tau": 2.0, "beta": 0.5, "rho": 0.9},
        charge="v = v + (x - v) / tau; a = rho * a", threshold="1 + beta * a",
        resets=["v = soft", "a = add 1"])
    layer = NeuronNode(model, learnable=["beta"], step_mode="m")
    layer.to(device)
    torch.manual_seed(5)
    x = (torch.rand(6, 4, 5, device=device) * 3).requires_grad_()
    spike = layer(x)
    spike.sum().backward()
    assert layer.beta.grad is not None and torch.isfinite(layer.beta.grad)
    params = dict(tau=2.0, rho=0.9, beta=torch.tensor(0.5, device=device, requires_grad=True))
    xr = x.detach().clone().requires_grad_()
    ref, ref_v, ref_a = run_reference(alif, xr, params, 1.0, None, False)
    ref.sum().backward()
    assert torch.equal(spike, ref.detach().float())
    torch.testing.assert_close(layer.a, ref_a[-1].detach().float())
    torch.testing.assert_close(x.grad, xr.grad.float(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(layer.beta.grad, params["beta"].grad.float(), rtol=1e-4,
                               atol=1e-5)
    # A second call starts from the states the first left.
    before = layer.v.clone()
    layer(x.detach())
    assert not torch.equal(layer.v, before)
    layer.reset()
    assert layer.v == 0.0 and layer.a == 0.0


def test_forward_saves_what_backward_reads():
    izh = NeuronModel.builtin("izhikevich", {"a": 0.5, "b": 0.1})
    # Without parameter gradients: the charged potential alone.
    assert izh.saves(("x",), ()) == (("v",), (), ())
    # tau's gradient reads x and the adaptation before each step.
    assert izh.saves(("x",), ("tau",)) == (("v",), ("w",), ("x",))
    alif_model = NeuronModel.builtin("alif", v_reset=None)
    h, seq, ins = alif_model.saves(("x",), ())
    assert "a" in seq


def test_mistakes_name_the_argument():
    model = NeuronModel.builtin("qif")
    x = torch.rand(3, 4)
    with pytest.raises(ValueError, match="params: the model has no parameter 'w'"):
        multistep_model(model, x, params={"w": torch.tensor(1.0)})
    with pytest.raises(ValueError, match=r"init\['v'\] must be a tensor of shape \[4\]"):
        multistep_model(model, x, init={"v": torch.zeros(5)})
    with pytest.raises(ValueError, match="learnable: the model has no parameter 'beta'"):
        NeuronNode(model, learnable=["beta"])
    with pytest.raises(Exception, match="unknown built-in neuron 'hh'"):
        NeuronModel.builtin("hh")
    bad = NeuronModel.define(states={"v": 0.0}, charge="v = v + y")
    with pytest.raises(Exception, match="unknown name 'y'"):
        multistep_model(bad, x)
