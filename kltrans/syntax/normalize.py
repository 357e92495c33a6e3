"""Length-preserving normalization of CUDA source before tree-sitter parses it.

tree-sitter-cuda 0.21 mis-reads four common constructs (see grammars/README.md). Instead
of shipping a forked grammar that needs a C toolchain and the tree-sitter CLI at install
time, kltrans rewrites each trouble spot into text *of exactly the same length* that the
grammar reads correctly, and parses that. Because every replacement keeps its length and
never adds or removes a newline, a byte offset, line or column in the normalized text is
the same byte offset, line or column in the original: the offset map is the identity. All
node text is read from the original bytes (``Unit.text``), never from the normalized
buffer.

The rules:

``pragma``
    Every ``#pragma`` directive line (with its ``\\``-continuations) is replaced by spaces
    and recorded. A pragma between an unbraced ``for (...)``/``if (...)`` and its body
    otherwise yields ``MISSING ';'`` and a silently wrong tree. Lifting *every* pragma
    out of the tree (not just the troublesome ones) gives one rule for finding them:
    ``Unit.pragmas`` lists each with the statement it applies to.
``device-lambda``
    ``__device__`` / ``__host__`` between a lambda's capture list and its parameters
    (``[=] __device__ (int i) {...}``) are replaced by spaces and recorded; the lambda
    then parses as a ``lambda_expression``.
``align``
    ``__align__(N)`` becomes ``alignas  (N)`` (same length), which the grammar reads as an
    ``alignas_qualifier`` on structs and declarations.
``launch-bounds``
    A third (or later) argument of ``__launch_bounds__(a, b, c)`` is replaced by spaces;
    the arguments as written are read back from the original bytes.

Comments, string and character literals and ``#define`` bodies are never touched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RULES = ("pragma", "device-lambda", "align", "launch-bounds")


@dataclass(frozen=True)
class Normalization:
    """One replacement: ``original[start:end]`` was parsed as ``replacement``."""

    rule: str
    start: int
    end: int
    original: bytes
    replacement: bytes


# One scanner for everything the rules must see or skip. Alternatives that only skip
# (comments, literals, #define) come first so that a match inside them is never a hit.
_SCAN = re.compile(
    rb"""
      (?P<skip>
          //[^\n]*                                  # line comment
        | /\*.*?(?:\*/|\Z)                          # block comment (maybe unterminated)
        | "(?:\\.|[^"\\\n])*"?                      # string literal
        | '(?:\\.|[^'\\\n])*'?                      # character literal
        | ^[ \t]*\#[ \t]*define\b(?:\\\r?\n|[^\n])*   # macro definition with continuations
      )
    | (?P<pragma> ^[ \t]*\#[ \t]*pragma\b(?:\\\r?\n|[^\n])* )
    | (?P<align> \b__align__\b(?=\s*\() )
    | (?P<lb> \b__launch_bounds__\b\s*\( )
    | (?P<lambda> (?<!\])\]                         # a closing bracket not part of ]]
                  (?P<quals>(?:\s*\b(?:__device__|__host__)\b)+)
                  (?=\s*(?:\(|\{|mutable\b|->)) )
    """,
    re.MULTILINE | re.DOTALL | re.VERBOSE,
)

_SPACE_KEEP_NEWLINES = re.compile(rb"[^\n\r]")


def _blank(b: bytes) -> bytes:
    """Spaces of the same length, keeping line breaks so lines do not move."""
    return _SPACE_KEEP_NEWLINES.sub(b" ", b)


def _split_args(src: bytes, open_paren: int) -> tuple[list[tuple[int, int]], int] | None:
    """Top-level comma-separated argument spans of a parenthesized list.

    ``open_paren`` is the offset just after ``(``. Returns (spans, offset of ``)``), or
    None when the parentheses do not close.
    """
    depth = 0
    spans = []
    start = open_paren
    i = open_paren
    n = len(src)
    while i < n:
        c = src[i]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            if depth == 0:
                spans.append((start, i))
                return spans, i
            depth -= 1
        elif c == ord(",") and depth == 0:
            spans.append((start, i))
            start = i + 1
        i += 1
    return None


def normalize(src: bytes) -> tuple[bytes, tuple[Normalization, ...]]:
    """Return the normalized buffer (same length, same line breaks) and what changed."""
    out = bytearray(src)
    done: list[Normalization] = []

    def replace(rule: str, start: int, end: int, replacement: bytes) -> None:
        assert len(replacement) == end - start
        original = bytes(src[start:end])
        if original == replacement:
            return
        out[start:end] = replacement
        done.append(Normalization(rule, start, end, original, replacement))

    for m in _SCAN.finditer(src):
        kind = m.lastgroup
        if kind == "skip":
            continue
        if kind == "pragma":
            replace("pragma", m.start(), m.end(), _blank(m.group()))
        elif kind == "align":
            replace("align", m.start(), m.end(), b"alignas  ")
        elif kind == "lb":
            parsed = _split_args(src, m.end())
            if parsed is None:
                continue
            spans, close = parsed
            if len(spans) > 2:
                start = spans[1][1]  # the comma after the second argument
                replace("launch-bounds", start, close, _blank(src[start:close]))
        elif kind == "lambda":
            qs, qe = m.span("quals")
            qs += len(m.group("quals")) - len(m.group("quals").lstrip())
            replace("device-lambda", qs, qe, _blank(src[qs:qe]))
    return bytes(out), tuple(done)
