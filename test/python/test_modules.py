"""nerve.torch's neuron modules: SpikingJelly's options, the potential carried
between calls, reset(), single steps, v_seq, PLIF's learned decay, and
SpikingJelly's own surrogate objects."""

from __future__ import annotations

import math

import pytest
import torch

import nerve.torch as nt
from nerve.torch import neuron, surrogate

import reference
from checks import assert_close, assert_spikes_equal, unsure_neurons


def _reference_chain(kind, xs, **kw):
    """The reference over consecutive calls, the potential carried."""
    v, outs = None, []
    for x in xs:
        s, vs, h = reference.run(kind, x, v, **kw)
        outs.append((s, vs, h))
        v = vs[-1]
    return outs


@pytest.mark.parametrize("cls,kind,kw", [
    (neuron.IFNode, "if", {}),
    (neuron.LIFNode, "lif", {"tau": 3.0}),
    (neuron.LIFNode, "lif", {"tau": 2.0, "decay_input": False, "v_reset": None}),
    (neuron.ParametricLIFNode, "plif", {"init_tau": 2.5}),
    (neuron.ParametricLIFNode, "plif", {"init_tau": 4.0, "decay_input": False,
                                        "v_reset": None, "detach_reset": True}),
], ids=["if", "lif", "lif-soft", "plif", "plif-soft-detach"])
def test_state_is_carried_between_calls(device, cls, kind, kw):
    torch.manual_seed(0)
    node = cls(step_mode="m", surrogate_function=surrogate.ATan(), **kw).to(device)
    xs = [torch.randn(6, 4, 33, dtype=torch.float64) * 0.7 + 0.4 for _ in range(3)]
    xs_dev = [x.float().to(device).requires_grad_() for x in xs]
    spikes = [node(x) for x in xs_dev]
    loss = sum((s * (i + 1)).sum() for i, s in enumerate(spikes)) + node.v.sum()
    loss.backward()

    ref_kw = {k: v for k, v in kw.items() if k in ("tau", "decay_input", "v_reset",
                                                    "detach_reset")}
    ref_kw["surrogate"] = ("atan", {"alpha": 2.0})
    xr = [x.clone().requires_grad_() for x in xs]
    w = None
    if kind == "plif":
        w = torch.tensor(-math.log(kw["init_tau"] - 1), dtype=torch.float64,
                         requires_grad=True)
        ref_kw["decay"] = w.sigmoid()
    outs = _reference_chain(kind, xr, **ref_kw)
    ref_loss = sum((o[0] * (i + 1)).sum() for i, o in enumerate(outs)) + outs[-1][1][-1].sum()
    ref_loss.backward()

    for (s, (s_ref, _, h_ref)), x, x_ref in zip(zip(spikes, outs), xs_dev, xr):
        keep = ~unsure_neurons(h_ref, 1.0, torch.float32)
        assert_spikes_equal(s, s_ref, keep)
        assert_close("grad_x", x.grad, x_ref.grad, torch.float32)
    assert_close("v", node.v, outs[-1][1][-1], torch.float32)
    if kind == "plif":
        assert_close("grad_w", node.w.grad, w.grad, torch.float32)


def test_reset_and_defaults(device):
    node = neuron.LIFNode(step_mode="m").to(device)
    assert node.v == 0.0 and node.tau == 2.0 and node.decay_input
    assert isinstance(node.surrogate_function, surrogate.Sigmoid)
    soft = neuron.IFNode(v_reset=None, step_mode="m")
    assert soft.v == 0.0
    # IF charging 0.4 a step: from rest no spike in two steps (0.4, 0.8); the
    # next call starts from 0.8 and fires at once; after reset(), from rest again.
    node = neuron.IFNode(step_mode="m").to(device)
    x = torch.full((2, 10), 0.4, device=device)
    assert node(x).sum().item() == 0
    assert isinstance(node.v, torch.Tensor) and node.v.shape == (10,)
    assert node(x)[0].tolist() == [1.0] * 10
    node.reset()
    assert node.v == 0.0 and node.v_seq is None
    assert node(x).sum().item() == 0


def test_store_v_seq_and_single_steps(device):
    x = torch.randn(5, 3, 7, device=device) * 0.8 + 0.5
    node = neuron.LIFNode(step_mode="m", store_v_seq=True).to(device)
    spikes = node(x)
    assert node.v_seq.shape == x.shape
    assert torch.equal(node.v, node.v_seq[-1])
    # Step by step ('s'), the same spikes and potentials.
    single = neuron.LIFNode(step_mode="s").to(device)
    steps = torch.stack([single(x[t]) for t in range(x.shape[0])])
    assert torch.equal(steps, spikes)
    assert torch.allclose(single.v, node.v)


def test_time_minor(device):
    """time_dim=-1: [N, T] inputs, no transpose."""
    x = torch.randn(5, 9, 40, device=device) * 0.8 + 0.5
    tm = x.permute(1, 2, 0).contiguous()  # [9, 40, 5], time innermost
    node = neuron.LIFNode(step_mode="m", time_dim=-1, store_v_seq=True).to(device)
    ref = neuron.LIFNode(step_mode="m", store_v_seq=True).to(device)
    s = node(tm)
    assert s.shape == tm.shape and s.is_contiguous()
    assert torch.equal(s.permute(2, 0, 1), ref(x))
    assert torch.allclose(node.v, ref.v) and node.v.shape == (9, 40)


def test_new_batch_size_starts_from_rest(device):
    node = neuron.IFNode(step_mode="m").to(device)
    node(torch.ones(3, 8, device=device))
    out = node(torch.full((3, 5), 0.4, device=device))
    # From rest, 0.4 per step fires first at the third step.
    assert out[:, 0].tolist() == [0.0, 0.0, 1.0]


def test_spikingjelly_surrogate_objects_are_understood(device):
    """A SpikingJelly surrogate is recognised by class name and parameters."""
    class Sigmoid(torch.nn.Module):  # what spikingjelly.activation_based.surrogate has
        def __init__(self, alpha=4.0, spiking=True):
            super().__init__()
            self.spiking = spiking
            self._sg_param_names = ("alpha",)
            self.alpha = alpha

        @property
        def _sg_params(self):
            return {"alpha": self.alpha}

    assert surrogate.resolve(Sigmoid(alpha=3.0)) == surrogate.Sigmoid(alpha=3.0).spec
    x = torch.randn(4, 20, device=device, requires_grad=True)
    s1, _ = nt.multistep_lif(x, None, True, 2.0, 1.0, 0.0, False, Sigmoid(alpha=3.0))
    s1.sum().backward()
    g1 = x.grad.clone()
    x.grad = None
    s2, _ = nt.multistep_lif(x, None, True, 2.0, 1.0, 0.0, False, surrogate.Sigmoid(3.0))
    s2.sum().backward()
    assert torch.equal(g1, x.grad)
    with pytest.raises(ValueError, match="not a spiking function"):
        surrogate.resolve(Sigmoid(spiking=False))


def test_plif_module_gradient_is_deterministic(device):
    torch.manual_seed(1)
    x = torch.randn(8, 32, 257, device=device) + 0.3
    grads = []
    for _ in range(3):
        node = neuron.ParametricLIFNode(step_mode="m").to(device)
        node(x).sum().backward()
        grads.append(node.w.grad.item())
    assert grads[0] == grads[1] == grads[2]


def test_a_model_trains(device):
    """Linear -> LIF -> Linear learns a toy task (the loss falls)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), neuron.LIFNode(step_mode="m"),
                                torch.nn.Linear(64, 2)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.rand(6, 32, 16, device=device)
    y = (x[0, :, 0] > 0.5).long()
    losses = []
    for _ in range(60):
        model[1].reset()
        out = model(x).mean(0)
        loss = torch.nn.functional.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
