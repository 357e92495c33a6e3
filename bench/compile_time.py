"""Compile time of the gate's NVRTC stage against ``nvcc -cubin``, plus cached compiles.

For each kernel (the corpus naive roots and a few test kernels) and each of --runs
rounds, interleaved so that every tool sees the same machine state:

  nvrtc       compile_unit(unit, cache=False): host stripping, NVRTC, log parsing
  nvrtc-only  the NVRTC part of that call (CompileResult.seconds)
  nvcc        `nvcc -cubin -arch=<arch> --std=c++17 -Xptxas -v -o tmp.cubin k.cu`
              as a subprocess
  cached      compile_unit(unit) served from the on-disk cache: parse-free, but it strips
              the unit and hashes the key before reading the entry
  cache-read  the cache read part of that call (CompileResult.seconds)

Medians in milliseconds. nvcc compiles the whole file, host code included (it is
what `nvcc -cubin` does); for block_reduce.cu its host code instantiates one more
kernel (block_reduce_sum<float, 128, 4>) than the two name expressions NVRTC gets. A warm-up round (also a correctness check: every compile must
succeed) runs first and is not timed. The cache lives in a temporary directory.

Usage: python bench/compile_time.py [--runs 7] [--arch sm_90] [--nvcc nvcc] [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_OUT = os.path.join(HERE, "results", "compile_time.txt")

# test kernels: plain with a host launcher, templated (name expressions), fp16/bf16
# headers, cooperative groups (CCCL-heavy)
TEST_KERNELS = {
    "saxpy.cu": (),
    "block_reduce.cu": ("block_reduce_sum<float, 256, 4>", "block_reduce_sum<float, 128, 8>"),
    "mixed_precision.cu": (),
    "cg_reduce.cu": (),
}


def kernels() -> list[tuple[str, str, tuple[str, ...]]]:
    out = []
    corpus = os.path.join(ROOT, "corpus")
    for name in sorted(os.listdir(corpus)):
        p = os.path.join(corpus, name, "naive.cu")
        if os.path.isfile(p):
            out.append((f"corpus/{name}", p, ()))
    for name, exprs in TEST_KERNELS.items():
        out.append((f"tests/{name}", os.path.join(ROOT, "tests", "data", "kernels", name), exprs))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/bin/nvcc")
    ap.add_argument("--out", default=DEFAULT_OUT, help="where to write the table "
                    f"(default {os.path.relpath(DEFAULT_OUT, ROOT)}); '-' for stdout only")
    args = ap.parse_args(argv)

    tmp = tempfile.mkdtemp(prefix="kltrans-bench-")
    os.environ["KLTRANS_CACHE_DIR"] = os.path.join(tmp, "cache")

    from kltrans.gate import compile_unit, nvrtc_version
    from kltrans.gate.compile import toolchain_versions
    from kltrans.syntax import load

    have_nvcc = bool(args.nvcc) and os.path.exists(args.nvcc)
    nvcc_version = "not found"
    if have_nvcc:
        v = subprocess.run([args.nvcc, "--version"], capture_output=True, text=True)
        nvcc_version = next((ln.strip() for ln in v.stdout.splitlines() if "release" in ln),
                            "?")

    cases = []
    for label, path, exprs in kernels():
        unit = load(path)[0]
        cases.append((label, path, exprs, unit))

    def run_nvrtc(unit, exprs, cache):
        t0 = time.perf_counter()
        r = compile_unit(unit, arch=args.arch, name_expressions=exprs, cache=cache)
        return time.perf_counter() - t0, r

    def run_nvcc(path):
        out = os.path.join(tmp, "nvcc.cubin")
        cmd = [args.nvcc, "-cubin", f"-arch={args.arch}", "--std=c++17", "-Xptxas", "-v",
               "-o", out, path]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        dt = time.perf_counter() - t0
        return dt, p.returncode, p.stderr

    # warm-up and checks; fills the cache
    failures = []
    nvcc_ok = {}
    meta = {}
    for label, path, exprs, unit in cases:
        _, r = run_nvrtc(unit, exprs, cache=True)
        if not r.ok:
            failures.append(f"nvrtc failed on {label}:\n{r.render() or r.log}")
        meta[label] = (unit.source.count(b"\n") + 1, len(r.resources),
                       sum(1 for c in r.prepared.changes if c.kind == "host-function"))
        if have_nvcc:
            _, rc, err = run_nvcc(path)
            nvcc_ok[label] = rc == 0
            if rc != 0:
                failures.append(f"nvcc failed on {label}:\n{err}")

    times = {label: {"nvrtc": [], "nvrtc-only": [], "nvcc": [], "cached": [], "cache-read": []}
             for label, *_ in cases}
    for _ in range(args.runs):
        for label, path, exprs, unit in cases:  # interleaved
            t = times[label]
            dt, r = run_nvrtc(unit, exprs, cache=False)
            t["nvrtc"].append(dt)
            t["nvrtc-only"].append(r.seconds)
            if have_nvcc and nvcc_ok.get(label):
                dt, _rc, _err = run_nvcc(path)
                t["nvcc"].append(dt)
            dt, r = run_nvrtc(unit, exprs, cache=True)
            if not r.cached:
                failures.append(f"{label}: expected a cache hit")
            t["cached"].append(dt)
            t["cache-read"].append(r.seconds)

    def ms(xs):
        return statistics.median(xs) * 1e3 if xs else float("nan")

    versions = toolchain_versions()
    cmdline = "python " + " ".join(shlex.quote(a) for a in
                                   [os.path.relpath(os.path.abspath(__file__), ROOT)]
                                   + (argv if argv is not None else sys.argv[1:]))
    lines = [
        f"# command: {cmdline}",
        f"# kltrans compile time — {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"# machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"no GPU needed",
        f"# NVRTC {'.'.join(map(str, nvrtc_version()))} (cuda-bindings {versions['cuda-bindings']}, "
        f"runtime headers {versions['nvidia-cuda-runtime']}, CCCL {versions['nvidia-cuda-cccl']}); "
        f"nvcc: {nvcc_version}",
        f"# arch {args.arch}; medians of {args.runs} interleaved runs, in ms; "
        f"nvcc = subprocess `nvcc -cubin -arch={args.arch} --std=c++17 -Xptxas -v`",
        "# nvrtc = compile_unit(cache=False) wall time; nvrtc-only = its NVRTC part; "
        "cached = compile_unit served from the disk cache; cache-read = its read part",
        f"{'kernel':<26}{'lines':>6}{'kern':>5}{'nvrtc':>9}{'nvrtc-only':>12}{'nvcc':>9}"
        f"{'nvcc/nvrtc':>12}{'cached':>9}{'cache-read':>12}",
    ]
    tot = {k: 0.0 for k in ("nvrtc", "nvcc", "cached")}
    for label, *_ in cases:
        t = times[label]
        n_lines, n_kern, _n_host = meta[label]
        a, b, c = ms(t["nvrtc"]), ms(t["nvcc"]), ms(t["cached"])
        tot["nvrtc"] += a
        tot["nvcc"] += b
        tot["cached"] += c
        ratio = f"{b / a:.1f}x" if t["nvcc"] else "-"
        lines.append(f"{label:<26}{n_lines:>6}{n_kern:>5}{a:>9.1f}{ms(t['nvrtc-only']):>12.1f}"
                     f"{b:>9.1f}{ratio:>12}{c:>9.2f}{ms(t['cache-read']):>12.2f}")
    lines.append(f"{'total':<26}{'':>6}{'':>5}{tot['nvrtc']:>9.1f}{'':>12}{tot['nvcc']:>9.1f}"
                 f"{(tot['nvcc'] / tot['nvrtc']):>11.1f}x{tot['cached']:>9.2f}{'':>12}")
    for f in failures:
        lines.append("# FAILURE: " + f.replace("\n", "\n#   "))
    report = "\n".join(lines)
    print(report)
    if args.out != "-":
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        fd, tmp_out = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(args.out)),
                                       prefix=".compile_time.", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(report + "\n")
        os.replace(tmp_out, args.out)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main())
