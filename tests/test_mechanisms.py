"""Every mechanism of every corpus expert maps to the simplify passes that remove it
(corpus/mechanisms.yaml). Known gaps are strict expected failures, so the map stays true."""

import os

import pytest
import yaml

from kltrans.passes.facts import Context
from kltrans.passes.registry import get_pass
from kltrans.syntax import parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAP = yaml.safe_load(open(os.path.join(ROOT, "corpus", "mechanisms.yaml")))
FACTS = Context.from_strings(("no_alias(*)", "aligned(*,16)"))


def _params():
    out = []
    for w, items in MAP.items():
        for m in items:
            marks = ()
            if not m["passes"]:
                marks = pytest.mark.xfail(strict=True, reason=f"gap: {m['gap']}")
            out.append(pytest.param(w, m, id=f"{w}: {m['mechanism']}", marks=marks))
    return out


def test_every_corpus_workload_is_mapped():
    names = {d for d in os.listdir(os.path.join(ROOT, "corpus"))
             if os.path.isfile(os.path.join(ROOT, "corpus", d, "expert.cu"))}
    assert names == set(MAP)


@pytest.mark.parametrize("workload,mech", _params())
def test_mechanism_has_a_simplify_pass_that_matches_the_expert(workload, mech):
    assert mech["passes"], "no simplify pass removes this mechanism"
    d = os.path.join(ROOT, "corpus", workload)
    paths = [os.path.join(d, "expert.cu")]
    states = os.path.join(d, "lineage", "states")
    if os.path.isdir(states):
        paths += [os.path.join(states, f) for f in sorted(os.listdir(states))]
    units = [parse(open(p, "rb").read(), p) for p in paths]
    for name in mech["passes"]:
        p = get_pass(name)()
        assert p.kind == "simplify", f"{name} is a {p.kind} pass"
        assert any(p.sites(u, FACTS) for u in units), \
            f"{name}: its anchor matches nothing in {workload}'s expert or lineage states"


@pytest.mark.parametrize("workload", sorted(MAP))
def test_naive_roots_are_naive_and_experts_are_not(workload):
    from kltrans.lineage.naive import residual_mechanisms

    d = os.path.join(ROOT, "corpus", workload)
    naive = parse(open(os.path.join(d, "naive.cu"), "rb").read(), "naive.cu")
    expert = parse(open(os.path.join(d, "expert.cu"), "rb").read(), "expert.cu")
    assert residual_mechanisms(naive) == []
    left = {m for m, _ in residual_mechanisms(expert)}
    assert "launch bounds" in left and len(left) >= 3, left
