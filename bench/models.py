#!/usr/bin/env python3
"""Neurons written once (neuron.model) on the GPU: QIF, EIF, Izhikevich,
adaptive LIF and AdEx, inference and training step, against the device's
copy bandwidth measured in the same run, and SpikingJelly's CuPy forward
kernels for QIF / EIF / Izhikevich measured in this process.

Kernels: nerve's built-in definitions (nerve.torch.NeuronModel.builtin, the
C++ builtinNeuronModel), SpikingJelly's constructor defaults where it has
the neuron (Izhikevich with a = 0.5, b = 0.1 so that w matters), hard
reset, sigmoid(4) surrogate, f32, T x N = 1024 x 65536 by default.

Bytes counted (the fewest the operation must move, T x N x 4 each pass):
  inference: read x, write spikes (the final states: N each)     = 2 passes
  training:  forward reads x, writes spikes and the S sequences backward
             reads (nerve's planner: NeuronModel.saves; S = 1, the
             charged potential, for every neuron here but ALIF, whose
             adaptive threshold also needs its adaptation); backward reads
             those S sequences and grad_spike, writes grad_x   = 4 + 2 S passes

nerve's times are nerve-run --bench's (kernel time, L2 emptied before each
run); SpikingJelly's CuPy forward and nerve's own PyTorch module forward are
CUDA-event medians of the module call on the same inputs (L2 emptied alike).

usage: PYTHONPATH=<nerve's python> bench/models.py [--nerve-run PATH]
           [--spikingjelly ../shared/peers] [--runs 20] [--size 1024x65536]
           [--kinds qif,eif,izhikevich,alif,adex] [--out DIR]
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

KINDS = {
    "qif": ({}, "QIFNode"),
    "eif": ({}, "EIFNode"),
    "izhikevich": ({"a": 0.5, "b": 0.1}, "IzhikevichNode"),
    "alif": ({}, None),
    "adex": ({}, None),
}


def kernels(model, saves):
    """The inference and training kernels of `model` over [t, n] f32."""
    h_states, seq_states, inputs = saves
    states = model.state_names
    seq = "!tdim.tensor<[t: ?, n: ?], f32>"
    state = "!tdim.tensor<[n: ?], f32>"
    last = ", ".join(f"{s} = %last_{s} : {state}" for s in states)
    lasts = "".join(f", %last_{s}: {state}" for s in states)
    infer = (f"tdim.kernel @infer(%x: {seq}) -> (%spike: {seq}{lasts}) {{\n"
             f"  neuron.forward @model ins(x = %x : {seq}) outs(%spike : {seq}) last({last}) "
             f"time t\n  tdim.return\n}}\n")
    saved = [("h_seq", "h_" + s, s) for s in h_states] + [("seq", "s_" + s, s)
                                                         for s in seq_states]
    results = "".join(f", %{arg}: {seq}" for _, arg, _ in saved)

    def group(kind):
        items = [f"{s} = %{arg} : {seq}" for k, arg, s in saved if k == kind]
        return f" {kind}({', '.join(items)})" if items else ""
    ins = f" ins(x = %x : {seq})" if inputs else ""
    train = (f"tdim.kernel @train(%x: {seq}, %grad_spike: {seq}) -> (%spike: {seq}{results}, "
             f"%grad_x: {seq}) {{\n"
             f"  neuron.forward @model ins(x = %x : {seq}) outs(%spike : {seq})"
             f"{group('seq')}{group('h_seq')} time t\n"
             f"  neuron.backward @model{group('h_seq')}{group('seq')}{ins} "
             f"grad_spike(%grad_spike : {seq}) grad_ins(x = %grad_x : {seq}) time t "
             f"{{surrogate = #neuron.surrogate<sigmoid, alpha = 4.0>}}\n  tdim.return\n}}\n")
    return model.spec("f32") + infer + train


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nerve-run", default=None)
    p.add_argument("--spikingjelly", default=None)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--size", default="1024x65536")
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--out", default=None)
    args = p.parse_args()
    import torch
    from nerve.torch import models as nerve_models
    nerve_run = common.find_tool("nerve-run", args.nerve_run)
    T, N = (int(v) for v in args.size.split("x"))
    sj_neuron = None
    if args.spikingjelly:
        sys.path.insert(0, os.path.abspath(args.spikingjelly))
        try:
            from spikingjelly.activation_based import neuron as sj_neuron
        except Exception as e:  # noqa: BLE001 - report and go on without the peer
            print(f"SpikingJelly not importable ({e}); its rows are left out")
    work = tempfile.mkdtemp(prefix="nerve-bench-models-")
    copy = common.torch_copy_bandwidth(torch)
    pass_bytes = T * N * 4
    rows = []
    for kind in args.kinds.split(","):
        params, sj_class = KINDS[kind]
        model = nerve_models.NeuronModel.builtin(kind, params)
        saves = model.saves(("x",), ())
        spec = os.path.join(work, kind + ".mlir")
        with open(spec, "w") as f:
            f.write(kernels(model, saves))
        row = {"neuron": kind, "T": T, "N": N, "saved": sum(len(s) for s in saves[:2])}
        for mode in ("infer", "train"):
            r = common.run_bench(nerve_run, spec, {"t": T, "n": N}, args.runs, entry=mode)
            if r is None:
                continue
            ms, nerve_copy, _ = r
            passes = 2 if mode == "infer" else 4 + 2 * row["saved"]
            gbs = passes * pass_bytes / ms / 1e6
            row[mode] = {"ms": ms, "passes": passes, "GB/s": gbs, "copy GB/s": nerve_copy,
                         "fraction of copy": gbs / nerve_copy}
        x = torch.rand(T, N, device="cuda") * 2
        node_class = sj_class or {"alif": "ALIFNode", "adex": "AdExNode"}[kind]
        layer = getattr(nerve_models, node_class)(**params, step_mode="m").cuda()

        def nerve_step(layer=layer):
            layer.reset()
            with torch.no_grad():
                layer(x)
        row["nerve module forward ms"] = common.torch_median_ms(torch, nerve_step, args.runs)
        if sj_neuron is not None and sj_class is not None:
            try:
                sj = getattr(sj_neuron, sj_class)(**params, step_mode="m", backend="cupy")

                def sj_step(sj=sj):
                    sj.reset()
                    with torch.no_grad():
                        sj(x)
                row["spikingjelly cupy forward ms"] = common.torch_median_ms(torch, sj_step,
                                                                             args.runs)
                row["speedup over cupy"] = (row["spikingjelly cupy forward ms"] /
                                            row["nerve module forward ms"])
            except Exception as e:  # noqa: BLE001 - the peer's failure is reported
                row["spikingjelly cupy forward"] = f"failed: {e}"
        rows.append(row)
        line = f"{kind:10s}"
        for mode in ("infer", "train"):
            if mode in row:
                r = row[mode]
                line += (f"  {mode} {r['ms']:.4f} ms {100 * r['fraction of copy']:.1f}% of copy "
                         f"({r['passes']} passes)")
        line += f"  module fwd {row['nerve module forward ms']:.4f} ms"
        if "spikingjelly cupy forward ms" in row:
            line += (f"  SpikingJelly cupy fwd {row['spikingjelly cupy forward ms']:.4f} ms "
                     f"(nerve {row['speedup over cupy']:.2f}x)")
        print(line, flush=True)
    print(f"torch copy bandwidth {copy:.1f} GB/s; nerve-run measures its own for each row")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "models.json"), "w") as f:
            json.dump({"torch copy GB/s": copy, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
