"""The kernel model classifies loops by what they iterate over, in any spelling.

Each data file marks the first line of every loop: ``// loop: KIND`` (grid-stride,
block-stride, warp-stride, block-grid-stride, halving, doubling, counted, unknown),
optionally followed by ``trips=N`` (``trips=None`` when it is not known) and
``adv=NAME:AMOUNT;...`` (what the loop advances each iteration, compared without spaces);
words in parentheses say why a loop gets a plainer kind than it seems to. Every loop of
the file must be marked."""

from __future__ import annotations

import glob
import os
import re

import pytest

from kltrans.model.loops import KINDS, loop_fact, loops
from kltrans.syntax.cuda import find_functions
from kltrans.syntax.unit import load, parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "model")
FILES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(DATA, "loops_*.cu")))
_MARK = re.compile(r"//\s*loop:\s*([\w-]+)([^(]*)")


def _expected(path: str) -> dict[int, dict]:
    out = {}
    for i, line in enumerate(open(path, encoding="utf-8"), 1):
        m = _MARK.search(line)
        if not m:
            continue
        want = {"kind": m.group(1)}
        assert want["kind"] in KINDS, f"{path}:{i}: unknown kind {want['kind']}"
        for item in m.group(2).split():
            key, _, value = item.partition("=")
            if key == "trips":
                want["trips"] = None if value == "None" else int(value)
            elif key == "adv":
                want["adv"] = dict(p.split(":", 1) for p in value.split(";"))
            else:
                raise AssertionError(f"{path}:{i}: unknown mark {item!r}")
        out[i] = want
    return out


def _squash(text: str) -> str:
    return "".join(text.split())


def test_there_are_data_files():
    assert len(FILES) >= 2


@pytest.mark.parametrize("name", FILES)
def test_every_loop_is_classified_as_marked(name):
    path = os.path.join(DATA, name)
    [unit] = load(path)
    want = _expected(path)
    got = {}
    for fn in find_functions(unit):
        for fact in loops(unit, fn):
            assert fact.line not in got, f"{name}:{fact.line}: one loop per line"
            got[fact.line] = fact
    assert set(got) == set(want), f"{name}: unmarked loops {sorted(set(got) - set(want))}, " \
                                  f"marks without a loop {sorted(set(want) - set(got))}"
    for line, w in want.items():
        fact = got[line]
        where = f"{name}:{line}: {fact.reason}"
        assert fact.kind == w["kind"], where
        assert fact.reason, f"{name}:{line}: a reason is given"
        if "trips" in w:
            assert fact.trip_count == w["trips"], where
        adv = {k: _squash(v) for k, v in fact.advances.items()}
        assert adv == {k: _squash(v) for k, v in w.get("adv", {}).items()}, where


def _only(body: str, prelude: str = ""):
    u = parse(f"{prelude}\n__global__ void k(float* y, int n) {{\n{body}\n}}\n", "k.cu")
    [fact] = loops(u, find_functions(u)[0])
    return u, fact


def test_a_stride_loop_carries_the_roles_of_its_start_and_step():
    u, f = _only("int s = blockDim.x * gridDim.x;\n"
                 "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += s) y[i] = 0;")
    assert f.kind == "grid-stride" and f.var == "i" and f.step_text == "+=s"
    assert (f.start.kind, f.start.dim) == ("global", "x")
    assert (f.step.kind, f.step.dim) == ("grid-size", "x")
    assert "the global index" in f.reason and "the grid's thread count" in f.reason
    assert f.loop is not None and f.node is f.loop.node


def test_a_literal_block_stride_needs_the_launch_contract():
    body = "for (int i = threadIdx.x; i < n; i += 128) y[i] = 0;"
    assert _only(body)[1].kind == "counted"
    contract = "// kltrans: launch k grid=1 block=128"
    assert _only(body, prelude=contract)[1].kind == "block-stride"


def test_halving_from_the_block_size_has_a_start_role():
    u, f = _only("for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) y[s] += y[0];")
    assert f.kind == "halving" and f.trip_count is None
    assert (f.start.kind, f.start.split) == ("block-size", ("div", 2))


def test_loop_fact_is_cached_and_refuses_other_nodes():
    u, f = _only("for (int i = 0; i < 4; ++i) y[i] = 0;")
    assert loop_fact(u, f.node) is f
    assert loop_fact(u, find_functions(u)[0].node) is None and loop_fact(u, None) is None
    assert f.kind == "counted" and f.trip_count == 4 and f.start is None


def test_a_range_for_and_broken_code_are_unknown_not_errors():
    u = parse("__global__ void k(float* y, int n) {\n  int v[4] = {0};\n"
              "  for (int x : v) y[x] = 0;\n  for (int i = 0; i < ; i +=) y[i] = 1;\n"
              "  while (n) { }\n}\n", "k.cu")
    facts = loops(u, find_functions(u)[0])
    assert facts and all(f.kind in KINDS for f in facts)
    assert facts[0].kind == "unknown" and facts[0].reason
