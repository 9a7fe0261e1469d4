"""The CPU target's threads from Python: nerve.get_num_threads /
set_num_threads, compile(cpu_threads=...), $NERVE_NUM_THREADS; results do not
depend on them (reductions combine in an order the shape fixes)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import nerve
import nerve.torch

SPEC = """
!m = !tdim.tensor<[r: ?, c: ?], f32>
!one = !tdim.tensor<[], f32>
!row = !tdim.tensor<[r: ?], f32>
tdim.kernel @total(%x: !m) -> (%t: !one) {
  tdim.reduce ins(%x : !m) outs(%t : !one) over [r, c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tdim.yield %s : f32
    }
  tdim.return
}
tdim.kernel @rows(%x: !m) -> (%y: !m) {
  tdim.softmax ins(%x : !m) outs(%y : !m) over c
  tdim.return
}
"""


@pytest.fixture
def restore_threads():
    yield
    nerve.set_num_threads(0)


def test_default_and_setting(restore_threads):
    default = nerve.get_num_threads()
    expected = int(os.environ.get("NERVE_NUM_THREADS", len(os.sched_getaffinity(0))))
    assert default == expected
    nerve.set_num_threads(3)
    assert nerve.get_num_threads() == 3
    nerve.set_num_threads(0)
    assert nerve.get_num_threads() == default


def test_bad_thread_counts_are_errors_naming_the_argument(restore_threads):
    with pytest.raises(ValueError, match="threads must be from 1 to 4096, or 0 for the default, "
                                         "not -2"):
        nerve.set_num_threads(-2)
    with pytest.raises(TypeError, match="threads must be an int, not float"):
        nerve.set_num_threads(2.5)
    with pytest.raises(nerve.NerveError, match="cpu threads 9999 is out of range"):
        nerve.compile(SPEC, target="cpu", cpu_threads=9999)


def test_results_do_not_depend_on_threads(restore_threads):
    module = nerve.compile(SPEC, target="cpu")
    x = torch.randn(333, 2049, generator=torch.Generator().manual_seed(0))
    results = {}
    for threads in (1, 2, 5):
        nerve.set_num_threads(threads)
        results[threads] = (module.total(x).clone(), module.rows(x).clone())
    for threads in (2, 5):
        assert torch.equal(results[threads][0], results[1][0])
        assert torch.equal(results[threads][1], results[1][1])
    assert torch.allclose(results[1][0], x.double().sum().float(), rtol=1e-5)
    assert torch.allclose(results[1][1], torch.softmax(x, -1), atol=1e-6)


def test_a_module_may_fix_its_threads(restore_threads):
    fixed = nerve.compile(SPEC, target="cpu", cpu_threads=2)
    following = nerve.compile(SPEC, target="cpu")
    x = torch.randn(100, 300)
    nerve.set_num_threads(1)
    assert torch.equal(fixed.total(x), following.total(x))


def test_neurons_train_the_same_on_any_threads(restore_threads):
    x = torch.randn(8, 3000) * 1.5
    grads = []
    for threads in (1, 4):
        nerve.set_num_threads(threads)
        node = nerve.torch.neuron.LIFNode(step_mode="m")
        xx = x.clone().requires_grad_(True)
        node(xx).sum().backward()
        grads.append(xx.grad)
    assert torch.equal(grads[0], grads[1])


def test_environment_sets_the_default():
    code = "import nerve; print(nerve.get_num_threads())"
    env = dict(os.environ, NERVE_NUM_THREADS="3")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3"


def test_malformed_environment_is_an_error_at_launch():
    code = ("import nerve, numpy\n"
            "m = nerve.compile('''%s''', target='cpu')\n"
            "try:\n"
            "    m.total(numpy.ones((2, 3), numpy.float32))\n"
            "except nerve.NerveError as e:\n"
            "    print(e)\n") % SPEC
    env = dict(os.environ, NERVE_NUM_THREADS="lots")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "NERVE_NUM_THREADS must be a number of threads from 1 to 4096, not 'lots'" in out.stdout
