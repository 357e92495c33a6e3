"""The kernel model finds reductions and scans in any spelling, and the naive check reads them.

Each data file marks the lines it expects: ``// coll: SCOPE KIND OP HOW [via NAME]`` (several
separated by ``;``) where a collective starts, or ``// coll: none: WHY`` for code that must
not be read as one (a broadcast, a loop that moves values, a histogram's atomic); a line
with no mark must start no collective. ``// sync: SCOPE [via NAME]`` marks barriers the same
way."""

from __future__ import annotations

import os
import re

import pytest

from kltrans.lineage.naive import residual_mechanisms
from kltrans.model.collectives import collectives, synchronizations
from kltrans.syntax.cuda import find_functions
from kltrans.syntax.unit import load, parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "model")
FILES = ["collectives_warp.cu", "collectives_block.cu", "collectives_scan.cu", "collectives_naive.cu"]


def _expected(path: str, key: str) -> dict[int, set[str]]:
    out = {}
    for i, line in enumerate(open(path, encoding="utf-8"), 1):
        m = re.search(r"//\s*" + key + r":\s*(.*)$", line)
        if not m:
            continue
        words = m.group(1).strip()
        if words.startswith("none"):
            assert re.match(r"none:\s*\S", words), f"{path}:{i}: a refused case says why"
            out[i] = set()
        else:
            out[i] = {" ".join(w.split()) for w in words.split(";")}
    return out


def _unit(name):
    [unit] = load(os.path.join(DATA, name))
    return unit


def _label(c) -> str:
    return f"{c.scope} {c.kind} {c.op} {c.how}" + (f" via {c.via}" if c.via else "")


@pytest.mark.parametrize("name", FILES)
def test_every_collective_is_found_in_its_spelling(name):
    unit = _unit(name)
    got: dict[int, set[str]] = {}
    for c in collectives(unit):
        got.setdefault(c.line, set()).add(_label(c))
    want = _expected(os.path.join(DATA, name), "coll")
    for line, labels in want.items():
        assert got.get(line, set()) == labels, f"{name}:{line}"
    stray = {ln: ls for ln, ls in got.items() if ln not in want}
    assert not stray, f"{name}: collectives on lines with no mark: {stray}"


def test_synchronizations_with_their_scope_and_helper():
    unit = _unit("collectives_sync.cu")
    got: dict[int, set[str]] = {}
    for fn in find_functions(unit):
        for s in synchronizations(unit, fn):
            got.setdefault(s.line, set()).add(s.scope + (f" via {s.via}" if s.via else ""))
    want = _expected(os.path.join(DATA, "collectives_sync.cu"), "sync")
    for line, labels in want.items():
        assert got.get(line, set()) == labels, f"collectives_sync.cu:{line}"
    assert set(got) <= set(want)


def test_a_call_site_names_the_value_it_passes_and_a_look_back_says_it_is_approximate():
    unit = _unit("collectives_warp.cu")
    pair = next(c for c in collectives(unit) if c.via == "pair_reduce")
    assert (pair.op, pair.value, pair.function) == ("merge", "m, s", "row_stats")
    scan = _unit("collectives_scan.cu")
    [back] = [c for c in collectives(scan) if c.how == "look-back"]
    assert back.scope == "grid" and "approximate" in back.note


def test_results_are_cached_and_filtered_by_function():
    unit = _unit("collectives_block.cu")
    assert collectives(unit) is collectives(unit)
    fn = next(f for f in find_functions(unit) if f.name == "grid_sum")
    assert {c.how for c in collectives(unit, fn)} == {"loop", "warp-slots", "atomic"}
    assert all(c.function == "grid_sum" for c in collectives(unit, fn))


def test_odd_code_gives_no_collective_and_no_error():
    for src in (b"__global__ void k(float* v) { for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(",
                b"__device__ float f(float v) { for (;;) v = g(v, v); while (v) ; return v; }",
                b"auto l = [](int a) { return a; }; int x = l(1);"):
        unit = parse(src, "odd.cu")
        assert isinstance(collectives(unit), list)
        for fn in find_functions(unit):
            assert isinstance(synchronizations(unit, fn), list)


def _line(name, fragment):
    text = open(os.path.join(DATA, name), encoding="utf-8").read().splitlines()
    return next(i for i, t in enumerate(text, 1) if fragment in t)


def test_the_naive_check_reports_a_cg_and_a_lambda_warp_reduction():
    # a warp per row through cg::reduce, and through a lambda holding a shuffle loop
    marks = set(residual_mechanisms(_unit("collectives_warp.cu")))
    assert ("warp reduction (cg-reduce)", _line("collectives_warp.cu", "float total = cg::reduce")) in marks
    assert ("warp reduction (shuffle-xor via warpSum)",
            _line("collectives_warp.cu", "float again = warpSum(s)")) in marks
    block = set(residual_mechanisms(_unit("collectives_block.cu")))
    assert ("block reduction (warp-slots via block_sum)", _line("collectives_block.cu", "acc = block_sum")) in block
    assert ("grid reduction (atomic)", _line("collectives_block.cu", "atomicAdd(total, acc)")) in block
    assert not [m for m, _ in block if m.startswith("thread ")]  # a thread's own loop is no mechanism


def test_naive_kernels_have_no_mechanism():
    # threads' own loops, per-element atomics, a histogram: none is a collective across threads
    unit = _unit("collectives_naive.cu")
    assert {c.scope for c in collectives(unit)} == {"thread"}
    assert residual_mechanisms(unit) == []
