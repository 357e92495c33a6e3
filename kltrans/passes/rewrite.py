"""The rewrite toolkit: the structured edits passes build their rewrites from.

A pass computes :class:`~kltrans.syntax.Edit` objects against one unit; these helpers
make the common ones the same way everywhere, so that no pass scans bytes for line breaks
or invents a name on its own:

- :func:`indent_of`, :func:`line_start` — the indentation and start of a line;
- :func:`remove` — a statement (or a pragma) with its whole line when it stands alone,
  else just its text;
- :func:`insert_lines_before` — lines (several, from a template) at a statement's
  indentation, before it;
- :func:`brace` — an unbraced body of ``for``/``while``/``do``/``if``/``else`` wrapped in
  braces, on one line or around its own lines;
- :func:`fresh_name` — a name no identifier of the function (or the file) uses yet;
- :func:`render` — a jinja2 template rendered and indented by the engine: the template is
  written at column 0, every line after the first gets the indentation of the place it
  goes to.

Layering: the pass engine (imports :mod:`kltrans.syntax` and jinja2).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Iterable

from kltrans.syntax import Edit

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax import Unit

_NAME_CANDIDATES = ("i", "j", "k", "u", "v", "w", "ii", "jj")


def line_start(unit: "Unit", offset: int) -> int:
    """The byte offset where the line holding ``offset`` starts."""
    return unit.source.rfind(b"\n", 0, offset) + 1


def indent_of(unit: "Unit", offset: int) -> str:
    """The blanks that start the line holding ``offset``."""
    start = line_start(unit, offset)
    line = unit.source[start:offset].decode("utf-8", "replace")
    return line[:len(line) - len(line.lstrip(" \t"))]


def alone_on_line(unit: "Unit", start: int, end: int) -> bool:
    """Only blanks before ``start`` on its line and a line break right after ``end``."""
    src = unit.source
    return src[line_start(unit, start):start].strip() == b"" and src[end:end + 1] == b"\n"


def remove(unit: "Unit", start: int, end: int) -> Edit:
    """Delete ``[start, end)``: its whole line when it stands alone there."""
    if alone_on_line(unit, start, end):
        return Edit.delete(line_start(unit, start), end + 1)
    return Edit.delete(start, end)


def remove_node(unit: "Unit", node: "Node") -> Edit:
    return remove(unit, node.start_byte, node.end_byte)


def insert_lines_before(unit: "Unit", stmt: "Node", text: str) -> Edit:
    """``text`` (one or more lines, written at column 0) before statement ``stmt``, at its
    indentation; on the same line when ``stmt`` does not start its line."""
    indent = indent_of(unit, stmt.start_byte)
    lines = [indent + ln if ln else ln for ln in text.rstrip("\n").split("\n")]
    if unit.source[line_start(unit, stmt.start_byte):stmt.start_byte].strip() == b"":
        return Edit.insert(line_start(unit, stmt.start_byte), "\n".join(lines) + "\n")
    return Edit.insert(stmt.start_byte, " ".join(ln.strip() for ln in lines) + " ")


def brace(unit: "Unit", body: "Node") -> list[Edit]:
    """Wrap the unbraced body ``body`` in braces: ``{ stmt; }`` when it is on its header's
    line, else an opening brace at the end of the header and a closing one on its own line
    at the header's indentation."""
    prev = body.prev_sibling
    if prev is None:
        raise ValueError("a body follows its statement's header")
    if b"\n" in unit.source[prev.end_byte:body.start_byte]:
        close = "\n" + indent_of(unit, prev.end_byte) + "}"
        return [Edit.insert(prev.end_byte, " {"), Edit.insert(body.end_byte, close)]
    return [Edit.insert(body.start_byte, "{ "), Edit.insert(body.end_byte, " }")]


def fresh_name(unit: "Unit", scope: "Node | None", candidates: Iterable[str] = (),
               taken: Iterable[str] = ()) -> str:
    """The first of ``candidates`` (then ``i, j, k, ...``, then ``r0, r1, ...``) that no
    identifier in ``scope`` (a function node; None: the whole unit) nor ``taken`` uses."""
    node = scope if scope is not None else unit.root
    used = {unit.text(n) for n in unit.walk(node)
            if n.type in ("identifier", "type_identifier", "field_identifier")}
    used |= set(taken)
    for cand in (*candidates, *_NAME_CANDIDATES):
        if cand not in used:
            return cand
    n = 0
    while f"r{n}" in used:
        n += 1
    return f"r{n}"


@functools.lru_cache(maxsize=256)
def _compiled(text: str):
    import jinja2

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False,
                             trim_blocks=True, lstrip_blocks=True, autoescape=False)
    return env.from_string(text)


def render(template: str, indent: str = "", **env) -> str:
    """``template`` (jinja2, written at column 0) rendered with ``env``, every line after
    the first indented by ``indent`` (the first goes where the caller puts it)."""
    text = _compiled(template).render(**env)
    lines = text.split("\n")
    return "\n".join([lines[0]] + [indent + ln if ln.strip() else "" for ln in lines[1:]])
