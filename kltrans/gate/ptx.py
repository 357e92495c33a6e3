"""Which mechanisms a kernel uses, read off the PTX NVRTC makes of it.

A source-level detector can be fooled by spelling (a cooperative-groups warp reduction
has no ``__shfl`` token; shared memory reached through an accessor struct is no
``__shared__`` array of the kernel). The compiled code has no spelling: a shuffle is
``shfl.sync`` whichever API wrote it, shared memory is a ``.shared`` access whatever
accessor reached it. The backward walk ends in ``naive`` only when these marks are empty
too (:func:`kltrans.lineage.naive.mechanisms_left`), and the generality report judges a
walk's end against the PTX of the lineage's own naive version.

What PTX cannot show (an unroll pragma, ``__launch_bounds__``) is left to the source
detector; what it shows is listed in ``MARKS``.
"""

from __future__ import annotations

import re

# (mechanism, pattern over PTX instructions and directives)
MARKS = (
    ("shared memory", re.compile(r"^\s*(?:[\w.]+\s+)*\.shared\b|\b(?:ld|st|atom|red|cp\.async"
                                 r"[\w.]*|ldmatrix[\w.]*|stmatrix[\w.]*)\.[\w.]*shared\b",
                                 re.MULTILINE)),
    ("block barrier", re.compile(r"\b(?:bar|barrier)(?:\.cta)?\.(?:sync|red|arrive)\b")),
    ("warp shuffle", re.compile(r"\bshfl\.sync\b")),
    ("warp vote or match", re.compile(r"\b(?:vote|match|redux)\.(?:\w+\.)*sync\b")),
    ("vector global access", re.compile(r"\b(?:ld|st)\.global(?:\.[a-z]+\d*)*\.v[248]\b")),
    ("read-only or cache-hinted load", re.compile(
        r"\bld\.global\.(?:[\w.]*\.)?(?:nc|cs|lu|cg|cv|L1::no_allocate|L2::\w+)\b")),
    ("cache-hinted store", re.compile(r"\bst\.global\.(?:[\w.]*\.)?(?:cs|wt|cg)\b")),
    ("async copy", re.compile(r"\bcp\.async\b")),
    ("grid-stride or capped grid", re.compile(r"%nctaid\b")),
    ("tensor-core mma", re.compile(r"\b(?:w?gmma|mma)\.(?:sync|async|mma_async)\b")),
    ("prefetch", re.compile(r"\bprefetch(?:u)?\.\w+|cp\.async\.bulk\.prefetch")),
)


def ptx_of(path: str, name_expression: str | None = None, arch: str = "sm_90",
           source: bytes | None = None) -> str | None:
    """The PTX of a kernel file (None when it does not compile)."""
    from kltrans.gate.compile import compile_unit
    from kltrans.syntax.unit import load, parse

    unit = parse(source, path) if source is not None else load(path)[0]
    r = compile_unit(unit, arch=arch, name_expressions=[name_expression] if name_expression
                     else [], want_ptx=True)
    return r.ptx if r.ok else None


def ptx_mechanisms(ptx: str) -> list[str]:
    """The mechanisms of ``MARKS`` that ``ptx`` shows, in ``MARKS`` order."""
    body = "\n".join(line.split("//", 1)[0] for line in ptx.splitlines())
    return [name for name, rx in MARKS if rx.search(body)]


def mechanisms(path: str, name_expression: str | None = None, arch: str = "sm_90",
               source: bytes | None = None) -> list[str] | None:
    """The PTX mechanisms of a kernel file, or None when it does not compile."""
    ptx = ptx_of(path, name_expression, arch, source)
    return None if ptx is None else ptx_mechanisms(ptx)
