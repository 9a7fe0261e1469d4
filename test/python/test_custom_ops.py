"""PyTorch >= 2.4: the neurons are torch.library custom operators with fake
implementations and registered autograd; torch.compile(fullgraph=True)
traces a Linear -> LIF -> Linear model with no graph break and matches eager."""

from __future__ import annotations

import pytest
import torch

import nerve.torch as nt
from nerve.torch import neuron, surrogate

pytestmark = [pytest.mark.custom_ops, pytest.mark.skipif(
    not nt.CUSTOM_OPS, reason=f"PyTorch {torch.__version__} has no torch.library custom ops "
                              f"(2.4 and later): the autograd.Function path runs instead")]


def _key(kind="lif"):
    from nerve.torch.neuron_kernel import neuron_key
    return neuron_key(kind, 1.0, 0.0, False, surrogate.Sigmoid().spec, 2.0, True)


def test_operators_pass_opcheck(device):
    x = torch.randn(5, 3, 8, device=device, requires_grad=True)
    v = torch.randn(3, 8, device=device, requires_grad=True)
    w = torch.tensor(0.2, device=device, requires_grad=True)
    ops = torch.ops.nerve
    torch.library.opcheck(ops.neuron_forward.default, (x, v, None, _key(), 0, True, True))
    torch.library.opcheck(ops.neuron_forward.default,
                          (x.detach(), None, None, _key(), 0, False, False))
    torch.library.opcheck(ops.neuron_forward.default, (x, v, w, _key("plif"), 0, True, True))
    h = torch.randn(5, 3, 8, device=device)
    g = torch.randn(5, 3, 8, device=device)
    torch.library.opcheck(ops.neuron_backward.default,
                          (h, g, g, v.detach(), None, _key(), 0, True, True, False))
    # v_seq=False: the gradient of the last potential alone, per neuron.
    torch.library.opcheck(ops.neuron_backward.default,
                          (h, g, torch.randn(3, 8, device=device), None, None, _key(), 0, False,
                           False, False))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.lif = neuron.LIFNode(step_mode="m", surrogate_function=surrogate.ATan())
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(self.lif(self.fc1(x))).mean(0)


def _train_step(model, x, y):
    model.lif.reset()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return loss.detach()


def test_compile_fullgraph_matches_eager(device):
    torch.manual_seed(0)
    eager = Net().to(device)
    compiled = Net().to(device)
    compiled.load_state_dict(eager.state_dict())
    x = torch.randn(8, 16, 32, device=device)
    y = torch.randint(0, 10, (16,), device=device)
    explanation = torch._dynamo.explain(Net().to(device))(x)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    step = torch.compile(compiled, fullgraph=True)
    for _ in range(2):
        for m in (eager, compiled):
            m.zero_grad()
        want = _train_step(eager, x, y)
        compiled.lif.reset()
        got = torch.nn.functional.cross_entropy(step(x), y)
        got.backward()
        torch.testing.assert_close(got.detach(), want)
        for p, q in zip(compiled.parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-6)


def test_compiled_functions_and_plif(device):
    x = torch.randn(6, 4, 20, device=device, requires_grad=True)
    r = torch.tensor(0.4, device=device, requires_grad=True)

    def f(x, r):
        s, v = nt.multistep_plif(x, None, r, True, 1.0, 0.0, False, surrogate.Sigmoid())
        return s.sum() + v.sum()

    want = f(x, r)
    want.backward()
    gx, gr = x.grad.clone(), r.grad.clone()
    x.grad, r.grad = None, None
    got = torch.compile(f, fullgraph=True)(x, r)
    got.backward()
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(x.grad, gx)
    torch.testing.assert_close(r.grad, gr)


# Neurons of any model: the same, for nerve::model_forward / model_backward.

def _model_key(kind="izhikevich", tensor_params=()):
    from nerve.torch import _model_def, _model_ops
    model = nt.NeuronModel.builtin(kind, {"a": 0.5, "b": 0.1} if kind == "izhikevich" else {})
    return _model_ops._call_key(_model_def._model_json(model), surrogate.Sigmoid().spec, False,
                                False, tuple(tensor_params), 0)


def test_model_operators_pass_opcheck(device):
    from nerve.torch import _model_ops as models
    x = torch.randn(5, 3, 8, device=device, requires_grad=True)
    v = torch.randn(3, 8, device=device, requires_grad=True)
    tau = torch.tensor(2.0, device=device, requires_grad=True)
    key = _model_key(tensor_params=("tau",))
    plan = models._plan_key(key, "f32", True, (True,), True)
    ops = torch.ops.nerve
    torch.library.opcheck(ops.model_forward.default,
                          (x, [v], [True, False], [tau], key, False, plan))
    torch.library.opcheck(ops.model_forward.default,
                          (x, [v], [True, False], [tau], key, True, plan))
    torch.library.opcheck(ops.model_forward.default, (x, [], [False, False], [], _model_key(),
                                                      False, models._plan_key(
                                                          _model_key(), "f32", True, (), True)))
    outs = ops.model_forward.default(x.detach(), [v.detach()], [True, False], [tau.detach()],
                                     key, False, plan)
    hs, seqs = models._kept(models._call_of(key), plan, False, outs)
    g = torch.randn(5, 3, 8, device=device)
    torch.library.opcheck(ops.model_backward.default,
                          (hs, seqs, x.detach(), [v.detach(), None], [tau.detach()], g,
                           [None, None], key, plan, False, True, [True, False], [True]))


class IzhikevichNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.neurons = nt.IzhikevichNode(a=0.5, b=0.1, step_mode="m", learnable=["tau"],
                                         surrogate_function=surrogate.ATan())
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(self.neurons(self.fc1(x))).mean(0)


def test_compiled_model_neurons_match_eager(device):
    torch.manual_seed(0)
    eager = IzhikevichNet().to(device)
    compiled = IzhikevichNet().to(device)
    compiled.load_state_dict(eager.state_dict())
    x = torch.randn(8, 16, 32, device=device)
    y = torch.randint(0, 10, (16,), device=device)
    explanation = torch._dynamo.explain(IzhikevichNet().to(device))(x)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    step = torch.compile(compiled, fullgraph=True)
    for _ in range(2):
        for m in (eager, compiled):
            m.zero_grad()
            m.neurons.reset()
        want = torch.nn.functional.cross_entropy(eager(x), y)
        want.backward()
        got = torch.nn.functional.cross_entropy(step(x), y)
        got.backward()
        torch.testing.assert_close(got.detach(), want.detach())
        for p, q in zip(compiled.parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-6)
