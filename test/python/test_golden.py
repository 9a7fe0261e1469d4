"""SpikingJelly's golden neuron cases (test/data/golden/neuron) through nerve.torch,
in float64, float32, float16 and bfloat16: forward outputs and every gradient."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import nerve.torch as nt
from nerve.torch import neuron, surrogate

from checks import assert_close, assert_spikes_equal, unsure_neurons

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "golden",
                      "neuron")
CASES = sorted(os.listdir(GOLDEN))
DTYPES = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16,
          "bf16": torch.bfloat16}
_CLASSES = {name: cls for cls in (surrogate.Sigmoid, surrogate.ATan,
                                  surrogate.PiecewiseLeakyReLU, surrogate.S2NN,
                                  surrogate.QPseudoSpike, surrogate.LeakyKReLU,
                                  surrogate.FakeNumericalGradient, surrogate.LogTailedReLU,
                                  surrogate.PiecewiseQuadratic, surrogate.PiecewiseExp,
                                  surrogate.SoftSign, surrogate.SuperSpike, surrogate.Erf)
            for name in [cls().spec[0]]}


def load(case: str):
    folder = os.path.join(GOLDEN, case)
    with open(os.path.join(folder, "case.json")) as f:
        meta = json.load(f)
    arrays = {name[:-4]: torch.from_numpy(np.load(os.path.join(folder, name)))
              for name in os.listdir(folder) if name.endswith(".npy")}
    return meta, arrays


def _run(meta, arrays, dtype, device, use_module):
    sg = _CLASSES[meta["surrogate"]["name"]](**meta["surrogate"]["params"])
    x = arrays["x"].to(dtype).to(device).requires_grad_()
    v_init = arrays["v_init"].to(dtype).to(device).requires_grad_()
    common = dict(v_threshold=meta["v_threshold"], v_reset=meta["v_reset"],
                  detach_reset=meta["detach_reset"], surrogate_function=sg)
    w = None
    if meta["neuron"] == "if":
        spike, v_seq = nt.multistep_if(x, v_init, **common)
    elif meta["neuron"] == "lif":
        spike, v_seq = nt.multistep_lif(x, v_init, meta["decay_input"], meta["tau"], **common)
    elif use_module:
        node = neuron.ParametricLIFNode(decay_input=meta["decay_input"], step_mode="m",
                                        store_v_seq=True, **common).to(device)
        with torch.no_grad():
            node.w.fill_(meta["w"])
        node.v = v_init
        spike, v_seq, w = node(x), node.v_seq, node.w
    else:
        w = torch.tensor(meta["w"], dtype=torch.float64, device=device, requires_grad=True)
        spike, v_seq = nt.multistep_plif(x, v_init, w.sigmoid().to(dtype),
                                         meta["decay_input"], **common)
    grad_spike = arrays["grad_spike"].to(dtype).to(device)
    grad_v_seq = arrays["grad_v_seq"].to(dtype).to(device)
    ((spike * grad_spike).sum() + (v_seq * grad_v_seq).sum()).backward()
    return spike, v_seq, x.grad, v_init.grad, (w.grad if w is not None else None)


def check_case(case: str, dtype_name: str, device: str, use_module: bool = False):
    meta, arrays = load(case)
    dtype = DTYPES[dtype_name]
    spike, v_seq, grad_x, grad_v_init, grad_w = _run(meta, arrays, dtype, device, use_module)
    keep = ~unsure_neurons(arrays["h_seq"], meta["v_threshold"], dtype,
                           surrogate=(meta["surrogate"]["name"], meta["surrogate"]["params"]))
    assert_spikes_equal(spike, arrays["spike"], keep)
    assert_close("v_seq", v_seq, arrays["v_seq"], dtype, keep)
    assert_close("grad_x", grad_x, arrays["grad_x"], dtype, keep)
    assert_close("grad_v_init", grad_v_init, arrays["grad_v_init"], dtype, keep)
    if grad_w is not None and bool(keep.all()):
        assert_close("grad_w", grad_w.reshape(1), arrays["grad_w"], dtype)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("case", CASES)
def test_golden_case(device, case, dtype):
    check_case(case, dtype, device)


@pytest.mark.parametrize("case", [c for c in CASES if "plif" in c])
def test_golden_plif_module(device, case):
    check_case(case, "f32", device, use_module=True)
