"""The CPU backend's kernel compile with and without the precompiled runtime header.

Every pass fixture input (a sample of N, in a stable order) is translated and compiled
cold -- a fresh cache for each build, the precompiled header built once beforehand --
alternately with the header precompiled and read as text (KLTRANS_CPU_PCH=0), so both
sides see the same machine load. Prints the median seconds per build of each and their
ratio.

    python bench/cpu_build_pch.py [--n 40] [--out bench/results/cpu_build_pch.txt]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--out")
    args = ap.parse_args()

    from kltrans.gate.cpu.build import DEFAULT_FLAGS, build_pch, compile_translation
    from kltrans.gate.cpu.translate import translate
    from kltrans.passes.fixtures import discover
    from kltrans.syntax.files import atomic_write
    from kltrans.syntax.unit import load

    pch_cache = tempfile.mkdtemp()
    os.environ["KLTRANS_CACHE_DIR"] = pch_cache
    build_pch(tuple(DEFAULT_FLAGS))  # built once, as a warm cache holds it
    units = []
    for case in discover():
        try:
            [u] = load(case.path)
            ks = u.kernels()
            if ks:
                units.append((case.path, translate(u, ks[0].name)))
        except Exception:  # a fixture the emulator refuses: not a compile to time
            continue
        if len(units) == args.n:
            break
    times = {"pch": [], "text": []}
    for _path, t in units:
        for side in ("pch", "text"):
            os.environ["KLTRANS_CPU_PCH"] = "1" if side == "pch" else "0"
            mod_cache = tempfile.mkdtemp()
            os.environ["KLTRANS_CACHE_DIR"] = mod_cache
            if side == "pch":  # the precompiled header from its cache, the module cold
                os.makedirs(os.path.join(mod_cache, "cpu"))
                os.symlink(os.path.join(pch_cache, "cpu", "pch"),
                           os.path.join(mod_cache, "cpu", "pch"))
            t0 = time.perf_counter()
            built = compile_translation(t)
            times[side].append(time.perf_counter() - t0)
            assert built.path is not None and not built.cached
    med = {k: statistics.median(v) for k, v in times.items()}
    lines = [f"# command: python bench/cpu_build_pch.py --n {args.n}",
             f"{len(units)} fixture kernels, each compiled cold both ways, alternating",
             f"median seconds per build: text header {med['text']:.3f}, "
             f"precompiled header {med['pch']:.3f}",
             f"ratio text / precompiled: {med['text'] / med['pch']:.2f}x"]
    print("\n".join(lines))
    if args.out:
        atomic_write(args.out, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
