"""Speed of the CPU emulation backend (kltrans.gate.cpu): launches, barriers, switches.

Measured, as medians of --runs repetitions:

  block reduction   seconds per launch of a shared-memory tree reduction over 64 blocks
                    of 256 threads (9 __syncthreads per thread), on 1 OS thread and on
                    all of them
  barrier cost      ns per thread per __syncthreads: a one-block kernel doing K barriers
                    minus the same kernel doing none, divided by K x threads (one OS thread)
  warp shuffle      ns per lane per __shfl_xor_sync, measured the same way
  context switch    ns per one-way fiber switch (a fiber and the scheduler ping-ponging):
                    the hand-written x86-64 switch used by the runtime, and, for
                    comparison, the same runtime built with swapcontext (-DKL_FORCE_UCONTEXT)

The report is written atomically to bench/results/cpu_emulator.txt with the command at
the top. Usage: python bench/cpu_emulator.py [--runs 9] [--out FILE]
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

BLOCK_SUM = r"""
__global__ void block_sum(const float* __restrict__ x, float* out, int n)
{
    __shared__ float s[256];
    const int tid = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
"""

BARRIERS = r"""
__global__ void barriers(int* out, int k)
{
    int acc = threadIdx.x;
    for (int i = 0; i < k; ++i) {
        __syncthreads();
        acc += i;
    }
    out[threadIdx.x] = acc;
}
__global__ void shuffles(int* out, int k)
{
    int acc = threadIdx.x;
    for (int i = 0; i < k; ++i) acc += __shfl_xor_sync(0xffffffffu, acc, 1 + (i & 15));
    out[threadIdx.x] = acc;
}
"""


def median_time(fn, runs: int) -> tuple[float, float]:
    """(median wall seconds, median process CPU seconds) of fn()."""
    fn()  # warm-up
    walls, cpus = [], []
    for _ in range(runs):
        c0 = time.process_time()
        t0 = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus)


def ucontext_switch_ns(iterations: int) -> float | None:
    """Build the runtime with swapcontext and time its switch (for comparison only)."""
    from kltrans.gate.cpu.build import RUNTIME_DIR, compiler

    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "libklrt_uc.so")
        cmd = [compiler(), "-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden",
               "-pthread", "-DKL_FORCE_UCONTEXT", "-I", RUNTIME_DIR,
               os.path.join(RUNTIME_DIR, "kl_runtime.cpp"), "-o", out]
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            return None
        lib = ctypes.CDLL(out, mode=ctypes.RTLD_LOCAL)
        lib.kl_rt_switch_benchmark.restype = ctypes.c_double
        lib.kl_rt_switch_benchmark.argtypes = [ctypes.c_long]
        return float(lib.kl_rt_switch_benchmark(iterations))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "cpu_emulator.txt"))
    args = ap.parse_args(argv)

    import numpy as np

    from kltrans.gate.cpu import build, switch_cost_ns
    from kltrans.gate.cpu.build import DEFAULT_FLAGS, compiler_version
    from kltrans.syntax import parse

    ncpu = os.cpu_count() or 1
    load0 = os.getloadavg()[0]
    rows = []

    # ---- block reduction, 64 x 256
    m = build(parse(BLOCK_SUM, "bench_block_sum.cu"), "block_sum")
    n = 64 * 256
    x = np.random.default_rng(0).random(n).astype(np.float32)
    out = np.zeros(64, np.float32)
    ref = x.astype(np.float64).reshape(64, 256).sum(1)
    stats = {}
    for threads in sorted({1, ncpu}):
        def run(threads=threads):
            stats.update(m.launch(64, 256, 0, [x, out, n], threads=threads))
        t, c = median_time(run, args.runs)
        assert np.allclose(out, ref, rtol=1e-5)
        rows.append((f"block reduction 64x256, {threads} OS thread{'s' if threads > 1 else ''}",
                     f"{t * 1e3:.2f} ms/launch",
                     f"(CPU {c * 1e3:.2f} ms) {stats['switches']} switches, "
                     f"{stats['barriers']} barrier arrivals"))

    # ---- barrier and shuffle cost per thread
    mb = build(parse(BARRIERS, "bench_barriers.cu"), "barriers")
    ms = build(parse(BARRIERS, "bench_barriers.cu"), "shuffles")
    K = 2000
    for label, mod in (("__syncthreads", mb), ("__shfl_xor_sync", ms)):
        for nthr in (256, 1024):
            o = np.zeros(nthr, np.int32)
            t_k, c_k = median_time(lambda: mod.launch(1, nthr, 0, [o, K], threads=1), args.runs)
            t_0, c_0 = median_time(lambda: mod.launch(1, nthr, 0, [o, 0], threads=1), args.runs)
            ns = (t_k - t_0) / (K * nthr) * 1e9
            ns_cpu = (c_k - c_0) / (K * nthr) * 1e9
            rows.append((f"{label} cost, 1 block of {nthr}", f"{ns:.1f} ns/thread/call",
                         f"(CPU {ns_cpu:.1f} ns) K={K}: {t_k * 1e3:.1f} ms vs "
                         f"{t_0 * 1e3:.2f} ms with K=0"))

    # ---- context switch
    sw = statistics.median(switch_cost_ns(2_000_000) for _ in range(max(3, args.runs // 2)))
    rows.append(("fiber switch (kl_ctx_switch, x86-64 asm)", f"{sw:.1f} ns/switch",
                 "one direction; 6 pushes, stack swap, 6 pops"))
    uc = ucontext_switch_ns(200_000)
    if uc is not None:
        rows.append(("fiber switch (swapcontext, for comparison)", f"{uc:.1f} ns/switch",
                     f"{uc / sw:.0f}x slower (a sigprocmask syscall per switch)"))

    cmd = "python bench/cpu_emulator.py" + ("" if argv is None else " " + " ".join(argv))
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# command: {cmd}",
        f"# kltrans CPU emulator speed - {now}",
        f"# machine: {platform.machine()}, {ncpu} cores, Python {platform.python_version()}, "
        f"{compiler_version()}",
        f"# kernel flags: {' '.join(DEFAULT_FLAGS)}",
        f"# medians of {args.runs} runs after a warm-up; wall time, with the process CPU "
        f"time in parentheses; load average at start {load0:.1f}",
        "",
    ]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    for a, b, c in rows:
        lines.append(f"{a:<{w0}}  {b:>{w1}}  {c}")
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(args.out), prefix=".cpu_emulator.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, args.out)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
