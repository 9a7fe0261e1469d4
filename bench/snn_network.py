#!/usr/bin/env python3
"""A SEW-ResNet18 spiking network trained with nerve's neurons and SpikingJelly's, on the GPU.

The network (SEW-ResNet18's layout: a 7x7 stem, four stages of two basic
blocks of conv-BN-neuron with spike-element-wise ADD residuals, 64-512
channels, average pool, a 1000-way linear layer) runs multi-step: the
convolutions and batch norms see the T steps as T*B images, the LIF neurons
(tau 2, ATan surrogate, detached reset) the [T, B, C, H, W] sequence, in
channels-last memory throughout. Synthetic inputs: T=4, batch 32, 3 x 128 x
128, direct encoding, cross-entropy on the time-averaged logits, SGD with
momentum.

Single process (one GPU): for every neuron backend (nerve; SpikingJelly's
cupy, triton and torch backends, the last being PyTorch's own loop), eager
and under torch.compile, in f32 and bf16 autocast, times a training step
(forward, backward, optimizer, reset) and an inference batch (CUDA events,
median after warm-up), counts the copy kernels one training step launches
(the PyTorch profiler's CUDA kernels whose names say copy, clone or an
NCHW/NHWC conversion: layout conversions, and in bf16 also dtype casts),
where its GPU time goes by kernel category and its host time by operator
(eager and compiled without CUDA graphs), and its peak memory. Prints a markdown table; --out gets JSON and CSV.

    python3 bench/snn_network.py --spikingjelly ../shared/peers --out /tmp/snn

Under torchrun (WORLD_SIZE > 1, or --distributed) it trains one variant
data-parallel with DistributedDataParallel over NCCL and reports the images
per second of each GPU; with --sync-bn and --log-steps N the global batch is
split across the GPUs (batch norm statistics synchronised), so that the
first N losses must equal one GPU's at the same global batch:

    torchrun --nproc_per_node=4 bench/snn_network.py --distributed --backend nerve
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import statistics
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

BACKENDS = ("nerve", "cupy", "triton", "torch")
DTYPES = {"f32": None, "bf16": torch.bfloat16}
# CUDA kernels that copy a tensor into another layout: clones (inductor's
# and eager's .contiguous()), eager copies, cuDNN's NCHW <-> NHWC
# conversions. Under bf16 autocast eager copies include dtype casts. Batch
# norm's running-statistics updates (copy_ fused with it, the step count's
# add) are not conversions.
LAYOUT_KERNEL = re.compile(r"clone|direct_copy_kernel|nchwToNhwc|nhwcToNchw", re.IGNORECASE)
NOT_LAYOUT = re.compile(r"batch_norm|add_copy_")
# Where a step's GPU time goes, by kernel name.
CATEGORIES = (("nerve neurons", re.compile(r"^(forward|backward|train|infer)_kernel")),
              # "lif" as a word: cuDNN's kernels say "simplified".
              ("SpikingJelly neurons", re.compile(r"multistep|(?<![a-z])lif(?![a-z])|neuron",
                                                  re.IGNORECASE)),
              ("convolutions", re.compile(r"conv|cudnn|xmma|gemm|cutlass|sm\d\d_|implicit",
                                          re.IGNORECASE)),
              ("layout copies", LAYOUT_KERNEL),
              ("inductor's kernels", re.compile(r"^triton_")))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--spikingjelly", default=None,
                   help="the folder holding SpikingJelly's package (../shared/peers)")
    p.add_argument("--backends", default=",".join(BACKENDS))
    p.add_argument("--backend", default="nerve", help="the variant a distributed run trains")
    p.add_argument("--modes", default="eager,compile,cudagraphs",
                   help="eager; compile: torch.compile; cudagraphs: torch.compile's "
                        "reduce-overhead mode (its graphs replayed as CUDA graphs)")
    p.add_argument("--dtypes", default="f32,bf16")
    p.add_argument("--steps", type=int, default=4, help="time steps T")
    p.add_argument("--batch", type=int, default=32,
                   help="images a step (a GPU's share under --distributed unless --sync-bn)")
    p.add_argument("--size", type=int, default=128)
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--no-profile", action="store_true")
    p.add_argument("--distributed", action="store_true")
    p.add_argument("--compile", action="store_true", help="distributed: under torch.compile")
    p.add_argument("--dtype", default="f32", help="distributed: f32 or bf16")
    p.add_argument("--sync-bn", action="store_true",
                   help="distributed: split --batch across the GPUs, batch norm synchronised")
    p.add_argument("--log-steps", type=int, default=0)
    p.add_argument("--out", default=None)
    p.add_argument("--report", nargs="+", metavar="DIR",
                   help="print the tables of earlier runs' --out folders (one GPU's "
                        "snn_network.json, the distributed runs' ddp-*.json) and exit")
    return p.parse_args()


# --- the network ---------------------------------------------------------------

class Flat(nn.Module):
    """Runs 2-D layers on [T, B, C, H, W] as T*B images (views: no copy in
    channels-last memory)."""

    def __init__(self, *layers):
        super().__init__()
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        t, b = x.shape[:2]
        y = self.body(x.flatten(0, 1))
        return y.view(t, b, *y.shape[1:])


def neuron_maker(backend, sj):
    if backend == "nerve":
        from nerve.torch import neuron, surrogate
        return lambda: neuron.LIFNode(tau=2.0, detach_reset=True, step_mode="m",
                                      surrogate_function=surrogate.ATan())
    return lambda: sj.neuron.LIFNode(tau=2.0, detach_reset=True, step_mode="m",
                                     surrogate_function=sj.surrogate.ATan(), backend=backend)


def conv_bn(cin, cout, k, stride):
    return [nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), nn.BatchNorm2d(cout)]


class SEWBlock(nn.Module):
    def __init__(self, cin, cout, stride, make_neuron):
        super().__init__()
        self.conv1 = Flat(*conv_bn(cin, cout, 3, stride))
        self.sn1 = make_neuron()
        self.conv2 = Flat(*conv_bn(cout, cout, 3, 1))
        self.sn2 = make_neuron()
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(Flat(*conv_bn(cin, cout, 1, stride)), make_neuron())

    def forward(self, x):
        out = self.sn2(self.conv2(self.sn1(self.conv1(x))))
        return out + (x if self.down is None else self.down(x))  # SEW ADD


class SEWResNet18(nn.Module):
    def __init__(self, make_neuron, classes):
        super().__init__()
        self.stem = Flat(*conv_bn(3, 64, 7, 2))
        self.sn = make_neuron()
        self.pool = Flat(nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            blocks += [SEWBlock(cin, cout, stride, make_neuron),
                       SEWBlock(cout, cout, 1, make_neuron)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Linear(512, classes)

    def forward(self, x):  # [T, B, 3, H, W] -> [B, classes]
        y = self.blocks(self.pool(self.sn(self.stem(x))))
        return self.head(y.mean((3, 4))).mean(0)


def channels_last_seq(seq):
    """[T, B, 3, H, W] as T*B channels-last images (a view of them)."""
    t, b = seq.shape[:2]
    flat = seq.reshape(t * b, *seq.shape[2:]).contiguous(memory_format=torch.channels_last)
    return flat.view(seq.shape)


def inputs(args, batch, seed, device):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(batch, 3, args.size, args.size, generator=g)
    y = torch.randint(0, args.classes, (batch,), generator=g)
    # Direct encoding: the image at every step.
    seq = x.unsqueeze(0).expand(args.steps, *x.shape)
    return channels_last_seq(seq.to(device)), y.to(device)


def build(args, backend, sj, device, seed=0):
    torch.manual_seed(seed)
    net = SEWResNet18(neuron_maker(backend, sj), args.classes)
    return net.to(device).to(memory_format=torch.channels_last)


# --- one GPU: every variant -------------------------------------------------------

def make_steps(net, model, dtype):
    """(train(x, y), infer(x)): one optimizer for all the steps, the neurons
    reset after each (`reset_net` resets any module that has `reset()`,
    SpikingJelly's included)."""
    from nerve.torch.functional import reset_net as reset
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    autocast = (lambda: torch.autocast("cuda", dtype=dtype)) if dtype else \
        (lambda: torch.autocast("cuda", enabled=False))

    def train(x, y):
        opt.zero_grad(set_to_none=True)
        with autocast():
            loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        reset(net)
        return loss

    def infer(x):
        with torch.no_grad(), autocast():
            out = model(x)
        reset(net)
        return out

    return train, infer


def median_ms(fn, runs):
    """Median CUDA-event ms of fn after 3 warm-up calls, back to back (a
    step's activations are far larger than L2)."""
    return common.torch_median_ms(torch, fn, runs, flush="none")


def host_profile(fn):
    """Where one call of fn spends host time (profiler, CPU side): the 6
    ops of most self time (ms), and the shapes nerve's backward operator
    received for its gradients (grad_spike, grad_v: an empty or absent
    grad_v means nothing was materialised for the unused last potential)."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        fn()
        torch.cuda.synchronize()
    backward_grads = {}
    for event in prof.events():
        if event.name == "nerve::neuron_backward":
            shapes = tuple(tuple(s) for s in (event.input_shapes or [])[1:3])
            backward_grads[str(shapes)] = backward_grads.get(str(shapes), 0) + 1
    top = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:6]
    return {"self_ms": [(e.key[:60], e.self_cpu_time_total / 1e3) for e in top],
            "neuron_backward_grad_shapes": backward_grads}


def profile_step(fn):
    """What one call of fn launches, from the profiler: (layout copies, all
    kernels, the copies' names by count, GPU ms by category, the 8 longest
    kernels by total ms)."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    copies = kernels = 0
    names, by_kernel, by_category = {}, {}, {}
    for event in prof.events():
        if getattr(event, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        name = event.name
        if "memcpy" in name.lower() or "memset" in name.lower():
            continue
        ms = (event.time_range.end - event.time_range.start) / 1e3
        kernels += 1
        by_kernel[name[:80]] = by_kernel.get(name[:80], 0.0) + ms
        category = next((c for c, pattern in CATEGORIES if pattern.search(name)), "other")
        if category == "layout copies" and NOT_LAYOUT.search(name):
            category = "other"
        by_category[category] = by_category.get(category, 0.0) + ms
        if category == "layout copies":
            copies += 1
            names[name[:100]] = names.get(name[:100], 0) + 1
    longest = sorted(by_kernel.items(), key=lambda kv: -kv[1])[:8]
    return (copies, kernels, sorted(names.items(), key=lambda kv: -kv[1])[:8],
            by_category, longest)


def variant(args, backend, mode, dtype_name, sj, device):
    row = {"backend": backend, "mode": mode, "dtype": dtype_name}
    net = build(args, backend, sj, device)
    model = net
    if mode == "compile":
        model = torch.compile(net)
    elif mode == "cudagraphs":  # torch.compile replaying CUDA graphs
        model = torch.compile(net, mode="reduce-overhead")
    x, y = inputs(args, args.batch, 1, device)
    train_step, infer_step = make_steps(net, model, DTYPES[dtype_name])
    mark = torch.compiler.cudagraph_mark_step_begin if mode == "cudagraphs" else (lambda: None)

    def train():
        mark()
        return train_step(x, y)

    def infer():
        mark()
        return infer_step(x)

    started = time.perf_counter()
    train()  # compiles under torch.compile
    infer()
    torch.cuda.synchronize()
    row["first_call_s"] = time.perf_counter() - started
    if mode != "eager":
        from torch._dynamo.utils import counters
        breaks = counters["graph_break"]
        row["graph_breaks"] = sum(breaks.values())
        row["graph_break_reasons"] = [str(k)[:120] for k, _ in breaks.most_common(3)]
    row["train_ms"] = median_ms(train, args.runs)
    row["infer_ms"] = median_ms(infer, args.runs)
    torch.cuda.reset_peak_memory_stats(device)
    train()
    torch.cuda.synchronize()
    row["peak_gib"] = torch.cuda.max_memory_allocated(device) / 2**30
    if not args.no_profile:
        (row["copies"], row["kernels"], row["copy_names"], row["gpu_ms"],
         row["longest_kernels"]) = profile_step(train)
        if mode != "cudagraphs":  # replayed graphs run no host code to see
            row["host"] = host_profile(train)
    row["loss"] = float(train())
    return row


def single(args, sj):
    device = torch.device("cuda")
    rows = []
    for dtype_name in args.dtypes.split(","):
        for mode in args.modes.split(","):
            for backend in args.backends.split(","):
                if backend != "nerve" and sj is None:
                    continue
                if mode != "eager":
                    torch._dynamo.reset()
                    from torch._dynamo.utils import counters
                    counters.clear()
                try:
                    row = variant(args, backend, mode, dtype_name, sj, device)
                except Exception as e:  # a peer's backend that cannot run this variant
                    row = {"backend": backend, "mode": mode, "dtype": dtype_name,
                           "error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:100])}
                print(format_row(row), flush=True)
                rows.append(row)
    return rows


def format_row(r):
    if "error" in r:
        return "| %s | %s | %s | failed: %s |" % (r["backend"], r["mode"], r["dtype"], r["error"])
    copies = "-" if "copies" not in r else "%d of %d" % (r["copies"], r["kernels"])
    return "| %s | %s | %s | %.2f | %.2f | %s | %.2f | %.0f |" % (
        r["backend"], r["mode"], r["dtype"], r["train_ms"], r["infer_ms"], copies, r["peak_gib"],
        r["first_call_s"])


def summarise(rows):
    lines = []
    ok = [r for r in rows if "error" not in r]
    for dtype in sorted({r["dtype"] for r in ok}):
        for mode in ("eager", "compile", "cudagraphs"):
            ours = [r for r in ok if r["backend"] == "nerve" and r["mode"] == mode and
                    r["dtype"] == dtype]
            peers = [r for r in ok if r["backend"] in ("cupy", "triton") and r["dtype"] == dtype
                     and r["mode"] == mode]
            if not ours or not peers:
                continue
            best = min(peers, key=lambda r: r["train_ms"])
            lines.append("%s %s: nerve's training step %.2f ms, SpikingJelly's fastest (%s) "
                         "%.2f ms: %.2fx" % (dtype, mode, ours[0]["train_ms"], best["backend"],
                                            best["train_ms"], best["train_ms"] /
                                            ours[0]["train_ms"]))
    return lines


# --- several GPUs: DistributedDataParallel --------------------------------------

def distributed(args, sj):
    import torch.distributed as dist
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast stays off
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    device = torch.device("cuda", local)
    torch.cuda.set_device(device)
    net = build(args, args.backend, sj, device)
    if args.sync_bn:
        net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    ddp = nn.parallel.DistributedDataParallel(net, device_ids=[local], gradient_as_bucket_view=True)
    model = torch.compile(ddp) if args.compile else ddp
    if args.sync_bn:
        if args.batch % world:
            raise SystemExit("--batch %d does not split across %d GPUs" % (args.batch, world))
        share = args.batch // world
    else:
        share = args.batch
    train, _ = make_steps(net, model, DTYPES[args.dtype])
    losses = []
    for step in range(args.log_steps):
        # The global batch one GPU would see at this step, each GPU its share.
        x, y = inputs(args, share * world, 100 + step, "cpu")
        part = slice(rank * share, (rank + 1) * share)
        loss = train(channels_last_seq(x[:, part].to(device)), y[part].to(device)).detach()
        dist.all_reduce(loss)
        losses.append(float(loss) / world)
    x, y = inputs(args, share, 7 + rank, device)
    ms = median_ms(lambda: train(x, y), args.runs)
    result = {"backend": args.backend, "gpus": world, "per_gpu_batch": share,
              "compile": args.compile, "dtype": args.dtype, "sync_bn": args.sync_bn,
              "step_ms": ms, "images_per_s_per_gpu": share * 1e3 / ms,
              "first_losses": losses if args.log_steps else [],
              "gpu": torch.cuda.get_device_name(device)}
    times = [None] * world
    dist.all_gather_object(times, ms)
    result["step_ms_all"] = times
    if rank == 0:
        print(json.dumps(result), flush=True)
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            name = "ddp-%s-g%d%s.json" % (args.backend, world, "-sync" if args.sync_bn else "")
            with open(os.path.join(args.out, name), "w") as f:
                json.dump(result, f, indent=1)
    dist.destroy_process_group()


def print_table(rows):
    print("| neurons | mode | dtype | train step ms | inference ms | layout copies a step | "
          "peak GiB | first call s |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(format_row(row))
    for line in summarise(rows):
        print(line)
    for row in rows:
        if "gpu_ms" in row:
            print("%s %s %s: GPU ms of a training step: %s" % (
                row["backend"], row["mode"], row["dtype"], ", ".join(
                    "%s %.2f" % kv for kv in sorted(row["gpu_ms"].items(), key=lambda kv: -kv[1]))))
        if "host" in row:
            print("%s %s %s: host self ms: %s; nerve backward's (grad_spike, grad_v) shapes: %s"
                  % (row["backend"], row["mode"], row["dtype"], ", ".join(
                      "%s %.2f" % tuple(kv) for kv in row["host"]["self_ms"]),
                     row["host"]["neuron_backward_grad_shapes"] or "-"))
        if row.get("copy_names") or row.get("graph_breaks"):
            print("%s %s %s: layout copies %s; graph breaks %s %s" % (
                row["backend"], row["mode"], row["dtype"],
                ", ".join("%s x%d" % (n, c) for n, c in row.get("copy_names", [])),
                row.get("graph_breaks", "-"), row.get("graph_break_reasons", "")))


def report(folders):
    """The tables of earlier runs (their --out folders)."""
    rows, ddp, digits = [], [], []
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name)) as f:
                data = json.load(f) if name.endswith(".json") else None
            if name == "snn_network.json":
                rows += data["rows"]
            elif name.startswith("ddp-"):
                ddp.append(data)
            elif name.startswith("digits-"):
                digits.append((name, data))
    order = {b: i for i, b in enumerate(BACKENDS)}
    modes = {"eager": 0, "compile": 1, "cudagraphs": 2}
    rows.sort(key=lambda r: (r["dtype"] != "f32", modes.get(r["mode"], 9),
                             order.get(r["backend"], 9)))
    if rows:
        print_table(rows)
    scaling = sorted((d for d in ddp if not d["sync_bn"]),
                     key=lambda d: (d["per_gpu_batch"], d["gpus"]))
    if scaling:
        def key(d):
            return d["backend"], d["dtype"], d["compile"], d["per_gpu_batch"]
        base = {key(d): d for d in scaling if d["gpus"] == 1}
        print("\n| neurons | GPUs | batch a GPU | step ms (slowest GPU) | images/s a GPU | "
              "of one GPU's |")
        print("|---|---|---|---|---|---|")
        for d in scaling:
            one = base.get(key(d))
            slowest = max(d["step_ms_all"])
            rate = d["per_gpu_batch"] * 1e3 / slowest
            share = "%.1f%%" % (100 * rate / (one["per_gpu_batch"] * 1e3 /
                                              max(one["step_ms_all"]))) if one else "-"
            print("| %s%s | %d | %d | %.2f | %.0f | %s |" % (
                d["backend"], " (compile)" if d["compile"] else "", d["gpus"],
                d["per_gpu_batch"], slowest, rate, share))
    synced = sorted((d for d in ddp if d["sync_bn"]), key=lambda d: d["gpus"])
    if len(synced) > 1:
        one = synced[0]["first_losses"]
        for d in synced[1:]:
            diff = max(abs(a - b) / abs(b) for a, b in zip(d["first_losses"], one))
            print("%d GPUs vs %d at global batch %d (batch norm synchronised): first %d losses "
                  "%s, largest relative difference %.2e" % (
                      d["gpus"], synced[0]["gpus"], d["per_gpu_batch"] * d["gpus"], len(one),
                      ", ".join("%.5f" % v for v in d["first_losses"]), diff))
    # train_digits.py --json of digits-BACKEND-gG.json: G processes against one.
    digits = dict(digits)
    for name, data in sorted(digits.items()):
        h = data["history"]
        line = "%s: test accuracy %.4f after %d epochs, %.2f s an epoch" % (
            name[:-5], h["test_accuracy"][-1], len(h["test_accuracy"]),
            statistics.median(h["seconds"]))
        one = digits.get(re.sub(r"-g\d+\.json$", "-g1.json", name))
        if one is not None and one is not data and h["step_loss"]:
            steps = one["history"]["step_loss"]
            rel = [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(h["step_loss"], steps)]
            apart = next((i for i, r in enumerate(rel) if r > 1e-3), None)
            line += "; its %d step losses against one process's: %s" % (
                len(steps), "all within %.1e" % max(rel) if apart is None else
                "within %.1e for the first %d steps, then apart (a spike flipped by rounding)"
                % (max(rel[:apart] or [0.0]), apart))
        print(line)


def main():
    args = parse_args()
    if args.report:
        report(args.report)
        return 0
    sj = None
    if args.spikingjelly:
        sys.path.insert(0, os.path.abspath(args.spikingjelly))
        from spikingjelly.activation_based import neuron as sj_neuron
        from spikingjelly.activation_based import surrogate as sj_surrogate

        class SJ:
            neuron, surrogate = sj_neuron, sj_surrogate
        sj = SJ
    if args.distributed or int(os.environ.get("WORLD_SIZE", "1")) > 1:
        distributed(args, sj)
        return 0
    print("%s, PyTorch %s; SEW-ResNet18, T=%d, batch %d, 3x%dx%d, channels-last" % (
        torch.cuda.get_device_name(), torch.__version__, args.steps, args.batch, args.size,
        args.size))
    print("| neurons | mode | dtype | train step ms | inference ms | layout copies a step | "
          "peak GiB | first call s |")
    print("|---|---|---|---|---|---|---|---|")
    rows = single(args, sj)
    for line in summarise(rows):
        print(line)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "snn_network.json"), "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "args": vars(args), "rows": rows}, f, indent=1)
        keys = sorted({k for r in rows for k in r})
        with open(os.path.join(args.out, "snn_network.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
