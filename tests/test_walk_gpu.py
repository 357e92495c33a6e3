"""The backward walk on a GPU: steps chosen by time (issue 8). Skipped where there is no
GPU; its H200 run goes into the log `bash tools/measure-gpu.sh run` writes
(bench/results/gpu_tests.txt). On 2026-11-30 it FAILED there, before any GPU work: the walk
reported a parse error at `#pragma unroll` in corpus/reduce-sum/expert.cu, which parses
without error on this machine and, outside pytest, on the H200 machine too (same
tree-sitter wheels). Not explained yet; the next GPU session runs it alone."""

import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.gpu
def test_gpu_walk_screens_candidates_and_chooses_by_time(tmp_path):
    from kltrans.lineage import WalkOptions, walk

    doc = walk(WalkOptions(os.path.join(ROOT, "corpus", "reduce-sum"), backend="cuda",
                           out=str(tmp_path / "lineage"), max_steps=2, probes=0,
                           size_limit=5000, progress=False))
    assert doc["gpu"] and len(doc["transitions"]) == 2
    for t in doc["transitions"]:
        e = t["effect"]
        assert t["chosen_by"] == "max-time" and e["ok"] and len(e["slowdown_trials"]) == 5
        alts = [a for a in t["alternatives"] if (a.get("effect") or {}).get("ok")]
        full = [a for a in alts if not a["effect"].get("screened")]
        # the chosen step costs at least as much as every alternative timed as fully
        assert all(e["slowdown_median"] >= a["effect"]["slowdown_median"] for a in full)
        assert all(len(a["effect"]["slowdown_trials"]) == 1 for a in alts
                   if a["effect"].get("screened"))
