"""The backward walk (kltrans lineage) on the CPU backend.

An "expert" for the ``scale`` test workload is made by running optimize passes over the
naive kernel (restrict-pointers, vectorize-access, add-launch-bounds); the walk must take
it back to the naive kernel, every step gated and reversible, deterministically, and
resume from what an interrupted walk wrote.
"""

import json
import os
import shutil

import pytest

from kltrans.lineage import WalkOptions, walk
from kltrans.match.pattern import tokens
from kltrans.passes.facts import Context
from kltrans.passes.manager import run_pipeline
from kltrans.passes.pipeline import parse_pipeline
from kltrans.syntax import parse

HERE = os.path.dirname(os.path.abspath(__file__))
SCALE = os.path.join(HERE, "data", "workloads", "scale")
FORWARD = "restrict-pointers,vectorize-access,add-launch-bounds"


def _cpu_ok():
    return shutil.which("g++") is not None


pytestmark = [pytest.mark.skipif(not _cpu_ok(), reason="the CPU emulator needs g++"),
              pytest.mark.xdist_group("lineage")]  # one worker walks once for the module


@pytest.fixture(scope="module")
def expert(tmp_path_factory):
    d = tmp_path_factory.mktemp("expert")
    naive = open(os.path.join(SCALE, "scale.cu"), "rb").read()
    unit = parse(naive, "scale.cu")
    ctx = Context.from_strings(("no_alias(*)", "aligned(*,16)"))
    res = run_pipeline(unit, parse_pipeline(FORWARD), ctx)
    assert all(r.applied for r in res.reports), [r.to_json() for r in res.reports]
    path = d / "scale_expert.cu"
    path.write_bytes(res.unit.source)
    return str(path), naive


@pytest.fixture(scope="module")
def walked(expert, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("lineage") / "lineage")
    doc = walk(WalkOptions(SCALE, expert=expert[0], backend="cpu", out=out, jobs=2,
                           progress=False))
    return out, doc


def _hashes(doc):
    return [s["hash"] for s in doc["states"]], [(t["pass"], t["site"]["index"])
                                                for t in doc["transitions"]]


def test_walk_reaches_the_naive_kernel(expert, walked):
    out, doc = walked
    assert doc["termination"]["kind"] == "naive"
    assert [t["pass"] for t in doc["transitions"]] == [
        "drop-launch-bounds", "unrestrict-pointers", "scalarize-access"]
    last = doc["states"][-1]
    assert last["file"] == "states/03-naive.cu"
    src = open(os.path.join(out, last["file"]), "rb").read()
    a, b = parse(src, "a.cu"), parse(expert[1], "b.cu")
    assert tokens(a, a.root) == tokens(b, b.root)  # the naive kernel, token for token


def test_every_step_is_gated_and_reversible(walked):
    out, doc = walked
    for t in doc["transitions"]:
        assert t["roundtrip"]["ok"], t["roundtrip"]
        stages = {g["stage"]: g["status"] for g in t["gate"]}
        assert stages == {"compile": "pass", "correct": "pass"}, t["gate"]
        assert t["chosen_by"] == "walk-order"
        assert t["effect"] == {"ok": False, "reason": "no GPU: not timed"}
    # alternatives at step 1: the other simplifications, gated too (scalarize-vectors at
    # the float4 load and at the store, the vector views the kernel model reads)
    alts = doc["transitions"][0]["alternatives"]
    assert sorted(a["pass"] for a in alts) == ["scalarize-access", "scalarize-vectors",
                                               "scalarize-vectors", "unrestrict-pointers"]
    assert all(a["gate"] and a["roundtrip"]["ok"] for a in alts)
    for st in doc["states"]:
        assert os.path.isfile(os.path.join(out, st["file"]))
    md = open(os.path.join(out, "lineage.md")).read()
    assert "## Step 3: scalarize-access" in md and "```diff" in md
    assert "not timed" in open(os.path.join(out, "time.svg")).read()
    on_disk = json.load(open(os.path.join(out, "lineage.json")))
    assert on_disk["schema"] == 1 and on_disk["config"]["seeds"] == [0, 1, 2]


def test_probes_record_the_failures_the_conditions_avoid(walked):
    _, doc = walked
    by_pass = {t["pass"]: t["probes"] for t in doc["transitions"]}
    # add-launch-bounds with a maximum below the launched block: the launch fails
    lb = [p for p in by_pass["drop-launch-bounds"] if p["label"] == "max-threads=128"]
    assert lb and lb[0]["outcome"] == "failed" and lb[0]["stage"] == "correct"
    assert [v["precondition"] for v in lb[0]["violated"]] == ["block-fits"]
    assert "exceeds __launch_bounds__(128)" in lb[0]["evidence"]
    # vectorize-access assuming divisibility the ragged sizes do not have: a wrong result
    va = [p for p in by_pass["scalarize-access"] if p["label"] == "tail=assume"]
    assert va and va[0]["outcome"] == "failed" and va[0]["stage"] == "correct"
    assert [v["precondition"] for v in va[0]["violated"]] == ["remainder"]
    # valid variants are recorded as such, not as failures
    assert any(p["outcome"] == "passed" and not p["violated"] for p in by_pass["drop-launch-bounds"])


@pytest.mark.slow  # walks again, every step gated on the CPU emulator: run once, on 3.11
def test_walk_is_deterministic(expert, walked, tmp_path):
    _, first = walked
    again = walk(WalkOptions(SCALE, expert=expert[0], backend="cpu", out=str(tmp_path / "l"),
                             progress=False))
    assert _hashes(again) == _hashes(first)


@pytest.mark.slow  # walks again, every step gated on the CPU emulator: run once, on 3.11
def test_interrupted_walk_resumes(expert, walked, tmp_path):
    _, full = walked
    out = str(tmp_path / "l")
    part = walk(WalkOptions(SCALE, expert=expert[0], backend="cpu", out=out, max_steps=1,
                            progress=False))
    assert part["termination"]["kind"] == "max-steps" and len(part["transitions"]) == 1
    log = []
    done = walk(WalkOptions(SCALE, expert=expert[0], backend="cpu", out=out, progress=False,
                            log=log))
    assert any("resuming" in m and "1 step(s) already taken" in m for m in log), log
    assert _hashes(done) == _hashes(full)
    assert done["transitions"][0] == part["transitions"][0]  # step 1 was not redone


def test_redo_from_walks_the_later_steps_again(expert, walked, tmp_path):
    _, full = walked
    out = str(tmp_path / "l")
    shutil.copytree(walked[0], out)
    log = []
    doc = walk(WalkOptions(SCALE, expert=expert[0], backend="cpu", out=out, progress=False,
                           log=log, redo_from=2))
    assert any("steps 2 on dropped" in m for m in log), log
    assert any("resuming" in m and "1 step(s) already taken" in m for m in log), log
    # the same rules and inputs: the same states and choices, the end named naive again
    assert _hashes(doc) == _hashes(full) and doc["termination"]["kind"] == "naive"
    assert doc["transitions"][0] == full["transitions"][0]  # step 1 was kept as it was
    assert sorted(os.listdir(os.path.join(out, "states"))) == [
        "00-expert.cu", "01-drop-launch-bounds.cu", "02-unrestrict-pointers.cu",
        "03-naive.cu"]
    # dropping only the end: the state before it is a middle state again until re-walked
    again = walk(WalkOptions(SCALE, expert=expert[0], backend="cpu", out=out, progress=False,
                             redo_from=3, max_steps=2))
    assert len(again["transitions"]) == 2 and again["termination"]["kind"] == "max-steps"
    assert sorted(os.listdir(os.path.join(out, "states"))) == [
        "00-expert.cu", "01-drop-launch-bounds.cu", "02-unrestrict-pointers.cu"]


def test_redo_from_needs_a_lineage_and_a_step_in_it(expert, walked, tmp_path, capsys):
    from kltrans.cli import main

    out = str(tmp_path / "l")
    shutil.copytree(walked[0], out)
    for n, msg in (("9", "has 3 step(s)"), ("0", "--redo-from must be >= 1")):
        assert main(["lineage", SCALE, "--expert", expert[0], "--backend", "cpu", "--out", out,
                     "--quiet", "--redo-from", n]) == 2
        assert msg in capsys.readouterr().err
    assert main(["lineage", SCALE, "--expert", expert[0], "--backend", "cpu", "--quiet",
                 "--out", str(tmp_path / "none"), "--redo-from", "2"]) == 2
    assert "no lineage of these inputs" in capsys.readouterr().err
    assert json.load(open(os.path.join(out, "lineage.json")))["termination"]["kind"] == "naive"


@pytest.mark.slow  # walks again, every step gated on the CPU emulator: run once, on 3.11
def test_corrupt_lineage_is_not_resumed(expert, walked, tmp_path):
    from kltrans.lineage import WalkError

    out = str(tmp_path / "l")
    walk(WalkOptions(SCALE, expert=expert[0], backend="cpu", out=out, max_steps=1,
                     progress=False))
    edited = os.path.join(out, "states", "01-drop-launch-bounds.cu")
    with open(edited, "a") as f:
        f.write("// edited by hand\n")
    (tmp_path / "l" / "states" / "07-left-over.cu").write_text("// from another walk\n")
    before = {str(p): p.read_bytes() for p in (tmp_path / "l").rglob("*") if p.is_file()}
    # neither resumed from nor silently replaced: an error naming the state file
    log = []
    with pytest.raises(WalkError, match=r"01-drop-launch-bounds\.cu.*--restart"):
        walk(WalkOptions(SCALE, expert=expert[0], backend="cpu", out=out, max_steps=1,
                         progress=False, log=log))
    assert not any("resuming" in m for m in log)
    assert {str(p): p.read_bytes() for p in (tmp_path / "l").rglob("*") if p.is_file()} == before
    # --restart starts over, and nothing of the earlier walk is left
    doc = walk(WalkOptions(SCALE, expert=expert[0], backend="cpu", out=out, max_steps=1,
                           progress=False, log=log, restart=True))
    assert len(doc["transitions"]) == 1
    assert sorted(os.listdir(os.path.join(out, "states"))) == [
        "00-expert.cu", "01-drop-launch-bounds.cu"]


def test_cli_errors_are_usage_errors(tmp_path, capsys):
    from kltrans.cli import main

    assert main(["lineage", str(tmp_path / "nope")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert main(["lineage", SCALE, "--backend", "cpu"]) == 2  # scale has no expert variant
    assert "no 'expert' kernel" in capsys.readouterr().err
    assert main(["lineage", SCALE, "--side-ms", "0"]) == 2
    assert "--side-ms must be > 0" in capsys.readouterr().err
    assert main(["lineage", SCALE, "--max-backtracks", "-1"]) == 2


# ------------------------------------------------------------------ skill cards
def test_skill_cards_from_the_walk(walked, tmp_path, capsys):
    from kltrans.cli import main
    from kltrans.skills import extract, load_cards, validate_card

    out, _ = walked
    cards = extract([out])
    assert sorted(cards) == ["add-launch-bounds", "restrict-pointers", "vectorize-access"]
    for c in cards.values():
        assert validate_card(c) == [], c["id"]
    va = cards["vectorize-access"]
    assert va["inverse"] == "scalarize-access" and va["provenance"][0]["step"] == 3
    assert va["anchor"]["examples"][0]["code"].startswith("if (i < n)")
    assert {p["category"] for p in va["preconditions"]} <= {"dtype", "layout", "storage",
                                                             "pipeline", "hardware"}
    assert all(p["seen"] and p["seen"][0]["status"] == "holds" for p in va["preconditions"])
    fails = va["failures_avoided"]["items"]
    assert any(f["precondition"] == "remainder" and f["stage"] == "correct" for f in fails)
    assert va["effect"] == [{"workload": "scale", "arch": "sm_90", "gpu": None,
                             "measured": False, "resources": va["effect"][0]["resources"],
                             "note": "no GPU: not timed"}]
    # the CLI writes, lists, validates and renders the same cards
    d = tmp_path / "skills"
    assert main(["skills", "extract", out, "-o", str(d)]) == 0
    assert sorted(f.name for f in d.iterdir()) == sorted(
        [f"{c}.{e}" for c in cards for e in ("yaml", "md")] + ["README.md"])
    assert main(["skills", "validate", "--dir", str(d)]) == 0
    assert set(load_cards(str(d))) == set(cards)
    capsys.readouterr()
    assert main(["skills", "show", "vectorize-access", "--dir", str(d)]) == 0
    assert "## Failures its conditions avoid" in capsys.readouterr().out
    assert main(["skills", "show", "nope", "--dir", str(d)]) == 2


@pytest.mark.slow  # walks again, every step gated on the CPU emulator: run once, on 3.11
def test_same_skill_from_two_lineages_is_one_card(walked, expert, tmp_path):
    from kltrans.skills import extract

    out, _ = walked
    other = str(tmp_path / "again")
    walk(WalkOptions(SCALE, expert=expert[0], backend="cpu", out=other, progress=False))
    cards = extract([out, other])
    assert len(cards) == 3
    assert all(len(c["provenance"]) == 2 and len(c["effect"]) == 2 for c in cards.values())


def test_invalid_cards_are_reported(walked, tmp_path, capsys):
    import yaml

    from kltrans.cli import main
    from kltrans.skills import extract, validate_card, write_cards

    out, _ = walked
    cards = extract([out])
    card = cards["restrict-pointers"]
    del card["intent"]
    card["preconditions"][0]["category"] = "colour"
    errs = validate_card(card)
    assert any("'intent' is a required property" in e for e in errs)
    assert any(e.startswith("preconditions/0/category:") for e in errs)
    d = tmp_path / "skills"
    write_cards({"restrict-pointers": card}, str(d))
    assert main(["skills", "validate", "--dir", str(d)]) == 1
    assert "restrict-pointers.yaml:1:1: error:" in capsys.readouterr().err
    (d / "broken.yaml").write_text("id: [unclosed\n")
    assert main(["skills", "list", "--dir", str(d)]) == 2
    assert "broken.yaml:" in capsys.readouterr().err
    assert yaml.safe_load((d / "restrict-pointers.yaml").read_text())["id"] == "restrict-pointers"


# ------------------------------------------------------------------ the GPU choice rule
def _cand(name, trials=None, screened=False, ok=True):
    from kltrans.lineage.walk import Candidate

    c = Candidate(name, {}, name, 1, 1, 1, "k", b"", name, roundtrip={"ok": True})
    if trials is not None:
        c.effect = {"ok": ok, "slowdown_trials": trials,
                    "slowdown_median": sorted(trials)[len(trials) // 2]}
        if screened:
            c.effect["screened"] = True
    return c


def test_gpu_choice_takes_the_costliest_removal():
    from kltrans.lineage.walk import choose_step

    a = _cand("a", [1.0, 1.0, 1.0, 1.0, 1.0])
    b = _cand("b", [2.7, 2.8, 2.8, 2.8, 2.9])
    c = _cand("c", [3.5, 3.6, 0.98, 3.6, 3.6])  # one trial has A slower: noise, by the median
    d = _cand("d", [9.0], screened=True)        # screened only: never chosen by time
    assert choose_step([a, b, c, d], 1.02)[:2] == ("max-time", c)
    assert c.roundtrip["no_slower"] is True and c.roundtrip["trials_over"] == 4
    # a costly removal's inverse is no slower by the median, whatever one trial says
    e = _cand("e", [1.5, 0.9, 0.9, 1.5, 1.5])
    assert choose_step([a, e], 1.02)[:2] == ("max-time", e)
    assert e.roundtrip["no_slower"] is True and e.roundtrip["trials_over"] == 3
    # a removal that costs nothing never beats a costly one
    assert choose_step([a, d], 1.02)[:2] == ("walk-order-tie", a)


def test_gpu_choice_among_ties_is_the_walk_order_of_those_no_slower():
    from kltrans.lineage.walk import choose_step

    first = _cand("first", [1.3], screened=True)  # screened: its one trial was noise
    timed = [_cand("x", [1.01, 1.0, 1.005, 1.0, 1.0]), _cand("y", [1.0, 1.01, 1.0, 1.0, 1.0])]
    rule, chosen, needs_timing = choose_step([first] + timed, 1.02)
    assert (rule, chosen, needs_timing) == ("walk-order-tie", first, True)
    # the first in walk order already timed fully needs no more trials
    assert choose_step(timed, 1.02) == ("walk-order-tie", timed[0], False)
    # a removal that makes the kernel faster (its inverse is slower) is passed over
    faster = _cand("faster", [0.95, 0.96, 0.95, 0.96, 0.95])
    assert choose_step([faster] + timed, 1.02) == ("walk-order-tie", timed[0], False)
    screened_faster = _cand("sf", [0.9], screened=True)
    assert choose_step([screened_faster, faster] + timed, 1.02)[:2] == ("walk-order-tie", timed[0])
    # every removal makes it faster: the one that changes it least, timed fully first
    least = _cand("least", [0.97], screened=True)
    assert choose_step([faster, screened_faster, least], 1.02) == ("inverse-slower", least, True)
    least.effect = {"ok": True, "slowdown_trials": [0.97] * 5, "slowdown_median": 0.97}
    assert choose_step([faster, screened_faster, least], 1.02) == ("inverse-slower", least, False)
    assert least.roundtrip["no_slower"] is False
    # nothing timed (every timing failed): the walk order, as without a GPU
    failed = [_cand("p", [1.0], ok=False), _cand("q", [1.0], ok=False)]
    assert choose_step(failed, 1.02)[:2] == ("walk-order", failed[0])


def test_gpu_timing_results_become_effects(tmp_path):
    """How the walk reads the screen-then-time job's results (kltrans.gate.tasks.
    bench_many_task, run on a GPU in tests/test_walk_gpu.py): a candidate with a second
    round gets its five-trial effect, one screened only is marked so, and one the batch
    could not run is timed again on its own. The executor here hands back recorded
    results; no GPU runs."""
    from types import SimpleNamespace

    from kltrans.lineage.walk import Candidate, WalkOptions, _measure

    def paired(*ratios):
        return {"a": {"ms": 1.0}, "b": {"ms": 1.0 / ratios[0]}, "ratios": list(ratios),
                "ratio_median": sorted(ratios)[len(ratios) // 2]}

    screen = {"ok": True, "device": "GPU", "size": {"n": 1}}
    results = [dict(screen, paired=paired(0.5), full=paired(0.5, 0.4, 0.5, 0.5, 0.6)),
               dict(screen, paired=paired(0.99)),
               {"ok": False, "verdict": "not-run", "reason": "an earlier B broke the batch"},
               dict(screen, paired=paired(1.0), full=paired(1.0, 1.0, 0.99, 1.0, 1.01))]
    replies = [[{"results": results}],  # the screen-then-time batch
               [{"results": [dict(screen, paired=paired(0.8, 0.8, 0.8, 0.8, 0.8))]}]]
    calls = []

    class Pool:
        def map(self, fn, items, gpu=False):
            calls.append((fn.__name__, items))
            return replies.pop(0)

    cands = [Candidate(f"p{i}", {}, f"p{i}", 0, 1, 1, "k", after=b"x", after_hash=str(i))
             for i in range(4)]
    opts = WalkOptions(str(tmp_path), side_ms=100.0)
    wl = SimpleNamespace(path=str(tmp_path))
    _measure(cands, b"cur", opts, wl, "expert.cu", SimpleNamespace(get=lambda: Pool()))
    (fn, [item]), (fn2, singles) = calls
    assert fn == "bench_many_task" and item["trials"] == 1 and item["side_ms"] == 25.0
    assert item["then"] == {"keep": 3, "include": [0], "trials": 5, "side_ms": 100.0}
    # the gate's file name on every side: part of the compile cache's key, so the timing
    # worker reuses what the gate compiled
    assert item["a_name"] == "expert.cu" and {b["name"] for b in item["bs"]} == {"expert.cu"}
    # the one the batch could not run: timed again, fully, in a batch of its own
    assert fn2 == "bench_many_task" and len(singles) == 1 and len(singles[0]["bs"]) == 1
    assert singles[0]["trials"] == 5 and "then" not in singles[0]
    e = [c.effect for c in cands]
    assert len(e[0]["slowdown_trials"]) == 5 and e[0]["slowdown_median"] == 2.0
    assert e[1]["screened"] and len(e[1]["slowdown_trials"]) == 1
    assert not e[2].get("screened") and e[2]["slowdown_trials"] == [1.25] * 5
    assert not e[3].get("screened") and len(e[3]["slowdown_trials"]) == 5


def test_gpu_timing_goes_again_where_a_batch_stopped(tmp_path):
    """kltrans.lineage.walk._bench: candidates a timing worker had not reached when its
    watchdog ended it go again in a new batch; the one it was on keeps ``too-slow``; a
    batch that gets nowhere leaves each candidate its verdict (no endless retries)."""
    from types import SimpleNamespace

    from kltrans.lineage.walk import Candidate, WalkOptions, _bench

    ok = {"ok": True, "device": "GPU", "size": {"n": 1},
          "paired": {"a": {"ms": 1.0}, "b": {"ms": 2.0}, "ratios": [0.5] * 5}}
    slow = {"ok": False, "verdict": "too-slow", "reason": "past 120 s"}
    notrun = {"ok": False, "verdict": "not-run", "reason": "the worker ended before it"}
    replies = [[{"results": [ok, slow, notrun]}], [{"results": [ok]}]]
    calls = []

    class Pool:
        def map(self, fn, items, gpu=False):
            calls.append(items)
            return replies.pop(0)

    cands = [Candidate(f"p{i}", {}, f"p{i}", 0, 1, 1, "k", after=b"x", after_hash=str(i))
             for i in range(3)]
    opts = WalkOptions(str(tmp_path), side_ms=100.0)
    wl = SimpleNamespace(path=str(tmp_path))
    ex = SimpleNamespace(get=lambda: Pool())
    _bench(cands, 5, b"cur", opts, wl, "expert.cu", ex)
    assert [len(items[0]["bs"]) for items in calls] == [3, 1]
    assert calls[0][0]["pair_timeout_s"] == opts.pair_timeout_s
    assert cands[0].effect["ok"] and cands[2].effect["ok"]
    assert not cands[1].effect["ok"] and "too-slow" in cands[1].effect["reason"]
    # a batch that gets nowhere: one try, each keeps its verdict
    replies[:] = [[{"results": [notrun, notrun]}]]
    calls.clear()
    _bench(cands[:2], 5, b"cur", opts, wl, "expert.cu", ex)
    assert len(calls) == 1 and not cands[0].effect["ok"] and not cands[1].effect["ok"]


def test_gpu_walk_times_at_the_naive_variants_own_size():
    """A GPU walk times every step at one size: the naive variant's own bench size where
    the spec gives it one (scan: its walk reaches a quadratic direct tile prefix, which
    would not finish at 2^28), as --measure does; else the workload's (None)."""
    from kltrans.lineage.walk import timing_size
    from kltrans.workload.spec import load_workload

    assert timing_size(load_workload(os.path.join(HERE, "..", "corpus", "scan"))) == {"n": 262144}
    assert timing_size(load_workload(os.path.join(HERE, "..", "corpus", "layernorm"))) is None


def _eff(trials):
    s = sorted(trials)
    return {"ok": True, "slowdown_median": s[len(s) // 2], "slowdown_trials": trials,
            "spread": s[-1] - s[0]}


def test_composite_round_trip_is_the_nearest_state_no_slower():
    """Step 9's inverse alone is slower. State 7 is slower still; state 6 (three inverses)
    is no slower, but step 9's own removal there speeds it up again, so the later
    optimizations only mask its cost; state 5 is no slower and the step cannot be removed
    there: the composite reaches back to state 5."""
    from kltrans.lineage.measure import composite_verdict, roundtrip_holds

    tried = [{"state": 4, "effect": _eff([1.6, 1.5, 1.7]), "removal": {"applies": False}},
             {"state": 5, "effect": _eff([1.4, 1.5, 1.3]), "removal": {"applies": False}},
             {"state": 7, "effect": _eff([0.6, 0.7, 0.98])},
             {"state": 6, "effect": _eff([1.01, 0.97, 1.2]), "removal": _eff([0.9, 0.95, 0.93])}]
    v = composite_verdict(9, tried)
    assert v["no_slower"] and v["state"] == 5 and v["steps"] == [9, 8, 7, 6]
    assert v["slowdown_median"] == 1.4 and v["trials_over"] == 3
    assert [r["state"] for r in v["tried"]] == [7, 6, 5, 4]
    assert v["tried"][1]["removal"] == {"slowdown_median": 0.93}
    # where the removal at state 6 costs time, state 6 is the composite
    tried[3]["removal"] = _eff([1.0, 1.02, 0.99])
    v6 = composite_verdict(9, tried)
    assert v6["state"] == 6 and v6["steps"] == [9, 8, 7] and v6["trials_over"] == 2
    rt = {"ok": True, "no_slower": False,
          "composite": {**v, "structural": True, "carried": False}}
    assert roundtrip_holds(rt)
    assert not roundtrip_holds({**rt, "composite": {**v, "structural": False, "carried": False}})
    assert not roundtrip_holds({**rt, "composite": {**v, "structural": True, "carried": True}})
    # nothing within reach is no slower (or could be timed): the round trip does not hold
    v = composite_verdict(9, [{"state": 7, "effect": _eff([0.5, 0.6, 0.7])},
                              {"state": 6, "effect": {"ok": False, "reason": "timeout"}}])
    assert not v["no_slower"] and "steps" not in v and v["tried"][1]["error"] == "timeout"
    assert not roundtrip_holds({"ok": True, "no_slower": False, "composite": v})
    # a state no slower whose removal was not timed yet is not taken
    assert not composite_verdict(9, [{"state": 7, "effect": _eff([1.5, 1.5, 1.5])}])["no_slower"]
    assert not roundtrip_holds({"ok": True, "no_slower": False})
    assert roundtrip_holds({"ok": True, "no_slower": True})
    assert roundtrip_holds({"ok": True})  # a CPU walk: structural only
    assert not roundtrip_holds({"ok": False, "no_slower": True})


def test_a_composite_carried_by_a_larger_step_is_no_evidence():
    """Step 3 loses 4% alone; with step 2 (neutral) and step 1 (2.26x) the composite is
    2.17x: its share of it is 2.17 / (2.26 * 1.0) = 0.96, carried. Step 5's composite with
    step 4 (1.1x alone) is 1.21x: a share of 1.1, not carried."""
    from kltrans.lineage.measure import label_composites, roundtrip_holds

    def tr(step, med, comp=None):
        rt = {"ok": True, "no_slower": med >= 0.99}
        if comp:
            rt["composite"] = {"no_slower": True, "structural": True, **comp}
        return {"step": step, "effect": {"ok": True, "slowdown_median": med}, "roundtrip": rt}

    doc = {"transitions": [tr(1, 2.26), tr(2, 1.0),
                           tr(3, 0.96, {"steps": [3, 2, 1], "slowdown_median": 2.17}),
                           tr(4, 1.1), tr(5, 0.9, {"steps": [5, 4], "slowdown_median": 1.21})]}
    label_composites(doc)
    c3, c5 = (doc["transitions"][i]["roundtrip"]["composite"] for i in (2, 4))
    assert (c3["others"], c3["share"], c3["carried"]) == (2.26, 0.9602, True)
    assert (c5["others"], c5["share"], c5["carried"]) == (1.1, 1.1, False)
    assert not roundtrip_holds(doc["transitions"][2]["roundtrip"])
    assert roundtrip_holds(doc["transitions"][4]["roundtrip"])


def test_composite_needs_a_gpu_and_a_step_in_the_lineage(walked, tmp_path, capsys):
    """Usage errors (exit 2, a diagnostic, the lineage unchanged): a step the lineage does
    not have, --max-back under 1, and (here, without a GPU) no GPU to time on."""
    from kltrans.cli import main

    d = tmp_path / "lineage"
    shutil.copytree(walked[0], d)
    before = (d / "lineage.json").read_bytes()
    n = len(json.loads(before)["transitions"])
    for extra, msg in ((["--steps", str(n + 1)], f"no step {n + 1}"),
                       (["--max-back", "0"], "--max-back must be >= 1"),
                       ([], "timed on a GPU")):
        rc = main(["lineage", SCALE, "--out", str(d), "--composite", *extra])
        err = capsys.readouterr().err
        assert rc == 2 and "error:" in err and msg in err and "Traceback" not in err, err
    assert (d / "lineage.json").read_bytes() == before


def test_pair_item_times_two_lineage_states_under_the_walks_names():
    from kltrans.lineage.measure import pair_item

    doc = {"config": {"kernel": "k", "expert": "dir/expert.cu"}}
    it = pair_item(b"A", b"B", doc, "corpus/w", 5, 100.0, {"n": 4})
    assert (it["a_source"], it["b_source"], it["a_name"], it["b_name"]) == ("A", "B", "expert.cu", "expert.cu")
    assert (it["kernel_a"], it["kernel_b"], it["bench_size"], it["side_ms"]) == ("k", "k", {"n": 4}, 100.0)
    assert "bench_size" not in pair_item(b"A", b"B", doc, "corpus/w", 5, 100.0, None)


def test_a_probe_whose_forced_rewrite_cannot_be_made_names_what_it_needed():
    # softmax's H200 step 24 (scalarize-online-stream): forcing its inverse,
    # vectorize-online-stream, at a site that is no strided online fold cannot produce a
    # rewrite; the probe says which check it needed, and keeps the pass's own error
    from types import SimpleNamespace

    from kltrans.lineage.walk import probe_step

    root = os.path.join(os.path.dirname(HERE), "corpus", "softmax", "lineage")
    doc = json.load(open(os.path.join(root, "lineage.json")))
    step = doc["transitions"][23]
    assert step["pass"] == "scalarize-online-stream"
    simplified = open(os.path.join(root, doc["states"][24]["file"]), "rb").read()
    ctx = Context.from_strings(tuple(doc["config"]["facts"]), "sm_90", False,
                               doc["config"]["kernel"])
    chosen = SimpleNamespace(roundtrip=step["roundtrip"])
    [rec] = probe_step(simplified, chosen, ctx, SimpleNamespace(probes=1), None,
                       doc["config"]["kernel"], None, [], "cpu", "expert.cu")
    assert (rec["kind"], rec["outcome"]) == ("forced-site", "rewrite-error")
    assert rec["violated"][0]["precondition"] == "fold-form"
    assert rec["evidence"].startswith("cannot be forced (unknown: not a strided online fold")
    assert "the rewrite needs what it checks (TypeError: " in rec["evidence"]


def test_a_walk_compares_launch_headers_as_launches(tmp_path):
    """The inverse writes min(G, cap); this expert's header says min(cap, G), the same
    launch: the round trip holds (the header is compared as a launch, not as text), and
    the while loop walks to naive."""
    from kltrans.lineage import WalkOptions, walk

    expert = tmp_path / "scale_while.cu"
    expert.write_text(
        "// kltrans: launch scale grid=min(264, ceil_div(n, 256)) block=256\n"
        'extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {\n'
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  const int step = blockDim.x * gridDim.x;\n"
        "  while (i < n) {\n    y[i] = a * x[i] + b;\n    i += step;\n  }\n}\n")
    doc = walk(WalkOptions(SCALE, expert=str(expert), backend="cpu", out=str(tmp_path / "l"),
                           jobs=1, progress=False, probes=0, max_steps=3))
    [t] = doc["transitions"]
    assert t["pass"] == "one-per-thread" and t["roundtrip"]["ok"]
    assert doc["termination"]["kind"] == "naive"


FAST_EXP = """// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float4* unused = reinterpret_cast<const float4*>(x);
    if (i < n) y[i] = a * x[i] + b + 0.0f * __expf(x[i]);
}
"""


def test_a_walk_whose_only_steps_are_rejected_ends_naive_when_no_mark_is_left(tmp_path):
    """precise-math applies to __expf and passes the gate, but its inverse (fast-math)
    cannot show the argument range, so the round trip fails: nothing valid is left to
    take, and nothing the naive check marks (the float4 view is dead code) is left."""
    k = tmp_path / "k.cu"
    k.write_text(FAST_EXP)
    doc = walk(WalkOptions(SCALE, expert=str(k), backend="cpu", out=str(tmp_path / "l"),
                           jobs=1, progress=False))
    assert doc["termination"]["kind"] == "naive", doc["termination"]
    assert "rejected" in doc["termination"]["reason"]
    [rej] = [c for c in doc["rejected_at_end"] if c.get("stage") == "roundtrip"]
    assert rej["pass"] == "precise-math"
    # the same kernel with a live vector view keeps a mark: the walk does not end naive
    k.write_text(FAST_EXP.replace("0.0f * __expf(x[i])", "0.0f * __expf(unused[0].x)"))
    doc = walk(WalkOptions(SCALE, expert=str(k), backend="cpu", out=str(tmp_path / "m"),
                           jobs=1, progress=False))
    assert doc["termination"]["kind"] != "naive"
