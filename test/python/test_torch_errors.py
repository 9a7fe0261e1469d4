"""Bad input to nerve.torch is a Python exception that names the argument,
never a crash."""

from __future__ import annotations

import pytest
import torch

import nerve.torch as nt
from nerve.torch import neuron, surrogate

SG = surrogate.Sigmoid()


def test_bad_x_seq():
    with pytest.raises(TypeError, match="x_seq must be a torch.Tensor, not list"):
        nt.multistep_if([1.0], None, 1.0, 0.0, False, SG)
    with pytest.raises(TypeError, match="x_seq is int64"):
        nt.multistep_if(torch.ones(3, 4, dtype=torch.int64), None, 1.0, 0.0, False, SG)
    with pytest.raises(ValueError, match=r"x_seq has 0 dimensions \(shape \[\]\)"):
        nt.multistep_if(torch.tensor(1.0), None, 1.0, 0.0, False, SG)
    with pytest.raises(ValueError, match="no time dimension 3"):
        nt.multistep_if(torch.ones(3, 4), None, 1.0, 0.0, False, SG, time_dim=3)


def test_bad_v_init():
    x = torch.ones(3, 4, 5)
    with pytest.raises(ValueError, match=r"v_init has shape \[4\] but x_seq without its time "
                                         r"dimension has \[4, 5\]"):
        nt.multistep_lif(x, torch.ones(4), True, 2.0, 1.0, 0.0, False, SG)
    with pytest.raises(TypeError, match="v_init is float64 but x_seq is float32"):
        nt.multistep_lif(x, torch.ones(4, 5, dtype=torch.float64), True, 2.0, 1.0, 0.0, False,
                         SG)
    with pytest.raises(TypeError, match="v_init must be a torch.Tensor or None, not float"):
        nt.multistep_lif(x, 0.5, True, 2.0, 1.0, 0.0, False, SG)


def test_bad_constants():
    x = torch.ones(3, 4)
    with pytest.raises(ValueError, match="tau must be greater than 1"):
        nt.multistep_lif(x, None, True, 0.5, 1.0, 0.0, False, SG)
    with pytest.raises(ValueError, match="v_threshold must be finite"):
        nt.multistep_if(x, None, float("inf"), 0.0, False, SG)
    with pytest.raises(TypeError, match="v_reset must be a number, not str"):
        nt.multistep_if(x, None, 1.0, "zero", False, SG)
    with pytest.raises(TypeError, match="tau must be a Python number, not a tensor"):
        nt.multistep_lif(x, None, True, torch.tensor(2.0), 1.0, 0.0, False, SG)
    with pytest.raises(ValueError, match="init_tau must be greater than 1"):
        neuron.ParametricLIFNode(init_tau=1.0)


def test_bad_r_tau():
    x = torch.ones(3, 4)
    with pytest.raises(TypeError, match="r_tau must be a torch.Tensor with one element, not "
                                        "float"):
        nt.multistep_plif(x, None, 0.5, True, 1.0, 0.0, False, SG)
    with pytest.raises(ValueError, match=r"r_tau must have one element, not shape \[2\]"):
        nt.multistep_plif(x, None, torch.ones(2), True, 1.0, 0.0, False, SG)


def test_bad_surrogates():
    x = torch.ones(3, 4)

    class Mystery:
        pass

    with pytest.raises(TypeError, match="surrogate_function Mystery is not one nerve knows"):
        nt.multistep_if(x, None, 1.0, 0.0, False, Mystery())
    with pytest.raises(TypeError, match="surrogate_function is None"):
        nt.multistep_if(x, None, 1.0, 0.0, False, None)
    with pytest.raises(TypeError, match="Sigmoid has no parameter beta"):
        surrogate.Sigmoid(beta=2.0)
    with pytest.raises(TypeError, match="Sigmoid: alpha must be a number"):
        surrogate.Sigmoid(alpha="big")
    with pytest.raises(ValueError, match="not a spiking function"):
        surrogate.ATan(spiking=False)
    with pytest.raises(TypeError, match="is not one nerve knows"):
        neuron.LIFNode(surrogate_function=Mystery())


def test_bad_module_options():
    with pytest.raises(ValueError, match="step_mode must be 's'"):
        neuron.IFNode(step_mode="x")
    with pytest.raises(ValueError, match="backend must be one of"):
        neuron.IFNode(backend="tpu")


def test_devices_must_match(cuda):
    x = torch.ones(3, 4, device="cuda")
    with pytest.raises(ValueError, match="v_init is on cpu but x_seq is on cuda"):
        nt.multistep_if(x, torch.zeros(4), 1.0, 0.0, False, SG)
    with pytest.raises(ValueError, match="r_tau is on cpu but x_seq is on cuda"):
        nt.multistep_plif(x, None, torch.tensor(0.5), True, 1.0, 0.0, False, SG)


def test_operator_called_directly_checks_shapes():
    """The operators check what the functions check, even called alone."""
    from nerve.torch import _ops
    from nerve.torch.neuron_kernel import neuron_key
    key = neuron_key("lif", 1.0, 0.0, False, SG.spec, 2.0, True)
    x = torch.ones(3, 4, 5)
    with pytest.raises(ValueError, match=r"v_init has shape \[4\] but \[4, 5\] was expected"):
        _ops.forward_impl(x, torch.ones(4), None, key, 0, False, True)
    h = torch.ones(3, 4, 5)
    with pytest.raises(ValueError, match=r"grad_spike has shape \[3, 4\] but \[3, 4, 5\]"):
        _ops.backward_impl(h, torch.ones(3, 4), None, None, None, key, 0, True, False, False)
