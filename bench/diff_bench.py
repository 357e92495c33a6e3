"""Speed of ``kltrans diff``: a structural diff of two ~2,000-line files, and ``--explain``
at depth 2 over the whole pass library on lineage pairs.

1. diff: file A is every corpus kernel file (experts, naive roots, lineage states)
   concatenated, each copy's functions renamed (``name`` -> ``name_c7``) so that no two
   definitions collide, until it has at least 2,000 lines. File B is A with edits spread
   over it: every 10th float literal changed, every 15th kernel's name changed, every
   12th expression statement moved one line up, every 20th ``__syncthreads();`` deleted.
   Timed: ``diff_files(A, B)`` (load and parse both, pair kernels, match, edit script)
   and rendering its hunks as plain text.
2. explain: ``explain(A, B, depth=2)`` with the whole registry, for pairs of lineage
   states two steps apart (so that each needs two passes), with the lineage's facts.

Each measurement: median (and min, max) of --runs runs, after one untimed warm-up.

Usage: python bench/diff_bench.py [--runs 5] [--out bench/results/diff_bench.txt]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import re
import shlex
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_OUT = os.path.join(HERE, "results", "diff_bench.txt")
EXPLAIN_PAIRS = [  # (workload, state i, state i+2)
    ("reduce-sum", 4, 6),
    ("transpose", 2, 4),
    ("histogram", 2, 4),
    ("scan", 4, 6),
]


def sources() -> list[str]:
    files = sorted(glob.glob(os.path.join(ROOT, "corpus", "*", "*.cu")))
    files += sorted(glob.glob(os.path.join(ROOT, "corpus", "*", "lineage", "states", "*.cu")))
    return files


def build_a(min_lines: int = 2000) -> str:
    sys.path.insert(0, ROOT)
    from kltrans.syntax import parse

    parts = []
    n_lines = 0
    copy = 0
    files = sources()
    while n_lines < min_lines:
        path = files[copy % len(files)]
        text = open(path).read()
        unit = parse(text, path)
        names = sorted({f.name for f in unit.kernels() + unit.device_functions()}, key=len,
                       reverse=True)
        for name in names:
            text = re.sub(rf"\b{re.escape(name)}\b", f"{name}_c{copy}", text)
        parts.append(f"// ---- copy {copy}: {os.path.relpath(path, ROOT)}\n{text}")
        n_lines += text.count("\n") + 1
        copy += 1
    return "\n".join(parts)


def build_b(a: str) -> str:
    lines = a.split("\n")
    out = []
    counters = {"lit": 0, "sync": 0, "stmt": 0}
    for line in lines:
        if "__syncthreads();" in line and line.strip() == "__syncthreads();":
            counters["sync"] += 1
            if counters["sync"] % 20 == 0:
                continue

        def lit(m):
            counters["lit"] += 1
            return "0.75f" if counters["lit"] % 10 == 0 else m.group()

        line = re.sub(r"\b\d+\.\d+f\b", lit, line)
        s = line.strip()
        if s.endswith(";") and "=" in s and not s.startswith(("for", "if", "#", "//")) \
                and out and out[-1].strip().endswith(";") and "=" in out[-1] \
                and out[-1].strip() != "__syncthreads();":
            counters["stmt"] += 1
            if counters["stmt"] % 12 == 0 and not out[-1].lstrip().startswith(
                    ("const", "int", "float", "unsigned", "auto", "size_t", "double")) \
                    and not s.startswith(("const", "int", "float", "unsigned", "auto",
                                          "size_t", "double")):
                prev = out.pop()
                out.append(line)
                out.append(prev)
                continue
        out.append(line)
    text = "\n".join(out)
    k = [0]

    def ren(m):
        k[0] += 1
        return m.group(1) + (m.group(2) + "_v2" if k[0] % 15 == 0 else m.group(2))

    return re.sub(r"(__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s*)?)(\w+)(?=\s*\()",
                  ren, text)


def timed(fn, runs: int) -> dict:
    fn()  # warm-up
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return {"median_s": statistics.median(ts), "min_s": min(ts), "max_s": max(ts),
            "runs": runs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    sys.path.insert(0, ROOT)
    from kltrans.diff import diff_files, explain
    from kltrans.diff.render import render_text
    from kltrans.passes.registry import names

    cmd = "python " + " ".join(shlex.quote(x) for x in [os.path.relpath(__file__, ROOT),
                                                          *(argv or sys.argv[1:])])
    results = {"command": cmd, "python": platform.python_version(),
               "machine": platform.machine(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as d:
        a_text = build_a()
        b_text = build_b(a_text)
        pa, pb = os.path.join(d, "a.cu"), os.path.join(d, "b.cu")
        open(pa, "w").write(a_text)
        open(pb, "w").write(b_text)
        fd = diff_files(pa, pb)
        [u] = fd.units
        info = {"a_lines": a_text.count("\n") + 1, "b_lines": b_text.count("\n") + 1,
                "a_bytes": len(a_text.encode()), "functions": len(u.kernels),
                "renamed": sum(k.status == "renamed" for k in u.kernels),
                "counts": u.counts(), "hunks": len(u.hunks())}
        results["diff"] = {"files": info, "diff_files": timed(lambda: diff_files(pa, pb),
                                                              args.runs),
                           "render_text": timed(lambda: render_text(fd, False), args.runs)}
    results["explain"] = []
    n_passes = len(names())
    for w, i, j in EXPLAIN_PAIRS:
        base = os.path.join(ROOT, "corpus", w, "lineage")
        doc = json.load(open(os.path.join(base, "lineage.json")))
        a = open(os.path.join(base, doc["states"][i]["file"])).read()
        b = open(os.path.join(base, doc["states"][j]["file"])).read()
        facts = tuple(doc["config"]["facts"])
        kernel = doc["config"]["kernel"]
        e = explain(a, b, depth=2, assume=facts, kernel=kernel)
        t = timed(lambda: explain(a, b, depth=2, assume=facts, kernel=kernel), args.runs)
        results["explain"].append({
            "pair": f"{w}: {doc['states'][i]['file']} -> {doc['states'][j]['file']}",
            "lines": a.count("\n") + 1, "exact": e.exact, "pipeline": e.pipeline,
            "direction": e.direction, "tried": e.tried, "passes": n_passes, **t})
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    lines = [f"# {cmd}", f"# python {results['python']} on {results['machine']}, "
             f"{results['cpus']} CPU(s); medians of {args.runs} runs after a warm-up", ""]
    f = results["diff"]["files"]
    lines.append(f"diff of two generated files: A {f['a_lines']} lines ({f['a_bytes']} bytes), "
                 f"B {f['b_lines']} lines; {f['functions']} function pairs "
                 f"({f['renamed']} renamed); {f['hunks']} hunks; {f['counts']}")
    for k in ("diff_files", "render_text"):
        t = results["diff"][k]
        lines.append(f"  {k:<12} median {t['median_s']:.3f} s  (min {t['min_s']:.3f}, "
                     f"max {t['max_s']:.3f})")
    lines += ["", f"--explain at depth 2 over the whole library ({n_passes} passes):"]
    for r in results["explain"]:
        lines.append(f"  {r['pair']:<58} {r['lines']:>4} lines  median {r['median_s']:.2f} s "
                     f"(min {r['min_s']:.2f}, max {r['max_s']:.2f}); {r['tried']} rewrites; "
                     f"{'exact' if r['exact'] else 'NOT exact'} ({r['direction']}): "
                     f"{r['pipeline']}")
    text = "\n".join(lines) + "\n"
    from kltrans.syntax.files import atomic_write

    atomic_write(args.out, text)
    atomic_write(os.path.splitext(args.out)[0] + ".json", json.dumps(results, indent=2) + "\n")
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
