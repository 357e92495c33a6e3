"""Text and token helpers for code a pass writes from a format template and reads back.

Several catalogue passes write a statement or a device helper from a format string and
recognize it later token for token (comments aside). The helpers here do that reading
and the plain text work around it:

- :func:`template_regex` — a regex over normalized tokens (``rewrite.token_text``) for a
  ``{name}`` template; :func:`helper_is` — a top-level function is a template's form;
- :func:`device_function`, :func:`calls_of` — a top-level definition by name, the calls
  of a name; :func:`with_comments`, :func:`delete_definition` — a definition with the
  ``//`` lines above it, and its deletion;
- :func:`line_start` (of a source's bytes; ``rewrite.line_start`` takes a unit) and
  :func:`indent` (every line after the first indented);

(those were ``passes/vectorize_online_stream.py``'s helpers, which five catalogue modules
imported), and the text of nodes in messages and in compared forms:

- :func:`line_of` and :func:`snippet` (a node's line, its text cut short for a message),
  :func:`compact` (a text without blanks), :func:`unparen` (without blanks and without
  the parentheses around all of it) (``passes/row_per_warp.py``'s);

The engine holds them so that passes do not import each other.

Layering: the pass engine (imports :mod:`kltrans.syntax` and :mod:`kltrans.passes.rewrite`).
"""

from __future__ import annotations

import re

from kltrans.passes.rewrite import lex, norm, token_text, unwrap
from kltrans.syntax import Edit


def template_regex(template: str, exprs=()) -> re.Pattern:
    """A regex over normalized tokens for ``template``: each ``{name}`` captures an
    identifier, or an expression when the name is in ``exprs``; later uses must agree."""
    names: list = []
    out = []
    template = re.sub(r"//[^\n]*", " ", template)
    for part in re.split(r"(\{\{|\}\}|\{\w+\})", template):
        if part in ("{{", "}}"):
            out.append(re.escape(part[0]))
        elif re.fullmatch(r"\{\w+\}", part):
            n = part[1:-1]
            if n in names:
                out.append(f"(?P={n})")
            else:
                names.append(n)
                out.append(f"(?P<{n}>.+?)" if n in exprs else f"(?P<{n}>[A-Za-z_]\\w*)")
        else:
            out.extend(re.escape(t) for t in lex(part))
    return re.compile(" ".join(out))


def indent(text: str, ind: str) -> str:
    lines = text.split("\n")
    return "\n".join([lines[0]] + [(ind + ln) if ln else ln for ln in lines[1:]])


def line_start(src: bytes, pos: int) -> int:
    return src.rfind(b"\n", 0, pos) + 1


def device_function(unit, name: str):
    """The top-level definition of the function ``name`` (node) or None."""
    for n in unit.root.named_children:
        if n.type != "function_definition":
            continue
        d = n.child_by_field_name("declarator")
        while d is not None and d.type != "function_declarator":
            d = d.child_by_field_name("declarator")
        f = d.child_by_field_name("declarator") if d is not None else None
        if f is not None and unit.text(f) == name:
            return n
    return None


def calls_of(unit, name: str) -> list:
    out = []
    for n in unit.walk(unit.root):
        if n.type == "call_expression":
            f = n.child_by_field_name("function")
            if f is not None and unit.text(f) == name:
                out.append(n)
    return out


def with_comments(unit, node) -> int:
    """Start byte of the ``//`` comment lines right above ``node`` (or of its line)."""
    src = unit.source
    start = line_start(src, node.start_byte)
    while start > 0:
        prev = line_start(src, start - 1)
        if src[prev:start].strip().startswith(b"//"):
            start = prev
        else:
            break
    return start


def delete_definition(unit, node) -> Edit:
    """Delete a top-level definition with its comment lines and the blank line after it."""
    src = unit.source
    s = with_comments(unit, node)
    e = src.find(b"\n", node.end_byte)
    e = len(src) if e < 0 else e + 1
    if src[e:e + 1] == b"\n":
        e += 1
    return Edit.delete(s, e)


def helper_is(unit, name: str, template: str, key: str) -> bool:
    """The top-level function ``name`` is ``template``'s form, its ``{key}`` being ``name``."""
    fn = device_function(unit, name)
    if fn is None:
        return False
    m = template_regex(template).fullmatch(token_text(unit.text(fn)))
    return m is not None and m.group(key) == name


# ================================================ node text in messages and forms (row_per_warp)
def line_of(unit, node) -> int:
    """The line number of ``node``'s start."""
    return unit.line_col(node.start_byte)[0]


def snippet(unit, node, k: int = 60) -> str:
    """``node``'s text, blanks collapsed, cut to ``k`` characters (for a message)."""
    t = norm(unit.text(node))
    return t if len(t) <= k else t[:k - 3] + "..."


def compact(text: str) -> str:
    """The text without blanks (``int off`` reads ``intoff``: patterns allow for that)."""
    return re.sub(r"\s+", "", text)


def unparen(text: str) -> str:
    """``text`` without blanks and without the parentheses around all of it."""
    return re.sub(r"\s+", "", unwrap(text))
