"""Shared pieces of nerve's benchmarks: running nerve-run --bench and
reading what it printed."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_LINE = re.compile(
    r"bench (\d+) runs on the (GPU|CPU): median ([0-9.]+) ms, min ([0-9.]+) ms, (\d+) bytes moved, "
    r"([0-9.]+) GB/s = ([0-9.]+)% of the \w+ copy bandwidth \(([0-9.]+) GB/s")
SAME_SIZE_LINE = re.compile(r"a device copy moving the same bytes takes ([0-9.]+) ms")
# nerve-run --timing's module load names the level the driver compiled the
# PTX at; the benchmarks report the levels they saw (O3 gives -O4).
JIT_LEVEL_LINE = re.compile(r"load module \(driver PTX JIT at (-O\d)\)")
JIT_LEVELS = set()
WIDTH = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8}
# How L2 is emptied before each timed run, on both sides alike (nerve-run's
# --l2-flush): "read" reads 256 MiB and leaves clean lines, "write" is a
# 256 MiB memset whose dirty lines the timed run writes back, "none" times
# runs back to back. Set by the benchmarks' --l2-flush.
L2_FLUSH = "read"
L2_FLUSH_MODES = ("read", "write", "none")


def find_tool(name, given=None):
    """The nerve tool `name`: as given, next to this checkout's build, or on PATH."""
    if given:
        return given
    built = os.path.join(ROOT, "build", "bin", name)
    return built if os.path.exists(built) else name


def spec_in_dtype(spec, dtype, workdir):
    """`spec` with its f32 tensors stored as `dtype` (arithmetic stays f32)."""
    if dtype == "f32":
        return spec
    text = open(spec).read()
    text = re.sub(r"(!tdim\.tensor<\[[^\]]*\]), f32", r"\1, " + dtype, text)
    out = os.path.join(workdir, os.path.basename(spec).replace(".mlir", "_%s.mlir" % dtype))
    with open(out, "w") as f:
        f.write(text)
    return out


def run_bench(nerve_run, spec, dims, runs, extra=(), entry=None):
    """Runs `nerve-run --bench` on the GPU; returns (median ms, copy GB/s,
    median ms of a device copy moving the same bytes, or None)."""
    cmd = [nerve_run, spec, "--target", "cuda", "--random", "1", "--bench", str(runs),
           "--write-outputs=false", "--output-dir", "/tmp/nerve-bench", "--l2-flush", L2_FLUSH,
           "--timing"]
    if entry:
        cmd += ["--entry", entry]
    for name, size in dims.items():
        cmd += ["--dim", "%s=%d" % (name, size)]
    cmd += list(extra)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    m = BENCH_LINE.search(proc.stdout)
    if proc.returncode != 0 or not m:
        sys.stderr.write("failed: %s\n%s%s" % (" ".join(cmd), proc.stdout, proc.stderr))
        return None
    same = SAME_SIZE_LINE.search(proc.stdout)
    JIT_LEVELS.update(JIT_LEVEL_LINE.findall(proc.stdout + proc.stderr))
    return float(m.group(3)), float(m.group(8)), float(same.group(1)) if same else None


def torch_median_ms(torch, step, runs, flush=None, warmup=3):
    """Median CUDA-event time of `step()` after `warmup` calls, with L2
    emptied before each run as `flush` (default L2_FLUSH) says, as nerve-run
    --bench does."""
    flush = L2_FLUSH if flush is None else flush
    if flush != "none":
        buffer = torch.zeros(64 << 20, dtype=torch.float32, device="cuda")  # 256 MiB
        buffer_sum = torch.empty((), dtype=torch.float32, device="cuda")
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        if flush == "read":
            torch.sum(buffer, dim=0, out=buffer_sum)
        elif flush == "write":
            buffer.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def torch_copy_bandwidth(torch):
    """GB/s (bytes read plus written) of a 1 GiB device-to-device copy."""
    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda").fill_(1.0)
    dst = torch.empty_like(src)
    ms = torch_median_ms(torch, lambda: dst.copy_(src), 10)
    return 2 * src.numel() * 4 / ms / 1e6


def jit_levels():
    """The driver's PTX compile levels the runs reported, e.g. "-O4"."""
    return ", ".join(sorted(JIT_LEVELS)) or "not reported"
