"""nerve.torch's SpikingJelly-compatible functions against the float64 reference:
every neuron, reset mode, detach_reset, decay_input and surrogate, in float32,
float64, float16 and bfloat16, forward and backward through autograd."""

from __future__ import annotations

import pytest
import torch

import nerve.torch as nt
from nerve.torch import surrogate

import reference
from checks import assert_close, assert_spikes_equal, random_case, unsure_neurons

SHAPE = (7, 3, 37)

SURROGATES = [
    surrogate.Sigmoid(), surrogate.Sigmoid(alpha=2.5), surrogate.ATan(),
    surrogate.PiecewiseLeakyReLU(), surrogate.PiecewiseLeakyReLU(w=0.5, c=0.05),
    surrogate.S2NN(), surrogate.QPseudoSpike(), surrogate.LeakyKReLU(leak=0.1, k=0.8),
    surrogate.FakeNumericalGradient(), surrogate.LogTailedReLU(alpha=0.05),
    surrogate.PiecewiseQuadratic(), surrogate.PiecewiseExp(), surrogate.SoftSign(),
    surrogate.SuperSpike(), surrogate.Erf(),
]


def _reference_surrogate(sg):
    name, params = sg.spec
    return name, dict(params)


def run_case(kind: str, device: str, dtype: torch.dtype, *, v_reset=0.0, detach_reset=False,
             decay_input=True, tau=2.0, sg=None, seed=0, with_v_init=True,
             v_threshold=1.0, store_v_seq=True, shape=SHAPE):
    """Runs one configuration through nerve and the reference and compares
    every output and gradient."""
    sg = sg or surrogate.Sigmoid()
    case = random_case(shape, dtype, device, seed, with_v_init)
    x = case["x"].clone().requires_grad_()
    v_init = case["v_init"].clone().requires_grad_() if with_v_init else None
    r_tau = torch.tensor(0.43, dtype=dtype, device=device, requires_grad=True)
    common = dict(v_threshold=v_threshold, v_reset=v_reset, detach_reset=detach_reset,
                  surrogate_function=sg)
    if kind == "if":
        spike, v = nt.multistep_if(x, v_init, store_v_seq=store_v_seq, **common)
    elif kind == "lif":
        spike, v = nt.multistep_lif(x, v_init, decay_input, tau, store_v_seq=store_v_seq,
                                    **common)
    else:
        spike, v = nt.multistep_plif(x, v_init, r_tau, decay_input, **common)
    gv = case["grad_v"] if store_v_seq else case["grad_v"][-1]
    loss = (spike * case["grad_spike"]).sum() + (v * gv).sum()
    loss.backward()

    xr = case["x"].double().cpu().requires_grad_()
    vr = case["v_init"].double().cpu().requires_grad_() if with_v_init else None
    rr = r_tau.detach().double().cpu().requires_grad_()
    s_ref, v_ref, h_ref = reference.run(
        kind, xr, vr, v_threshold=v_threshold, v_reset=v_reset, detach_reset=detach_reset,
        tau=tau, decay_input=decay_input, decay=rr, surrogate=_reference_surrogate(sg))
    gs_ref = case["grad_spike"].double().cpu()
    gv_ref = case["grad_v"].double().cpu()
    if not store_v_seq:
        gv_ref = torch.zeros_like(gv_ref)
        gv_ref[-1] = case["grad_v"][-1].double().cpu()
    ((s_ref * gs_ref).sum() + (v_ref * gv_ref).sum()).backward()

    keep = ~unsure_neurons(h_ref, v_threshold, dtype, surrogate=sg.spec)
    assert keep.float().mean() > 0.6
    assert_spikes_equal(spike, s_ref, keep)
    assert_close("v_seq" if store_v_seq else "v", v, v_ref if store_v_seq else v_ref[-1],
                 dtype, keep)
    assert_close("grad_x", x.grad, xr.grad, dtype, keep)
    if with_v_init:
        assert_close("grad_v_init", v_init.grad, vr.grad, dtype, keep)
    if kind == "plif":
        # A sum over every neuron: those left out above cannot be left out here.
        if bool(keep.all()):
            assert_close("grad_r_tau", r_tau.grad, rr.grad, dtype)
    assert spike.dtype == dtype and v.dtype == dtype and x.grad.dtype == dtype


RESETS = [0.0, None, -0.25]


@pytest.mark.parametrize("v_reset", RESETS, ids=["hard0", "soft", "hard-0.25"])
@pytest.mark.parametrize("detach_reset", [False, True], ids=["", "detach"])
def test_if(device, v_reset, detach_reset):
    run_case("if", device, torch.float32, v_reset=v_reset, detach_reset=detach_reset)


@pytest.mark.parametrize("v_reset", RESETS[:2], ids=["hard0", "soft"])
@pytest.mark.parametrize("detach_reset", [False, True], ids=["", "detach"])
@pytest.mark.parametrize("decay_input", [True, False], ids=["decay_input", "no_decay_input"])
def test_lif(device, v_reset, detach_reset, decay_input):
    run_case("lif", device, torch.float32, v_reset=v_reset, detach_reset=detach_reset,
             decay_input=decay_input, tau=3.0 if decay_input else 2.0)


@pytest.mark.parametrize("v_reset", RESETS[:2], ids=["hard0", "soft"])
@pytest.mark.parametrize("detach_reset", [False, True], ids=["", "detach"])
@pytest.mark.parametrize("decay_input", [True, False], ids=["decay_input", "no_decay_input"])
def test_plif(device, v_reset, detach_reset, decay_input):
    run_case("plif", device, torch.float32, v_reset=v_reset, detach_reset=detach_reset,
             decay_input=decay_input)


@pytest.mark.parametrize("sg", SURROGATES, ids=lambda s: repr(s))
def test_surrogates(device, sg):
    run_case("lif", device, torch.float32, sg=sg, seed=3)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16],
                         ids=["f64", "f16", "bf16"])
@pytest.mark.parametrize("kind", ["if", "lif", "plif"])
@pytest.mark.parametrize("v_reset", [0.0, None], ids=["hard", "soft"])
def test_dtypes(device, dtype, kind, v_reset):
    run_case(kind, device, dtype, v_reset=v_reset, seed=5)


@pytest.mark.parametrize("steps", [1, 4, 16, 17, 32, 33, 40])
@pytest.mark.parametrize("kind", ["lif", "plif"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_sequence_lengths(device, steps, kind, dtype):
    """Around the time blocks (16 f32, 32 16-bit steps) and the longest
    sequence a GPU kernel is compiled for (32 steps: one block of them all);
    longer ones are bound at launch."""
    run_case(kind, device, dtype, shape=(steps, 3, 37), seed=steps)


@pytest.mark.parametrize("kind", ["if", "lif"])
def test_last_potential_only(device, kind):
    """store_v_seq=False returns the last potential; its gradient flows back
    through every step."""
    run_case(kind, device, torch.float32, store_v_seq=False, seed=7)


@pytest.mark.parametrize("kind", ["if", "lif", "plif"])
def test_without_v_init(device, kind):
    """v_init=None starts the neurons at rest, as SpikingJelly's modules do."""
    run_case(kind, device, torch.float32, with_v_init=False, seed=11)
    run_case(kind, device, torch.float32, with_v_init=False, v_reset=None, seed=12)


def test_no_grad_writes_no_h(device):
    """Without autograd, forward keeps nothing for backward (inference)."""
    x = torch.randn(5, 16, device=device)
    with torch.no_grad():
        spike, v = nt.multistep_lif(x, None, True, 2.0, 1.0, 0.0, False, surrogate.Sigmoid())
    assert spike.grad_fn is None and not spike.requires_grad
    s_ref, v_ref, _ = reference.run("lif", x.double().cpu(), None)
    assert_spikes_equal(spike, s_ref)
    assert_close("v_seq", v, v_ref, torch.float32)


def test_plif_gradient_is_deterministic(device):
    """r_tau's gradient is reduced in a fixed order: the same bits each run."""
    x = torch.randn(16, 64, 129, device=device) + 0.4
    grads = []
    for _ in range(3):
        r = torch.tensor(0.37, device=device, requires_grad=True)
        spike, v = nt.multistep_plif(x, None, r, True, 1.0, 0.0, False, surrogate.ATan())
        (spike.sum() + 0.3 * v.sum()).backward()
        grads.append(r.grad.item())
    assert grads[0] == grads[1] == grads[2]
