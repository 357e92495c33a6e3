"""Parsing throughput of the syntax layer, in MB/s, on a file of at least 2,000 lines.

The input is the test kernels and the corpus concatenated (repeated until it reaches
--min-lines). Three levels are timed side by side in one run, interleaved, as medians of
--runs repetitions:

  tree-sitter   the bare tree-sitter-cuda parse of the original bytes
  kltrans.parse normalization (see kltrans/syntax/normalize.py) plus the parse
  + discovery   parse plus kernels, device functions, shared, launches and pragmas

Usage: python bench/parse_throughput.py [--min-lines 2000] [--runs 9] [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime
import glob
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def build_input(min_lines: int) -> bytes:
    files = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "kernels", "*.cu*")))
    files += sorted(glob.glob(os.path.join(ROOT, "corpus", "**", "*.cu"), recursive=True))
    chunks = [open(f, "rb").read() for f in files]
    out = []
    lines = 0
    while lines < min_lines:
        for c in chunks:
            out.append(c if c.endswith(b"\n") else c + b"\n")
            lines += c.count(b"\n") + 1
    return b"".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--min-lines", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--out", help="also write the report to this file")
    args = ap.parse_args(argv)

    import tree_sitter
    import tree_sitter_cuda

    from kltrans.syntax import parse

    src = build_input(args.min_lines)
    n_lines = src.count(b"\n")
    mb = len(src) / 1e6
    raw_parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))

    def bare():
        raw_parser.parse(src)

    def kl():
        parse(src, "bench.cu")

    def disco():
        u = parse(src, "bench.cu")
        u.kernels(), u.device_functions(), u.shared_decls(), u.launches(), u.pragmas

    cases = [("tree-sitter", bare), ("kltrans.parse", kl), ("+ discovery", disco)]
    for _, fn in cases:  # warm-up
        fn()
    times = {name: [] for name, _ in cases}
    for _ in range(args.runs):
        for name, fn in cases:  # interleaved: every case sees the same machine state
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)

    u = parse(src, "bench.cu")
    lines = [
        f"# kltrans parse throughput — {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"# command: python bench/parse_throughput.py --min-lines {args.min_lines} --runs {args.runs}",
        f"# machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"tree-sitter {tree_sitter.__version__ if hasattr(tree_sitter, '__version__') else '?'}",
        f"# input: {n_lines} lines, {len(src)} bytes, {len(u.kernels())} kernels, "
        f"{len(u.normalizations)} normalizations, {len(u.error_nodes())} parse errors",
        f"{'level':<16}{'median ms':>12}{'min ms':>10}{'MB/s':>10}{'vs bare':>10}",
    ]
    base = statistics.median(times["tree-sitter"])
    for name, _ in cases:
        med = statistics.median(times[name])
        lines.append(f"{name:<16}{med * 1e3:>12.2f}{min(times[name]) * 1e3:>10.2f}"
                     f"{mb / med:>10.2f}{base / med:>10.2f}")
    report = "\n".join(lines)
    print(report)
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            f.write(report + "\n")
        os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main())
