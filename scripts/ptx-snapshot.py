#!/usr/bin/env python3
"""The PTX (and host LLVM IR) of every spec nerve ships or benchmarks, to show
that a refactoring of the compiler changes no kernel.

    scripts/ptx-snapshot.py build/bin/nerve-translate OUT           # write a snapshot
    scripts/ptx-snapshot.py build/bin/nerve-translate OUT --compare  # compare against it

Specs: every .mlir under examples/ and test/Integration/, every benchmark
kernel of bench/neuron.py (neurons, variants, types, layouts, modes) and
bench/tdim.py (ops, types). Each is translated for sm_90 (and sm_100 for
the examples); a spec that fails to translate records its error, so a
change in what fails shows too. Needs no GPU.
"""

import argparse
import concurrent.futures
import hashlib
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))


def bench_specs():
    import neuron
    import tdim
    out = {}
    for n in ("if", "lif", "plif"):
        for variant in ("hard", "soft", "detach"):
            for dtype in ("f32", "f16", "bf16"):
                for layout in ("time-major", "time-minor", "channels-last"):
                    for mode in ("infer", "train"):
                        out[f"bench-neuron/{n}-{variant}-{dtype}-{layout}-{mode}"] = \
                            neuron.spec(n, variant, dtype, layout, mode)
    for name, (text, *_rest) in tdim.ops().items():
        for dtype in ("f32", "f16", "bf16"):
            safe = "".join(ch if ch.isalnum() else "_" for ch in name)
            out[f"bench-tdim/{safe}-{dtype}"] = text.replace("{T}", dtype)
    return out


def file_specs():
    out = {}
    for top in ("examples", "test/Integration"):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if f.endswith(".mlir"):
                    path = os.path.join(folder, f)
                    with open(path) as fh:
                        out[os.path.relpath(path, ROOT)] = fh.read()
    return out


def translate(tool, text, args):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    try:
        r = subprocess.run([tool, f.name] + args, capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if r.returncode != 0:
        return "error:\n" + r.stderr.replace(f.name, "<spec>")
    return r.stdout


def jobs():
    specs = file_specs()
    specs.update(bench_specs())
    for name, text in sorted(specs.items()):
        yield name + ".sm_90.ptx", text, ["--emit=ptx", "--chip=sm_90"]
        yield name + ".cpu.ll", text, ["--emit=llvm", "--target=cpu"]
        if name.startswith("examples/"):
            yield name + ".sm_100.ptx", text, ["--emit=ptx", "--chip=sm_100"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tool", help="nerve-translate")
    p.add_argument("out", help="the snapshot directory")
    p.add_argument("--compare", action="store_true", help="compare against the snapshot")
    p.add_argument("-j", type=int, default=os.cpu_count())
    args = p.parse_args()
    todo = list(jobs())
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        results = list(pool.map(lambda j: (j[0], translate(args.tool, j[1], j[2])), todo))
    changed = []
    for name, text in results:
        path = os.path.join(args.out, name.replace("/", "__"))
        if args.compare:
            old = open(path).read() if os.path.exists(path) else None
            if old != text:
                changed.append(name)
        else:
            os.makedirs(args.out, exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
    errors = sum(text.startswith("error:") for _, text in results)
    if not args.compare:
        print(f"{len(results)} translations written to {args.out} ({errors} errors)")
        return 0
    for name in changed:
        print(f"changed: {name}")
    print(f"{len(results) - len(changed)} of {len(results)} translations unchanged "
          f"({errors} errors)")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
