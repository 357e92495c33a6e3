"""The kernel model reads every spelling of an operation as that operation.

Each data file marks the lines it expects: ``// op: NAME [NAME...]`` (a reduction's
operator after its name), or ``// op: none: WHY`` for a call that must not be read as one
(a user's struct with a ``sync`` method, a bare name without a using-directive); a line
with no mark must hold no operation."""

from __future__ import annotations

import os
import re

import pytest
import yaml

from kltrans.lineage.naive import residual_mechanisms
from kltrans.model import definitions, operations
from kltrans.model.ops import SpellingError, parse_table
from kltrans.syntax.unit import load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "model")
_MARK = re.compile(r"//\s*op:\s*(.*)$")


def _expected(path: str) -> dict[int, list[str]]:
    out = {}
    for i, line in enumerate(open(path, encoding="utf-8"), 1):
        m = _MARK.search(line)
        if not m:
            continue
        words = m.group(1).strip()
        if words.startswith("none"):
            assert ":" in words, f"{path}:{i}: a refused case says why"
            out[i] = []
            continue
        ops, got = [], words.split()
        for w in got:
            if "." in w:
                ops.append(w)
            else:  # a reduction's operator
                ops[-1] += f" {w}"
        out[i] = ops
    return out


@pytest.mark.parametrize("name", ["spellings.cu", "using_namespace.cu", "no_cg.cu"])
def test_every_spelling_is_read_as_its_operation(name):
    path = os.path.join(DATA, name)
    [unit] = load(path)
    got: dict[int, list[str]] = {}
    for op in operations(unit):
        label = op.name + (f" {op.reduce_op}" if op.name.startswith("reduce.") else "")
        got.setdefault(op.line, []).append(label)
    want = _expected(path)
    for line, ops in want.items():
        assert sorted(got.get(line, [])) == sorted(ops), f"{name}:{line}"
    stray = {ln: ops for ln, ops in got.items() if ln not in want}
    assert not stray, f"{name}: operations on lines with no mark: {stray}"


def test_data_files_are_cuda_that_compiles():
    from kltrans.gate.compile import compile_unit

    for name in ("spellings.cu", "using_namespace.cu", "no_cg.cu"):
        [unit] = load(os.path.join(DATA, name))
        r = compile_unit(unit, arch="sm_90")
        assert r.ok, f"{name}:\n{r.log[-800:]}"


def test_a_call_with_operands_the_spelling_does_not_take_is_none():
    from kltrans.syntax.unit import parse

    unit = parse(b"__global__ void k(float* y) { y[0] = __shfl_down_sync(0xffffffffu, y[0]); "
                 b"__syncthreads(1, 2); }", "k.cu")
    assert operations(unit) == []


def test_groups_carry_their_kind_and_width():
    [unit] = load(os.path.join(DATA, "spellings.cu"))
    by_line = {(o.line, o.name): o for o in operations(unit)}
    text = open(os.path.join(DATA, "spellings.cu")).read().splitlines()

    def op(fragment, name):
        line = next(i for i, t in enumerate(text, 1) if fragment in t)
        return by_line[(line, name)]

    assert op("h.shfl_xor(v, 1)", "shuffle.xor").group.width == 16
    assert op("v += tile.shfl_down(v, 2)", "shuffle.down").group.width == 32
    assert op("dyn.sync()", "barrier.warp").group.width == 32  # tiled_partition(block, 32)
    assert op("v += w.shfl_down(v, o)", "shuffle.down").group.kind == "tile"  # a parameter
    down = op("v = __shfl_down_sync(0xffffffff, v, 8, 16)", "shuffle.down")
    assert {k: unit.text(n) for k, n in down.operands.items()} == \
        {"mask": "0xffffffff", "value": "v", "delta": "8", "width": "16"}


def test_the_naive_check_sees_a_cooperative_groups_warp_reduction():
    # a warp per row through cg::reduce only: no intrinsic spelled anywhere
    [unit] = load(os.path.join(ROOT, "corpus", "wild", "softmax-cg", "v1_warp_tile.cu"))
    assert "__shfl" not in unit.source.decode()
    assert "warp primitive" in {m for m, _ in residual_mechanisms(unit)}
    [naive] = load(os.path.join(ROOT, "corpus", "wild", "softmax-cg", "v0_naive.cu"))
    assert residual_mechanisms(naive) == []


def test_the_table_is_well_formed():
    defs = definitions()
    assert {"barrier.block", "shuffle.down", "reduce.warp", "index.lane"} <= set(defs)
    for d in defs.values():
        assert d.doc and d.scope in ("thread", "warp", "block", "grid"), d.name
        for s in d.spellings:
            assert s.op == d.name and (s.call or s.member)
            assert s.member is None or s.group, f"{d.name}: a member spelling names its group"


def test_a_bad_table_is_refused():
    raw = yaml.safe_load(open(os.path.join(ROOT, "kltrans", "model", "spellings.yaml")))
    assert parse_table(raw).keys() == definitions().keys()
    raw["shuffle.down"]["spellings"].append({"call": "__x", "member": "y"})
    with pytest.raises(SpellingError, match="a spelling is a call or a member"):
        parse_table(raw)
    raw["shuffle.down"]["spellings"][-1] = {"call": "__x", "arity": 2}
    with pytest.raises(SpellingError, match="unknown key"):
        parse_table(raw)
