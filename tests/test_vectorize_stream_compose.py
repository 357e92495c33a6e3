"""Compositions of optimize passes: the second pass's fixture starts from the first pass's
golden output, and the two-pass pipeline gives the second pass's golden output.

Each pair (FIRST, SECOND) names two fixtures under tests/passes/: FIRST's golden output
must be SECOND's input (from the launch header on, token for token, launch header
included), and running FIRST's pass and then SECOND's pass on FIRST's input in one
pipeline must give SECOND's golden output, so the composition is exercised end to end.
"""

from __future__ import annotations

import os

import pytest

from kltrans.match.pattern import tokens
from kltrans.passes.fixtures import discover, fixtures_dir
from kltrans.passes.manager import run_pipeline
from kltrans.passes.pipeline import parse_pipeline
from kltrans.syntax import parse

PAIRS = [
    ("grid_stride/gs_relu_tid_named_stride", "vectorize_stream/vs_relu_after_grid_stride"),
    ("grid_stride/gs_scale_block_macro", "vectorize_stream/vs_scale_after_grid_stride"),
    ("grid_stride/gs_axpb_size_t_stride", "vectorize_stream/vs_axpb_after_grid_stride"),
    ("grid_stride/gs_sum_fold", "unroll_stride/us_sum_after_grid_stride"),
    ("grid_stride/gs_sum_block_load", "unroll_stride/us_total_after_grid_stride"),
    ("grid_stride/gs_sum_int_named", "unroll_stride/us_int_after_grid_stride"),
    ("coarsen/coarsen_scale_for_vectorize", "vectorize_access/vec_scale_after_coarsen"),
    ("coarsen/coarsen_relu_for_vectorize", "vectorize_access/vec_relu_after_coarsen"),
    ("coarsen/coarsen_axpb_for_vectorize", "vectorize_access/vec_axpb_after_coarsen"),
]

_CASES = {os.path.relpath(c.path, fixtures_dir())[:-3]: c for c in discover()}


def _code(data: bytes) -> bytes:
    """The text from the launch header on (the fixtures' own comments come before it)."""
    at = data.index(b"// kltrans: launch")
    return data[at:]


def _launch(data: bytes) -> bytes:
    return _code(data).split(b"\n", 1)[0]


def _same(a: bytes, b: bytes) -> bool:
    ua, ub = parse(a, "a.cu"), parse(b, "b.cu")
    return _launch(a) == _launch(b) and tokens(ua, ua.root) == tokens(ub, ub.root)


@pytest.mark.parametrize("first,second", PAIRS, ids=[s for _, s in PAIRS])
def test_second_starts_from_first_output(first, second):
    c1 = _CASES[first]
    with open(c1.expected_path, "rb") as f:
        out1 = f.read()
    with open(_CASES[second].path, "rb") as f:
        in2 = f.read()
    assert _same(_code(out1), _code(in2)), f"{second}.cu is not {first}'s golden output"


@pytest.mark.parametrize("first,second", PAIRS, ids=[s for _, s in PAIRS])
def test_two_pass_pipeline(first, second):
    c1, c2 = _CASES[first], _CASES[second]
    ctx = c2.context()
    with open(c1.path, "rb") as f:
        src = f.read()
    passes = parse_pipeline(c1.pipeline) + parse_pipeline(c2.pipeline)
    res = run_pipeline(parse(src, c1.path), passes, ctx)
    assert all(r.applied for r in res.reports), [r for r in res.reports if not r.applied]
    with open(c2.expected_path, "rb") as f:
        want = f.read()
    assert _same(_code(res.unit.source), _code(want))


# ------------------------------------------------ grid-stride, then a general map body
# The naive kernels of the vectorize-stream test workloads (bodies with a temporary, two
# inputs, two outputs): grid-stride{fold=false} turns each into a loop whose index is
# declared before it, vectorize-stream gives it a float4 path behind the flag it declares,
# the result passes the CPU gate at every test size, and scalarize-stream gives the
# grid-stride output back token for token.
_WL = os.path.join(os.path.dirname(__file__), "data", "workloads")
NAIVE = [
    ("vectorize_stream_silu", "silu.cu", ()),
    ("vectorize_stream_axpby", "axpby.cu", ()),
    # m_out is stored before p[i] is read: the vector path needs m_out not to be p
    ("vectorize_stream_momentum", "momentum.cu", ("no_alias(*)",)),
]


@pytest.fixture
def cpu_gate(tmp_path_factory, monkeypatch):
    import shutil

    try:
        from kltrans.gate.cpu import build  # noqa: F401
    except ImportError as e:
        pytest.skip(f"the CPU emulator (kltrans.gate.cpu) cannot be imported: {e}")
    if shutil.which("g++") is None:
        pytest.skip("the CPU emulator needs g++")
    monkeypatch.setenv("KLTRANS_CACHE_DIR",
                       str(tmp_path_factory.getbasetemp() / "kltrans-cpu-cache"))


@pytest.mark.parametrize("workload,kernel,assume", NAIVE, ids=[w for w, _, _ in NAIVE])
def test_grid_stride_then_general_body(workload, kernel, assume, cpu_gate, tmp_path):
    from kltrans.gate.run import gate
    from kltrans.passes.facts import Context

    wl = os.path.join(_WL, workload)
    with open(os.path.join(wl, kernel), "rb") as f:
        src = f.read()
    ctx = Context.from_strings(assume)
    gs = run_pipeline(parse(src, kernel), parse_pipeline("grid-stride{fold=false}"), ctx)
    assert all(r.applied for r in gs.reports)
    vec = run_pipeline(gs.unit, parse_pipeline("vectorize-stream"), ctx)
    assert all(r.applied for r in vec.reports), vec.reports
    out = vec.unit.source
    assert b"float4" in out and b"const bool vec_ok" in out
    path = tmp_path / kernel
    path.write_bytes(out)
    rep = gate(str(path), wl, backend="cpu", stages=("compile", "correct"))
    got = [(s.stage, s.status, s.reason) for s in rep.stages]
    assert [s.stage for s in rep.stages if s.status == "pass"] == ["compile", "correct"], got
    back = run_pipeline(vec.unit, parse_pipeline("scalarize-stream"), ctx)
    assert all(r.applied for r in back.reports)
    assert tokens(back.unit, back.unit.root) == tokens(gs.unit, gs.unit.root)
