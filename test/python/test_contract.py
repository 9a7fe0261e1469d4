"""tdim.contract against float64 products: matrix products and linear layers in
every operand layout, at sizes that are no multiple of any tile (one row,
k = 1, odd k whose rows are not 16-byte aligned), with and without the tiled
kernels (on the GPU, 16-bit operands take tensor cores and f32 ones IEEE fused
multiply-adds; the CPU runs the general loops), with a bias and an elementwise
consumer in the product's epilogue."""

from __future__ import annotations

import pytest
import torch

import nerve

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
# Row-major operand types, by which of each operand's dimensions is contiguous.
OPERANDS = {
    "ik,jk": ("[i: ?, k: ?]", "[j: ?, k: ?]"),  # nn.Linear's weight: no transpose
    "ik,kj": ("[i: ?, k: ?]", "[k: ?, j: ?]"),
    "ki,kj": ("[k: ?, i: ?]", "[k: ?, j: ?]"),
    "ki,jk": ("[k: ?, i: ?]", "[j: ?, k: ?]"),
}
SIZES = [(257, 65, 129), (1, 33, 300), (130, 1, 70), (128, 128, 256), (300, 200, 8),
         (129, 8, 1)]  # i, k, j


def spec(layout: str, dtype: str, tiling: str = "") -> str:
    """The product with a bias; `tiling`, a #gpumap.contract_tiling's
    parameters, is then the one its kernel takes."""
    a, b = OPERANDS[layout]
    attr = f" {{gpumap.contract_tiling = #gpumap.contract_tiling<{tiling}>}}" if tiling else ""
    return f"""
tdim.kernel @product(%a: !tdim.tensor<{a}, {dtype}>, %b: !tdim.tensor<{b}, {dtype}>,
                     %bias: !tdim.tensor<[j: ?], {dtype}>)
    -> (%c: !tdim.tensor<[i: ?, j: ?], {dtype}>) {{
  tdim.broadcast ins(%bias : !tdim.tensor<[j: ?], {dtype}>) outs(%c : !tdim.tensor<[i: ?, j: ?], {dtype}>)
  tdim.contract ins(%a, %b : !tdim.tensor<{a}, {dtype}>, !tdim.tensor<{b}, {dtype}>)
      outs(%c : !tdim.tensor<[i: ?, j: ?], {dtype}>) accumulate{attr}
  tdim.return
}}
"""


def operands(layout: str, i: int, k: int, j: int, dt: torch.dtype, seed: int):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(i, k, generator=g).to(dt)
    b = torch.randn(k, j, generator=g).to(dt)
    bias = torch.randn(j, generator=g).to(dt)
    want = a.double() @ b.double() + bias.double()
    left = a if layout.startswith("ik") else a.t().contiguous()
    right = b.t().contiguous() if layout.endswith("jk") else b
    return left, right, bias, want


def tolerance(dtype: str, k: int) -> float:
    # Inputs are exact in f64; the sum is f32, the result rounded once to dtype.
    return {"f16": 2e-3, "bf16": 1.6e-2, "f32": 1e-5}[dtype] * (1 + k ** 0.5)


def check_product(device: str, layout: str, dtype: str, tensor_cores: bool, sizes=SIZES,
                  tiling: str = "", within: str = "", **options):
    """Checks the products at `sizes` against float64, within the rounding
    of `within` (a dtype; default `dtype`'s)."""
    mod = nerve.compile(spec(layout, dtype, tiling), target=device, tensor_cores=tensor_cores,
                        **options)
    for n, (i, k, j) in enumerate(sizes):
        a, b, bias, want = operands(layout, i, k, j, DTYPES[dtype], n)
        got = mod.product(a=a.to(device), b=b.to(device), bias=bias.to(device))
        err = (got.double().cpu() - want).abs().max().item()
        scale = want.abs().max().item() + 1
        assert err <= tolerance(within or dtype, k) * scale, (layout, dtype, (i, k, j), err)


@pytest.mark.parametrize("layout", sorted(OPERANDS))
@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_products_in_every_layout(device, layout, dtype):
    check_product(device, layout, dtype, tensor_cores=True)


@pytest.mark.gpu
@pytest.mark.parametrize("layout", sorted(OPERANDS))
def test_mma_sync_kernels(cuda, layout):
    """The warp-level kernels (every chip's; sm_90 takes wgmma), compiled
    for sm_80: its PTX runs on any later GPU."""
    for dtype in ("f16", "bf16"):
        check_product("cuda", layout, dtype, tensor_cores=True, chip="sm_80")


PRODUCERS = ("tile_m = 128, tile_n = 256, tile_k = {k}, warps_m = 8, warps_n = 1, stages = 4, "
             "producer_warps = 4")


@pytest.mark.gpu
@pytest.mark.parametrize("layout", sorted(OPERANDS))
def test_producer_warps_kernels(cuda, layout):
    """A wgmma tiling with a producer warpgroup (written, not chosen): at the
    odd sizes, and with k long enough that the ring of four stages wraps
    several times (each stage's barriers through several phases)."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("wgmma needs sm_90")
    sizes = SIZES + [(300, 1000, 270), (129, 4097, 257)]
    for dtype in ("f16", "bf16"):
        check_product("cuda", layout, dtype, tensor_cores=True, sizes=sizes,
                      tiling="instruction = wgmma, " + PRODUCERS.format(k=64))
    check_product("cuda", layout, "f32", tensor_cores=True, sizes=sizes, tf32=True,
                  tiling="instruction = wgmma_tf32, " + PRODUCERS.format(k=32), within="f16")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_general_loops_when_tensor_cores_are_off(cuda, dtype):
    check_product("cuda", "ik,jk", dtype, tensor_cores=False, sizes=SIZES[:3])


@pytest.mark.gpu
def test_f32_is_ieee(cuda):
    """f32 products sum in IEEE f32 (no tf32): operands whose mantissas need
    more than tf32's 10 bits (which would put every product off by ~1e-4,
    all one way) come out within f32's rounding of a sum of k terms."""
    g = torch.Generator().manual_seed(23)
    i, k, j = 130, 64, 70
    a = (1 + 3 * 2.0 ** -12) * 2.0 ** torch.randint(0, 4, (i, k), generator=g).float()
    b = (1 - 3 * 2.0 ** -13) * 2.0 ** torch.randint(0, 4, (k, j), generator=g).float()
    want = a.double() @ b.double()
    mod = nerve.compile(spec("ik,kj", "f32"), target="cuda")
    got = mod.product(a=a.cuda(), b=b.cuda(), bias=torch.zeros(j).cuda()).double().cpu()
    # Positive terms: f32's error is at most about k * 2^-24 of the sum.
    assert ((got - want).abs() / want).max().item() < 2 * k * 2.0 ** -24


@pytest.mark.gpu
@pytest.mark.parametrize("chip", [None, "sm_80"])  # the GPU's own (wgmma on sm_90), mma.sync
@pytest.mark.parametrize("layout", sorted(OPERANDS))
def test_tf32_when_allowed(cuda, layout, chip):
    """With tf32=True, f32 operands take tensor cores as tf32 in every
    layout (one read along m or n transposed as it is staged): within tf32's
    rounding of float64 at odd sizes, and, on operands whose mantissas need
    more than 10 bits, off IEEE's result by tf32's rounding (the tensor cores
    did take them)."""
    mod = nerve.compile(spec(layout, "f32"), target="cuda", chip=chip, tf32=True)
    for n, (i, k, j) in enumerate(SIZES):
        a, b, bias, want = operands(layout, i, k, j, torch.float32, n)
        got = mod.product(a=a.cuda(), b=b.cuda(), bias=bias.cuda()).double().cpu()
        err = (got - want).abs().max().item()
        assert err <= tolerance("f16", k) * (want.abs().max().item() + 1), ((i, k, j), err)
    g = torch.Generator().manual_seed(29)
    a = (1 + 3 * 2.0 ** -12) * 2.0 ** torch.randint(0, 4, (130, 64), generator=g).float()
    b = (1 - 3 * 2.0 ** -13) * 2.0 ** torch.randint(0, 4, (64, 70), generator=g).float()
    left = a if layout.startswith("ik") else a.t().contiguous()
    right = b.t().contiguous() if layout.endswith("jk") else b
    want = a.double() @ b.double()
    got = mod.product(a=left.cuda(), b=right.cuda(), bias=torch.zeros(70).cuda()).double().cpu()
    off = ((got - want).abs() / want).max().item()
    assert off > 2.0 ** -14, off  # each product off by 2^-13 (rounding) or more


def test_tf32_option_on_the_cpu():
    """tf32=True compiles for the CPU too, whose loops stay IEEE."""
    check_product("cpu", "ik,kj", "f32", tensor_cores=True, tf32=True, sizes=SIZES[:3])


@pytest.mark.gpu
@pytest.mark.parametrize("chip", [None, "sm_80"])
def test_tf32_neuron_epilogue(cuda, chip):
    """A LIF scanning a linear layer's tf32 products (wgmma_tf32's scan on
    sm_90, mma_sync_tf32's compiled for sm_80)."""
    mod = nerve.compile(neuron_spec("lif", "f32"), target="cuda", chip=chip, tf32=True)
    g = torch.Generator().manual_seed(31)
    for steps, batch, k, j in ((3, 5, 70, 33), (8, 100, 64, 300), (130, 3, 16, 40)):
        x = torch.randn(steps, batch, k, generator=g)
        w = torch.randn(j, k, generator=g) / k ** 0.5
        h = torch.einsum("tbk,jk->tbj", x.double(), w.double())
        want, reliable = neuron_reference(h, "lif", 0.5)
        got = mod.layer(x=x.cuda(), w=w.cuda()).double().cpu()
        assert reliable.double().mean() > 0.5
        assert not ((got != want) & reliable).any(), (steps, batch, k, j)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,layout", [("f16", "ik,jk"), ("bf16", "ik,jk"),
                                          ("f32", "ik,jk"), ("f32", "ik,kj")])
def test_strided_views(cuda, dtype, layout):
    """Operands that are views into wider buffers: rows 16-byte aligned
    (a pitch of 72 elements) and not (a pitch of 67, an offset of 1)."""
    mod = nerve.compile(spec(layout, dtype), target="cuda")
    dt = DTYPES[dtype]
    g = torch.Generator().manual_seed(3)
    for pitch, offset in ((72, 0), (67, 1)):
        wide_a = torch.randn(200, pitch + offset, generator=g).to(dt)
        # b: [j = 150, k = 64] read along k, or [k = 64, j = 64] along j.
        wide_b = torch.randn(150 if layout == "ik,jk" else 64, pitch + offset, generator=g).to(dt)
        a, b = wide_a[:, offset:offset + 64], wide_b[:, offset:offset + 64]
        right = b.double().t() if layout == "ik,jk" else b.double()
        bias = torch.zeros(right.shape[1], dtype=dt)
        want = a.double() @ right
        got = mod.product(a=wide_a.cuda()[:, offset:offset + 64],
                          b=wide_b.cuda()[:, offset:offset + 64], bias=bias.cuda())
        err = (got.double().cpu() - want).abs().max().item()
        assert err <= tolerance(dtype, 64) * (want.abs().max().item() + 1), (pitch, err)


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_linear_over_time_and_batch(device, dtype):
    """[t, b, k] x [j, k]: the row dimensions t and b are one in memory and
    run as one on tensor cores; a neuron reads the product."""
    spec_text = f"""
tdim.kernel @layer(%x: !tdim.tensor<[t: ?, b: ?, k: ?], {dtype}>, %w: !tdim.tensor<[j: ?, k: ?], {dtype}>)
    -> (%y: !tdim.tensor<[t: ?, b: ?, j: ?], {dtype}>) {{
  tdim.contract ins(%x, %w : !tdim.tensor<[t: ?, b: ?, k: ?], {dtype}>, !tdim.tensor<[j: ?, k: ?], {dtype}>)
      outs(%y : !tdim.tensor<[t: ?, b: ?, j: ?], {dtype}>)
  tdim.return
}}
"""
    mod = nerve.compile(spec_text, target=device)
    dt = DTYPES[dtype]
    g = torch.Generator().manual_seed(11)
    for steps, batch, k, j in ((3, 5, 70, 33), (2, 100, 64, 300)):
        x = torch.randn(steps, batch, k, generator=g).to(dt)
        w = torch.randn(j, k, generator=g).to(dt)
        want = torch.einsum("tbk,jk->tbj", x.double(), w.double())
        got = mod.layer(x=x.to(device), w=w.to(device)).double().cpu()
        err = (got - want).abs().max().item()
        assert err <= tolerance(dtype, k) * (want.abs().max().item() + 1), (steps, batch, k, j, err)


EPILOGUE_ROWS = {"ij": "[i: ?, j: ?]", "tbj": "[t: ?, b: ?, j: ?]", "btj": "[b: ?, t: ?, j: ?]"}


def epilogue_spec(rows: str, residual: str, dtype: str) -> str:
    """A linear layer with a bias, then relu(h) * scale + residual: one
    kernel (the bias and the map in the product's epilogue) where the
    residual's rows are laid out as the output's."""
    x, y = ("[i: ?, k: ?]", "[i: ?, j: ?]") if rows == "ij" else ("[t: ?, b: ?, k: ?]",
                                                                "[t: ?, b: ?, j: ?]")
    lead = ["i"] if rows == "ij" else ["t", "b"]
    sizes = "".join(f"  %n{d} = tdim.size %x[{d}] : !x\n" for d in lead)
    names = ", ".join(f"%n{d}" for d in lead)
    return f"""
!x = !tdim.tensor<{x}, {dtype}>
!w = !tdim.tensor<[j: ?, k: ?], {dtype}>
!y = !tdim.tensor<{y}, {dtype}>
!r = !tdim.tensor<{EPILOGUE_ROWS[residual]}, {dtype}>
tdim.kernel @layer(%x: !x, %w: !w, %bias: !tdim.tensor<[j: ?], {dtype}>, %res: !r, %scale: f32)
    -> (%y: !y) {{
{sizes}  %nj = tdim.size %w[j] : !w
  %h = tdim.alloc({names}, %nj) : !y
  tdim.broadcast ins(%bias : !tdim.tensor<[j: ?], {dtype}>) outs(%h : !y)
  tdim.contract ins(%x, %w : !x, !w) outs(%h : !y) accumulate
  tdim.map ins(%h, %res, %scale : !y, !r, f32) outs(%y : !y) {{
  ^bb0(%v: f32, %r: f32, %s: f32):
    %zero = arith.constant 0.0 : f32
    %a = arith.maximumf %v, %zero : f32
    %m = arith.mulf %a, %s : f32
    %o = arith.addf %m, %r : f32
    tdim.yield %o : f32
  }}
  tdim.return
}}
"""


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("rows,residual", [("ij", "ij"), ("tbj", "tbj"), ("tbj", "btj")])
def test_bias_and_map_in_the_epilogue(device, dtype, rows, residual):
    """The bias and an elementwise consumer computed where the product is
    stored, with the product rounded to its storage type in between as the
    unfused ops round it; a residual whose rows are laid out otherwise
    keeps the general loops (its rows do not merge)."""
    mod = nerve.compile(epilogue_spec(rows, residual, dtype), target=device)
    dt = DTYPES[dtype]
    g = torch.Generator().manual_seed(5)
    shapes = ((257, 65, 129), (1, 33, 300), (130, 1, 70)) if rows == "ij" else \
        ((3, 5, 70, 33), (2, 100, 64, 300))
    for shape in shapes:
        lead, k, j = shape[:-2], shape[-2], shape[-1]
        x = torch.randn(*lead, k, generator=g).to(dt)
        w = torch.randn(j, k, generator=g).to(dt)
        bias = torch.randn(j, generator=g).to(dt)
        res = torch.randn(*lead, j, generator=g).to(dt)
        res_arg = res if residual == rows else res.transpose(0, 1).contiguous()
        h = (x.double() @ w.double().t() + bias.double()).to(dt).double()
        want = h.clamp(min=0) * 0.5 + res.double()
        got = mod.layer(x=x.to(device), w=w.to(device), bias=bias.to(device),
                        res=res_arg.to(device), scale=0.5)
        err = (got.double().cpu() - want).abs().max().item()
        assert err <= 2 * tolerance(dtype, k) * (want.abs().max().item() + 1), (shape, err)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_large_product_matches_cublas(cuda, dtype):
    """A product of many tiles in each direction (and more k tiles than
    stages) against float64, summing in f32."""
    dt = DTYPES[dtype]
    mod = nerve.compile(spec("ik,jk", dtype), target="cuda")
    x = torch.randn(1000, 2056, device="cuda", dtype=dt)
    w = torch.randn(1032, 2056, device="cuda", dtype=dt) / 32
    bias = torch.zeros(1032, device="cuda", dtype=dt)
    got = mod.product(a=x, b=w, bias=bias).double()
    want = (x.double() @ w.double().t())
    assert (got - want).abs().max().item() <= tolerance(dtype, 2056) * (want.abs().max().item() + 1)


def transposed_spec(layout: str, dtype: str) -> str:
    """spec's product and bias into an output stored as [j, i] (contiguous
    along i): the epilogue's lines then run along m."""
    return spec(layout, dtype).replace("[i: ?, j: ?]", "[j: ?, i: ?]")


@pytest.mark.gpu
@pytest.mark.parametrize("chip", [None, "sm_80"])  # wgmma's 128 rows at once; mma.sync's 2 x 64
@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_staged_rows_in_every_output_order(cuda, chip, dtype):
    """The output staged through shared memory (staged_rows): stored [i, j]
    and [j, i], into an output the kernel allocates (16-byte stores) and into
    views whose rows are not 16-byte aligned (a pitch of 301, an offset of
    1: one store an element), at sizes that leave partial chunks and tiles."""
    dt = DTYPES[dtype]
    options = {"chip": chip} if chip else {}
    if dtype == "f32":
        options["tf32"] = True
    for order in ("ij", "ji"):
        text = spec("ik,jk", dtype) if order == "ij" else transposed_spec("ik,jk", dtype)
        mod = nerve.compile(text, target="cuda", **options)
        for n, (i, k, j) in enumerate([(257, 65, 129), (1, 33, 300), (300, 200, 8), (129, 8, 1)]):
            a, b, bias, want = operands("ik,jk", i, k, j, dt, n)
            args = dict(a=a.cuda(), b=b.cuda(), bias=bias.cuda())
            wide = torch.full((j, 302) if order == "ji" else (i, 302), float("nan"), dtype=dt,
                              device="cuda")
            given = wide[:, 1:1 + (i if order == "ji" else j)]
            for out in (None, given):
                got = mod.product(**args) if out is None else mod.product(**args, c=out)
                got = got.double().cpu()
                got = got.t() if order == "ji" else got
                err = (got - want).abs().max().item()
                within = "f16" if dtype == "f32" else dtype
                assert err <= tolerance(within, k) * (want.abs().max().item() + 1), \
                    (order, out is None, (i, k, j), err)


def two_products_spec(dtype: str) -> str:
    """c = a b^T, then c += d e^T: the second product accumulates onto what
    the first stored (no map to fold into its epilogue)."""
    t = lambda dims: f"!tdim.tensor<{dims}, {dtype}>"
    a, b, d, e, c = (t("[i: ?, k: ?]"), t("[j: ?, k: ?]"), t("[i: ?, l: ?]"), t("[j: ?, l: ?]"),
                     t("[i: ?, j: ?]"))
    return f"""
tdim.kernel @two(%a: {a}, %b: {b}, %d: {d}, %e: {e}) -> (%c: {c}) {{
  tdim.contract ins(%a, %b : {a}, {b}) outs(%c : {c})
  tdim.contract ins(%d, %e : {d}, {e}) outs(%c : {c}) accumulate
  tdim.return
}}
"""


@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_accumulating_onto_a_product(device, dtype):
    """accumulate reads the output's values (the staged epilogue's chunks
    on tensor cores: their old values loaded beside the sums), into an
    output the kernel allocates and into views whose rows are not 16-byte
    aligned."""
    dt = DTYPES[dtype]
    options = {"tf32": True} if dtype == "f32" else {}
    mod = nerve.compile(two_products_spec(dtype), target=device, **options)
    g = torch.Generator().manual_seed(5)
    for i, k, l, j in ((257, 65, 40, 129), (1, 33, 16, 300), (128, 64, 64, 256)):
        a, d = torch.randn(i, k, generator=g).to(dt), torch.randn(i, l, generator=g).to(dt)
        b, e = torch.randn(j, k, generator=g).to(dt), torch.randn(j, l, generator=g).to(dt)
        first = (a.double() @ b.double().t()).to(dt).double()
        want = first + d.double() @ e.double().t()
        args = {n: v.to(device) for n, v in (("a", a), ("b", b), ("d", d), ("e", e))}
        wide = torch.zeros(i, j + 3, dtype=dt, device=device)
        for out in (None, wide[:, 1:1 + j]):
            got = mod.two(**args) if out is None else mod.two(**args, c=out)
            err = (got.double().cpu() - want).abs().max().item()
            within = "f16" if dtype == "f32" and device == "cuda" else dtype
            assert err <= tolerance(within, k + l) * (want.abs().max().item() + 1), \
                ((i, k, l, j), out is None, err)


def neuron_spec(neuron: str, dtype: str) -> str:
    """A linear layer over [t, b, k] whose product a neuron alone reads: one
    contraction scanning time, the neuron's step its epilogue."""
    ops = {
        "lif": "neuron.lif ins(%h : !y) outs(%s : !y) time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0}",
        "if_soft": "neuron.if ins(%h : !y) outs(%s : !y) time t {v_threshold = 1.0}",
        "plif": "neuron.plif ins(%h : !y) w(%pw : !tdim.tensor<[], f32>) outs(%s : !y) time t "
                "{v_threshold = 1.0, v_reset = 0.0}",
    }
    extra = ", %pw: !tdim.tensor<[], f32>" if neuron == "plif" else ""
    return f"""
!x = !tdim.tensor<[t: ?, b: ?, k: ?], {dtype}>
!w = !tdim.tensor<[j: ?, k: ?], {dtype}>
!y = !tdim.tensor<[t: ?, b: ?, j: ?], {dtype}>
tdim.kernel @layer(%x: !x, %w: !w{extra}) -> (%s: !y) {{
  %nt = tdim.size %x[t] : !x
  %nb = tdim.size %x[b] : !x
  %nj = tdim.size %w[j] : !w
  %h = tdim.alloc(%nt, %nb, %nj) : !y
  tdim.contract ins(%x, %w : !x, !w) outs(%h : !y)
  {ops[neuron]}
  tdim.return
}}
"""


def neuron_reference(h, neuron, decay):
    """float64 spikes of `h` [t, ...], and where each neuron's state is
    reliable (no step so far within rounding of the threshold)."""
    v = torch.zeros_like(h[0])
    spikes, reliable = [], []
    ok = torch.ones_like(h[0], dtype=torch.bool)
    for x in h:
        if neuron == "if_soft":
            charged = v + x
        else:
            charged = v + (x - v) * decay
        ok &= (charged - 1.0).abs() > 1e-2
        fired = charged >= 1.0
        v = torch.where(fired, charged - 1.0 if neuron == "if_soft" else 0.0, charged)
        spikes.append(fired.double())
        reliable.append(ok.clone())
    return torch.stack(spikes), torch.stack(reliable)


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("neuron", ["lif", "if_soft", "plif"])
def test_neuron_in_the_epilogue(device, dtype, neuron):
    """Linear -> neuron over time as one contraction: the product for step t
    (rounded as the intermediate tensor held it) charges the neuron, whose
    potential the epilogue carries. Odd sizes; 130 steps (more than a tile's
    rows gather, so the GPU's blocks walk chunks of steps); PLIF's decay a
    parameter read at run time; f32 on the fma kernel."""
    mod = nerve.compile(neuron_spec(neuron, dtype), target=device)
    dt = DTYPES[dtype]
    g = torch.Generator().manual_seed(17)
    w_param = torch.tensor(0.3)
    decay = {"lif": 0.5, "if_soft": 1.0, "plif": torch.sigmoid(w_param).item()}[neuron]
    for steps, batch, k, j in ((3, 5, 70, 33), (8, 100, 64, 300), (130, 3, 16, 40)):
        x = torch.randn(steps, batch, k, generator=g).to(dt)
        w = (torch.randn(j, k, generator=g) / k ** 0.5).to(dt)
        h = torch.einsum("tbk,jk->tbj", x.double(), w.double()).to(dt).double()
        want, reliable = neuron_reference(h, neuron, decay)
        args = {"x": x.to(device), "w": w.to(device)}
        if neuron == "plif":
            args["pw"] = w_param.to(device)
        got = mod.layer(**args).double().cpu()
        assert reliable.double().mean() > 0.5, "the reference should be mostly decidable"
        mismatch = (got != want) & reliable
        assert not mismatch.any(), (steps, batch, k, j, mismatch.double().mean().item())


@pytest.mark.gpu
def test_neuron_epilogue_mma_sync(cuda):
    """The scanning epilogue on the warp-level kernels (compiled for sm_80)."""
    mod = nerve.compile(neuron_spec("lif", "f16"), target="cuda", chip="sm_80")
    g = torch.Generator().manual_seed(3)
    for steps, batch, k, j in ((5, 37, 40, 129), (130, 2, 24, 16)):
        x = torch.randn(steps, batch, k, generator=g).half()
        w = (torch.randn(j, k, generator=g) / k ** 0.5).half()
        h = torch.einsum("tbk,jk->tbj", x.double(), w.double()).half().double()
        want, reliable = neuron_reference(h, "lif", 0.5)
        got = mod.layer(x=x.cuda(), w=w.cuda()).double().cpu()
        assert not ((got != want) & reliable).any(), (steps, batch, k, j)


IZHIKEVICH = """
neuron.model @izhikevich states(v = 0.0, w = 0.0) inputs(x)
    params(tau = 2.0, a0 = 1.0, v_rest = -0.1, v_c = 0.8, tau_w = 2.0, a = 0.5, b = 0.1)
    threshold(1.0) reset(v = hard 0.0, w = add b) charge {
^bb0(%v: f32, %w: f32, %x: f32, %tau: f32, %a0: f32, %v_rest: f32, %v_c: f32, %tau_w: f32, %a: f32, %b: f32):
  %dr = arith.subf %v, %v_rest : f32
  %dc = arith.subf %v, %v_c : f32
  %q = arith.mulf %dr, %dc : f32
  %aq = arith.mulf %a0, %q : f32
  %in = arith.addf %x, %aq : f32
  %drive = arith.subf %in, %w : f32
  %step = arith.divf %drive, %tau : f32
  %h = arith.addf %v, %step : f32
  %hr = arith.subf %h, %v_rest : f32
  %ah = arith.mulf %a, %hr : f32
  %dw = arith.subf %ah, %w : f32
  %ws = arith.divf %dw, %tau_w : f32
  %w1 = arith.addf %w, %ws : f32
  neuron.yield %h, %w1 : f32, f32
}
!x = !tdim.tensor<[t: ?, b: ?, k: ?], DT>
!w = !tdim.tensor<[j: ?, k: ?], DT>
!y = !tdim.tensor<[t: ?, b: ?, j: ?], DT>
tdim.kernel @layer(%x: !x, %w: !w, %pb: !tdim.tensor<[], f32>) -> (%s: !y) {
  %nt = tdim.size %x[t] : !x
  %nb = tdim.size %x[b] : !x
  %nj = tdim.size %w[j] : !w
  %h = tdim.alloc(%nt, %nb, %nj) : !y
  tdim.contract ins(%x, %w : !x, !w) outs(%h : !y)
  neuron.forward @izhikevich ins(x = %h : !y) params(b = %pb : !tdim.tensor<[], f32>) outs(%s : !y) time t
  tdim.return
}
"""


def izhikevich_reference(h, b):
    v = torch.zeros_like(h[0])
    w = torch.zeros_like(h[0])
    spikes, reliable = [], []
    ok = torch.ones_like(h[0], dtype=torch.bool)
    for x in h:
        hv = v + (x + (v + 0.1) * (v - 0.8) - w) / 2.0
        w1 = w + (0.5 * (hv + 0.1) - w) / 2.0
        ok &= (hv - 1.0).abs() > 1e-2
        fired = hv >= 1.0
        v = torch.where(fired, torch.zeros_like(hv), hv)
        w = torch.where(fired, w1 + b, w1)
        spikes.append(fired.double())
        reliable.append(ok.clone())
    return torch.stack(spikes), torch.stack(reliable)


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_model_neuron_in_the_epilogue(device, dtype):
    """A neuron written once (Izhikevich: two states, a parameter bound to a
    tensor) as a linear layer's scanning epilogue, both states carried."""
    mod = nerve.compile(IZHIKEVICH.replace("DT", dtype), target=device)
    dt = DTYPES[dtype]
    g = torch.Generator().manual_seed(23)
    for steps, batch, k, j in ((6, 9, 40, 33), (130, 2, 16, 24)):
        x = torch.randn(steps, batch, k, generator=g).to(dt)
        w = (torch.randn(j, k, generator=g) * 2 / k ** 0.5).to(dt)
        h = torch.einsum("tbk,jk->tbj", x.double(), w.double()).to(dt).double()
        want, reliable = izhikevich_reference(h, 0.2)
        got = mod.layer(x=x.to(device), w=w.to(device),
                        pb=torch.tensor(0.2, device=device)).double().cpu()
        assert reliable.double().mean() > 0.5 and want.mean() > 0.01
        assert not ((got != want) & reliable).any(), (steps, batch, k, j)
