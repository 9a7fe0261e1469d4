"""Training a spiking network with nerve's neurons: examples/python/train_digits.py
(two epochs on the digits, on the CPU and the GPU) learns, and matches the
same network on plain PyTorch neurons; SpikingJelly's network helpers
(nerve.torch.functional)."""

from __future__ import annotations

import gzip
import importlib.util
import os

import numpy as np
import pytest
import torch
from torch import nn

from nerve.torch import functional, neuron, surrogate

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "python", "train_digits.py")


def _example():
    spec = importlib.util.spec_from_file_location("train_digits", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _train(tmp_path, *extra):
    digits = _example()
    out = tmp_path / ("history-%d.json" % len(list(tmp_path.iterdir())))
    assert digits.main(["--epochs", "2", "--threads", "2", "--json", str(out), *extra]) == 0
    import json
    return json.loads(out.read_text())["history"]


@pytest.mark.parametrize("neuron_kind", ["lif", "plif"])
def test_digits_learns_and_matches_torch(tmp_path, device, neuron_kind, capsys):
    pytest.importorskip("sklearn", reason="the digits come from scikit-learn (python3-sklearn)")
    args = ["--device", device, "--neuron", neuron_kind]
    ours = _train(tmp_path, *args)
    printed = capsys.readouterr().out
    assert "epoch  2/2" in printed and printed.rstrip().splitlines()[-1].startswith(
        "test accuracy: ")
    assert ours["loss"][1] < ours["loss"][0]
    assert ours["train_accuracy"][1] > ours["train_accuracy"][0]
    assert ours["test_accuracy"][1] > ours["test_accuracy"][0] and ours["test_accuracy"][1] > 0.8
    theirs = _train(tmp_path, *args, "--backend", "torch")
    # The same weights, batches and neuron math: the same run, to rounding.
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=2e-2)
    for key in ("train_accuracy", "test_accuracy"):
        np.testing.assert_allclose(ours[key], theirs[key], atol=0.01)


def test_digits_from_a_csv_file(tmp_path, capsys):
    """--data reads scikit-learn's digits.csv.gz format: 64 pixels, the label."""
    rng = np.random.RandomState(0)
    labels = rng.randint(0, 10, size=200)
    prototypes = rng.randint(0, 17, size=(10, 64))  # one image a class, noisy copies
    pixels = np.clip(prototypes[labels] + rng.randint(-2, 3, size=(200, 64)), 0, 16)
    path = tmp_path / "digits.csv.gz"
    with gzip.open(path, "wt") as f:
        np.savetxt(f, np.hstack([pixels, labels[:, None]]), fmt="%d", delimiter=",")
    history = _train(tmp_path, "--data", str(path), "--batch", "16")
    assert history["loss"][1] < history["loss"][0]
    assert "160 training, 40 test images" in capsys.readouterr().out

    bad = tmp_path / "bad.csv.gz"
    with gzip.open(bad, "wt") as f:
        np.savetxt(f, np.ones((3, 10)), delimiter=",")
    with pytest.raises(ValueError, match="expected 65 columns"):
        _example().load_digits(str(bad))


def test_bad_arguments_name_the_option(capsys):
    digits = _example()
    for argv, option in ((["--epochs", "0"], "--epochs"), (["--lr", "-1"], "--lr")):
        with pytest.raises(SystemExit):
            digits.parse_args(argv)
        assert option + " must be" in capsys.readouterr().err


# --- nerve.torch.functional --------------------------------------------------

class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.sn1 = neuron.LIFNode(surrogate_function=surrogate.ATan())
        self.body = nn.Sequential(nn.Linear(4, 4), neuron.IFNode())


def test_reset_net_puts_every_neuron_at_rest():
    net = _Net()
    functional.set_step_mode(net, "m")
    assert net.sn1.step_mode == "m" and net.body[1].step_mode == "m"
    x = torch.rand(3, 2, 4) * 3
    net.body[1](net.sn1(net.fc(x)))
    assert isinstance(net.sn1.v, torch.Tensor) and isinstance(net.body[1].v, torch.Tensor)
    functional.reset_net(net)
    assert net.sn1.v == 0.0 and net.body[1].v == 0.0


def test_detach_net_cuts_the_state_from_the_graph():
    net = _Net()
    functional.set_step_mode(net, "m")
    net.sn1(net.fc(torch.rand(3, 2, 4) * 3))
    assert net.sn1.v.requires_grad
    functional.detach_net(net)
    assert not net.sn1.v.requires_grad


def test_functional_errors_name_the_argument():
    with pytest.raises(TypeError, match="net must be a torch.nn.Module"):
        functional.reset_net([neuron.IFNode()])
    with pytest.raises(ValueError, match="step_mode must be 's'"):
        functional.set_step_mode(_Net(), "multi")


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_digits_data_parallel_follows_one_process(tmp_path):
    """Two processes (DistributedDataParallel over Gloo, started with the
    environment torchrun gives them) into one fresh kernel cache, which both
    fill at once: the run of one process at the same global batch, step by
    step."""
    pytest.importorskip("sklearn", reason="the digits come from scikit-learn (python3-sklearn)")
    import json
    import subprocess
    import sys
    common = ["--epochs", "2", "--threads", "1", "--log-steps", "1000", "--neuron", "plif"]
    env = dict(os.environ, NERVE_CACHE_DIR=str(tmp_path / "cache"), MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(_free_port()), WORLD_SIZE="2")
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    procs = [subprocess.Popen([sys.executable, EXAMPLE, *common, "--json",
                               str(tmp_path / "two.json")],
                              env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    for p, out in zip(procs, outputs):
        assert p.returncode == 0, out
    assert "x 2 processes" in outputs[0] and outputs[1] == ""  # rank 0 prints
    assert os.listdir(tmp_path / "cache")
    two = json.loads((tmp_path / "two.json").read_text())["history"]
    one = _train(tmp_path, *common[2:])
    assert len(one["step_loss"]) == len(two["step_loss"]) == 90
    # Step for step while rounding has not flipped a spike: the products of
    # 16 rows and of 32 may round differently (PyTorch 2.11's CPU kernels
    # do), and a spike that flips sends the two runs apart, as any two
    # orders of summation would; the first epoch stays within 1e-3.
    np.testing.assert_allclose(two["step_loss"][:40], one["step_loss"][:40], rtol=1e-3)
    np.testing.assert_allclose(two["loss"], one["loss"], rtol=0.05)
    np.testing.assert_allclose(two["test_accuracy"], one["test_accuracy"], atol=0.03)
