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
