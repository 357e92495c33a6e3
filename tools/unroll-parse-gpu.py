"""Why are pragma unrolls refused as parse-breaking on the H200 (docs/RESULTS.md)?

On the H200, every ``unroll{factor=full,style=pragma}`` the optimizer proposed on
sgemm's lineage root after pipelined-gemm was refused: "the rewrite introduces a parse
error". Here, on the same bytes, every one applies. Run this first on the device:

    bash tools/gpu-run.sh setup && export PYTHONPATH=/tmp/site:$PWD
    python3 tools/unroll-parse-gpu.py --out $OUT/unroll_parse.txt [--search]

It prints the toolchain, rebuilds that state (hash e9ad22ea37736afd) with the optimizer's
own spec, applies the pragma unroll at every loop outside the search, and with
``--search`` runs the skills search there (budget 12, own cards, CUDA backend) and prints
each refusal with its parse context. Each part says whether it reproduces the refusal.
"""

import argparse
import os
import platform
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
STATE = "e9ad22ea37736afd"
SPEC = "pipelined-gemm{prefix=GEMM,helpers=gemm,body=auto,bk=16,stages=2,restrict=false}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--search", action="store_true")
    args = ap.parse_args()
    os.chdir(ROOT)
    lines = []

    def say(*a):
        lines.append(" ".join(str(x) for x in a))
        print(*a, flush=True)

    import tree_sitter
    import tree_sitter_cuda

    from kltrans.optimize.search import content_hash
    from kltrans.passes.facts import Context
    from kltrans.passes.manager import run_pass
    from kltrans.passes.pipeline import parse_pipeline
    from kltrans.syntax import parse

    say("python", platform.python_version(), "tree_sitter", tree_sitter.__version__,
        tree_sitter.__file__, "tree_sitter_cuda", tree_sitter_cuda.__file__)
    root = "corpus/sgemm/lineage/states/23-naive.cu"
    with open(root, "rb") as f:
        unit = parse(f.read(), root)
    [pg] = parse_pipeline(SPEC)
    state, rep = run_pass(unit, pg, Context(force=True), only_site=1)
    h = content_hash(state.source)
    say("state", h, "(the H200 run's:", STATE + ")", "errors in it:", len(state.error_nodes()))
    [un] = parse_pipeline("unroll{factor=full,style=pragma}")
    refused = 0
    for s in un.sites(state, Context()):
        _, r = run_pass(state, un, Context(force=True), only_site=s.index)
        for x in r.sites:
            if x.status != "applied":
                refused += 1
                say("  site", x.index, "line", x.line, x.status, x.reason[:400])
    say("outside the search:", refused, "refused", "(reproduced)" if refused else "(not reproduced)")
    if args.search:
        from kltrans.optimize.search import OptimizeOptions, run

        doc = run(OptimizeOptions(root, "corpus/sgemm", budget=12, backend="cuda",
                                  progress=False))
        bad = [c for c in doc["candidates"] if "parse error" in (c.get("reason") or "")]
        for c in bad[:20]:
            say("  search:", c["spec"], "site", c["site"], c["reason"][:400])
        say("in the search:", len(bad), "refused", "(reproduced)" if bad else "(not reproduced)")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("# command: python3 tools/unroll-parse-gpu.py " + " ".join(sys.argv[1:]) + "\n")
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
