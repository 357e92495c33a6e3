"""The mechanisms a kernel uses, read from its source in any spelling the model knows.

A naive root (corpus/README.md): one thread per output element or row, scalar global
loads and stores, no shared memory, no warp primitives, no unrolling, no vector types.
:func:`residual_mechanisms` lists what of that a kernel still has, each with its line: the
operations that mark an optimized kernel (:mod:`kltrans.model.ops`, in every spelling
``spellings.yaml`` declares: ``tile.shfl_down``, ``cg::reduce``, ``__shfl_down_sync``
alike), every reduction or scan across a warp, a block or the grid however written
(:mod:`kltrans.model.collectives`: a shuffle loop in a lambda, ``cg::reduce``, a
shared-memory tree, warp results parked in shared slots, a leader's atomic, a look-back),
named by its scope and technique (``warp reduction (shuffle-xor via warpReduce)``),
shared memory, vector types, inline assembly, ``gridDim``, unroll pragmas,
``__restrict__`` and ``__launch_bounds__``. A thread's own accumulation loop is not one:
naive roots have them; nor is a vector type in a local declaration nothing else reads (a
view left behind by a scalarization moves no data).

:func:`mechanism_kinds` is the same list without lines and without the technique in
parentheses (``warp reduction``): what two spellings of one kernel share.

Layering: :mod:`kltrans.model.ops`, :mod:`kltrans.model.collectives`, :mod:`kltrans.syntax`.
"""

from __future__ import annotations

import re

from kltrans.model.collectives import collectives
from kltrans.model.ops import operations

_VECTOR = re.compile(r"^(u?char|u?short|u?int|u?long|u?longlong|float|double|half|bfloat16)[234]$"
                     r"|^__(half|nv_bfloat16)2$")
_TECHNIQUE = re.compile(r"\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*$")


def residual_mechanisms(unit) -> list[tuple[str, int]]:
    """(mechanism, line) for every naive-root violation in the unit's kernels and device code."""
    out: list[tuple[str, int]] = []
    seen = set()

    def add(what, node):
        line = unit.location(node.start_byte).line
        if (what, line) not in seen:
            seen.add((what, line))
            out.append((what, line))

    for op in operations(unit):  # warp primitives, cache hints, async copies in any spelling
        if op.definition.mechanism:
            add(op.definition.mechanism, op.node)
    for c in collectives(unit):  # reductions and scans across threads, in any spelling
        if c.scope != "thread":
            add(c.mark, c.node)
    for node in unit.walk(unit.root):
        t = node.type
        if t in ("type_identifier", "primitive_type"):
            if _VECTOR.match(unit.text(node)) and not _dead_declaration(unit, node):
                add("vector type", node)
        elif t == "gnu_asm_expression":
            add("inline assembly", node)
        elif t == "identifier" and unit.text(node) == "gridDim":
            add("grid-stride or capped grid (gridDim)", node)
    for pr in unit.pragmas:
        if "unroll" in pr.text and "nounroll" not in pr.text and not re.search(r"unroll\s+1\b", pr.text):
            out.append(("unroll pragma", pr.line))
    for sd in unit.shared_decls():
        out.append(("shared memory", sd.line))
    text = unit.source.decode("utf-8", "replace")
    for i, line in enumerate(text.splitlines(), 1):
        code = line.split("//", 1)[0]
        if "__restrict__" in code:
            out.append(("no-alias pointers (__restrict__)", i))
        if "__launch_bounds__" in code:
            out.append(("launch bounds", i))
    return sorted(set(out), key=lambda x: (x[1], x[0]))


def mechanism_kinds(unit) -> frozenset[str]:
    """The kinds of :func:`residual_mechanisms`: no lines, no technique in parentheses."""
    return frozenset(_TECHNIQUE.sub("", m) for m, _ in residual_mechanisms(unit))


def _dead_declaration(unit, node) -> bool:
    """``node`` lies in a local declaration whose variables nothing else in the function
    reads or writes (dead code: a vector view left behind moves no data)."""
    decl = node.parent
    while decl is not None and decl.type not in ("declaration", "function_definition",
                                                 "parameter_declaration", "compound_statement"):
        decl = decl.parent
    if decl is None or decl.type != "declaration" or decl.parent is None or \
            decl.parent.type != "compound_statement":
        return False
    names = set()
    for d in decl.children_by_field_name("declarator"):
        while d is not None and d.type != "identifier":
            d = d.child_by_field_name("declarator")
        if d is None:
            return False
        names.add(unit.text(d))
    fn = decl.parent
    while fn is not None and fn.type not in ("function_definition", "lambda_expression"):
        fn = fn.parent
    if fn is None:
        return False
    for n in unit.walk(fn):
        if n.type == "identifier" and unit.text(n) in names and \
                not decl.start_byte <= n.start_byte < decl.end_byte:
            return False
    return True


__all__ = ["mechanism_kinds", "residual_mechanisms"]
