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
- :func:`toks` (the C tokens of a text, :data:`C_TOKEN`), :func:`conjuncts` (the
  top-level ``&&`` terms of a condition), :func:`less_than` (``A < B`` with A a name),
  :func:`balanced` (``passes/stage_transpose.py``'s);

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


# ================================================= tokens and conditions (stage_transpose)
C_TOKEN = re.compile(r"[A-Za-z_]\w*|0[xX][0-9a-fA-F]+[uUlL]*|\d+[\w.]*|<<=|>>=|->|\+\+|--|<<|>>"
                    r"|<=|>=|==|!=|&&|\|\||[-+*/%&|^!=<>]=|\S")


def toks(text: str) -> list[str]:
    """C tokens of ``text``, comments and blanks left out."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return C_TOKEN.findall(text)


def conjuncts(text: str) -> list[str] | None:
    """``a < b && c < d`` -> [``a < b``, ``c < d``] (top-level ``&&`` only)."""
    t = text.strip()
    while t.startswith("(") and t.endswith(")") and balanced(t[1:-1]):
        t = t[1:-1].strip()
    out, depth, cur, i = [], 0, "", 0
    while i < len(t):
        ch = t[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if depth == 0 and t.startswith("&&", i):
            out.append(cur.strip())
            cur, i = "", i + 2
            continue
        if depth == 0 and t.startswith("||", i):
            return None
        cur += ch
        i += 1
    out.append(cur.strip())
    return out


def balanced(s: str) -> bool:
    """The parentheses of ``s`` balance (no ``)`` before its ``(``)."""
    d = 0
    for ch in s:
        d += ch == "("
        d -= ch == ")"
        if d < 0:
            return False
    return d == 0


def less_than(conj: str):
    """``A < B`` -> (A, B) when A is an identifier, else None."""
    m = re.fullmatch(r"\(?\s*([A-Za-z_]\w*)\s*<\s*([^<>=]+?)\s*\)?", conj)
    return (m.group(1), m.group(2).strip()) if m else None
