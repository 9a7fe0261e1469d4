"""The `nerve` package: compiling specs, kernels called on NumPy arrays and torch
tensors, layouts specialised on the fly, the builders, the caches, and errors
that name the argument."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import nerve

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")

SCALE = """
!m = !tdim.tensor<[r: ?, c: ?], f32>
!row = !tdim.tensor<[c: ?], f32>
tdim.kernel @scale(%x: !m, %bias: !row, %k: f32) -> (%y: !m) {
  tdim.map ins(%x, %bias : !m, !row) outs(%y : !m) {
  ^bb0(%a: f32, %b: f32):
    %p = arith.mulf %a, %k : f32
    %s = arith.addf %p, %b : f32
    tdim.yield %s : f32
  }
  tdim.return
}
"""


def target(device: str) -> str:
    return "cuda" if device == "cuda" else "cpu"


def test_version_and_package():
    assert nerve.version().startswith("nerve ")
    assert nerve.__version__.count(".") == 2


def test_module_describes_its_kernels():
    m = nerve.compile(SCALE, target="cpu")
    assert m.target == "cpu" and list(m.entries) == ["scale"]
    k = m.scale
    assert k is m["scale"] and k.name == "scale"
    assert [a.name for a in k.inputs] == ["x", "bias", "k"]
    assert [a.name for a in k.outputs] == ["y"]
    x = k.arguments[0]
    assert x.dims == ("r", "c") and x.sizes == (None, None) and x.dtype == "f32"
    assert x.is_tensor and not x.is_output and x.strides is None
    assert not k.arguments[2].is_tensor
    assert m.ptx == "" and "scale" in m.llvm_ir
    assert any(stage == "parse and verify" for stage, _ in m.compile_times)
    with pytest.raises(KeyError, match="no kernel @nope"):
        m["nope"]


def test_compile_from_a_path():
    path = os.path.join(EXAMPLES, "neuron", "lif_forward.mlir")
    m = nerve.compile(path, target="cpu")
    x = np.random.default_rng(0).standard_normal((6, 10)).astype(np.float32) + 0.5
    spike, v_seq = m.lif_forward(x)
    assert spike.shape == (6, 10) and v_seq.dtype == np.float32
    assert set(np.unique(spike)) <= {0.0, 1.0}


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_kernel_on_arrays(kind):
    m = nerve.compile(SCALE, target="cpu")
    rng = np.random.default_rng(1)
    x, b = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal(5).astype(
        np.float32)
    want = x * 3.0 + b
    if kind == "torch":
        x, b = torch.from_numpy(x), torch.from_numpy(b)
    y = m.scale(x, b, 3.0)
    assert type(y) is type(x)
    np.testing.assert_allclose(np.asarray(y), want, rtol=1e-6)
    out = np.empty((4, 5), np.float32) if kind == "numpy" else torch.empty(4, 5)
    assert m.scale(x, b, 3.0, out) is out
    assert m.scale(x=x, bias=b, k=3.0, y=out) is out
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)


def test_any_layout_without_a_copy(device):
    """A transposed input and a sliced output run through a specialisation
    compiled for their strides."""
    m = nerve.compile(SCALE, target=target(device))
    x = torch.randn(5, 4, device=device).t()  # column-major [4, 5]
    b = torch.randn(10, device=device)[::2]  # stride 2
    out = torch.zeros(4, 8, device=device)[:, 1:6]
    y = m.scale(x, b, -2.0, out)
    assert y is out
    torch.testing.assert_close(out, x * -2.0 + b)
    assert len(m._specialized) == 1
    m.scale(x.contiguous(), b.contiguous(), 1.0)
    assert len(m._specialized) == 1


def test_repeated_calls_reuse_the_checked_call(device):
    """A call with an earlier call's signature (dtypes, shapes, strides,
    devices, scalars, outputs given or not) launches that call's plan: new
    data, a new scalar, a given output, a stream, another layout and bad
    input all still come out as a first call's would."""
    m = nerve.compile(SCALE, target=target(device))
    g = torch.Generator().manual_seed(3)
    for _ in range(3):  # the first checked, the others through its plan
        x, b = torch.randn(4, 5, generator=g).to(device), torch.randn(5, generator=g).to(device)
        y = m.scale(x, b, 3.0)
        torch.testing.assert_close(y, x * 3.0 + b)
        assert y.data_ptr() != x.data_ptr()
    torch.testing.assert_close(m.scale(x, b, -1.5), x * -1.5 + b)  # the scalar is its own
    out = torch.empty(4, 5, device=device)
    for _ in range(2):
        assert m.scale(x, b, 2.0, out) is out
        torch.testing.assert_close(out, x * 2.0 + b)
    if device == "cuda":
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            y = m.scale(x, b, 3.0)
        s.synchronize()
        torch.testing.assert_close(y, x * 3.0 + b)
        y = m.scale(x, b, 3.0, stream=s)
        s.synchronize()
        torch.testing.assert_close(y, x * 3.0 + b)
    xt = torch.randn(5, 4, generator=g).to(device).t()  # another layout, another plan
    for _ in range(2):
        torch.testing.assert_close(m.scale(xt, b, 3.0), xt * 3.0 + b)
    with pytest.raises(TypeError, match="argument %x is f32"):
        m.scale(x.double(), b, 3.0)
    with pytest.raises(ValueError, match="argument %x has 2 dimensions"):
        m.scale(x[0], b, 3.0)


def test_argument_errors_name_the_argument():
    m = nerve.compile(SCALE, target="cpu")
    x, b = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    with pytest.raises(TypeError, match="input %k .*was not given"):
        m.scale(x, b)
    with pytest.raises(TypeError, match="argument %x is f32 but a float64 tensor"):
        m.scale(x.astype(np.float64), b, 1.0)
    with pytest.raises(ValueError, match=r"argument %bias has 1 dimensions \(c\) but a tensor "
                                         r"with 2"):
        m.scale(x, x, 1.0)
    with pytest.raises(nerve.NerveError, match="dimension `c` has size 4 in argument %bias"):
        m.scale(x, np.ones(4, np.float32), 1.0)
    with pytest.raises(TypeError, match="argument %k is a f32 scalar but a tensor"):
        m.scale(x, b, x)
    with pytest.raises(TypeError, match="argument %x is a f32 tensor over .* but a str"):
        m.scale("x", b, 1.0)
    with pytest.raises(TypeError, match="has no argument %z"):
        m.scale(x, b, 1.0, z=x)
    with pytest.raises(TypeError, match="argument %x of kernel @scale was given twice"):
        m.scale(x, b, 1.0, x=x)
    with pytest.raises(ValueError, match="output whose elements overlap"):
        m.scale(x, b, 1.0, np.broadcast_to(np.ones(3, np.float32), (2, 3)))
    with pytest.raises(TypeError, match="takes 3 inputs and 1 outputs but 5 arguments"):
        m.scale(x, b, 1.0, x, x)


def test_cuda_module_refuses_host_memory(cuda):
    m = nerve.compile(SCALE, target="cuda")
    with pytest.raises(ValueError, match="argument %x is in host memory"):
        m.scale(torch.ones(2, 3), torch.ones(3, device="cuda"), 1.0)
    cpu = nerve.compile(SCALE, target="cpu")
    with pytest.raises(ValueError, match="argument %x is on the GPU"):
        cpu.scale(torch.ones(2, 3, device="cuda"), torch.ones(3), 1.0)


def test_compile_errors():
    with pytest.raises(nerve.NerveError, match="error"):
        nerve.compile("tdim.kernel @k(", target="cpu")
    with pytest.raises(nerve.NerveError, match="cannot read the spec /nonexistent.mlir"):
        nerve.compile("/nonexistent.mlir")
    with pytest.raises(ValueError, match="target must be one of"):
        nerve.compile(SCALE, target="tpu")
    with pytest.raises(nerve.NerveError, match="opt level 7 is out of range"):
        nerve.compile(SCALE, target="cpu", opt_level=7)
    with pytest.raises(nerve.NerveError, match="fast math and exact math exclude each other"):
        nerve.compile(SCALE, target="cpu", fast_math=True, exact_math=True, cache=False)


SIGMOID_F16 = """
!h = !tdim.tensor<[n: ?], f16>
tdim.kernel @sigmoid(%a: !h) -> (%y: !h) {
  tdim.map ins(%a : !h) outs(%y : !h) {
  ^bb0(%x: f16):
    %xf = arith.extf %x : f16 to f32
    %nx = arith.negf %xf : f32
    %e = math.exp %nx : f32
    %one = arith.constant 1.0 : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    %r = arith.truncf %s : f32 to f16
    tdim.yield %r : f16
  }
  tdim.return
}
"""


def test_exact_math_keeps_16_bit_kernels_ieee(device):
    """By default a kernel of 16-bit data takes approximate f32 math (its
    error far below the f16 rounding); exact_math keeps IEEE's. Both round
    to the float64 result's f16 neighbourhood."""
    x = torch.linspace(-6, 6, 999, device=device).half()
    want = torch.sigmoid(x.double())
    for exact in (False, True):
        m = nerve.compile(SIGMOID_F16, target=target(device), exact_math=exact)
        y = m.sigmoid(x)
        assert y.dtype == torch.float16
        assert torch.allclose(y.double(), want, rtol=2e-3, atol=1e-4)
        if device == "cuda":  # 1 / x: rcp.approx, or IEEE's rcp.rn
            assert ("rcp.approx" in m.ptx) != exact
            assert ("rcp.rn.f32" in m.ptx) == exact


SOFTMAX = """
!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @softmax(%x: !m) -> (%y: !m) {
  tdim.softmax ins(%x : !m) outs(%y : !m) over c
  tdim.return
}
"""


def test_lazy_kernels_give_the_same_results(device):
    """lazy_kernels generates each kernel's PTX at its first launch (on the
    GPU; the CPU compiles as ever): the same PTX, so the same bits, and the
    float64 softmax either way, for rows that take different kernels."""
    eager = nerve.compile(SOFTMAX, target=target(device), cache=False)
    lazy = nerve.compile(SOFTMAX, target=target(device), cache=False, lazy_kernels=True)
    for rows, cols in ((37, 4097), (5, 33), (2, 70000)):
        x = torch.randn(rows, cols, device=device)
        want = torch.softmax(x.double(), dim=1)
        y = lazy.softmax(x)
        assert torch.equal(y, eager.softmax(x))
        torch.testing.assert_close(y.double(), want, rtol=1e-5, atol=1e-7)
    if device == "cuda":
        assert lazy.ptx == eager.ptx


def test_size_specialization_gives_the_same_results(device):
    """specialize_sizes compiles each kernel at its launches for their sizes;
    static_sizes fixes sizes at compile time: the float64 softmax either way,
    and a launch at other sizes than the static ones is an error naming the
    argument."""
    eager = nerve.compile(SOFTMAX, target=target(device), cache=False)
    special = nerve.compile(SOFTMAX, target=target(device), cache=False, specialize_sizes=True)
    for rows, cols in ((37, 4097), (5, 33), (37, 4097)):
        x = torch.randn(rows, cols, device=device)
        y = special.softmax(x)
        torch.testing.assert_close(y.double(), torch.softmax(x.double(), dim=1),
                                   rtol=1e-5, atol=1e-7)
        torch.testing.assert_close(y, eager.softmax(x), rtol=1e-6, atol=1e-8)
    fixed = nerve.compile(SOFTMAX, target=target(device), cache=False,
                          static_sizes={"r": 5, "c": 33})
    x = torch.randn(5, 33, device=device)
    torch.testing.assert_close(fixed.softmax(x).double(), torch.softmax(x.double(), dim=1),
                               rtol=1e-5, atol=1e-7)
    with pytest.raises(nerve.NerveError, match="argument %x: dimension `c` is 33"):
        fixed.softmax(torch.randn(5, 34, device=device))
    with pytest.raises(TypeError, match=r"static_sizes\['r'\] must be an int"):
        nerve.compile(SOFTMAX, target=target(device), static_sizes={"r": 2.5})
    with pytest.raises(ValueError, match=r"static_sizes\['r'\] is -1"):
        nerve.compile(SOFTMAX, target=target(device), static_sizes={"r": -1})
    with pytest.raises(nerve.NerveError, match="dimension `q`, which no kernel argument has"):
        nerve.compile(SOFTMAX, target=target(device), static_sizes={"q": 3})


def test_builders(device):
    axpy = nerve.elementwise_kernel("axpy", "f32 x[n], f32 y[n], f32 a", "f32 z[n]",
                                    "z = a * x + y", target=target(device))
    x, y = torch.arange(6.0, device=device), torch.ones(6, device=device)
    torch.testing.assert_close(axpy(x, y, 2.0), 2 * x + 1)
    torch.testing.assert_close(axpy(x[::2], y[1::2], 2.0), 2 * x[::2] + 1)
    rms = nerve.reduction_kernel("rms", "f32 x[b, n]", "f32 r[b]", "x * x", "a + b", "0",
                                 "sqrt(a / count)", target=target(device))
    m = torch.randn(3, 50, device=device)
    torch.testing.assert_close(rms(m), m.pow(2).mean(1).sqrt(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(rms(m.t().contiguous().t()), m.pow(2).mean(1).sqrt(),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(nerve.NerveError, match="unknown name 'q'"):
        nerve.elementwise_kernel("k", "f32 x[n]", "f32 y[n]", "y = x + q")


def test_caches():
    spec = SCALE.replace("@scale", "@cache_probe")
    before = nerve.cache_stats()
    nerve.compile(spec, target="cpu")
    after = nerve.cache_stats()
    assert after.misses == before.misses + 1 and after.stores == before.stores + 1
    nerve.compile(spec, target="cpu")
    assert nerve.cache_stats().memory_hits == after.memory_hits + 1
    nerve.clear_memory_cache()
    nerve.compile(spec, target="cpu")
    assert nerve.cache_stats().disk_hits == after.disk_hits + 1
    assert nerve.cache_directory() == os.environ["NERVE_CACHE_DIR"]
    assert nerve.clear_disk_cache() >= 1
    assert nerve.clear_disk_cache() == 0


def test_cuda_device_info(cuda):
    info = nerve.cuda_device()
    assert info.compute_capability >= 80 and info.multiprocessors > 0 and info.name
    assert nerve.cuda_available()
    nerve.select_cuda_device(info.ordinal)
    with pytest.raises(ValueError, match="one GPU per process"):
        nerve.select_cuda_device(info.ordinal + 1)
