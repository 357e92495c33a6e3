"""The pass fixtures (tests/passes/*/): goldens, skips with reasons, round trips, and
every output compiled with NVRTC for sm_90 (compile only: no GPU needed)."""

import hashlib
import os

import pytest

from kltrans.passes.fixtures import discover, roundtrip, run_case
from kltrans.syntax import parse

CASES = discover()


def _id(c):
    return os.path.relpath(c.path, os.path.join(os.path.dirname(__file__), "passes"))


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_fixture(case):
    out = run_case(case)
    assert out.ok, "\n".join(out.messages)
    if case.negative:
        return
    # untouched bytes: the output parses without errors
    assert not parse(out.output, case.path).has_errors


@pytest.mark.parametrize("case", [c for c in CASES if not c.negative and c.roundtrip_mode != "none"],
                         ids=_id)
def test_roundtrip(case):
    ok, msg = roundtrip(case)
    assert ok, msg


@pytest.mark.parametrize("case", [c for c in CASES if not c.negative], ids=_id)
def test_output_compiles_with_nvrtc(case):
    from kltrans.gate.compile import compile_source

    out = run_case(case)
    for label, src in (("input", open(case.path).read()), ("output", out.output.decode())):
        r = compile_source(src, case.path, arch="sm_90")
        assert r.ok, f"{label} does not compile:\n{r.log}"


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS_SOURCES = sorted(
    os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(ROOT, "corpus"))
    for f in fs if f.endswith(".cu"))


@pytest.mark.slow  # a sweep over every loop of every corpus kernel: run once, on 3.11
@pytest.mark.parametrize("style", ["pragma", "manual"])
def test_unroll_never_breaks_the_parse_of_a_corpus_kernel(style):
    """unroll, forced at every loop of every corpus kernel and lineage state, either
    rewrites it or skips the site with a reason: it never produces a source that does not
    parse, and never raises. (On the H200, pragma unrolls were refused as parse-breaking
    in the optimizer's runs; here they are not: docs/RESULTS.md.)"""
    from kltrans.optimize.retrieve import configured
    from kltrans.passes.facts import Context
    from kltrans.passes.manager import run_pass
    from kltrans.passes.registry import get_pass

    ctx = Context(force=True)
    p = configured(get_pass("unroll"), {"factor": "full" if style == "pragma" else 4,
                                        "style": style})
    # CI sweeps a stable half of the files (by a hash of the path); KLTRANS_FULL_SWEEPS=1 all
    full = os.environ.get("KLTRANS_FULL_SWEEPS") == "1"
    swept = [p for p in CORPUS_SOURCES if full or int(hashlib.sha256(
        os.path.relpath(p, ROOT).encode()).hexdigest(), 16) % 2 == 0]
    applied, broken = 0, []
    for path in swept:
        unit = parse(open(path, "rb").read(), path)
        for s in p.sites(unit, ctx):
            after, rep = run_pass(unit, p, ctx, only_site=s.index)
            broken += [f"{path}: {r.reason}" for r in rep.sites if r.status == "failed"]
            if after is not unit:
                applied += 1
                assert not after.has_errors, path
    assert len(CORPUS_SOURCES) > 150 and len(swept) > len(CORPUS_SOURCES) // 3
    assert applied > 500 * len(swept) // len(CORPUS_SOURCES)
    assert broken == []
