"""kltrans optimize: retrieval, the builtin filler, the search loop and its baselines (CPU)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from kltrans.cli import main
from kltrans.optimize.fillers import BuiltinFiller
from kltrans.optimize.menu import Offer, OptionChoice, Pick, check_pick
from kltrans.optimize.retrieve import build_menu, load_library, workload_profile
from kltrans.optimize.search import OptimizeError, OptimizeOptions, run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKILLS = os.path.join(ROOT, "skills")
CORPUS = os.path.join(ROOT, "corpus")
HELD = os.path.join(CORPUS, "heldout")


def _opts(name, **kw):
    d = os.path.join(HELD, name)
    base = dict(skills=SKILLS, corpus=CORPUS, backend="cpu", budget=6, progress=False,
                size_limit=20000)
    base.update(kw)
    return OptimizeOptions(os.path.join(d, "naive.cu"), d, **base)


def _gate_ok(tmp_path, src: str, workload: str, name: str) -> subprocess.CompletedProcess:
    f = tmp_path / name
    f.write_text(src)
    return subprocess.run([sys.executable, "-m", "kltrans", "gate", str(f), "--workload", workload,
                           "--backend", "cpu", "--stages", "compile,correct"],
                          capture_output=True, text=True)


# ------------------------------------------------------------------ the menu
def _offer(i, card="c", values=(1, 2), styles=("pragma", "manual")):
    return Offer(f"o{i}", card, "unroll", 1, "k.cu:3:5", "for (...)",
                 (OptionChoice("factor", tuple(values), values[0], tune=True),
                  OptionChoice("spelling", tuple(styles), styles[0])))


def test_check_pick_names_what_is_off_the_menu():
    menu = [_offer(1), _offer(2)]
    assert check_pick(Pick("o2", {"factor": 2}), menu) is None
    assert "not on the menu" in check_pick(Pick("o3", {}), menu)
    assert "no option 'style'" in check_pick(Pick("o1", {"style": "x"}), menu)
    # a value of another JSON type is off the menu, however equal in Python
    assert "not one of the values" in check_pick(Pick("o2", {"factor": 2.0}), menu)
    assert "not one of the values offered" in check_pick(Pick("o1", {"factor": 8}), menu)


def test_builtin_filler_evidence_first_then_one_option_varied_and_never_twice():
    menu = [_offer(1, "a", (4, 2)), _offer(2, "b", (1, 8))]
    f = BuiltinFiller()
    tried = []
    seen = []
    while (p := f.pick("", menu, tried)) is not None:
        o = next(x for x in menu if x.id == p.offer)
        tried.append({"card": o.card, "site": o.site, "options": p.options})
        seen.append((o.card, p.options["factor"], p.options["spelling"]))
    # round one: each offer with its evidence value; round two: the other values of the
    # performance option; the spelling option keeps its first value (same program)
    assert seen == [("a", 4, "pragma"), ("b", 1, "pragma"), ("a", 2, "pragma"),
                    ("b", 8, "pragma")]


def test_menu_checks_preconditions_before_offering(tmp_path):
    from kltrans.passes.facts import Context
    from kltrans.syntax import parse

    # grid-stride needs `if (i < n)` around the whole body: here the kernel also writes
    # outside the guard, so the card's sole-work precondition fails and nothing is offered
    src = b"""// kltrans: launch k grid=ceil_div(n, 256) block=256
extern "C" __global__ void k(const float* x, float* y, int n)
{
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = x[i];
    }
    y[0] = 1.0f;
}
"""
    unit = parse(src, str(tmp_path / "k.cu"))
    cards = [c for c in load_library(SKILLS) if c.id == "grid-stride"]
    rejected = []
    menu = build_menu(unit, Context.from_strings((), None, False, "k"), cards,
                      {"dtypes": ["float32"], "rank_in": 1, "rank_out": 1, "class": "map"}, {},
                      rejected)
    assert menu == []
    assert rejected and rejected[0]["card"] == "grid-stride"
    assert rejected[0]["precondition"] == "sole-work"


def test_exclude_own_drops_cards_backed_only_by_that_workload():
    all_ids = {c.id for c in load_library(SKILLS)}
    without = {c.id: c for c in load_library(SKILLS, ["transpose"])}
    only_transpose = {"stage-transpose", "specialize-interior"}
    assert only_transpose <= all_ids
    assert not only_transpose & set(without)
    # a card backed by several workloads stays, without the excluded evidence
    rp = without["restrict-pointers"].data
    assert all(p["workload"] != "transpose" for p in rp["provenance"])
    assert "transpose" not in without["restrict-pointers"].workloads


def test_workload_profile_classes():
    from kltrans.workload.spec import load_workload

    assert workload_profile(load_workload(os.path.join(CORPUS, "reduce-sum")))["class"] == "reduction"
    assert workload_profile(load_workload(os.path.join(HELD, "gelu")))["class"] == "map"
    assert workload_profile(load_workload(os.path.join(CORPUS, "sgemm")))["class"] == "contraction"


# ------------------------------------------------------------------ the loop, on the CPU
# the two held-out instances in CI; the second is the same code on other kernels,
# gated on the CPU emulator: run once, on 3.11 (slow)
@pytest.mark.parametrize("name", ["gelu", pytest.param("swiglu", marks=pytest.mark.slow)])
def test_builtin_skills_loop_on_heldout_instances(tmp_path, name):
    doc = run(_opts(name, budget=10))
    f = doc["final"]
    assert f["evaluations"] <= 10
    assert doc["accepted"], doc["candidates"]
    # every accepted candidate passed compile and correct; the final kernel is the last
    # accepted one and passes the gate again, checked independently
    for c in doc["candidates"]:
        if c["verdict"] == "accepted":
            assert [s["status"] for s in c["gate"]] == ["pass", "pass"]
    assert f["source"] != open(os.path.join(HELD, name, "naive.cu")).read()
    r = _gate_ok(tmp_path, f["source"], os.path.join(HELD, name), "naive.cu")
    assert r.returncode == 0, r.stdout + r.stderr
    # the loop checked preconditions before choosing: the only candidates applied with a
    # precondition unchecked are near misses, each naming the one it could not prove
    assert all(len(c.get("unproven") or ()) == 1 for c in doc["candidates"] if c["forced"])
    assert f["measured"] is False and f["speedup_vs_start"] is None


def test_budget_counts_only_gated_candidates():
    doc = run(_opts("gelu", strategy="blind", budget=3, seed=3))
    gated = [c for c in doc["candidates"] if "evaluation" in c]
    assert len(gated) == doc["final"]["evaluations"] == 3
    assert doc["termination"]["kind"] == "budget"
    for c in doc["candidates"]:
        if "evaluation" not in c:
            assert c["verdict"] in ("not-applied", "duplicate", "same-code")


def test_blind_is_forced_and_reproducible_by_seed():
    a = run(_opts("gelu", strategy="blind", budget=4, seed=7))
    b = run(_opts("gelu", strategy="blind", budget=4, seed=7))
    assert [c["spec"] for c in a["candidates"]] == [c["spec"] for c in b["candidates"]]
    assert a["final"]["hash"] == b["final"]["hash"]
    assert all(c["forced"] for c in a["candidates"])


def test_memory_replays_the_most_similar_other_lineage():
    doc = run(_opts("gelu", strategy="memory", budget=4))
    src = doc["library"]["replay_of"]
    assert src and src != "gelu"
    lineage = json.load(open(os.path.join(CORPUS, src, "lineage", "lineage.json")))
    from kltrans.passes.pipeline import parse_pipeline

    want = [parse_pipeline(t["roundtrip"]["inverse"])[0].spec()
            for t in reversed(lineage["transitions"]) if t["roundtrip"]["ok"]]
    assert doc["library"]["sequence"] == want
    # it replays in order, preconditions ignored
    assert [c["spec"] for c in doc["candidates"]][:3] == want[:3]
    assert all(c["forced"] for c in doc["candidates"])
    # then the other lineages, the next most similar first, while the budget lasts
    then = doc["library"]["then"]
    assert then and src not in [t["replay_of"] for t in then]
    assert [t["similarity"] for t in then] == sorted((t["similarity"] for t in then), reverse=True)


def test_memory_goes_on_to_the_next_lineage_when_one_is_spent():
    from kltrans.optimize.search import MemoryProposer
    from kltrans.workload.spec import load_workload

    m = MemoryProposer(CORPUS, "gelu", workload_profile(load_workload(os.path.join(HELD, "gelu"))))
    first = len(m.sequence) * 3
    names = [m.propose(None, None, "s", []).meta["replay_of"] for _ in range(first + 1)]
    assert set(names[:first]) == {m.source} and names[first] == m.sources[1][0] != m.source


def test_a_rejected_candidate_is_recorded_with_its_stage():
    """Blind forced picks break gelu (a correct-stage rejection) and include moves that
    leave fewer blocks than the device holds at the bench size (grid-stride{max-blocks=132,
    264 or 528}: one, two or four blocks of 256 threads per SM of the H200's 132, which
    hold eight; coarsen{factor=4}).
    Without a GPU the performance model refuses them, and the log says the decision was
    modelled; what it keeps, it says why. Which seed draws both kinds of move depends on
    the catalogue, so the first of 64 seeds that does is used (17 is tried first: with
    today's catalogue the first that does, and each blind run costs seconds; a new pass
    changes the draws)."""
    for seed in (17, *range(17), *range(18, 64)):
        doc = run(_opts("gelu", strategy="blind", budget=8, seed=seed))
        gated = [c for c in doc["candidates"] if "evaluation" in c]
        rej = [c for c in gated if c["verdict"] == "rejected"]
        if {c["stage"] for c in rej} >= {"correct", "model"}:
            break
    for c in rej:
        assert c["stage"] in ("compile", "correct", "model") and c["reason"]
        assert (c["stage"] == "model") == c["reason"].startswith("modelled: ")
    assert {c["stage"] for c in rej} >= {"correct", "model"}
    model = [c for c in rej if c["stage"] == "model"]
    assert any(c["reason"].startswith("modelled: leaves the device emptier") for c in model)
    for c in model:
        if c["spec"].startswith("grid-stride{"):
            cap = int(re.search(r"max-blocks=(\d+),", c["spec"]).group(1))
            # fewer blocks of 256 threads than the H200's 132 SMs hold (8 each)
            assert cap * 256 < 132 * 2048, cap
    for c in gated:
        if c["verdict"] == "accepted":
            assert c["model"]["ok"] and "keeps the device as full" in c["model"]["reason"]


# ------------------------------------------------------------------ the CLI
def test_cli_writes_kernel_and_log_atomically(tmp_path, capsys):
    out, log = tmp_path / "opt.cu", tmp_path / "log.json"
    d = os.path.join(HELD, "gelu")
    rc = main(["optimize", os.path.join(d, "naive.cu"), "--workload", d, "--skills", SKILLS,
               "--corpus", CORPUS, "--backend", "cpu", "--budget", "3", "--size-limit", "20000",
               "-o", str(out), "--log", str(log), "-q"])
    assert rc == 0
    doc = json.loads(log.read_text())
    assert out.read_text() == doc["final"]["source"]
    assert "accepted" in capsys.readouterr().err


@pytest.mark.parametrize("argv,msg", [
    (["--workload", "nowhere"], "nowhere"),
    (["--skills", "nowhere"], "nowhere: not a directory"),
    (["--budget", "-1"], "--budget"),
])
def test_cli_errors_exit_2_without_traceback(argv, msg, capsys):
    d = os.path.join(HELD, "gelu")
    base = ["optimize", os.path.join(d, "naive.cu"), "--workload", d, "--skills", SKILLS,
            "--backend", "cpu", "-q"]
    rc = main(base + argv)
    err = capsys.readouterr().err
    assert rc == 2
    assert msg in err and "Traceback" not in err


def test_cli_refuses_to_overwrite_the_input(tmp_path, capsys):
    src = tmp_path / "naive.cu"
    src.write_text(open(os.path.join(HELD, "gelu", "naive.cu")).read())
    before = src.read_text()
    rc = main(["optimize", str(src), "--workload", os.path.join(HELD, "gelu"), "-o", str(src),
               "--backend", "cpu", "-q"])
    assert rc == 2 and "overwrite" in capsys.readouterr().err
    assert src.read_text() == before


def test_menu_shows_what_the_search_starts_from_and_what_it_leaves_out(tmp_path, capsys):
    """--menu: the offers the skills search builds before its first evaluation (the first
    candidate a real run gates is o1 with the options shown), and every card left out with
    its reason: a failing precondition at a site, or no site at all. Nothing is gated."""
    d = os.path.join(HELD, "gelu")
    base = ["optimize", os.path.join(d, "naive.cu"), "--workload", d, "--skills", SKILLS,
            "--corpus", CORPUS]
    assert main(base + ["--menu", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    offers, refused = doc["offers"], doc["refused"]
    assert [o["id"] for o in offers] == [f"o{i + 1}" for i in range(len(offers))]
    kinds = [o["kind"] for o in offers]
    assert kinds == sorted(kinds, key=["card", "catalogue", "near-miss"].index)
    assert {"card", "catalogue", "near-miss"} <= set(kinds)
    near = next(o for o in offers if o["kind"] == "near-miss")
    assert near["unproven"]
    # a site ruled out by a precondition names it; a card with no site says so
    st = next(r for r in refused if r["card"] == "stage-transpose")
    assert st["precondition"] == "naive-transpose" and st["reason"].startswith("fails:")
    assert st["location"].startswith(os.path.join(d, "naive.cu") + ":")
    pad = next(r for r in refused if r["card"] == "pad-smem")
    assert pad["site"] is None and pad["reason"].startswith("no site in the kernel (anchor:")
    # every card of the library is either offered or left out
    lib = {c.id for c in load_library(SKILLS)}
    assert lib <= {o["card"] for o in offers} | {r["card"] for r in refused}
    # the search's first candidate is the menu's first offer, with its first options
    log = tmp_path / "log.json"
    assert main(base + ["--backend", "cpu", "--budget", "1", "--size-limit", "20000",
                        "-q", "--log", str(log), "-o", str(tmp_path / "k.cu")]) == 0
    first = json.loads(log.read_text())["candidates"][0]
    o1 = offers[0]
    assert (first["card"], first["site"]) == (o1["card"], o1["site"])
    assert first["options"] == {n: v["default"] for n, v in o1["options"].items()}
    capsys.readouterr()
    assert main(base + ["--menu"]) == 0
    text = capsys.readouterr().out
    assert f"{len(offers)} offer(s):" in text and f"{len(refused)} left out:" in text
    assert f"first {first['spec']}" in text
    # the tuning cards (--tune-last) are marked, and only they
    from kltrans.optimize.retrieve import small_effect

    tuning = {c.id for c in load_library(SKILLS) if small_effect(c.data)}
    assert any(o["tuning"] for o in offers) and not all(o["tuning"] for o in offers)
    assert all(o["tuning"] == (o["card"] in tuning) for o in offers)
    assert text.count("a tuning card (--tune-last: after the others)") == \
        sum(o["tuning"] for o in offers)
    # usage errors: nothing to write, and no menu for the baselines
    for extra, msg in ((["-o", str(tmp_path / "x.cu")], "-o does not go with it"),
                       (["--strategy", "blind"], "--menu shows the skills strategy's menu")):
        assert main(base + ["--menu"] + extra) == 2
        assert msg in capsys.readouterr().err
    assert not (tmp_path / "x.cu").exists()


def test_starting_kernel_must_pass_the_gate(tmp_path):
    bad = tmp_path / "naive.cu"
    bad.write_text(open(os.path.join(HELD, "gelu", "naive.cu")).read().replace(
        "0.5f", "0.25f"))
    with pytest.raises(OptimizeError, match="does not pass the gate"):
        run(OptimizeOptions(str(bad), os.path.join(HELD, "gelu"), skills=SKILLS, corpus=CORPUS,
                            backend="cpu", budget=2, progress=False, size_limit=20000))


def test_experiment_runs_every_strategy_through_the_executor(tmp_path):
    out = tmp_path / "res"
    md = tmp_path / "RESULTS.md"
    rc = main(["experiment", CORPUS, "--skills", SKILLS, "--only", "gelu", "reduce-sum",
               "--budget", "2", "--backend", "cpu", "--size-limit", "20000", "--jobs", "2",
               "--out", str(out), "--results", str(md), "-q"])
    assert rc == 0
    doc = json.loads((out / "experiment.json").read_text())
    runs = {(r["target"], r["strategy"]) for r in doc["runs"]}
    assert runs == {(t, s) for t in ("gelu", "reduce-sum") for s in ("skills", "blind", "memory")}
    assert all(r["ok"] and r["final"]["evaluations"] <= 2 for r in doc["runs"])
    # leave-one-workload-out: reduce-sum (a corpus workload) never used its own cards
    rs = next(r for r in doc["runs"] if r["target"] == "reduce-sum" and r["strategy"] == "skills")
    assert rs["kind"] == "corpus" and rs["library"]["excluded_workloads"] == ["reduce-sum"]
    own_only = {c.id for c in load_library(SKILLS) if c.workloads == ["reduce-sum"]}
    assert own_only and not own_only & set(rs["library"]["cards"])
    gs = next(r for r in doc["runs"] if r["target"] == "gelu" and r["strategy"] == "skills")
    assert own_only <= set(gs["library"]["cards"])  # held out: every card
    assert {"corpus/skills", "heldout/skills"} <= set(doc["aggregate"])
    text = md.read_text()
    assert "| reduce-sum | skills |" in text and (tmp_path / "RESULTS_speedup.svg").exists()


def test_experiment_roots_start_from_the_lineage_naive_end(tmp_path):
    """--roots: a corpus workload also starts from its lineage's naive end (W@root); with
    ``own`` its own lineage's cards are offered too, with ``loo`` they are not."""
    from kltrans.optimize.experiment import (
        baseline_groups,
        lineage_bench_size,
        lineage_root,
        targets,
    )

    tg = targets(CORPUS, heldout=False, own=False, only=["reduce-sum"], roots="own")
    [t] = tg
    assert t["name"] == "reduce-sum@root+own" and t["kind"] == "root-own"
    assert t["naive"] == lineage_root(os.path.join(CORPUS, "reduce-sum"))
    assert t["naive"].endswith("-naive.cu") and os.sep + "lineage" + os.sep in t["naive"]
    assert lineage_root(str(tmp_path)) is None  # no lineage
    # a root is timed where its walk timed it: scan's at 2^18 (its states near the naive end
    # are quadratic), the others at their workload's bench size
    [sc] = targets(CORPUS, heldout=False, own=False, only=["scan"], roots="loo")
    assert sc["bench_size"] == {"n": 262144} == lineage_bench_size(os.path.join(CORPUS, "scan"))
    assert "bench_size" not in t and lineage_bench_size(str(tmp_path)) is None
    both = targets(CORPUS, heldout=False, only=["reduce-sum"], roots="loo")
    assert [(x["name"], x["kind"]) for x in both] == [("reduce-sum", "corpus"),
                                                      ("reduce-sum@root", "root")]
    out = tmp_path / "res"
    for roots, excluded in (("own", []), ("loo", ["reduce-sum"])):
        rc = main(["experiment", CORPUS, "--skills", SKILLS, "--only", "reduce-sum",
                   "--no-corpus", "--no-heldout", "--roots", roots, "--strategies", "skills",
                   "--budget", "1", "--backend", "cpu", "--size-limit", "20000",
                   "--out", str(out / roots), "-q"])
        assert rc == 0
        doc = json.loads((out / roots / "experiment.json").read_text())
        [r] = doc["runs"]
        assert r["target"] == ("reduce-sum@root+own" if roots == "own" else "reduce-sum@root")
        assert r["library"]["excluded_workloads"] == excluded
        assert f"{'root-own' if roots == 'own' else 'root'}/skills" in doc["aggregate"]
    # both at once: two targets from one kernel, timed once for their baselines
    two = targets(CORPUS, heldout=False, own=False, only=["reduce-sum", "scan"],
                  roots=["loo", "own"])
    assert [(x["name"], x["kind"]) for x in two] == [
        ("reduce-sum@root", "root"), ("reduce-sum@root+own", "root-own"),
        ("scan@root", "root"), ("scan@root+own", "root-own")]
    groups = baseline_groups(two, {"scan@root": {"naive": {"ok": True, "ms": 1.0}}})
    assert sorted(groups.values()) == [["reduce-sum@root", "reduce-sum@root+own"],
                                       ["scan@root+own"]]
    assert list(groups)[0][0] == lineage_root(os.path.join(CORPUS, "reduce-sum"))
    own_only = {c.id for c in load_library(SKILLS) if c.workloads == ["reduce-sum"]}
    runs = {k: json.loads((out / k / "experiment.json").read_text())["runs"][0] for k in ("own", "loo")}
    assert own_only <= set(runs["own"]["library"]["cards"])
    assert not own_only & set(runs["loo"]["library"]["cards"])


def test_experiment_resumes_and_merges(tmp_path):
    a, b, m = tmp_path / "a", tmp_path / "b", tmp_path / "m"
    base = ["experiment", CORPUS, "--skills", SKILLS, "--budget", "1", "--backend", "cpu",
            "--size-limit", "20000", "--strategies", "skills", "--no-corpus", "-q"]
    assert main(base + ["--only", "gelu", "--out", str(a)]) == 0
    kept = json.loads((a / "experiment.partial.json").read_text())
    assert [(r["target"], r["strategy"]) for r in kept["runs"]] == [("gelu", "skills")]
    # a resumed experiment recomputes nothing it has: the kept run comes back unchanged
    kept["runs"][0]["seconds"] = -1.0
    (a / "experiment.partial.json").write_text(json.dumps(kept))
    assert main(base + ["--only", "gelu", "--out", str(a), "--resume"]) == 0
    assert json.loads((a / "experiment.json").read_text())["runs"][0]["seconds"] == -1.0
    assert main(base + ["--only", "swiglu", "--out", str(b)]) == 0
    assert main(["experiment", "--merge", str(a / "experiment.json"), str(b / "experiment.json"),
                 "--out", str(m), "-q"]) == 0
    doc = json.loads((m / "experiment.json").read_text())
    assert sorted(r["target"] for r in doc["runs"]) == ["gelu", "swiglu"]
    assert doc["aggregate"]["heldout/skills"]["targets"] == 2
    # merging the merged file with one of its inputs again counts that input once
    walls = [json.loads((d / "experiment.json").read_text())["wall_seconds"] for d in (a, b)]
    assert doc["wall_seconds"] == pytest.approx(sum(walls), abs=0.11)
    m2 = tmp_path / "m2"
    assert main(["experiment", "--merge", str(m / "experiment.json"), str(b / "experiment.json"),
                 "--out", str(m2), "-q"]) == 0
    again = json.loads((m2 / "experiment.json").read_text())
    assert again["wall_seconds"] == doc["wall_seconds"]
    assert again["merged_from"] == doc["merged_from"] and len(doc["merged_from"]) == 2


def test_menu_falls_back_to_declared_defaults_where_evidence_values_fail(tmp_path):
    """add-launch-bounds' evidence (taken from the experts' own block sizes) does not hold
    on gelu's naive kernel; the pass's declared defaults do, and the offer leads with them."""
    from kltrans.optimize.retrieve import configured, option_choices
    from kltrans.passes.facts import Context
    from kltrans.passes.registry import get_pass
    from kltrans.syntax import parse

    path = os.path.join(HELD, "gelu", "naive.cu")
    unit = parse(open(path, "rb").read(), path)
    ctx = Context.from_strings(("no_alias(*)", "aligned(*,16)"), None, False, "gelu_naive")
    [card] = [c for c in load_library(SKILLS) if c.id == "add-launch-bounds"]
    cls = get_pass(card.pass_name)
    evidence = configured(cls, {c.name: c.default for c in option_choices(cls, card.data)})
    [site] = evidence.sites(unit, ctx)
    assert not all(v.holds for _, v in evidence.check(site, ctx))  # the fallback is needed
    from kltrans.workload.spec import load_workload

    target = workload_profile(load_workload(os.path.join(HELD, "gelu")))
    menu = build_menu(unit, ctx, [card], target, {})
    assert len(menu) == 1
    assert {o.name: o.default for o in menu[0].options} == cls().option_values()


def test_summary_takes_expert_fraction_and_vendor_ratio_from_the_target_baseline():
    """GPU runs are timed against the naive kernel; the expert is timed against the naive
    kernel once per target, and the fraction of expert speed is the ratio of the two."""
    from kltrans.optimize.experiment import summarize

    def run(target, strategy, timing, accepted=()):
        return {"ok": True, "target": target, "kind": "corpus", "strategy": strategy,
                "seed": 0, "termination": {"kind": "budget"},
                "final": {"evaluations": 5, "accepted": len(accepted), "rejected": 3,
                          "speedup_vs_start": 2.0 if accepted else 1.0},
                "candidates": [{"verdict": "rejected", "stage": "compile"},
                               {"verdict": "rejected", "stage": "correct"},
                               {"verdict": "rejected", "stage": "profile"},
                               {"verdict": "accepted", "stage": None}],
                "accepted": list(accepted), "timing": timing}

    runs = [dict(run("w", "skills", {"naive": {"ok": True, "ms": 8.0, "final_ms": 4.0,
                                               "speedup_median": 2.0}},
                     [{"evaluation": 2, "speedup_vs_start": 1.9, "spec": "p"}]),
                 library={"catalogue": True, "unproven": True}),
            run("w", "blind", {"naive": {"ok": True, "identical": True,
                                         "speedup_median": 1.0}})]
    base = {"w": {"target": "w", "vendor": {"ms": 2.0},
                  "expert": {"ok": True, "naive_ms": 8.0, "expert_ms": 1.0,
                             "speedup_median": 8.0}}}
    rows = {r["strategy"]: r for r in summarize(runs, base)["rows"]}
    assert rows["skills"]["expert_fraction"] == pytest.approx(0.25)
    assert rows["skills"]["over_vendor"] == pytest.approx(0.5)      # 2 ms / 4 ms
    assert rows["skills"]["evals_to_90"] == 2
    # of the 3 wasted, 2 failed the gate (compile, correct); the other was not faster
    assert rows["skills"]["wasted"] == 3 and rows["skills"]["failed"] == 2
    assert rows["blind"]["speedup"] == 1.0                          # nothing accepted
    assert rows["blind"]["expert_fraction"] == pytest.approx(0.125)
    assert rows["blind"]["over_vendor"] == pytest.approx(0.25)      # 2 ms / 8 ms (naive)
    # same-code candidates are summed per strategy, and unknown (not zero) where a run
    # predates the rule
    assert summarize(runs, base)["aggregate"]["corpus/skills"]["same_code"] is None
    counted = [dict(r, final=dict(r["final"], same_code=k)) for r, k in zip(runs, (4, 1))]
    agg = summarize(counted, base)["aggregate"]
    assert agg["corpus/skills"]["same_code"] == 4 and agg["corpus/blind"]["same_code"] == 1
    # without a baseline there is no fraction, rather than a made-up one
    assert summarize(runs, {})["rows"][0]["expert_fraction"] is None
    # a held-out target (no expert): the naive kernel's own time stands for a run that
    # accepted nothing
    held = [dict(runs[1], target="h", kind="heldout")]
    row = summarize(held, {"h": {"vendor": {"ms": 1.0}, "naive": {"ok": True, "ms": 4.0}}})["rows"][0]
    assert row["over_vendor"] == pytest.approx(0.25) and row["expert_fraction"] is None


def test_summary_labels_cards_only_runs_and_compares_on_common_targets():
    from kltrans.optimize.experiment import summarize

    def run(target, strategy, sp, library=None):
        return {"ok": True, "target": target, "kind": "heldout", "strategy": strategy,
                "seed": 0, "termination": {"kind": "budget"}, "library": library,
                "final": {"evaluations": 5, "accepted": 1, "rejected": 4,
                          "speedup_vs_start": sp}, "accepted": [],
                "timing": {"naive": {"ok": True, "speedup_median": sp}}}

    runs = [run("a", "skills", 4.0, {"catalogue": True, "unproven": True}),
            run("a", "skills", 3.5, {"catalogue": True}),  # from before unproven offers
            run("a", "skills", 2.0, {"catalogue": False}), run("a", "blind", 3.0),
            run("b", "skills", 1.0, {}), run("b", "blind", 9.0)]  # b: no catalogue run
    s = summarize(runs, {})
    assert {r["strategy"] for r in s["rows"]} == {"skills", "skills-proven", "skills-cards",
                                                  "blind"}
    assert agg_of(s, "heldout/skills-proven") == pytest.approx(3.5)
    agg = s["aggregate"]
    # every strategy is averaged over the targets they all have: a only
    assert agg["heldout/skills"]["geomean_speedup"] == pytest.approx(4.0)
    assert agg["heldout/blind"]["geomean_speedup"] == pytest.approx(3.0)
    assert agg["heldout/blind"]["targets"] == 1 and agg["heldout/blind"]["left_out"] == ["b"]
    # a resumed experiment keys its items the way the runs are labelled: a cards-only run
    # kept from before is never taken for a catalogue-tail one
    from kltrans.optimize.experiment import _key

    assert _key({"target": "a", "strategy": "skills", "seed": 0}) == ("a", "skills", 0)
    assert _key({"target": "a", "strategy": "skills", "seed": 0, "catalogue": False}) == \
        ("a", "skills-cards", 0)
    assert _key({"target": "a", "strategy": "skills", "seed": 0, "unproven": False}) == \
        ("a", "skills-proven", 0)


def agg_of(summary, key):
    return summary["aggregate"][key]["geomean_speedup"]


def _reduce_sum_menu(catalogue):
    from kltrans.lineage.walk import WORKLOAD_FACTS, tolerance_facts
    from kltrans.optimize.retrieve import build_menu, corpus_profiles, load_library, \
        workload_profile
    from kltrans.passes.facts import Context
    from kltrans.syntax import parse
    from kltrans.workload.spec import load_workload

    wl = load_workload(os.path.join(ROOT, "corpus", "reduce-sum"))
    path = wl.kernel_path("naive")
    unit = parse(open(path, "rb").read(), path)
    ctx = Context.from_strings(tuple(list(WORKLOAD_FACTS) + tolerance_facts(wl)), None, False,
                               None)
    cards = load_library(os.path.join(ROOT, "skills"), [wl.name])  # leave-one-out
    rejected: list = []
    menu = build_menu(unit, ctx, cards, workload_profile(wl),
                      corpus_profiles(os.path.join(ROOT, "corpus")), rejected, catalogue)
    return menu, rejected


def test_catalogue_tail_follows_the_cards_with_preconditions_checked():
    menu, rejected = _reduce_sum_menu(True)
    kinds = [o.card.startswith("catalogue:") for o in menu]
    assert any(kinds) and kinds == sorted(kinds)  # every card before the tail
    names = {o.card for o in menu}
    # block-reduce-atomic's only card is reduce-sum's own, left out: the tail offers it
    assert "catalogue:block-reduce-atomic" in names
    # a tail pass whose precondition fails is not offered, and says why
    why = [r for r in rejected if r["card"] == "catalogue:warp-aggregate-atomics"]
    assert why and why[0]["precondition"] == "integer-add"
    assert "catalogue:warp-aggregate-atomics" not in names
    cards_only, _ = _reduce_sum_menu(False)
    assert cards_only and not any(o.card.startswith("catalogue:") for o in cards_only)


def test_menu_tries_other_option_values_where_the_defaults_fail():
    """softmax's lineage root, its own cards left out: row-per-warp is a catalogue pass
    with no evidence. Its default group=32 fails there (the row form takes a run-time
    group size); group=cols holds, so it is offered with group=cols first."""
    from kltrans.gate.run import pick_kernel
    from kltrans.optimize.experiment import lineage_root
    from kltrans.optimize.retrieve import corpus_profiles
    from kltrans.optimize.search import search_context
    from kltrans.syntax import parse
    from kltrans.workload.spec import load_workload

    wd = os.path.join(CORPUS, "softmax")
    path = lineage_root(wd)
    wl = load_workload(wd)
    unit = parse(open(path, "rb").read(), path)
    kernel, _ = pick_kernel(wl, path, unit, None)
    _, ctx = search_context(OptimizeOptions(path, wd), wl, kernel)
    menu = build_menu(unit, ctx, load_library(SKILLS, ["softmax"]), workload_profile(wl),
                      corpus_profiles(CORPUS), [], True, True)
    rpw = [o for o in menu if o.card == "catalogue:row-per-warp"]
    assert rpw and rpw[0].option("group").default == "cols"
    assert rpw[0].option("group").values[0] == "cols" and not rpw[0].unproven


def test_evidence_values_naming_what_the_target_lacks_are_dropped():
    menu, _ = _reduce_sum_menu(False)
    lb = next(o for o in menu if o.card == "add-launch-bounds")
    values = lb.option("max-threads").values
    # other kernels' macros (SMX_THREADS, TR_BX*TR_BY) are not choices for this kernel
    assert values and all(v == "auto" or isinstance(v, int) for v in values), values
    assert lb.option("max-threads").tune and not lb.option("place").tune


def test_builtin_filler_tries_what_an_earlier_state_found_no_faster_last():
    from kltrans.optimize.fillers import full_options
    from kltrans.optimize.menu import lost_key

    menu = [_offer(1, "a", (4, 2)), _offer(2, "b", (1, 8))]
    # card a with factor 4, at this very site text, lost in an earlier kernel state
    lost = frozenset({lost_key("a", full_options(menu[0], {"factor": 4}), menu[0].snippet)})
    f = BuiltinFiller()
    tried, seen = [], []
    while (p := f.pick("", menu, tried, lost)) is not None:
        o = next(x for x in menu if x.id == p.offer)
        tried.append({"card": o.card, "site": o.site, "options": p.options})
        seen.append((o.card, p.options["factor"]))
    # every fresh pick of both rounds first; the earlier loser still gets its turn, last
    assert seen == [("b", 1), ("a", 2), ("b", 8), ("a", 4)]
    # the same options at a different site text are not the same pick
    other = [_offer(1, "a", (4, 2))]
    other[0] = type(other[0])(**{**other[0].__dict__, "snippet": "while (...)"})
    assert f.pick("", other, [], lost).options["factor"] == 4


def test_search_checks_hardware_preconditions_for_the_gates_architecture():
    """Without --arch the gate compiles for sm_90, and the search checks hardware
    preconditions for it: a pass that needs sm_70 is offered, not left 'unknown'."""
    from kltrans.optimize.retrieve import build_menu, load_library, workload_profile
    from kltrans.optimize.search import OptimizeOptions, search_context
    from kltrans.syntax import parse
    from kltrans.workload.spec import load_workload

    wl = load_workload(os.path.join(ROOT, "corpus", "histogram"))
    path = wl.kernel_path("naive")
    unit = parse(open(path, "rb").read(), path)
    offered = {}
    for arch in (None, "sm_60"):
        _, ctx = search_context(OptimizeOptions(path, wl.path, arch=arch), wl, None)
        rejected: list = []
        menu = build_menu(unit, ctx, load_library(os.path.join(ROOT, "skills"), [wl.name]),
                          workload_profile(wl), {}, rejected, True)
        offered[arch] = {o.card for o in menu}
        why = [r for r in rejected if r["card"] == "catalogue:warp-aggregate-atomics"]
        if arch == "sm_60":
            assert why and why[0]["reason"].startswith("fails")  # known, and too old
    assert "catalogue:warp-aggregate-atomics" in offered[None]
    assert "catalogue:warp-aggregate-atomics" not in offered["sm_60"]


def test_experiment_report_with_notes_and_a_missing_notes_file(tmp_path, capsys):
    from kltrans.cli import main

    raw = os.path.join(ROOT, "bench", "results", "experiment_v1.json")
    notes = tmp_path / "notes.md"
    notes.write_text("## How these runs were made\n\nBy hand.\n")
    out = tmp_path / "out"
    assert main(["experiment", "--merge", raw, "--out", str(out), "--results",
                 str(tmp_path / "R.md"), "--notes", str(notes), "-q"]) == 0
    text = (tmp_path / "R.md").read_text()
    # the headline table first, then the method with the notes' account of the runs
    assert text.index("## Headline") < text.index("## Method") < text.index("By hand.")
    assert main(["experiment", "--merge", raw, "--out", str(out), "--results",
                 str(tmp_path / "R2.md"), "--notes", str(tmp_path / "none.md"), "-q"]) == 2
    assert "none.md: no such file" in capsys.readouterr().err
    assert not (tmp_path / "R2.md").exists()


def test_near_miss_offers_come_last_and_name_their_open_precondition():
    """group_norm's naive kernel writes y[base + i] with base = f(t / G, t % G): the row
    analysis cannot prove rows row-major (unknown, not refuted). With unproven offers
    row-per-warp is offered after every proven offer, naming that one precondition; a site
    where a precondition fails is still never offered; --proven-only leaves it out."""
    from kltrans.lineage.walk import WORKLOAD_FACTS, tolerance_facts
    from kltrans.optimize.retrieve import build_menu, load_library, workload_profile
    from kltrans.passes.facts import Context
    from kltrans.syntax import parse
    from kltrans.workload.spec import load_workload

    wl = load_workload(os.path.join(HELD, "group_norm"))
    path = os.path.join(HELD, "group_norm", "naive.cu")
    unit = parse(open(path, "rb").read(), path)
    ctx = Context.from_strings(tuple(WORKLOAD_FACTS) + tuple(tolerance_facts(wl)), "sm_90", False,
                               "group_norm_naive")
    cards = load_library(os.path.join(ROOT, "skills"))
    rejected: list = []
    menu = build_menu(unit, ctx, cards, workload_profile(wl), {}, rejected, catalogue=True,
                      unproven=True)
    near = [o for o in menu if o.unproven]
    rpw = [o for o in near if o.card == "row-per-warp"]
    assert [o.unproven for o in rpw] == [("row-major",)]
    assert menu[len(menu) - len(near):] == near  # after every proven offer
    assert all(len(o.unproven) == 1 and o.summary["unproven"] == list(o.unproven)
               for o in near)
    assert rpw[0].option("group").default == 32  # the evidence's group=cols fails here
    assert any(r["card"] == "privatize-columns" and r["reason"].startswith("fails")
               for r in rejected)
    assert not any(o.card == "privatize-columns" for o in menu)
    proven = build_menu(unit, ctx, cards, workload_profile(wl), {}, [], catalogue=True)
    assert not any(o.unproven for o in proven) and len(proven) == len(menu) - len(near)


def _record(name: str) -> dict:
    """An H200 record under bench/results."""
    with open(os.path.join(ROOT, "bench", "results", name), encoding="utf-8") as f:
        return json.load(f)


def _results_notes() -> str:
    with open(os.path.join(ROOT, "docs", "results-notes.md"), encoding="utf-8") as f:
        return f.read()


def test_root_runs_in_the_results_notes_are_the_recorded_ones():
    """The lineage-root table of docs/results-notes.md is the H200 runs' record
    (bench/results/experiment_best_roots.json, and experiment_roots.json for the first
    step rule): speedup, the expert's speedup and the fraction alike."""
    best, first = _record("experiment_best_roots.json"), _record("experiment_roots.json")
    notes = _results_notes()
    rows = notes.splitlines()
    firsts = {r["target"]: r["expert_fraction"] for r in first["rows"]}
    assert len(best["rows"]) == 7 and set(firsts) <= {r["target"] for r in best["rows"]}

    def fr(x):
        return f"{x:.2f}" if x >= 0.01 else f"{x:.3f}"

    for r in best["rows"]:
        expert = best["vendors"][r["target"]]["expert"]["speedup_median"]
        assert abs(r["speedup"] / expert - r["expert_fraction"]) < 1e-9
        ex = f"{expert:.2f}" if expert < 10 else f"{expert:,.1f}"
        f1 = fr(firsts[r["target"]]) if r["target"] in firsts else ""
        line = (f"| {r['target']} | {r['speedup']:,.2f}× | {ex}× | "
                f"{fr(r['expert_fraction'])} | {f1} | ")
        assert any(x.strip().startswith(line) for x in rows), line


def test_default_root_runs_in_the_results_notes_are_the_recorded_ones():
    """The table of the seven lineage roots under the default in docs/results-notes.md is
    the H200 record (bench/results/experiment_default_roots.json) beside the --select best
    record (experiment_best_roots.json), and its geometric means are the record's."""
    dflt, best = _record("experiment_default_roots.json"), _record("experiment_best_roots.json")
    notes = _results_notes()
    rows = notes.splitlines()
    bests = {r["target"]: r["expert_fraction"] for r in best["rows"]}
    assert len(dflt["rows"]) == 7 and set(bests) == {r["target"] for r in dflt["rows"]}

    def fr(x):
        return f"{x:.2f}" if x >= 0.01 else (f"{x:.3f}" if x >= 0.005 else f"{x:.4f}")

    for r in dflt["rows"]:
        line = (f"| {r['target']} | {r['speedup']:,.2f}× | {fr(r['expert_fraction'])} | "
                f"{fr(bests[r['target']])} | ")
        assert any(x.startswith(line) for x in rows), line
    a = dflt["aggregate"]["root/skills+best+enablers+t1"]
    assert a["targets"] == 7 and a["seeds"] == [0]
    assert (f"Geomean fraction over the 7 roots: {a['geomean_expert_fraction']:.3f}" in notes
            and f"speedup over the roots {a['geomean_speedup']:.2f}×" in notes
            and f"{a['wasted']} of {a['evaluations']} evaluations wasted" in notes)


def test_experiment_queues_baselines_with_the_runs(tmp_path, monkeypatch):
    """On a GPU the baselines go first in the same queue as the runs, not before them: a
    slow baseline (scan's root at 2^28 outlasted two device calls and no run could start)
    holds one slot. Each result is kept as it ends, a shared baseline under every target
    that shares it. The GPU tasks cannot run here; the queue is handed to a stand-in that
    ends the runs first and the baseline last, and records what was kept when."""
    import kltrans.optimize.experiment as ex

    seen = {}

    def fake_map(fn, items, args, backend, keep=None):
        assert fn is ex.experiment_task and backend == "cuda"
        seen["items"] = items
        kinds = [it.get("task", "run") for it in items]
        assert kinds == ["baseline"] + ["run"] * (len(items) - 1)
        out = [None] * len(items)
        for i in list(range(1, len(items))) + [0]:  # the baseline ends last
            it = items[i]
            if i == 0:
                r = {"target": it["target"]["name"], "naive": {"ok": True, "ms": 9.6}}
            else:
                r = {"ok": True, "target": it["target"]["name"], "kind": it["target"]["kind"],
                     "strategy": it["strategy"], "seed": it["seed"], "final": {},
                     "accepted": [], "candidates": [], "library": {}, "timing": {}}
            out[i] = r
            keep(i, r)
            part = json.loads((tmp_path / "experiment.partial.json").read_text())
            seen.setdefault("kept", []).append((len(part["runs"]), sorted(part["baselines"])))
        return out

    monkeypatch.setattr(ex, "_map", fake_map)
    monkeypatch.setattr(ex, "_write", lambda args, out, meta, runs, vendors: {
        "runs": runs, "vendors": vendors})
    rc_doc = ex.run_experiment(ex_args(tmp_path, only=["scan"], roots=["loo", "own"]))
    assert [it["target"]["name"] for it in seen["items"][1:]] == ["scan@root", "scan@root+own"]
    assert seen["items"][0]["target"]["bench_size"] == {"n": 262144}
    # each run keeps its verdicts in OUT/checkpoints until it is kept (then the folder goes);
    # on a GPU the skills strategy moves to the best of each round, times enablers and
    # gates an offer once per state, unless told otherwise (search_defaults)
    assert (seen["items"][1]["select"], seen["items"][1]["enablers"],
            seen["items"][1]["offer_tries"]) == ("best", True, 1)
    assert seen["items"][1]["checkpoint"] == str(tmp_path / "checkpoints" /
                                                 "scan@root-skills+best+enablers+t1-0.json")
    assert not (tmp_path / "checkpoints").exists()
    assert seen["kept"] == [(1, []), (2, []), (2, ["scan@root", "scan@root+own"])]
    assert [r["target"] for r in rc_doc["runs"]] == ["scan@root", "scan@root+own"]
    assert rc_doc["vendors"]["scan@root+own"]["target"] == "scan@root+own"


def ex_args(out, only, roots):
    import argparse

    return argparse.Namespace(
        out=str(out), notes=None, merge=None, corpus=CORPUS, skills=SKILLS, backend="cuda",
        no_heldout=True, no_corpus=True, only=only, roots=roots, strategies=["skills"],
        seeds=[0], budget=30, size_limit=None, trials=5, trial_ms=100.0, catalogue=True,
        unproven=True, resume=False, quiet=True, cluster=None, jobs=None, results=None)


@pytest.mark.slow  # three searches gated on the CPU emulator: once, on 3.11 (the usage
# errors and "made for other inputs" stay on every Python: the test after this one)
def test_a_search_resumes_from_its_checkpoint(tmp_path):
    """--checkpoint: every verdict is kept as it is reached; a run cut short and started
    again replays the verdicts it has (no gate) and then goes on, to the same trajectory
    as a run never cut short. A checkpoint made for other inputs is not replayed."""
    ck = tmp_path / "ck.json"
    whole = run(_opts("gelu", checkpoint=str(ck)))
    kept = json.loads(ck.read_text())
    assert "start" in kept["verdicts"] and len(kept["verdicts"]) == whole["final"]["evaluations"] + 1
    assert "replayed" not in whole["final"]
    # cut short after the start and two candidates: what a killed call leaves
    first3 = dict(list(kept["verdicts"].items())[:3])
    ck.write_text(json.dumps({"key": kept["key"], "verdicts": first3}))
    again = run(_opts("gelu", checkpoint=str(ck)))
    assert again["final"]["replayed"] == 3
    assert sum(bool(c.get("replayed")) for c in again["candidates"]) == 2

    def path(doc):
        return [(c["spec"], c["site"], c["verdict"], c.get("after")) for c in doc["candidates"]]

    assert path(again) == path(whole) and again["final"]["hash"] == whole["final"]["hash"]
    now = json.loads(ck.read_text())["verdicts"]  # every verdict again, the replayed as kept
    assert list(now) == list(kept["verdicts"]) and all(now[k] == v for k, v in first3.items())
    # another seed is another run: nothing replayed, and its own verdicts replace the file
    other = run(_opts("gelu", checkpoint=str(ck), seed=1))
    assert "replayed" not in other["final"] and json.loads(ck.read_text())["key"] != kept["key"]


def test_optimize_checkpoint_usage_errors(tmp_path, capsys):
    d = os.path.join(HELD, "gelu")
    k = os.path.join(d, "naive.cu")
    ck = tmp_path / "ck.json"
    args = ["optimize", k, "--workload", d, "--backend", "cpu", "--budget", "1",
            "--size-limit", "20000", "--checkpoint", str(ck), "-o", str(tmp_path / "o.cu")]
    assert main(args) == 0
    assert main(args) == 0 and "resuming, 2 gate verdict(s) kept there" in capsys.readouterr().err
    assert main(args + ["--seed", "3"]) == 0
    assert "made for other inputs; not replayed" in capsys.readouterr().err
    rc = main(["optimize", k, "--workload", d, "--checkpoint", k, "--backend", "cpu"])
    assert rc == 2 and "would overwrite the input kernel" in capsys.readouterr().err
    rc = main(["optimize", k, "--workload", d, "--backend", "cpu",
               "--checkpoint", str(tmp_path / "no" / "ck.json")])
    assert rc == 2 and "--checkpoint no such directory" in capsys.readouterr().err


def test_a_checkpoint_keeps_no_crash_or_timeout(tmp_path):
    """The call that cuts a run short interrupts its gate workers too: a crash or a
    timeout is gated again on resume, never replayed as the candidate's verdict."""
    from kltrans.optimize.search import _Checkpoint

    ck = _Checkpoint(str(tmp_path / "ck.json"), {"k": 1})
    crash = {"gate": {"ok": False, "stages": [{"stage": "compile", "status": "fail",
                                               "reason": "crash: the worker exited with code -2"}]}}
    late = {"gate": {"ok": True, "stages": []},
            "paired": {"ok": False, "reason": "timeout: the worker did not finish within 300 s"}}
    wrong = {"gate": {"ok": False, "stages": [{"stage": "correct", "status": "fail",
                                               "reason": "out: max abs error 3.1"}]}}
    for k, v in (("a>b", crash), ("a>c", late), ("a>d", wrong)):
        ck.put(k, v)
    assert list(json.loads((tmp_path / "ck.json").read_text())["verdicts"]) == ["a>d"]
    again = _Checkpoint(str(tmp_path / "ck.json"), {"k": 1})
    assert again.get("a>b") is None and again.get("a>d") == wrong and again.replayed == 1


def test_an_interrupted_experiment_stops_at_once_and_resumes_from_its_checkpoints(tmp_path):
    """SIGINT (Ctrl-C, or a device call's time limit) ends the experiment now, not when its
    searches finish: the worker processes and their gate processes are killed, it exits
    130, and what each cut-short run had gated is in OUT/checkpoints. --resume then
    replays those verdicts and completes the runs."""
    import signal
    import time

    psutil = pytest.importorskip("psutil")
    out = tmp_path / "exp"
    cmd = [sys.executable, "-m", "kltrans", "experiment", CORPUS, "--skills", SKILLS,
           "--only", "swiglu", "--no-corpus", "--strategies", "skills", "--budget", "8",
           "--backend", "cpu", "--size-limit", "20000", "--jobs", "1", "--out", str(out), "-q"]
    # SIGINT as a terminal delivers it, even where pytest itself runs in the background of
    # a non-interactive shell (which starts it with SIGINT ignored, inherited by children)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    ck = out / "checkpoints" / "swiglu-skills-0.json"
    deadline = time.monotonic() + 240
    n = 0
    while time.monotonic() < deadline and p.poll() is None:
        try:
            n = len(json.loads(ck.read_text())["verdicts"])
        except (OSError, ValueError):
            n = 0
        if n >= 3:
            break
        time.sleep(0.2)
    assert p.poll() is None and n >= 3, (n, p.poll())
    kids = psutil.Process(p.pid).children(recursive=True)
    assert kids  # the slot's worker process (and maybe a gate worker)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)  # a guard against a hang, not a measurement
    assert p.returncode == 130 and "interrupted" in err, err[-2000:]
    gone, alive = psutil.wait_procs(kids, timeout=10)
    assert not alive, [k.cmdline() for k in alive]
    kept = len(json.loads(ck.read_text())["verdicts"])
    # cut short: the run (five more evaluations, seconds each) was not finished, so not kept
    assert kept >= 3
    assert not (out / "experiment.json").exists()
    partial = out / "experiment.partial.json"
    assert not partial.exists() or not json.loads(partial.read_text())["runs"]
    rc = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert rc.returncode == 0, rc.stderr[-2000:]
    doc = json.loads((out / "experiment.json").read_text())
    [r] = doc["runs"]
    assert r["ok"] and r["final"]["replayed"] == kept
    assert doc["rows"][0]["replayed"] == kept  # the report says the run was resumed
    assert not (out / "checkpoints").exists()


SAME_CODE_KERNEL = """// kltrans: launch gelu_naive grid=ceil_div(n, 256) block=256
extern "C" __global__ void gelu_naive(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float c = 0.0f;
        for (int k = 0; k < 4; ++k) {
            c += 0.25f;
        }
        y[i] = 0.5f * v * (c + erff(v * 0.70710678118654752f));
    }
}
"""


def test_a_rewrite_to_the_same_machine_code_is_no_evaluation(tmp_path):
    """A candidate that compiles to the current kernel's cubin (here a pragma unroll of a
    4-trip loop NVRTC unrolls anyway, and an __ldg hint on a const __restrict__ pointer)
    cannot change results or speed: it is `same-code`, costs no evaluation, and is never
    accepted on timing noise. What it rests on, checked here with NVRTC: the cubin holds
    no text, so only a change to the machine code changes it."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from kltrans.gate.compile import compile_source

    def code(src):
        r = compile_source(src, "k.cu")
        assert r.ok, r.log
        return r.cubin

    loop = "        for (int k = 0; k < 4; ++k) {"
    assert code(SAME_CODE_KERNEL) == code(SAME_CODE_KERNEL.replace(
        loop, "        #pragma unroll\n" + loop).replace("float c", "float  c  /* same */"))
    assert code(SAME_CODE_KERNEL) != code(SAME_CODE_KERNEL.replace("0.25f", "0.5f"))

    k = tmp_path / "k.cu"
    k.write_text(SAME_CODE_KERNEL)
    doc = run(OptimizeOptions(str(k), os.path.join(HELD, "gelu"), skills=SKILLS, corpus=CORPUS,
                              backend="cpu", budget=8, progress=False, size_limit=20000))
    same = [c for c in doc["candidates"] if c["verdict"] == "same-code"]
    assert same and all("evaluation" not in c for c in same)
    assert doc["final"]["same_code"] == len(same)
    gated = [c for c in doc["candidates"] if "evaluation" in c]
    assert [c["evaluation"] for c in gated] == list(range(1, doc["final"]["evaluations"] + 1))
    assert any(c["spec"] == "unroll{factor=full,style=pragma}" for c in same)


def test_headline_table_in_the_results_notes_is_the_recorded_one():
    """The geometric means quoted in docs/results-notes.md are those of the H200 records:
    the first table the first headline run's (bench/results/experiment_headline.json),
    the --select best table those of the merged record the report is made from
    (bench/results/experiment.json: the corpus skills and memory rows there are the
    re-runs with the re-extracted cards)."""
    agg = _record
    head, doc = agg("experiment_headline.json"), agg("experiment.json")
    notes = _results_notes()
    for kind, label in (("corpus", "corpus"), ("heldout", "held-out")):
        cells = " | ".join(f"{head['aggregate'][f'{kind}/{s}']['geomean_speedup']:.2f}×"
                           for s in ("skills", "blind", "memory"))
        line = f"| {label}, geomean speedup over naive | {cells} |"
        assert line in notes, line
        g = {s: f"{doc['aggregate'][f'{kind}/{s}']['geomean_speedup']:.2f}×"
             for s in ("skills", "skills+best", "blind", "memory")}
        star = "\\*" if kind == "heldout" else ""  # made before the re-walk (a footnote)
        line = (f"| {label}, geomean speedup over naive | {g['skills']}{star} | "
                f"**{g['skills+best']}** | {g['blind']} | {g['memory']}{star} |")
        assert line in notes, line
    # the variants' table (--offer-tries, --enablers, --patience and the adopted pair)
    cols = ("skills+best", "skills+best+t1", "skills+best+enablers", "skills+best+p10",
            "skills+best+enablers+t1", "blind", "memory")
    a = {s: doc["aggregate"][f"corpus/{s}"] for s in cols}
    geo = [f"{a[s]['geomean_speedup']:.2f}×" for s in cols]
    geo[4] = f"**{geo[4]}**"
    assert f"| geomean speedup over naive | {' | '.join(geo)} |" in notes
    waste = [f"{a[s]['wasted']} / {a[s]['evaluations']}" for s in cols]
    waste[4] = f"**{waste[4]}**"
    assert f"| wasted / spent | {' | '.join(waste)} |" in notes
    h = doc["aggregate"]["heldout/skills+best+t1"]
    assert f"{h['geomean_speedup']:.2f}× (skills+best 3.47×" in notes
    # the default on the held-out set, and the corpus's second seed (a record of its own)
    cols = ("skills+best", "skills+best+t1", "skills+best+enablers+t1", "blind", "memory")
    a = {s: doc["aggregate"][f"heldout/{s}"] for s in cols}
    geo = [f"{a[s]['geomean_speedup']:.2f}×" for s in cols]
    waste = [f"{a[s]['wasted']} / {a[s]['evaluations']}" for s in cols]
    geo[2], waste[2] = f"**{geo[2]}**", f"**{waste[2]}**"
    assert f"| geomean speedup over naive | {' | '.join(geo)} |" in notes
    assert f"| wasted / spent | {' | '.join(waste)} |" in notes
    s1 = agg("experiment_seed1_corpus.json")["aggregate"]
    cols = ("skills+best+enablers+t1", "blind", "memory")
    assert all(s1[f"corpus/{s}"]["seeds"] == [1] and s1[f"corpus/{s}"]["targets"] == 7
               for s in cols)
    cells = " | ".join(f"{doc['aggregate'][f'corpus/{s}']['geomean_speedup']:.2f}×"
                       for s in cols)
    assert f"| seed 0: geomean speedup over naive | {cells} |" in notes
    cells = " | ".join(f"{s1[f'corpus/{s}']['geomean_speedup']:.2f}×" for s in cols)
    assert f"| seed 1: geomean speedup over naive | {cells} |" in notes
    cells = " | ".join(f"{s1[f'corpus/{s}']['wasted']} / {s1[f'corpus/{s}']['evaluations']}"
                       for s in cols)
    assert f"| seed 1: wasted / spent | {cells} |" in notes
    assert f"{h['wasted']} wasted of {h['evaluations']} spent" in notes
    # --tune-last against the default and the baselines, both sets (seed 0), and blind's
    # second held-out seed (a record of its own)
    cols = ("skills+best+enablers+t1", "skills+best+enablers+t1+last", "blind", "memory")
    for kind, name in (("corpus", "corpus"), ("heldout", "held-out")):
        a = {s: doc["aggregate"][f"{kind}/{s}"] for s in cols}
        assert all(x["seeds"] == [0] for x in a.values())
        geo = [f"{a[s]['geomean_speedup']:.2f}×" for s in cols]
        waste = [f"{a[s]['wasted']} / {a[s]['evaluations']}" for s in cols]
        geo[1], waste[1] = f"**{geo[1]}**", f"**{waste[1]}**"
        assert f"| {name}: geomean speedup over naive | {' | '.join(geo)} |" in notes
        assert f"| {name}: wasted / spent | {' | '.join(waste)} |" in notes
    to90 = [", ".join(f"{doc['aggregate'][f'{k}/{s}']['mean_evals_to_90']:.1f}"
                      for k in ("corpus", "heldout")) for s in cols]
    to90[1] = f"**{to90[1]}**"
    assert (f"| evaluations to 90% of the final speed (corpus, held-out) | "
            f"{' | '.join(to90)} |") in notes
    b1 = agg("experiment_seed1_heldout_blind.json")["aggregate"]["heldout/blind"]
    assert (b1["seeds"], b1["targets"]) == ([1], 22)
    assert f"**{b1['geomean_speedup']:.2f}×** (seed 0: 3.37×), with {b1['wasted']} wasted " \
        f"of {b1['evaluations']} and {b1['failed']} failed" in notes
    # --tune-last on seed 1, both sets, against the baselines' seed 1 (records of their own)
    def cell(a, kind):
        return (f"{a['geomean_speedup']:.2f}×" if kind == "geo"
                else f"{a['wasted']} / {a['evaluations']}")

    last = "skills+best+enablers+t1+last"
    c1 = agg("experiment_seed1_tunelast_corpus.json")["aggregate"][f"corpus/{last}"]
    h1 = agg("experiment_seed1_heldout.json")["aggregate"]
    m1 = h1["heldout/memory"]
    h1 = h1[f"heldout/{last}"]
    assert all((x["seeds"], x["targets"]) == ([1], n)
               for x, n in ((c1, 7), (h1, 22), (m1, 22)))
    for kind, name, s0, mine, bl, me in (
            ("corpus", "corpus", doc["aggregate"][f"corpus/{last}"], c1, s1["corpus/blind"],
             s1["corpus/memory"]),
            ("heldout", "held-out", doc["aggregate"][f"heldout/{last}"], h1, b1, m1)):
        for what, label in (("geo", "geomean speedup over naive"), ("waste", "wasted / spent")):
            line = (f"| {name}: {label} | {cell(s0, what)} | **{cell(mine, what)}** | "
                    f"{cell(bl, what)} | {cell(me, what)} |")
            assert line in notes, line
        # the rule of bench/results/tune_last_seed1_plan.txt, as the notes report it
        assert mine["geomean_speedup"] > max(bl["geomean_speedup"], me["geomean_speedup"])
        assert mine["wasted"] < min(bl["wasted"], me["wasted"])
    d1 = agg("experiment_seed1_heldout_default.json")["aggregate"]
    d1 = d1["heldout/skills+best+enablers+t1"]
    assert (d1["seeds"], d1["targets"]) == ([1], 22)
    assert (f"**{d1['geomean_speedup']:.2f}×** (seed 0: 3.37×), with {d1['wasted']} wasted "
            f"of {d1['evaluations']}") in notes
    assert d1["wasted"] > m1["wasted"] and f"wasting {d1['wasted']} there against memory's " \
        f"{m1['wasted']}" in notes
    # both records are runs after the pragma fix: every run has its same-code count (the
    # first two root runs were made before the count was recorded)
    assert all(r.get("same_code") is not None for r in head["rows"] + doc["rows"]
               if r["kind"] != "root" or r["strategy"] != "skills")


def _as_on_a_gpu(monkeypatch):
    """The search runs as on a GPU (the variants' defaults, the timings) while the real CPU
    gate compiles and checks every candidate; the test stands in for the paired timing
    (``search._paired``), which needs a GPU."""
    import kltrans.gate.backends as backends
    import kltrans.optimize.search as search

    real_gate, real_resolve = search._gate, backends.resolve_backend
    monkeypatch.setattr(backends, "resolve_backend",
                        lambda name: "cuda" if name == "auto" else real_resolve(name))
    monkeypatch.setattr(search, "_gate", lambda src, name, wl, kernel, ne, sizes, backend, opts,
                        stages=("compile", "correct"): real_gate(
                            src, name, wl, kernel, ne, sizes, "cpu", opts, stages))


def _hashed_gain(a_src, b_src, *a, **k):
    """A paired timing's stand-in: every candidate faster in every trial, by a gain of its
    own (1.01 to 1.106, from its source's hash)."""
    import hashlib

    g = 1.01 + int(hashlib.sha256(b_src).hexdigest(), 16) % 97 / 1000
    return {"ok": True, "faster": True, "best_ms": 1.0, "candidate_ms": 1 / g,
            "speedup_median": g, "speedup_trials": [g] * 5}


def test_min_gain_turns_a_gain_within_noise_away(tmp_path, monkeypatch):
    """--min-gain X keeps a candidate faster in every paired trial only if its median
    speedup is at least X (on group_norm, a 0.15% l2-prefetch accepted first blocked the
    34x row-per-warp). The paired timing needs a GPU: here a stand-in reports every
    correct candidate 0.5% faster in every trial, and the real CPU gate does the rest."""
    import kltrans.optimize.search as search
    from kltrans.optimize.experiment import _key, label

    # the search sees a GPU ("auto" resolves to cuda); the gate it calls runs on the CPU
    _as_on_a_gpu(monkeypatch)
    monkeypatch.setattr(search, "_paired", lambda *a, **k: {
        "ok": True, "faster": True, "best_ms": 1.0, "candidate_ms": 0.995,
        "speedup_median": 1.005, "speedup_trials": [1.004, 1.005, 1.006, 1.005, 1.005]})
    k = tmp_path / "k.cu"
    k.write_text(SAME_CODE_KERNEL)

    def go(gain):
        return run(OptimizeOptions(str(k), os.path.join(HELD, "gelu"), skills=SKILLS,
                                   corpus=CORPUS, budget=3, progress=False, size_limit=20000,
                                   min_gain=gain))

    anyway = go(1.0)
    assert anyway["accepted"] and anyway["final"]["speedup_vs_start"] > 1.0
    strict = go(1.01)
    assert not strict["accepted"] and strict["final"]["evaluations"] == 3
    timed = [c for c in strict["candidates"] if c.get("stage") == "profile"]
    assert timed and all("less than --min-gain 1.01 (median 1.005)" in c["reason"]
                         for c in timed)
    assert strict["config"]["min_gain"] == 1.01
    with pytest.raises(OptimizeError, match="min-gain"):
        go(0.99)
    # the experiment reports such runs apart, and resumes them apart
    assert label({"strategy": "skills", "min_gain": 1.01,
                  "library": {"catalogue": True, "unproven": True}}) == "skills@1.01"
    it = {"target": "t", "strategy": "blind", "seed": 0}
    assert _key({**it, "min_gain": 1.01}) != _key(it) == ("t", "blind", 0)


def test_select_best_times_the_round_and_moves_to_the_fastest(tmp_path, monkeypatch):
    """--select best keeps timing the state's first round (each offer with its evidence
    values) after a candidate is kept, then moves to the fastest kept; the others are
    `outranked` (wasted, in the experiment's count). --select first moves to the first kept.
    The paired timing needs a GPU: a stand-in gives each candidate its own gain (from its
    source), every one faster in every trial; the real CPU gate does the rest."""
    import kltrans.optimize.search as search
    from kltrans.optimize.experiment import _key, label

    _as_on_a_gpu(monkeypatch)

    monkeypatch.setattr(search, "_paired", _hashed_gain)
    k = tmp_path / "k.cu"
    k.write_text(SAME_CODE_KERNEL)

    def go(select, budget=6, **kw):
        return run(OptimizeOptions(str(k), os.path.join(HELD, "gelu"), skills=SKILLS,
                                   corpus=CORPUS, budget=budget, progress=False,
                                   size_limit=20000, select=select, **kw))

    first = go("first")
    start = first["start"]["hash"]
    timed0 = [c for c in first["candidates"] if c["state"] == start and c.get("effect")]
    assert timed0[0]["verdict"] == "accepted" and len(timed0) == 1  # moved at once

    best = go("best")
    round0 = [c for c in best["candidates"] if c["state"] == start and c.get("effect")]
    assert len(round0) >= 2 and all(c["round"] == 1 for c in round0)
    [won] = [c for c in round0 if c["verdict"] == "accepted"]
    lost = [c for c in round0 if c["verdict"] == "outranked"]
    assert len(lost) == len(round0) - 1
    assert won["effect"]["speedup_median"] == max(c["effect"]["speedup_median"] for c in round0)
    assert all(f"but {won['spec']} at site {won['site']} was faster" in c["reason"] for c in lost)
    a0 = best["accepted"][0]
    assert a0["found_at"] == won["evaluation"] and a0["evaluation"] >= a0["found_at"]
    assert a0["speedup_vs_start"] == round(won["effect"]["speedup_median"], 4)
    assert best["final"]["outranked"] == sum(c["verdict"] == "outranked"
                                             for c in best["candidates"])
    # no candidate is left "kept" at the end: the budget's end moves to the best of the round
    assert not [c for c in best["candidates"] if c.get("verdict") == "kept"]
    assert best["config"]["select"] == "best"
    with pytest.raises(OptimizeError, match="select best"):
        go("best", strategy="blind")
    # unasked, the rule is best where it can act (skills, builtin filler, a GPU), and
    # first elsewhere: blind takes the first kept, and without a GPU nothing is timed
    dflt = go(None)
    assert dflt["config"]["select"] == "best"
    assert [(c["spec"], c["verdict"]) for c in dflt["candidates"]] == \
        [(c["spec"], c["verdict"]) for c in best["candidates"]]
    # with it, the other variants adopted for that configuration (search_defaults)
    assert (dflt["config"]["enablers"], dflt["config"]["offer_tries"]) == (True, 1)
    for kw in ({"strategy": "blind"}, {"backend": "cpu"}):
        cfg = go(None, budget=1, **kw)["config"]
        assert (cfg["select"], cfg["enablers"], cfg["offer_tries"]) == ("first", False, None)
    # the experiment reports and resumes such runs apart
    assert label({"strategy": "skills", "select": "best", "min_gain": 1.01,
                  "library": {"catalogue": True, "unproven": True}}) == "skills+best@1.01"
    it = {"target": "t", "strategy": "skills", "seed": 0}
    assert _key({**it, "select": "best"}) != _key(it)


def test_enablers_time_a_step_with_the_card_it_makes_apply(monkeypatch):
    """--enablers: histogram's root is one element per thread; grid-stride alone is not
    faster, but it writes the loop vectorize-bytes needs (the walk's valley). The step is
    tried again with each card it makes apply on top, the pair timed against the current
    kernel as one candidate, and both kept when the pair is faster. The paired timing needs
    a GPU: a stand-in makes every candidate 1% slower, and the byte-vectorized kernel 1.5x
    faster; the real CPU gate does the rest. Without --enablers no step is kept."""
    import kltrans.optimize.search as search
    from kltrans.optimize.experiment import _key, label

    _as_on_a_gpu(monkeypatch)

    def paired(a_src, b_src, *a, **k):
        g = 1.5 if b"count_vec" in b_src and b"count_vec" not in a_src else 0.99
        return {"ok": True, "faster": g > 1, "best_ms": 1.0, "candidate_ms": 1 / g,
                "speedup_median": g, "speedup_trials": [g] * 5}

    monkeypatch.setattr(search, "_paired", paired)
    hist = os.path.join(CORPUS, "histogram")

    def go(enablers, select):
        return run(OptimizeOptions(os.path.join(hist, "lineage", "states", "08-naive.cu"), hist,
                                   skills=SKILLS, corpus=CORPUS, budget=6, progress=False,
                                   size_limit=20000, exclude_own=True, enablers=enablers,
                                   select=select))

    plain = go(False, "first")
    assert plain["accepted"] == [] and plain["final"]["evaluations"] == 6
    for select in ("first", "best"):
        doc = go(True, select)
        [gs] = [c for c in doc["candidates"] if c["card"] == "grid-stride"]
        assert gs["effect"]["speedup_median"] == 0.99 and gs["verdict"] == "enabler"
        on_top = [c for c in doc["candidates"] if c.get("enabled_by") == gs["evaluation"]]
        # every card the loop makes apply, in menu order, until one is kept
        assert [c["card"] for c in on_top][-1] == "catalogue:vectorize-bytes"
        assert all(c["via"] == gs["after"] for c in on_top)
        assert all(c["verdict"] == "rejected" for c in on_top[:-1])
        vb = on_top[-1]
        assert vb["verdict"] == "accepted" and vb["effect"]["speedup_median"] == 1.5
        first, second = doc["accepted"][:2]
        assert (first["spec"], first["enabler"], first["found_at"]) == \
            (gs["spec"], True, gs["evaluation"])
        assert second["spec"] == vb["spec"] and second["speedup_vs_start"] == 1.5
        assert doc["config"]["enablers"] is True and doc["config"]["select"] == select
        # not faster alone, but used: the experiment does not count it as wasted
        assert doc["final"]["rejected"] == sum(c["verdict"] == "rejected"
                                               for c in doc["candidates"])
    with pytest.raises(OptimizeError, match="--enablers needs the skills strategy"):
        run(OptimizeOptions(os.path.join(hist, "naive.cu"), hist, skills=SKILLS, corpus=CORPUS,
                            budget=1, progress=False, strategy="blind", enablers=True))
    assert label({"strategy": "skills", "select": "best", "enablers": True,
                  "library": {"catalogue": True, "unproven": True}}) == "skills+best+enablers"
    it = {"target": "t", "strategy": "skills", "seed": 0, "select": "best"}
    assert _key({**it, "enablers": True}) != _key(it)


def test_patience_stops_after_n_evaluations_that_kept_nothing(tmp_path, monkeypatch):
    """--patience N ends the search when N evaluations in a row have kept no candidate:
    here the first candidate timed is faster and every later one is not, so a search with
    patience 3 stops after evaluation 4 (1 kept, then 3 not), where the budget would have
    gone on to 8. The paired timing needs a GPU: a stand-in; the real CPU gate does the rest."""
    import kltrans.optimize.search as search
    from kltrans.optimize.experiment import _key, label

    _as_on_a_gpu(monkeypatch)
    calls = []

    def paired(*a, **k):
        calls.append(1)
        g = 1.2 if len(calls) == 1 else 0.99
        return {"ok": True, "faster": g > 1, "best_ms": 1.0, "candidate_ms": 1 / g,
                "speedup_median": g, "speedup_trials": [g] * 5}

    monkeypatch.setattr(search, "_paired", paired)
    k = tmp_path / "k.cu"
    k.write_text(SAME_CODE_KERNEL)

    def go(patience, budget=8):
        calls.clear()
        return run(OptimizeOptions(str(k), os.path.join(HELD, "gelu"), skills=SKILLS,
                                   corpus=CORPUS, budget=budget, progress=False,
                                   size_limit=20000, select="first", patience=patience,
                                   offer_tries=0))

    doc = go(3)
    assert doc["termination"] == {"kind": "patience", "evaluations": 4,
                                  "reason": "3 evaluations in a row kept no candidate"}
    timed = [c for c in doc["candidates"] if c.get("evaluation")]
    assert [c["verdict"] for c in timed] == ["accepted", "rejected", "rejected", "rejected"]
    assert doc["config"]["patience"] == 3
    assert go(None)["termination"] == {"kind": "budget", "evaluations": 8}
    with pytest.raises(OptimizeError, match="--patience must be 1 or more"):
        go(0)
    assert label({"strategy": "skills", "select": "best", "patience": 10,
                  "library": {"catalogue": True, "unproven": True}}) == "skills+best+p10"
    it = {"target": "t", "strategy": "skills", "seed": 0, "select": "best"}
    assert _key({**it, "patience": 10}) != _key(it)


def test_offer_tries_retire_an_offer_that_kept_nothing_in_this_state(monkeypatch):
    """--offer-tries N: in one kernel state an offer (a card at a site) gated N times
    without being kept leaves the menu, for every filler, and the search ends when none is
    left ("exhausted", saying why) instead of exploring option values until the budget
    ends. The paired timing needs a GPU: a stand-in finds nothing faster; the real CPU
    gate does the rest."""
    import collections

    import kltrans.optimize.search as search
    from kltrans.optimize.experiment import _key, label

    _as_on_a_gpu(monkeypatch)
    monkeypatch.setattr(search, "_paired", lambda *a, **k: {
        "ok": True, "faster": False, "best_ms": 1.0, "candidate_ms": 1 / 0.99,
        "speedup_median": 0.99, "speedup_trials": [0.99] * 5})
    gelu = os.path.join(HELD, "gelu")

    def go(tries, budget):
        doc = run(OptimizeOptions(os.path.join(gelu, "naive.cu"), gelu, skills=SKILLS,
                                  corpus=CORPUS, budget=budget, progress=False,
                                  size_limit=20000, offer_tries=tries, enablers=False))
        timed = [c for c in doc["candidates"] if c.get("evaluation")]
        return doc, collections.Counter((c["card"], c["site"]) for c in timed)

    plain, n = go(0, 12)  # 0: no limit
    assert plain["termination"] == {"kind": "budget", "evaluations": 12}
    assert max(n.values()) > 2  # the filler goes on through an offer's option values
    assert plain["config"]["offer_tries"] is None
    # unasked, on a GPU with the builtin filler: once (search_defaults); elsewhere no limit
    assert go(None, 12)[0]["config"]["offer_tries"] == 1
    offers = {}
    for tries in (1, 2):
        doc, n = go(tries, 40)
        offers[tries] = set(n)
        assert max(n.values()) == tries and doc["accepted"] == []
        assert doc["termination"]["kind"] == "exhausted"
        assert doc["termination"]["evaluations"] == sum(n.values()) < 40
        assert f"left the menu after {tries} evaluation(s) that kept nothing" in \
            doc["termination"]["reason"]
        assert doc["config"]["offer_tries"] == tries
    # the limit retires offers, it does not skip them: both reach every offer
    assert offers[1] == offers[2]
    with pytest.raises(OptimizeError, match="--offer-tries must be 0 .no limit. or more"):
        go(-1, 1)
    with pytest.raises(OptimizeError, match="--offer-tries needs the skills strategy"):
        run(OptimizeOptions(os.path.join(gelu, "naive.cu"), gelu, skills=SKILLS,
                            corpus=CORPUS, budget=1, progress=False, strategy="memory",
                            offer_tries=1))
    assert label({"strategy": "skills", "select": "best", "patience": 10, "offer_tries": 1,
                  "library": {"catalogue": True, "unproven": True}}) == "skills+best+p10+t1"
    it = {"target": "t", "strategy": "skills", "seed": 0, "select": "best"}
    assert _key({**it, "offer_tries": 1}) != _key(it)


def test_patience_replay_matches_the_record_and_cuts_where_the_search_would():
    """bench/patience_sim.py: without a stop, the replay counts what the H200 record says
    (evaluations spent and wasted per set); with one, it stops where --patience would."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from patience_sim import replay

    from kltrans.optimize.experiment import label

    doc = json.loads(open(os.path.join(ROOT, "bench", "results", "experiment.json")).read())
    for kind in ("corpus", "heldout"):
        runs = [r for r in doc["runs"] if r["kind"] == kind and label(r) == "skills+best"]
        agg = doc["aggregate"][f"{kind}/skills+best"]
        out = [replay(r, None) for r in runs]
        assert (sum(x[1] for x in out), sum(x[2] for x in out)) == \
            (agg["wasted"], agg["evaluations"])
    c = [{"evaluation": 1, "verdict": "accepted"}, {"evaluation": 2, "verdict": "rejected"},
         {"evaluation": 3, "verdict": "outranked"}, {"evaluation": 4, "verdict": "rejected"},
         {"evaluation": 5, "verdict": "rejected"}, {"evaluation": 6, "verdict": "rejected"}]
    run_ = {"candidates": c, "accepted": [{"evaluation": 1, "speedup_vs_start": 1.5},
                                          {"evaluation": 6, "found_at": 6,
                                           "speedup_vs_start": 2.0}]}
    # kept at 3 (outranked later: wasted, as the record counts it); 4 and 5 keep nothing
    assert replay(run_, 2) == (1.5, 4, 5)
    assert replay(run_, None) == (2.0, 5, 6)


def test_offer_tries_replay_skips_what_the_limit_would_not_have_gated():
    """bench/patience_sim.py's --offer-tries replay: without a limit it counts what the
    record says; with one, the evaluations of an offer past the limit in its kernel state
    are skipped, and the replay stops at a skipped one that was kept."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from patience_sim import later_tries, replay, replay_tries

    from kltrans.optimize.experiment import label

    doc = json.loads(open(os.path.join(ROOT, "bench", "results", "experiment.json")).read())
    for kind in ("corpus", "heldout"):
        runs = [r for r in doc["runs"] if r["kind"] == kind and label(r) == "skills+best"]
        assert [replay_tries(r, None)[:3] for r in runs] == [replay(r, None) for r in runs]

    def c(e, card, verdict, site=1):
        return {"evaluation": e, "card": card, "site": site, "verdict": verdict}

    # state 0: a rejected three times, b once, then b kept (the search moves after 5);
    # state 1: a rejected (a new state: a fresh count), then a kept at its second try
    cands = [c(1, "a", "rejected"), c(2, "a", "rejected"), c(3, "a", "rejected"),
             c(4, "b", "rejected"), {"card": "a", "site": 1, "verdict": "same-code"},
             c(5, "b", "accepted"), c(6, "a", "rejected"), c(7, "a", "accepted")]
    run_ = {"candidates": cands, "accepted": [{"evaluation": 5, "speedup_vs_start": 1.5},
                                              {"evaluation": 7, "speedup_vs_start": 2.0}]}
    assert replay_tries(run_, None) == (2.0, 5, 7, 0)
    assert later_tries(run_) == 2  # a's second and third rejections in state 0
    assert replay_tries(run_, 2) == (2.0, 4, 6, 0)  # a's third rejection in state 0 skipped
    # b's second try (kept) is past a limit of 1: the record says nothing after it
    assert replay_tries(run_, 1) == (1.0, 2, 2, 0)
    # the allowance left at the end: the last state saw a rejected once, so one more try
    run_["candidates"], run_["accepted"] = cands[:7], run_["accepted"][:1]
    assert replay_tries(run_, 2, budget=30) == (1.5, 4, 5, 1)
    # offers of the last kernel's menu the record never reached count in full
    assert replay_tries(run_, 2, budget=30, menu={("a", 1), ("b", 1)}) == (1.5, 4, 5, 3)
    assert replay_tries(run_, 2, budget=6, menu={("a", 1), ("b", 1)}) == (1.5, 4, 5, 1)
    # counted over the run: a, rejected three times in state 0, is not tried in state 1
    run_["candidates"], run_["accepted"] = cands, [
        {"evaluation": 5, "speedup_vs_start": 1.5}, {"evaluation": 7, "speedup_vs_start": 2.0}]
    assert replay_tries(run_, 3, scope="run") == (1.5, 4, 5, 0)  # a's kept try is past 3
    assert replay_tries(run_, 4, scope="run") == (1.5, 5, 6, 0)  # its 4th rejection is e6
    assert replay_tries(run_, 5, scope="run") == (2.0, 5, 7, 0)


def test_tune_last_holds_the_tuning_cards_back_and_tries_each_once(monkeypatch):
    """--tune-last: offers of a card whose measured steps alone were typically a tie
    (retrieve.small_effect) wait until no other offer is left; from then on only those are
    offered, each (card, site text) gated once in the run, the first faster kept (no round
    to outrank it). The paired timing needs a GPU: a stand-in gives each candidate its own
    gain (from its source), every one faster in every trial; the real CPU gate does the
    rest."""
    import kltrans.optimize.search as search
    from kltrans.optimize.experiment import _key, label
    from kltrans.optimize.retrieve import load_library, small_effect

    _as_on_a_gpu(monkeypatch)

    monkeypatch.setattr(search, "_paired", _hashed_gain)
    tuning = {c.id for c in load_library(SKILLS) if small_effect(c.data)}
    assert {"unroll", "restrict-pointers", "stream-hints", "fast-math",
            "add-launch-bounds"} <= tuning
    assert not {"row-per-warp", "grid-stride", "vectorize-split"} & tuning
    gelu = os.path.join(HELD, "gelu")

    def go(tune_last, **kw):
        return run(OptimizeOptions(os.path.join(gelu, "naive.cu"), gelu, skills=SKILLS,
                                   corpus=CORPUS, budget=40, progress=False,
                                   size_limit=20000, tune_last=tune_last, **kw))

    def timed(doc):
        return [c for c in doc["candidates"] if c.get("evaluation")]

    plain = go(None)
    assert plain["config"]["tune_last"] is False  # not adopted: off unless asked
    order = [c["card"] in tuning for c in timed(plain)]
    assert True in order and order.index(True) < len(order) - 1 - order[::-1].index(False)

    doc = go(True)
    assert doc["config"]["tune_last"] is True
    [ev] = [e for e in doc["events"] if e["kind"] == "tuning-phase"]
    ts = timed(doc)
    before, after = ts[:ev["after"]], ts[ev["after"]:]
    assert before and after
    # (a tuning card may come earlier only on top of a step not faster alone: --enablers)
    assert not any(c["card"] in tuning and "enabled_by" not in c for c in before)
    assert all(c["card"] in tuning and c["phase"] == "tuning" for c in after)
    assert not [c for c in after if c["verdict"] in ("outranked", "kept", "enabler")]
    pairs = [(c["card"], c["snippet"]) for c in after]
    assert len(pairs) == len(set(pairs))  # each offer gated once in the phase
    assert after[0]["verdict"] == "accepted"  # faster (the stand-in): kept at once
    assert doc["termination"]["kind"] == "exhausted"
    assert "--tune-last: each tuning card's offer was tried once" in \
        doc["termination"]["reason"]
    # the tuning cards were tried once each, not once per kernel state
    assert len(after) < sum(c["card"] in tuning for c in timed(plain))
    with pytest.raises(OptimizeError, match="--tune-last needs the skills strategy"):
        go(True, strategy="blind")
    assert label({"strategy": "skills", "select": "best", "enablers": True, "offer_tries": 1,
                  "tune_last": True, "library": {"catalogue": True, "unproven": True}}) == \
        "skills+best+enablers+t1+last"
    it = {"target": "t", "strategy": "skills", "seed": 0, "select": "best"}
    assert _key({**it, "tune_last": True}) != _key(it)
