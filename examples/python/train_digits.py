#!/usr/bin/env python3
"""Trains a spiking network on the handwritten digits data set with nerve's neurons.

The 1797 8 x 8 digits that scikit-learn ships (`sklearn.datasets.load_digits`;
without scikit-learn, `--data` names its `digits.csv.gz`: 64 pixel columns
and the label) are split once, by `--seed`, into 1438 training and 359 test
images. The network, written as a SpikingJelly user writes one:

    x [T, B, 64] -> Linear(64, H) -> LIF -> Linear(H, 10) -> LIF -> mean over T

with direct encoding (the pixels, scaled to [0, 1], as the input current of
every step) or Poisson encoding (a spike with the pixel's probability at
each step), trained with surrogate gradients (sigmoid(4x)) through time on
the mean-squared error between the output firing rates and the one-hot
label (SpikingJelly's tutorials' loss), with Adam.

`--backend nerve` runs the neurons on nerve's kernels (`nerve.torch`), which
is SpikingJelly's code with its `neuron`, `surrogate` and `functional`
imports changed; `--backend torch` runs the same neurons as plain PyTorch
(a loop over time, the spike's surrogate as an autograd function), so the
two can be compared run for run: at one seed both start from the same
weights and see the same batches.

    python3 examples/python/train_digits.py --device cpu --epochs 20
    python3 examples/python/train_digits.py --device cpu --epochs 20 --backend torch

One line per epoch, then `test accuracy: X`. `--json PATH` also writes the
history (docs/training.md plots it).

Under `torchrun --nproc_per_node=G` it trains data-parallel with
DistributedDataParallel (NCCL on CUDA, one GPU a process; Gloo on the CPU):
each step's global batch of `--batch` images is split across the G
processes and the loss weighted so that the averaged gradient is the one of
the whole batch, so G processes follow one process's run to rounding.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from typing import Callable, Dict, List, Tuple

import numpy as np
import torch
from torch import nn

TEST_FRACTION = 0.2


def parse_args(argv: List[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--backend", choices=("nerve", "torch"), default="nerve")
    p.add_argument("--neuron", choices=("lif", "plif"), default="lif",
                   help="LIF (tau 2) or PLIF (learned decay, starting at 1/2)")
    p.add_argument("--encoding", choices=("direct", "poisson"), default="direct")
    p.add_argument("--steps", type=int, default=8, help="time steps T")
    p.add_argument("--hidden", type=int, default=256, help="hidden neurons H")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0,
                   help="CPU threads for PyTorch and nerve (0: their defaults)")
    p.add_argument("--data", help="digits.csv.gz, where scikit-learn is not installed")
    p.add_argument("--json", help="also write the per-epoch history here")
    p.add_argument("--log-steps", type=int, default=0,
                   help="also keep the loss of the first N steps (of the whole batch)")
    args = p.parse_args(argv)
    for name in ("epochs", "steps", "hidden", "batch"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1, not {getattr(args, name)}")
    if args.lr <= 0:
        p.error(f"--lr must be positive, not {args.lr}")
    return args


# --- data ----------------------------------------------------------------------

def load_digits(path: str = None) -> Tuple[np.ndarray, np.ndarray]:
    """Pixels in [0, 1] (float32, [1797, 64]) and labels (int64)."""
    if path:
        with gzip.open(path, "rt") as f:
            table = np.loadtxt(f, delimiter=",", dtype=np.float64)
        if table.ndim != 2 or table.shape[1] != 65:
            raise ValueError(f"--data {path}: expected 65 columns (64 pixels and the label), "
                             f"found shape {table.shape}")
        pixels, labels = table[:, :64], table[:, 64]
    else:
        try:
            from sklearn.datasets import load_digits as sklearn_digits
        except ImportError:
            raise SystemExit("train_digits: scikit-learn is not installed (Debian: "
                             "python3-sklearn); pass --data PATH to digits.csv.gz") from None
        digits = sklearn_digits()
        pixels, labels = digits.data, digits.target
    return (pixels / 16.0).astype(np.float32), labels.astype(np.int64)


def split(n: int, seed: int) -> Tuple[np.ndarray, np.ndarray]:
    """Training and test indices, fixed by the seed."""
    order = np.random.RandomState(seed).permutation(n)
    n_test = int(round(n * TEST_FRACTION))
    return order[n_test:], order[:n_test]


# --- the torch backend: the same neurons as plain PyTorch ------------------------

class SigmoidSpike(torch.autograd.Function):
    """Heaviside forward, sigmoid(alpha x)' backward (SpikingJelly's Sigmoid)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, alpha: float) -> torch.Tensor:
        ctx.save_for_backward(x)
        ctx.alpha = alpha
        return (x >= 0).to(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(ctx.alpha * x)
        return grad * ctx.alpha * s * (1 - s), None


class TorchLIF(nn.Module):
    """Multi-step LIF (decay_input, hard reset to 0, threshold 1): h = v +
    (x - v) * decay; s = h >= 1; v = h (1 - s). PLIF learns decay =
    sigmoid(w), w starting at -ln(init_tau - 1)."""

    def __init__(self, tau: float = 2.0, learnable: bool = False):
        super().__init__()
        self.learnable = learnable
        if learnable:
            self.w = nn.Parameter(torch.as_tensor(-np.log(tau - 1.0), dtype=torch.float32))
        else:
            self.decay = 1.0 / tau
        self.v = 0.0

    def reset(self) -> None:
        self.v = 0.0

    def forward(self, x_seq: torch.Tensor) -> torch.Tensor:
        decay = self.w.sigmoid() if self.learnable else self.decay
        v = torch.zeros_like(x_seq[0]) if not isinstance(self.v, torch.Tensor) else self.v
        spikes = []
        for x in x_seq:
            h = v + (x - v) * decay
            s = SigmoidSpike.apply(h - 1.0, 4.0)
            v = h * (1.0 - s)
            spikes.append(s)
        self.v = v
        return torch.stack(spikes)


def reset_torch_net(net: nn.Module) -> None:
    for m in net.modules():
        if isinstance(m, TorchLIF):
            m.reset()


# --- the network ---------------------------------------------------------------

def import_nerve() -> None:
    """nerve from $PYTHONPATH or an install, else this checkout's build/python."""
    try:
        import nerve  # noqa: F401
    except ImportError:
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "..", "build", "python"))
        import nerve  # noqa: F401


def neuron_factory(backend: str, kind: str) -> Tuple[Callable[[], nn.Module],
                                                     Callable[[nn.Module], None]]:
    """A constructor of one spiking layer and the network reset, per backend."""
    if backend == "torch":
        return (lambda: TorchLIF(2.0, learnable=kind == "plif")), reset_torch_net
    # SpikingJelly's code, with `spikingjelly.activation_based` -> `nerve.torch`.
    import_nerve()
    from nerve.torch import functional, neuron, surrogate
    if kind == "plif":
        make = lambda: neuron.ParametricLIFNode(init_tau=2.0, surrogate_function=surrogate.Sigmoid(),
                                                step_mode="m")
    else:
        make = lambda: neuron.LIFNode(tau=2.0, surrogate_function=surrogate.Sigmoid(),
                                      step_mode="m")
    return make, functional.reset_net


class DigitsSNN(nn.Module):
    def __init__(self, make_neuron: Callable[[], nn.Module], hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(64, hidden)
        self.sn1 = make_neuron()
        self.fc2 = nn.Linear(hidden, 10)
        self.sn2 = make_neuron()

    def forward(self, x_seq: torch.Tensor) -> torch.Tensor:
        """[T, B, 64] inputs -> [B, 10] firing rates."""
        return self.sn2(self.fc2(self.sn1(self.fc1(x_seq)))).mean(0)


def encode(x: torch.Tensor, steps: int, encoding: str, gen: torch.Generator) -> torch.Tensor:
    seq = x.unsqueeze(0).expand(steps, *x.shape)
    if encoding == "direct":
        return seq.contiguous()
    noise = torch.rand(seq.shape, generator=gen, device="cpu").to(x.device)
    return (noise < seq).to(x.dtype)


# --- training ------------------------------------------------------------------

def init_distributed(args: argparse.Namespace) -> Tuple[int, int, torch.device]:
    """(rank, world size, device): from torchrun's environment, else one
    process on --device."""
    device = torch.device(args.device)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return 0, 1, device
    import torch.distributed as dist
    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    if device.type == "cuda":
        # NVLink multicast stays off (the machines' setting).
        os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
        device = torch.device("cuda", local)
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return rank, world, device


def local_share(n: int, rank: int, world: int) -> slice:
    """This process's part of a global batch of n (parts differ by one at most)."""
    base, extra = divmod(n, world)
    start = rank * base + min(rank, extra)
    return slice(start, start + base + (1 if rank < extra else 0))


def evaluate(net, reset, x, y, args, gen) -> float:
    net.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, len(x), 256):
            xb, yb = x[start:start + 256], y[start:start + 256]
            rates = net(encode(xb, args.steps, args.encoding, gen))
            correct += int((rates.argmax(1) == yb).sum())
            reset(net)
    return correct / len(x)


def train(args: argparse.Namespace) -> Dict[str, List[float]]:
    rank, world, device = init_distributed(args)
    say = print if rank == 0 else (lambda *a, **k: None)
    if args.threads:
        torch.set_num_threads(args.threads)
        if args.backend == "nerve":
            import_nerve()
            import nerve
            nerve.set_num_threads(args.threads)
    pixels, labels = load_digits(args.data)
    train_idx, test_idx = split(len(labels), args.seed)
    x_train = torch.from_numpy(pixels[train_idx]).to(device)
    y_train = torch.from_numpy(labels[train_idx]).to(device)
    x_test = torch.from_numpy(pixels[test_idx]).to(device)
    y_test = torch.from_numpy(labels[test_idx]).to(device)

    torch.manual_seed(args.seed)
    make, reset = neuron_factory(args.backend, args.neuron)
    net = DigitsSNN(make, args.hidden).to(device)
    model = net
    if world > 1:
        model = nn.parallel.DistributedDataParallel(
            net, device_ids=[device.index] if device.type == "cuda" else None)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    order_gen = torch.Generator().manual_seed(args.seed)
    code_gen = torch.Generator().manual_seed(args.seed + 1)
    say(f"digits: {len(train_idx)} training, {len(test_idx)} test images; "
        f"{args.backend} {args.neuron.upper()} neurons on {device}"
        f"{f' x {world} processes' if world > 1 else ''}, T={args.steps}, H={args.hidden}, "
        f"{args.encoding} encoding", flush=True)

    history: Dict[str, List[float]] = {"loss": [], "train_accuracy": [], "test_accuracy": [],
                                       "seconds": [], "step_loss": []}
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        net.train()
        total, seen, correct = 0.0, 0, 0
        perm = torch.randperm(len(x_train), generator=order_gen).to(device)
        for b in range(0, len(perm), args.batch):
            batch = perm[b:b + args.batch]
            # Every process encodes the whole batch (the same random draws as
            # one process would) and keeps its share.
            x_seq = encode(x_train[batch], args.steps, args.encoding, code_gen)
            part = local_share(len(batch), rank, world)
            x_seq, yb = x_seq[:, part], y_train[batch[part]]
            rates = model(x_seq)
            target = nn.functional.one_hot(yb, 10).to(rates)
            # The mean over the whole batch once DDP averages the processes'
            # gradients.
            loss = nn.functional.mse_loss(rates, target, reduction="sum") * (
                world / (len(batch) * 10))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            reset(net)
            step_loss, step_correct = whole_batch(loss.detach() / world,
                                                  (rates.argmax(1) == yb).sum(), world)
            if len(history["step_loss"]) < args.log_steps:
                history["step_loss"].append(step_loss)
            total += step_loss * len(batch)
            seen += len(batch)
            correct += step_correct
        test_acc = evaluate(net, reset, x_test, y_test, args, code_gen)
        seconds = time.perf_counter() - start
        for key, value in (("loss", total / seen), ("train_accuracy", correct / seen),
                           ("test_accuracy", test_acc), ("seconds", seconds)):
            history[key].append(value)
        say(f"epoch {epoch:2d}/{args.epochs}  loss {total / seen:.4f}  "
            f"train accuracy {correct / seen:.4f}  test accuracy {test_acc:.4f}  "
            f"({seconds:.2f} s)", flush=True)
    say(f"test accuracy: {history['test_accuracy'][-1]:.4f}")
    if world > 1:
        torch.distributed.destroy_process_group()
    return history if rank == 0 else {}


def whole_batch(loss: torch.Tensor, correct: torch.Tensor, world: int) -> Tuple[float, int]:
    """The step's loss and correct count over every process's share."""
    if world > 1:
        both = torch.stack([loss.float(), correct.float()])
        torch.distributed.all_reduce(both)
        return float(both[0]), int(round(float(both[1])))
    return float(loss), int(correct)


def main(argv: List[str] = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    history = train(args)
    if args.json and history:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "history": history}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
