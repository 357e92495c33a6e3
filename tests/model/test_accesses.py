"""The kernel model reads every spelling of a load or store as the same access.

Each data file ``tests/data/model/accesses_*.cu`` marks the lines it expects, after
``// acc:``, with the accesses of that line separated by ``;``::

    MODE SPACE BASE [wN | w?] [t=TYPE] [hint=H] [op=OP] idx EXPR [-- why]

``MODE`` is read, write, readwrite or atomic; ``BASE`` is ``?`` when unknown; the width is
1 when no ``w`` is given; ``t=`` (the base's element type) and ``op=`` are compared when
given, ``hint`` always (none when not given). ``EXPR`` is the index in elements of the
base, any polynomial (compared as an :class:`Affine`, so its terms may come in any order),
with ``tx ty bx by bdx bdy`` for ``threadIdx.x``, ..., ``blockDim.y``, ``#iter(k)`` and
``#iter@-N`` (the loop N lines above) for iteration counts; ``idx ?`` is an index the model
cannot know, and such a mark says why after ``--`` (the access must then carry a reason).
``// acc: none: WHY`` marks a line whose memory-looking text is no access of global or
shared memory (a register array, an address, an unevaluated operand); a line with no
mark must hold no access."""

from __future__ import annotations

import glob
import os
import re

import pytest

from kltrans.analysis.affine import Affine, affine_of
from kltrans.model.accesses import accesses, accesses_by_base
from kltrans.syntax.cuda import find_functions
from kltrans.syntax.unit import load, parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "model")
FILES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(DATA, "accesses_*.cu")))
_MARK = re.compile(r"//\s*acc:\s*(.*)$")
_ABBREV = {"tx": "threadIdx.x", "ty": "threadIdx.y", "bx": "blockIdx.x", "by": "blockIdx.y",
           "bdx": "blockDim.x", "bdy": "blockDim.y"}
_ITER = re.compile(r"#iter(?:@([+-]?\d+)|\((\w+)\))")


def _placeholder(sym: str) -> str:
    return "__iter_" + re.sub(r"\W", "_", sym)


def _index(text: str, line: int) -> Affine:
    """An expected index, parsed by the affine reader itself (so any order of terms)."""
    def iter_sym(m):
        if m.group(1) is not None:
            n = int(m.group(1))
            return _placeholder(f"#iter@{line + n if m.group(1)[0] in '+-' else n}")
        return _placeholder(f"#iter({m.group(2)})")
    text = _ITER.sub(iter_sym, text)
    text = re.sub(r"\b(" + "|".join(_ABBREV) + r")\b", lambda m: _ABBREV[m.group(1)], text)
    unit = parse(f"int __expected = {text};\n".encode(), "expected.cu")
    decl = unit.root.named_children[0]
    value = decl.child_by_field_name("declarator").child_by_field_name("value")
    a = affine_of(unit, value)
    assert a is not None, f"line {line}: cannot read the expected index {text!r}"
    return a


def _observed(a) -> tuple:
    index = a.index
    if index is not None:
        index = index.subs({s: Affine.sym(_placeholder(s)) for s in index.symbols()
                            if s.startswith("#iter")})
    return a.mode, a.space, a.base or "?", a.width, a.hint, index


def _expected(path: str) -> dict[int, list[tuple[tuple, dict]]]:
    out: dict[int, list] = {}
    for i, line in enumerate(open(path, encoding="utf-8"), 1):
        m = _MARK.search(line)
        if not m:
            continue
        body = m.group(1).strip()
        if body.startswith("none"):
            assert ":" in body, f"{path}:{i}: a refused case says why"
            out[i] = []
            continue
        items = []
        for part in body.split(";"):
            part, _, why = part.partition("--")
            head, _, idx = part.partition(" idx ")
            words = head.split()
            mode, space, base = words[:3]
            width, extra = 1, {}
            for w in words[3:]:
                if w.startswith("w"):
                    width = None if w == "w?" else int(w[1:])
                elif "=" in w:
                    k, v = w.split("=", 1)
                    extra[k] = v
                else:
                    raise AssertionError(f"{path}:{i}: unknown word {w!r} in a mark")
            idx = idx.strip()
            index = None if idx == "?" else _index(idx, i)
            if index is None or space == "unknown" or base == "?":
                assert why.strip(), f"{path}:{i}: an unknown access says why after --"
                extra["why"] = why.strip()
            items.append(((mode, space, base, width, extra.pop("hint", None), index), extra))
        out[i] = items
    return out


def _key(t: tuple) -> tuple:
    return tuple(str(x) for x in t)


@pytest.mark.parametrize("name", FILES)
def test_every_spelling_of_an_access_is_read_the_same(name):
    path = os.path.join(DATA, name)
    [unit] = load(path)
    got: dict[int, list] = {}
    for fn in find_functions(unit):
        for a in accesses(unit, fn):
            got.setdefault(a.line, []).append(a)
    want = _expected(path)
    assert want, f"{name}: no marks"
    for line, items in want.items():
        have = sorted(got.get(line, []), key=lambda a: _key(_observed(a)))
        exp = sorted(items, key=lambda it: _key(it[0]))
        assert sorted(_key(_observed(a)) for a in have) == sorted(_key(e) for e, _ in exp), \
            f"{name}:{line}: got {[_observed(a) for a in have]}"
        for a in have:  # the optional fields, matched by the compared ones
            for e, extra in exp:
                if _key(e) == _key(_observed(a)):
                    if "t" in extra:
                        assert a.elem_type == extra["t"], f"{name}:{line}: {a.elem_type}"
                    if "op" in extra:
                        assert a.op == extra["op"], f"{name}:{line}: {a.op}"
                    if "why" in extra:
                        assert a.reason, f"{name}:{line}: an unknown access without a reason"
    stray = {ln: [_observed(a) for a in accs] for ln, accs in got.items() if ln not in want}
    assert not stray, f"{name}: accesses on lines with no mark: {stray}"


def test_accesses_are_cached_per_function_and_grouped_by_base():
    [unit] = load(os.path.join(DATA, "accesses_plain.cu"))
    fn = next(f for f in find_functions(unit) if f.name == "transpose_tile")
    first = accesses(unit, fn)
    assert accesses(unit, fn) is first
    groups = accesses_by_base(unit, fn)
    assert {"stage", "in", "out"} <= set(groups)
    assert all(a.base == b for b, accs in groups.items() for a in accs)
    a = groups["in"][0]
    assert (a.line, a.column) == (unit.location(a.node.start_byte).line,
                                  unit.location(a.node.start_byte).column)


def test_odd_code_gives_unknown_accesses_not_errors():
    src = b"""
    __global__ void k(float* x, int n) {
        float* p = n ? x : nullptr;
        p[threadIdx.x] = x[[n]];
        *(float*)n = 1.f;
        (x + )[0] = 2;
        undeclared[threadIdx.x] = 3;
    }
    """
    unit = parse(src, "odd.cu")
    for fn in find_functions(unit):
        for a in accesses(unit, fn):
            assert a.index is not None or a.reason


def _lines(path: str) -> set[str]:
    text = re.sub(r"/\*.*?\*/", "", open(path, encoding="utf-8", errors="replace").read(),
                  flags=re.S)
    return {ln for ln in (re.sub(r"\s+", "", t.split("//", 1)[0]) for t in text.splitlines())
            if len(ln) >= 24}


def test_the_data_files_are_not_copies_of_corpus_kernels():
    """Written for these tests: no data file shares more than a few distinctive lines
    with any kernel of the corpus or of corpus/wild (the measure tests/test_wild.py
    applies to pass fixtures)."""
    corpus = glob.glob(os.path.join(ROOT, "corpus", "**", "*.cu"), recursive=True)
    assert corpus
    theirs = {p: _lines(p) for p in corpus}
    for name in FILES:
        mine = _lines(os.path.join(DATA, name))
        for p, lines in theirs.items():
            assert len(mine & lines) < 6, (name, p, sorted(mine & lines))
