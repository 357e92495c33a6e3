"""Lossless edits: byte-range replacements on a unit.

A rewrite is a list of :class:`Edit`. :func:`apply_edits` rejects overlapping edits,
edits out of range, and edits that touch a declaration holding a parse error; builds the
new bytes (every byte outside the edited ranges is copied unchanged); re-parses; and
refuses a result with a parse error that the input did not have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.syntax.unit import Unit


@dataclass(frozen=True, order=True)
class Edit:
    """Replace ``source[start:end]`` with ``replacement`` (an insertion when start == end)."""

    start: int
    end: int
    replacement: bytes = b""

    def __post_init__(self) -> None:
        if isinstance(self.replacement, str):
            object.__setattr__(self, "replacement", self.replacement.encode("utf-8"))
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"bad edit range [{self.start}, {self.end})")

    @classmethod
    def replace(cls, node, text: str | bytes) -> "Edit":
        """Replace a tree-sitter node's bytes."""
        return cls(node.start_byte, node.end_byte, text)

    @classmethod
    def insert(cls, offset: int, text: str | bytes) -> "Edit":
        return cls(offset, offset, text)

    @classmethod
    def delete(cls, start: int, end: int) -> "Edit":
        return cls(start, end, b"")


class EditError(Exception):
    """A rewrite that cannot be applied; carries a diagnostic pointing at the problem."""

    def __init__(self, message: str, diagnostic=None):
        super().__init__(message)
        self.diagnostic = diagnostic


def _overlaps(a0: int, a1: int, b0: int, b1: int) -> bool:
    if a0 == a1 and b0 == b1:
        return a0 == b0
    if a0 == a1:
        return b0 < a0 < b1
    if b0 == b1:
        return a0 < b0 < a1
    return a0 < b1 and b0 < a1


def check_edits(unit: "Unit", edits: Iterable[Edit]) -> list[Edit]:
    """Sort and validate edits against ``unit``; raise :class:`EditError` on a problem."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    n = len(unit.source)
    for e in ordered:
        if e.end > n:
            raise EditError(f"edit [{e.start}, {e.end}) is past the end of {unit.path} ({n} bytes)")
    for a, b in zip(ordered, ordered[1:]):
        if _overlaps(a.start, a.end, b.start, b.end) or (a.start == a.end == b.start == b.end):
            d = unit.diagnostic(b.start, "error", "overlapping edits",
                                hint="a rewrite must be a list of non-overlapping byte ranges",
                                code="edit-overlap")
            raise EditError(f"{d.location}: overlapping edits [{a.start}, {a.end}) and "
                            f"[{b.start}, {b.end})", d)
    for s0, s1 in unit.poisoned_spans():
        for e in ordered:
            if _overlaps(e.start, e.end, s0, s1) or (e.start == e.end and s0 <= e.start <= s1):
                err = unit.error_nodes()[0]
                for cand in unit.error_nodes():
                    if s0 <= cand.start_byte <= s1:
                        err = cand
                        break
                d = unit.diagnostic(err, "error",
                                    "refusing to rewrite a declaration that does not parse",
                                    hint="the tree here may be wrong; fix the syntax error first",
                                    code="edit-in-error")
                raise EditError(f"{d.location}: refusing to rewrite a declaration that does "
                                f"not parse", d)
    return ordered


def splice(source: bytes, ordered: list[Edit]) -> bytes:
    """Apply sorted, validated edits to bytes."""
    out = []
    pos = 0
    for e in ordered:
        out.append(source[pos:e.start])
        out.append(e.replacement)
        pos = e.end
    out.append(source[pos:])
    return b"".join(out)


def apply_edits(unit: "Unit", edits: Iterable[Edit]) -> "Unit":
    """Return a new unit with ``edits`` applied; raise :class:`EditError` if they are bad."""
    from kltrans.syntax.unit import Unit

    ordered = check_edits(unit, edits)
    if not ordered:
        return unit
    new_source = splice(unit.source, ordered)
    new = Unit(new_source, unit.path, unit.origin)
    before = len(unit.error_nodes())
    after = new.error_nodes()
    # where each edit landed in the new buffer
    shift = 0
    landed = []
    for e in ordered:
        s = e.start + shift
        landed.append((s, s + len(e.replacement)))
        shift += len(e.replacement) - (e.end - e.start)
    new_poison = new.poisoned_spans()
    touched = [err for err, (p0, p1) in zip(after, new_poison)
               if any(p0 <= l1 and l0 <= p1 for l0, l1 in landed)]
    if len(after) > before or touched:
        err = touched[0] if touched else after[0]
        # what the parser saw there, and how many errors each side has: enough to tell a
        # broken edit from an error the unit had already
        kind = f"missing {err.type}" if err.is_missing else "unexpected text"
        line = new.source[new.source.rfind(b"\n", 0, err.start_byte) + 1:].split(b"\n", 1)[0]
        what = (f"{kind} in `{line.decode('utf-8', 'replace').strip()[:80]}`; "
                f"{before} parse error(s) before the edit, {len(after)} after")
        d = new.diagnostic(err, "error", f"the rewrite introduces a parse error ({what})",
                           hint="the edit was not applied", code="edit-breaks-parse")
        raise EditError(f"{d.location}: the rewrite introduces a parse error ({what})", d)
    return new
