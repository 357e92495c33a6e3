"""How many of an experiment run's gate evaluations compiled to the machine code of the
state they were tried on (the `same-code` rule of kltrans.optimize.search, which came
after the run)? No GPU needed: NVRTC compiles each state and candidate here.

    .venv/bin/python tools/same-code-replay.py bench/results/experiment_roots.json

Each run is replayed from its root: every gated candidate's pass at its recorded site,
applied with preconditions unchecked (the record keeps no context), the accepted ones kept.
A replay is trusted only where it ends at the run's final kernel (its hash); the others
are reported as mismatches and not counted.
"""

import hashlib
import json
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kltrans.gate.compile import compile_unit  # noqa: E402
from kltrans.optimize.experiment import lineage_root  # noqa: E402
from kltrans.optimize.search import content_hash  # noqa: E402
from kltrans.passes.facts import Context  # noqa: E402
from kltrans.passes.manager import run_pass  # noqa: E402
from kltrans.passes.pipeline import parse_pipeline  # noqa: E402
from kltrans.syntax import parse  # noqa: E402


def code(unit) -> str:
    r = compile_unit(unit)
    return hashlib.sha256(r.cubin).hexdigest()[:16] if r.ok else "failed:" + content_hash(
        unit.source)


def main(path: str) -> int:
    doc = json.load(open(path, encoding="utf-8"))
    print(f"# python3 tools/same-code-replay.py {path}")
    for r in doc["runs"]:
        root = lineage_root(os.path.join("corpus", r["target"].split("@")[0]))
        if "@root" not in r["target"] or root is None:
            continue
        cur = parse(open(root, "rb").read(), root)
        cc = code(cur)
        same = []
        for c in r["candidates"]:
            if c.get("evaluation") is None:
                continue
            [p] = parse_pipeline(c["spec"])
            new, rep = run_pass(cur, p, Context(force=True), only_site=c["site"])
            nc = code(new) if rep.applied else None
            if nc == cc:
                same.append(c)
            if c["verdict"] == "accepted":
                cur, cc = new, nc
        if content_hash(cur.source) != r["final"]["hash"]:
            print(f"{r['target']}: replay mismatch (it does not end at the run's final "
                  f"kernel): not counted")
            continue
        kinds = Counter(c["spec"].split("{")[0] for c in same)
        acc = [f"evaluation {c['evaluation']} {c['spec']} site {c['site']}" for c in same
               if c["verdict"] == "accepted"]
        print(f"{r['target']}: {len(same)} of {r['final']['evaluations']} evaluations "
              f"compiled to the current state's cubin ({dict(kinds)}); accepted among them: "
              f"{acc or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
