"""The committed corpus lineages reproduce: walking the expert again on the CPU backend,
with the same sizes and seeds, takes the same steps to the same states (content hashes)
and ends where the committed lineage ends (issue 8: the walk is deterministic, and it
reaches ``naive`` in CI for at least two workloads)."""

import glob
import json
import math
import os
import shutil

import pytest

from kltrans.lineage import WalkOptions, walk

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# corpus/W/lineage (the H200 walk where there is one, else the CPU walk) and
# corpus/W/lineage-cpu (the CPU walk kept next to an H200 one, for this re-walk)
WALKED = sorted(os.path.relpath(os.path.dirname(p), os.path.join(ROOT, "corpus"))
                for p in glob.glob(os.path.join(ROOT, "corpus", "*", "lineage*", "lineage.json")))


def _doc(w):
    return json.load(open(os.path.join(ROOT, "corpus", w, "lineage.json")))


def _end(w):
    return _doc(w)["termination"]


NAIVE = [w for w in WALKED if _end(w)["kind"] == "naive"]
CPU_NAIVE = [w for w in NAIVE if _doc(w)["config"]["backend"] == "cpu"]


def test_at_least_two_committed_lineages_reach_naive():
    assert len(CPU_NAIVE) >= 2, {w: _end(w)["kind"] for w in WALKED}


def test_an_h200_lineage_has_a_measured_effect_for_every_step():
    gpu = [w for w in WALKED if _doc(w)["config"]["backend"] == "cuda"]
    assert gpu, "no lineage walked on the H200 is committed"
    for w in gpu:
        doc = _doc(w)
        assert doc["gpu"] and doc["termination"]["kind"] == "naive", w
        for t in doc["transitions"]:
            e = t["effect"]
            assert e["ok"] and len(e["slowdown_trials"]) >= 3 and t["chosen_by"] == "max-time", (w, t["step"])


@pytest.mark.parametrize("workload", WALKED)
def test_committed_lineage_is_complete_and_consistent(workload):
    from kltrans.lineage.walk import content_hash

    d = os.path.join(ROOT, "corpus", workload)
    doc = json.load(open(os.path.join(d, "lineage.json")))
    assert doc["termination"]["kind"] in ("naive", "stuck", "all-rejected", "max-steps")
    for st in doc["states"]:
        assert content_hash(open(os.path.join(d, st["file"]), "rb").read()) == st["hash"]
    for i, t in enumerate(doc["transitions"]):
        assert (t["before"], t["after"]) == (doc["states"][i]["hash"], doc["states"][i + 1]["hash"])
        assert t["roundtrip"]["ok"] and all(g["status"] == "pass" for g in t["gate"])
    if doc["termination"]["kind"] == "naive":
        assert doc["states"][-1]["file"].endswith("-naive.cu") and not doc["residual_mechanisms"]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="the CPU emulator needs g++")
@pytest.mark.parametrize("workload", CPU_NAIVE)
def test_committed_lineage_reproduces(workload, tmp_path):
    committed = _doc(workload)
    d = os.path.join(ROOT, "corpus", workload.split(os.sep)[0])
    cfg = committed["config"]
    assert cfg["backend"] == "cpu"  # a GPU lineage's choices depend on timings: not re-walked here
    limit = max(math.prod(max(1, int(v)) for v in s.values()) for s in cfg["sizes"])
    doc = walk(WalkOptions(d, backend="cpu", out=str(tmp_path / "lineage"), jobs=1,
                           size_limit=limit, probes=0, progress=False))
    assert doc["config"]["sizes"] == cfg["sizes"] and doc["config"]["seeds"] == cfg["seeds"]
    got = [(t["pass"], t["site"]["index"], t["after"]) for t in doc["transitions"]]
    want = [(t["pass"], t["site"]["index"], t["after"]) for t in committed["transitions"]]
    assert got == want
    assert [s["hash"] for s in doc["states"]] == [s["hash"] for s in committed["states"]]
    assert doc["termination"]["kind"] == committed["termination"]["kind"]
