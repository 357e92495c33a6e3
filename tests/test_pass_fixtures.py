"""The pass fixtures (tests/passes/*/): goldens, skips with reasons, round trips, and
every output compiled with NVRTC for sm_90 (compile only: no GPU needed)."""

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


@pytest.mark.parametrize("case", [c for c in CASES if not c.negative and c.roundtrip == "exact"],
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
