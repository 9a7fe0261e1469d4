#!/usr/bin/env python3
"""Plots train_digits.py's histories: test accuracy and loss per epoch.

    python3 examples/python/train_digits.py --json nerve.json
    python3 examples/python/train_digits.py --backend torch --json torch.json
    python3 examples/python/plot_digits.py nerve.json torch.json --out digits.png

Each JSON is one run (`--json`); its label is the backend, neuron and
encoding the run used. Needs matplotlib (Debian: python3-matplotlib).
"""

from __future__ import annotations

import argparse
import json
import sys


def label(run: dict) -> str:
    a = run["args"]
    return "%s: %s, %s encoding" % (a["backend"], a["neuron"].upper(), a["encoding"])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", help="train_digits.py --json files")
    p.add_argument("--out", required=True, help="the PNG to write")
    args = p.parse_args(argv)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (acc, loss) = plt.subplots(1, 2, figsize=(10, 3.8))
    styles = {"nerve": "-", "torch": "--"}
    for path in args.runs:
        with open(path) as f:
            run = json.load(f)
        h = run["history"]
        epochs = range(1, len(h["test_accuracy"]) + 1)
        style = styles.get(run["args"]["backend"], ":")
        acc.plot(epochs, [100 * a for a in h["test_accuracy"]], style, marker="o", ms=3,
                 label=label(run))
        loss.plot(epochs, h["loss"], style, marker="o", ms=3, label=label(run))
    acc.set(xlabel="epoch", ylabel="test accuracy (%)", ylim=(60, 100),
            title="digits: test accuracy")
    loss.set(xlabel="epoch", ylabel="training loss (MSE of rates)", yscale="log",
             title="digits: training loss")
    from matplotlib.ticker import MaxNLocator
    for ax in (acc, loss):
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    acc.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
