"""A walk that dead-ends backs out (issue 8).

tests/data/lineage/histogram_after_rerolls.cu is state 07 of an H200 walk of the histogram
expert (2026-11-30, bench/walk-gpu): the walk chose by time among removals that cost
nothing measurable, rerolled the loops vectorize-bytes writes, and from there no order of
the remaining steps reaches naive (scalarize-bytes no longer recognises its own output,
and one-per-thread refuses the capped grid: it is sized in bytes, 256 per thread, the loop
counts uint4s, so no grid is known to give every element a thread). Walked on the CPU
backend, the walk order takes drop-stream-hints, reroll, reroll-stride and ends stuck; with
backtracking it goes
back to the first step, takes its alternative, finds every continuation leads to a state
already found dead, and stops having proved it in one backtrack instead of exploring the
same states again in another order."""

import json
import os

import pytest

from kltrans.lineage import WalkOptions, walk

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START = os.path.join(ROOT, "tests", "data", "lineage", "histogram_after_rerolls.cu")


def _walk(tmp_path, name, **kw):
    return walk(WalkOptions(os.path.join(ROOT, "corpus", "histogram"), expert=START,
                            backend="cpu", out=str(tmp_path / name), jobs=1, probes=0,
                            size_limit=5000, progress=False, **kw))


@pytest.mark.slow  # a walk gated on the CPU emulator: run once, on 3.11
def test_dead_end_without_backtracking(tmp_path):
    doc = _walk(tmp_path, "plain", max_backtracks=0)
    assert doc["termination"]["kind"] == "stuck"
    assert [t["pass"] for t in doc["transitions"]] == ["drop-stream-hints", "reroll",
                                                       "reroll-stride"]
    assert "backtracks" not in doc
    # each step says where its time went (no GPU: no timing phase)
    for t in doc["transitions"]:
        assert set(t["seconds_by_phase"]) == {"enumerate", "gate"}
        assert sum(t["seconds_by_phase"].values()) <= t["seconds"] + 0.05


def test_backtracking_goes_back_and_prunes_dead_states(tmp_path):
    from kltrans.lineage.replay import replay
    from kltrans.lineage.walk import content_hash

    doc = _walk(tmp_path, "bt")
    out = tmp_path / "bt"
    [bt] = doc["backtracks"]
    assert bt["at_step"] == 1 and bt["dead_end"]["kind"] == "stuck"
    assert [a["spec"] for a in bt["abandoned"]] == [
        "drop-stream-hints{only=all}", "reroll{style=any,var=auto}", "reroll-stride{fold=false}"]
    # the step now taken is step 1's alternative, and says how it was chosen
    [t] = doc["transitions"]
    assert t["spec"] == bt["taken"] == "reroll{style=any,var=auto}"
    assert t["chosen_by"] == "walk-order+backtrack"
    # its one alternative is the abandoned branch; every continuation from the new state
    # leads to a state the backtrack left, so the walk stops there, saying why
    assert [a["after_hash"] for a in t["alternatives"]] == [bt["abandoned"][0]["after"]]
    assert doc["termination"]["kind"] == "all-rejected"
    dead = {a["after"] for a in bt["abandoned"]}
    ends = [c for c in doc["rejected_at_end"] if c.get("stage") == "dead-end"]
    assert ends and all(c["after_hash"] in dead for c in ends)
    # on disk: exactly the states the lineage names, with their recorded content, and the
    # recorded steps replay from the start to them
    files = sorted(os.listdir(out / "states"))
    assert files == sorted(os.path.basename(s["file"]) for s in doc["states"])
    for s in doc["states"]:
        assert content_hash((out / s["file"]).read_bytes()) == s["hash"]
    assert json.loads((out / "lineage.json").read_text())["backtracks"] == doc["backtracks"]
    assert replay(str(out), START).ok
