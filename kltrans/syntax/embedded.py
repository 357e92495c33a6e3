"""CUDA source embedded as string literals in Python files.

:func:`find_embedded` parses a Python file with libcst and reports the CUDA sources passed
to the call sites kltrans understands; :func:`apply_embedded_edits` rewrites byte ranges of
those sources and writes them back into the Python file losslessly.

Recognized call sites (matched on the last component of the callee's dotted name, or on a
local alias made with ``from ... import NAME as ALIAS``):

- ``load_inline(..., cuda_sources=X)`` (torch; also the third positional argument), where X
  is one source or a list/tuple of sources;
- ``RawKernel(code, name, ...)`` (cupy; ``code=``/``name=`` also accepted);
- ``RawModule(code=X)`` or its first positional argument (cupy);
- ``Program(code, code_type)`` (cuda.core; ``code=`` also accepted; a ``code_type`` that is
  a string other than ``"c++"``, e.g. ``"ptx"``, is reported as skipped).

A source is a string literal of any quote style and prefix (``r``, ``u``), an implicit
concatenation of such literals (``"a" "b"``), or a bare name bound exactly once at module
level by ``NAME = <literal>`` (or ``NAME: str = <literal>``).  Anything else -- f-strings,
bytes, ``str.format``, ``%``, ``+``, calls, names bound more than once -- is reported as a
:class:`SkippedSite` with a reason.

The value -> source mapping
---------------------------
Everything is measured in UTF-8 bytes.  The CUDA text of a source is ``text``; its bytes are
``text.encode("utf-8")`` and a *value offset* is an index into those bytes.  Each literal
token (one part of a concatenation) is decoded here, escape sequence by escape sequence, into
*segments* (and the decoded value is checked against libcst's ``evaluated_value``):

- an *identity* segment is a run of characters copied verbatim from the file (every byte of
  a raw string, and every ordinary character of a non-raw one).  Value byte ``v`` of such a
  segment maps to file byte ``src_start + (v - value_start)``;
- an *escape* segment is one escape sequence (``\\n``, ``\\x41``, ``\\u00e9``,
  ``\\N{...}``, an octal escape, an invalid escape such as ``\\q`` that Python keeps
  verbatim) or a CR/CRLF line break that Python reads as ``\\n``.  Every value byte it
  produces maps to the escape's first file byte, and an edit may start or end only at its
  beginning or end, never inside it;
- a backslash-newline line continuation produces no value bytes; it is a gap between
  segments.

The parts of a concatenation lie end to end in value space; an edit must fall inside one part
(an insertion exactly at the joint of two parts goes to the start of the later part).

Writing back: an edit's value range is mapped to a file byte range inside one literal body,
the replacement is escaped for that literal's prefix and quote (see :func:`_escape`), and the
bytes are spliced; nothing outside the edited file ranges changes.  Every new literal body is
checked (it must tokenize with its closing quote exactly at its end and decode to the
expected value), the whole file is re-read with :func:`find_embedded`, and the edited sources
must hold exactly the expected text.  In the rare cases where a minimal splice would merge
with a neighbour (a triple-quoted body where the edit makes three quotes meet or a quote end
the body, or an edit right after a short octal escape such as ``\\1`` that would be
followed by a digit), the edit is widened over the neighbouring quote or digit, which is then
written escaped.

libcst is imported lazily, so this module imports without it.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
import warnings
from dataclasses import dataclass, field
from typing import Iterable

__all__ = [
    "EmbeddedError",
    "EmbeddedSource",
    "SkippedSite",
    "apply_embedded_edits",
    "find_embedded",
]

KINDS = ("load_inline", "RawKernel", "RawModule", "Program")

# Segment kinds.
_IDENT = 0       # verbatim characters
_ESC = 1         # one escape sequence (or a CR / CRLF read as "\n")
_OCT_SHORT = 2   # an octal escape of one or two digits: a following digit would extend it

_SIMPLE_ESCAPES = {
    "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f",
    "n": "\n", "r": "\r", "t": "\t", "v": "\v",
}
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"

# (value_start, value_len, src_start, src_len, kind): value offsets index the source's text
# bytes, src offsets the Python file's bytes.
_Segment = tuple[int, int, int, int, int]


class EmbeddedError(Exception):
    """A Python file or an embedded-source edit that cannot be handled.

    ``line`` and ``column`` (1-based, 0 when unknown) point into the Python file.
    """

    def __init__(self, message: str, line: int = 0, column: int = 0):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column

    def __str__(self) -> str:
        if self.line:
            return f"line {self.line}, column {self.column}: {self.message}"
        return self.message


# ---------------------------------------------------------------------------------------
# Literal tokens


@dataclass(frozen=True)
class _Literal:
    """One string-literal token of an embedded source, with its value -> file mapping."""

    start: int          # file byte offset of the token (its prefix)
    line: int           # 1-based line of the token
    column: int         # 1-based column (characters) of the token
    token: bytes        # the token's bytes: prefix, quotes, body, quotes
    prefix: str         # lower-cased prefix ("", "r", "u")
    quote: str          # ', ", ''' or """
    value_start: int    # value offset (into the source's text bytes) of this token's value
    value_end: int
    # in value order; pieces producing no value bytes (line continuations) are left out
    segments: tuple[_Segment, ...]
    newline: str        # how to write a newline inside this (triple-quoted) literal

    @property
    def raw(self) -> bool:
        return "r" in self.prefix

    @property
    def triple(self) -> bool:
        return len(self.quote) == 3

    @property
    def body_start(self) -> int:
        return self.start + len(self.prefix) + len(self.quote)

    @property
    def body_end(self) -> int:
        return self.start + len(self.token) - len(self.quote)

    def _segment_at(self, v: int) -> _Segment | None:
        """The segment producing value byte ``v`` (value_start <= v < value_end)."""
        i = bisect.bisect_right(self.segments, v, key=lambda s: s[0]) - 1
        if i >= 0:
            seg = self.segments[i]
            if seg[0] <= v < seg[0] + seg[1]:
                return seg
        return None

    def src(self, v: int) -> int:
        """File byte offset of value byte ``v``; ``value_end`` maps to the body's end."""
        if v >= self.value_end:
            return self.body_end
        seg = self._segment_at(v)
        if seg is None:  # pragma: no cover - segments cover the value exactly
            return self.body_end
        vs, _vl, ss, _sl, kind = seg
        return ss + (v - vs) if kind == _IDENT else ss

    def is_boundary(self, v: int, text: bytes) -> bool:
        """May an edit start or end at value offset ``v``?"""
        if v == self.value_end:
            return True
        seg = self._segment_at(v)
        if seg is None:  # pragma: no cover
            return False
        if seg[4] == _IDENT:
            return (text[v] & 0xC0) != 0x80  # not a UTF-8 continuation byte
        return v == seg[0]

    def kind_before(self, v: int) -> int | None:
        """Kind of the segment that produced value byte ``v - 1`` (None at the start)."""
        if v <= self.value_start:
            return None
        seg = self._segment_at(v - 1)
        return None if seg is None else seg[4]

    def kind_at(self, v: int) -> int | None:
        if v >= self.value_end:
            return None
        seg = self._segment_at(v)
        return None if seg is None else seg[4]


def _decode_body(body: str, raw: bool) -> tuple[str, list[tuple[int, int, str, int]]]:
    """Decode a literal body the way Python does.

    Returns the value and its pieces ``(src_offset, src_len, output, kind)`` with offsets in
    UTF-8 bytes relative to the body's start.  Raises ValueError for a malformed escape.
    """
    pieces: list[tuple[int, int, str, int]] = []
    out: list[str] = []
    i, n, pos = 0, len(body), 0

    def emit(j: int, text: str, kind: int) -> None:
        nonlocal i, pos
        blen = len(body[i:j].encode("utf-8"))
        pieces.append((pos, blen, text, kind))
        out.append(text)
        pos += blen
        i = j

    while i < n:
        c = body[i]
        if c == "\r":  # CR or CRLF inside the literal: Python reads "\n"
            emit(i + 2 if body.startswith("\r\n", i) else i + 1, "\n", _ESC)
        elif c != "\\" or raw:
            j = i + 1
            while j < n and body[j] != "\r" and (raw or body[j] != "\\"):
                j += 1
            emit(j, body[i:j], _IDENT)
        else:
            if i + 1 >= n:
                raise ValueError("backslash at the end of a string literal")
            d = body[i + 1]
            if d == "\n":
                emit(i + 2, "", _ESC)
            elif d == "\r":
                emit(i + 3 if body.startswith("\r\n", i + 1) else i + 2, "", _ESC)
            elif d in _SIMPLE_ESCAPES:
                emit(i + 2, _SIMPLE_ESCAPES[d], _ESC)
            elif d in _OCTAL:
                j = i + 1
                while j < n and j < i + 4 and body[j] in _OCTAL:
                    j += 1
                emit(j, chr(int(body[i + 1:j], 8)), _ESC if j - i == 4 else _OCT_SHORT)
            elif d in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[d]
                digits = body[i + 2:i + 2 + width]
                if len(digits) != width or any(h not in _HEX for h in digits):
                    raise ValueError(f"truncated \\{d} escape")
                emit(i + 2 + width, chr(int(digits, 16)), _ESC)
            elif d == "N":
                close = body.find("}", i + 3)
                if not body.startswith("{", i + 2) or close < 0:
                    raise ValueError("malformed \\N{...} escape")
                emit(close + 1, unicodedata.lookup(body[i + 3:close]), _ESC)
            else:  # invalid escape: Python keeps the backslash and the character
                emit(i + 2, body[i:i + 2], _ESC)
    return "".join(out), pieces


def _segments(pieces, body_src: int, value_start: int) -> tuple[_Segment, ...]:
    segs = []
    v = value_start
    for s_off, s_len, text, kind in pieces:
        v_len = len(text.encode("utf-8"))
        if v_len == 0:
            continue
        segs.append((v, v_len, body_src + s_off, s_len, kind))
        v += v_len
    return tuple(segs)


def _closes_at_end(body: str, quote: str) -> bool:
    """Does ``quote + body + quote`` tokenize as one string with its closing quote last?"""
    s = body + quote
    q, triple = quote[0], len(quote) == 3
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            if i + 1 >= n:
                return False
            i += 3 if s.startswith("\r\n", i + 1) else 2
            continue
        if c == "\0":
            return False
        if triple:
            if s.startswith(quote, i):
                return i == len(body)
        elif c == q:
            return i == len(body)
        elif c in "\r\n":
            return False
        i += 1
    return False


# ---------------------------------------------------------------------------------------
# Public records


@dataclass(frozen=True)
class EmbeddedSource:
    """A CUDA source embedded as a string literal (or a concatenation of them)."""

    kind: str           # "load_inline" | "RawKernel" | "RawModule" | "Program"
    text: str           # the CUDA source: the Python string's value
    line: int           # 1-based line of the (first) literal in the Python file
    column: int         # 1-based column (characters) of the (first) literal
    name: str | None    # RawKernel's kernel name when given as a string, else None
    index: int          # position among the sources found in the file (0-based)
    _literals: tuple[_Literal, ...] = field(default=(), repr=False)

    @property
    def size(self) -> int:
        """Length of ``text`` in UTF-8 bytes."""
        return self._literals[-1].value_end if self._literals else len(self.text.encode("utf-8"))

    def _literal_of(self, value_offset: int) -> _Literal:
        for lit in self._literals:
            if lit.value_start <= value_offset < lit.value_end:
                return lit
        return self._literals[-1]

    def source_offset(self, value_offset: int) -> int:
        """File byte offset of byte ``value_offset`` of ``text.encode("utf-8")``.

        Valid for ``0 <= value_offset <= size``; a byte produced by an escape sequence maps
        to the escape's first byte, and ``size`` maps to the closing quote of the last part.
        """
        if not 0 <= value_offset <= self.size:
            raise ValueError(f"value offset {value_offset} out of range 0..{self.size}")
        return self._literal_of(value_offset).src(value_offset)

    def source_position(self, value_offset: int) -> tuple[int, int]:
        """(line, column), 1-based, in the Python file, of byte ``value_offset`` of the text."""
        off = self.source_offset(value_offset)
        lit = self._literal_of(value_offset)
        before = lit.token[:off - lit.start]
        breaks = list(re.finditer(rb"\r\n|\r|\n", before))
        if not breaks:
            return lit.line, lit.column + len(before.decode("utf-8", "ignore"))
        tail = before[breaks[-1].end():]
        return lit.line + len(breaks), len(tail.decode("utf-8", "ignore")) + 1


@dataclass(frozen=True)
class SkippedSite:
    """A recognized call site whose source cannot be rewritten (with why)."""

    line: int
    column: int
    kind: str
    reason: str


# ---------------------------------------------------------------------------------------
# Reading a Python file

_BOM = b"\xef\xbb\xbf"


def _to_bytes(py_source: str | bytes) -> bytes:
    if isinstance(py_source, str):
        try:
            return py_source.encode("utf-8")
        except UnicodeEncodeError as e:
            raise EmbeddedError(f"Python source cannot be encoded as UTF-8: {e.reason}") from None
    return bytes(py_source)


class _Lines:
    """Byte offset -> (line, column) for a file; columns count characters."""

    def __init__(self, data: bytes, base: int):
        self.data = data
        self.starts = [base] + [m.end() for m in re.finditer(rb"\r\n|\r|\n", data)]

    def position(self, off: int) -> tuple[int, int]:
        i = bisect.bisect_right(self.starts, off) - 1
        start = self.starts[max(i, 0)]
        return i + 1, len(self.data[start:off].decode("utf-8", "ignore")) + 1


def _syntax_error(text: str, exc) -> EmbeddedError:
    """An EmbeddedError for a file libcst cannot parse, located as precisely as possible."""
    import ast

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as e:
        return EmbeddedError(f"Python syntax error: {e.msg}", e.lineno or 0, e.offset or 0)
    except (ValueError, MemoryError, RecursionError):
        pass
    line = getattr(exc, "raw_line", 0) or 0
    column = (getattr(exc, "raw_column", 0) or 0) + 1 if line else 0
    message = getattr(exc, "message", None) or str(exc).splitlines()[0]
    return EmbeddedError(f"Python syntax error: {message}", line, column)


class _Skip(Exception):
    def __init__(self, node, reason: str):
        super().__init__(reason)
        self.node = node
        self.reason = reason


class _Finder:
    """Walks one parsed module and collects embedded sources and skipped sites."""

    def __init__(self, data: bytes, text: str, base: int):
        import libcst as cst
        from libcst import metadata as md

        self.cst = cst
        self.md = md
        self.data = data
        self.base = base
        self.lines = _Lines(data, base)
        try:
            module = cst.parse_module(text, cst.PartialParserConfig(encoding="utf-8"))
        except cst.ParserSyntaxError as e:
            raise _syntax_error(text, e) from None
        self.wrapper = md.MetadataWrapper(module, unsafe_skip_copy=True)
        self.spans = self.wrapper.resolve(md.ByteSpanPositionProvider)
        self.scopes = self.wrapper.resolve(md.ScopeProvider)
        self.parents = self.wrapper.resolve(md.ParentNodeProvider)
        self.newline = "\r\n" if re.search(rb"\r\n", data[:data.find(b"\n") + 1]) else "\n"
        self.found: list[tuple[str, list, str | None]] = []   # (kind, literal nodes, name)
        self.skipped: list[SkippedSite] = []

    # -- positions

    def offset(self, node) -> int:
        return self.base + self.spans[node].start

    def position(self, node) -> tuple[int, int]:
        return self.lines.position(self.offset(node))

    # -- call sites

    def run(self) -> tuple[list[EmbeddedSource], list[SkippedSite]]:
        cst = self.cst
        calls: list = []
        aliases: dict[str, str] = {}

        class Collect(cst.CSTVisitor):
            def visit_Call(self, node) -> None:
                calls.append(node)

            def visit_ImportFrom(self, node) -> None:
                if isinstance(node.names, cst.ImportStar):
                    return
                for alias in node.names:
                    if alias.asname is None or not isinstance(alias.asname.name, cst.Name):
                        continue
                    imported = alias.name
                    last = (imported.attr.value if isinstance(imported, cst.Attribute)
                            else imported.value)
                    if last in KINDS:
                        aliases[alias.asname.name.value] = last

        self.wrapper.module.visit(Collect())
        for call in calls:
            func = call.func
            if isinstance(func, cst.Name):
                last = func.value
            elif isinstance(func, cst.Attribute):
                last = func.attr.value
            else:
                continue
            if last in KINDS:
                kind = last
            else:  # an alias only counts when called by its bare name
                kind = aliases.get(last) if isinstance(func, cst.Name) else None
            if kind is not None:
                self.site(kind, call)
        return self.build()

    def site(self, kind: str, call) -> None:
        args = self.arguments(call)
        if kind == "load_inline":
            expr = args("cuda_sources", 2)
            if expr is None:
                return  # a C++-only extension
        elif kind == "RawModule":
            expr = args("code", 0)
            if expr is None:
                return  # RawModule(path=...): nothing embedded
        else:
            expr = args("code", 0)
        if expr is None:
            self.skip(call, kind, f"{kind} call without a code argument")
            return
        if expr is _STARRED:
            self.skip(call, kind, "arguments passed through *args/**kwargs cannot be analysed")
            return
        if kind == "Program":
            code_type = self.string_value(args("code_type", 1))
            if code_type is not None and code_type.lower() != "c++":
                self.skip(expr, kind, f"code_type {code_type!r} is not CUDA C++")
                return
        name = None
        if kind == "RawKernel":
            name = self.string_value(args("name", 1))
        found, skipped = self.resolve(expr, allow_seq=(kind == "load_inline"), seen=frozenset())
        for node, reason in skipped:
            self.skip(node, kind, reason)
        for parts in found:
            self.found.append((kind, parts, name))

    def arguments(self, call):
        cst = self.cst
        positional, keywords, starred = [], {}, False
        for a in call.args:
            if a.star:
                starred = True
            elif a.keyword is not None:
                keywords[a.keyword.value] = a.value
            elif not starred:
                positional.append(a.value)

        def get(keyword: str, index: int):
            if keyword in keywords:
                value = keywords[keyword]
            elif index < len(positional):
                value = positional[index]
            elif starred:
                return _STARRED
            else:
                return None
            if isinstance(value, cst.Name) and value.value == "None":
                return None
            return value

        return get

    def string_value(self, expr) -> str | None:
        """The value of a string argument (literal or module-level constant), else None."""
        if expr is None or expr is _STARRED:
            return None
        found, skipped = self.resolve(expr, allow_seq=False, seen=frozenset())
        if skipped or len(found) != 1:
            return None
        try:
            return "".join(self.evaluate(p) for p in found[0])
        except EmbeddedError:
            return None

    def skip(self, node, kind: str, reason: str) -> None:
        line, column = self.position(node)
        self.skipped.append(SkippedSite(line, column, kind, reason))

    # -- expressions

    def resolve(self, expr, allow_seq: bool, seen: frozenset):
        """Sources denoted by ``expr``: ([literal-part lists], [(node, skip reason)])."""
        cst = self.cst
        try:
            if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
                return [self.literal_parts(expr)], []
            if isinstance(expr, cst.Name):
                value, seen = self.lookup(expr, seen)
                if value is None:
                    return [], []
                return self.resolve(value, allow_seq, seen)
            if allow_seq and isinstance(expr, (cst.List, cst.Tuple)):
                found, skipped = [], []
                for el in expr.elements:
                    if isinstance(el, cst.StarredElement):
                        skipped.append((el, "a starred element cannot be analysed"))
                        continue
                    f, s = self.resolve(el.value, False, seen)
                    found += f
                    skipped += s
                return found, skipped
            raise _Skip(expr, self.describe(expr))
        except _Skip as s:
            return [], [(s.node, s.reason)]

    def literal_parts(self, expr) -> list:
        cst = self.cst
        parts, todo = [], [expr]
        while todo:
            node = todo.pop(0)
            if isinstance(node, cst.ConcatenatedString):
                todo[:0] = [node.left, node.right]
            elif isinstance(node, cst.FormattedString):
                if any(isinstance(p, cst.FormattedStringExpression) for p in node.parts):
                    raise _Skip(node, "f-string with substitutions cannot be rewritten losslessly")
                raise _Skip(node, "f-string literal is not supported (drop the f prefix)")
            elif isinstance(node, cst.SimpleString):
                if "b" in node.prefix.lower():
                    raise _Skip(node, "bytes literal: the CUDA source must be a str literal")
                parts.append(node)
            else:  # pragma: no cover - libcst has no other string parts
                raise _Skip(node, self.describe(node))
        return parts

    def lookup(self, name, seen: frozenset):
        """The expression a module-level name is bound to, or raise _Skip."""
        cst, md = self.cst, self.md
        ident = name.value
        if ident in seen:
            raise _Skip(name, f"name {ident!r} refers to itself")
        scope = self.scopes.get(name)
        if scope is None:
            raise _Skip(name, f"cannot resolve name {ident!r}")
        assignments = list(scope[ident])
        if not assignments:
            raise _Skip(name, f"name {ident!r} is not assigned in this file")
        if any(not isinstance(a.scope, md.GlobalScope) for a in assignments):
            raise _Skip(name, f"{ident!r} is a local variable; only module-level strings "
                              "can be rewritten")
        if len(assignments) > 1:
            raise _Skip(name, f"{ident!r} is assigned {len(assignments)} times at module level; "
                              "its value is ambiguous")
        a = assignments[0]
        target = getattr(a, "node", None)
        parent = self.parents.get(target) if isinstance(a, md.Assignment) else None
        if isinstance(parent, cst.AssignTarget) and parent.target is target:
            assign = self.parents.get(parent)
            if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
                raise _Skip(name, f"{ident!r} is bound by a multi-target assignment")
            return assign.value, seen | {ident}
        if (isinstance(parent, cst.AnnAssign) and parent.target is target
                and parent.value is not None):
            return parent.value, seen | {ident}
        raise _Skip(name, f"{ident!r} is not bound by a simple `NAME = <string literal>` "
                          "assignment")

    def describe(self, expr) -> str:
        cst = self.cst
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                and expr.func.attr.value == "format":
            return "str.format(...) is computed at run time and cannot be rewritten"
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Modulo):
                return "%-formatting is computed at run time and cannot be rewritten"
            if isinstance(expr.operator, cst.Add):
                return "a string built with + is computed at run time and cannot be rewritten"
        if isinstance(expr, cst.Call):
            return "a function call's result cannot be rewritten"
        return f"{type(expr).__name__} expression is not a string literal"

    # -- building records

    def evaluate(self, node) -> str:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = node.evaluated_value
        except Exception as e:  # noqa: BLE001 - literal_eval raises many kinds
            line, column = self.position(node)
            raise EmbeddedError(f"cannot evaluate string literal: {e}", line, column) from None
        if not isinstance(value, str):
            line, column = self.position(node)
            raise EmbeddedError("string literal did not evaluate to str", line, column)
        return value

    def literal(self, node, value_start: int) -> tuple[_Literal, str]:
        start = self.offset(node)
        token = node.value.encode("utf-8")
        line, column = self.lines.position(start)
        if self.data[start:start + len(token)] != token:  # pragma: no cover - libcst invariant
            raise EmbeddedError("internal error: literal position does not match the file",
                                line, column)
        prefix, quote = node.prefix.lower(), node.quote
        try:
            value, pieces = _decode_body(node.raw_value, "r" in prefix)
        except (ValueError, KeyError) as e:
            raise EmbeddedError(f"cannot decode string literal: {e}", line, column) from None
        expected = self.evaluate(node)
        if value != expected:
            raise EmbeddedError("decoded string literal differs from its evaluated value",
                                line, column)
        body_src = start + len(prefix) + len(quote)
        segs = _segments(pieces, body_src, value_start)
        newline = "\r\n" if b"\r\n" in token else "\n" if b"\n" in token else self.newline
        lit = _Literal(start, line, column, token, prefix, quote, value_start,
                       value_start + len(value.encode("utf-8")), segs, newline)
        return lit, value

    def build(self) -> tuple[list[EmbeddedSource], list[SkippedSite]]:
        by_start: dict[int, tuple[str, list, str | None]] = {}
        for kind, parts, name in self.found:
            by_start.setdefault(self.offset(parts[0]), (kind, parts, name))
        sources = []
        for index, start in enumerate(sorted(by_start)):
            kind, parts, name = by_start[start]
            literals, texts, v = [], [], 0
            for node in parts:
                lit, value = self.literal(node, v)
                literals.append(lit)
                texts.append(value)
                v = lit.value_end
            first = literals[0]
            sources.append(EmbeddedSource(kind, "".join(texts), first.line, first.column, name,
                                          index, tuple(literals)))
        self.skipped.sort(key=lambda s: (s.line, s.column))
        return sources, self.skipped


_STARRED = object()


def find_embedded(py_source: str | bytes) -> tuple[list[EmbeddedSource], list[SkippedSite]]:
    """Find the CUDA sources embedded in a Python file.

    Returns the sources (in file order of their first literal; a literal referenced by
    several call sites is reported once) and the recognized call sites that cannot be
    rewritten.  Raises :class:`EmbeddedError` (with line and column) if the file does not
    parse.
    """
    data = _to_bytes(py_source)
    base = len(_BOM) if data.startswith(_BOM) else 0
    try:
        text = data[base:].decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise EmbeddedError("Python source is not valid UTF-8", line, 1) from None
    return _Finder(data, text, base).run()


# ---------------------------------------------------------------------------------------
# Writing back


def _escape(rep: str, lit: _Literal, escape_quotes: bool, after_short_octal: bool) -> str:
    """Spell ``rep`` inside the body of ``lit``.

    Raw literals get the text verbatim (its representability is checked afterwards).
    Non-raw literals get backslashes doubled; newlines and tabs written as ``\\n`` and
    ``\\t`` in single-line literals (kept as they are in triple-quoted ones); CR and the
    other control characters (NUL included) escaped; and the quote character escaped in
    single-line literals (in triple-quoted ones only when ``escape_quotes``).  A leading
    octal digit right after a short octal escape is written as ``\\xHH`` so that it does
    not extend that escape.
    """
    if lit.raw:
        return rep.replace("\n", lit.newline) if lit.triple else rep
    q = lit.quote[0]
    out = []
    for k, ch in enumerate(rep):
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append(lit.newline if lit.triple else "\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t" and not lit.triple:
            out.append("\\t")
        elif ch < " " and ch != "\t" or ch == "\x7f":
            out.append(f"\\x{ord(ch):02x}")
        elif ch == q and (escape_quotes or not lit.triple):
            out.append("\\" + q)
        elif k == 0 and after_short_octal and ch in _OCTAL:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def _widen(lit: _Literal, text: bytes,
           edits: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Grow edits over neighbouring verbatim quotes (triple-quoted literals) and over a digit
    that would extend a preceding short octal escape, so that re-escaping can keep them apart.
    The value each edit produces is unchanged."""
    q = ord(lit.quote[0])
    out: list[tuple[int, int, str]] = []
    for i, (s, e, rep) in enumerate(edits):
        prev_end = out[-1][1] if out else lit.value_start
        next_start = edits[i + 1][0] if i + 1 < len(edits) else lit.value_end
        if lit.triple and not lit.raw:
            while s > prev_end and text[s - 1] == q and lit.kind_before(s) == _IDENT:
                s -= 1
                rep = chr(q) + rep
            while e < next_start and text[e] == q and lit.kind_at(e) == _IDENT:
                rep += chr(q)
                e += 1
        if (not rep and lit.kind_before(s) == _OCT_SHORT and s > prev_end and e < next_start
                and chr(text[e]) in _OCTAL and lit.kind_at(e) == _IDENT):
            rep = chr(text[e])
            e += 1
        out.append((s, e, rep))
    return out


def _render(lit: _Literal, data: bytes, text: bytes,
            edits: list[tuple[int, int, str]]) -> list[tuple[int, int, bytes]]:
    """File splices ``(start, end, new bytes)`` that apply ``edits`` to one literal."""
    expected, cur = [], lit.value_start
    for s, e, rep in edits:
        expected += [text[cur:s], rep.encode("utf-8")]
        cur = e
    expected.append(text[cur:lit.value_end])
    want = b"".join(expected).decode("utf-8")

    if lit.raw:
        strategies = [(False, False)]
    elif lit.triple:
        strategies = [(False, False), (True, False), (True, True)]
    else:
        strategies = [(True, False), (True, True)]
    for escape_quotes, widen in strategies:
        eds = _widen(lit, text, edits) if widen else edits
        splices = []
        prev_end = None
        for s, e, rep in eds:
            after_octal = lit.kind_before(s) == _OCT_SHORT and prev_end != s
            try:
                new = _escape(rep, lit, escape_quotes, after_octal).encode("utf-8")
            except UnicodeEncodeError as exc:
                line, column = lit.line, lit.column
                raise EmbeddedError(f"replacement cannot be encoded as UTF-8: {exc.reason}",
                                    line, column) from None
            splices.append((lit.src(s), lit.src(e), new))
            prev_end = e
        body, cur = [], lit.body_start
        for s, e, new in splices:
            body += [data[cur:s], new]
            cur = e
        body.append(data[cur:lit.body_end])
        new_body = b"".join(body).decode("utf-8")
        if _closes_at_end(new_body, lit.quote):
            try:
                value, _ = _decode_body(new_body, lit.raw)
            except (ValueError, KeyError):
                continue
            if value == want:
                return splices
    if lit.raw:
        why = ("the replacement cannot be represented in a raw string literal "
               f"({lit.prefix}{lit.quote}...{lit.quote}): a raw literal cannot contain its closing "
               "quote, end in an odd number of backslashes, or hold a line break "
               "(single-quoted) or a carriage return")
    else:
        why = "the replacement cannot be represented in this string literal"
    raise EmbeddedError(why, lit.line, lit.column)


def apply_embedded_edits(py_source: str | bytes,
                         edits: Iterable[tuple[EmbeddedSource, int, int, str]]) -> str:
    """Apply edits to embedded CUDA sources and return the new Python file text.

    Each edit is ``(source, value_start, value_end, replacement)``: replace bytes
    ``value_start:value_end`` of ``source.text.encode("utf-8")`` by ``replacement``.  Every
    byte of the file outside the edited literal ranges is kept.  Raises
    :class:`EmbeddedError` for overlapping edits, a boundary inside an escape sequence or a
    UTF-8 character, a range spanning two parts of a concatenation, a replacement that the
    literal cannot represent, or a result that does not read back as expected.
    """
    data = _to_bytes(py_source)
    groups: dict[int, tuple[EmbeddedSource, bytes, list[tuple[int, int, str]]]] = {}
    for edit in edits:
        try:
            source, s, e, rep = edit
        except (TypeError, ValueError):
            raise EmbeddedError("an edit must be (source, start, end, replacement), "
                                f"got {edit!r}") from None
        if not isinstance(source, EmbeddedSource) or not source._literals:
            raise EmbeddedError("an edit's source must be an EmbeddedSource from find_embedded")
        if not isinstance(rep, str):
            raise EmbeddedError(f"replacement must be str, got {type(rep).__name__}")
        for lit in source._literals:
            if data[lit.start:lit.start + len(lit.token)] != lit.token:
                raise EmbeddedError("edit refers to a source that does not match this file",
                                    lit.line, lit.column)
        if not 0 <= s <= e <= source.size:
            raise EmbeddedError(f"edit range [{s}, {e}) out of range 0..{source.size}",
                                source.line, source.column)
        key = source._literals[0].start
        if key not in groups:
            groups[key] = (source, source.text.encode("utf-8"), [])
        groups[key][2].append((s, e, rep))

    splices: list[tuple[int, int, bytes]] = []
    expected: dict[int, tuple[EmbeddedSource, str]] = {}
    for source, text, eds in groups.values():
        eds.sort(key=lambda t: (t[0], t[1]))
        for (s0, e0, _), (s1, e1, _) in zip(eds, eds[1:]):
            if s1 < e0 or (s0 == e0 == s1 == e1):
                line, column = source.source_position(s1)
                raise EmbeddedError(f"overlapping edits [{s0}, {e0}) and [{s1}, {e1}) "
                                    f"in embedded source {source.index}", line, column)
        per_literal: dict[int, list[tuple[int, int, str]]] = {}
        for s, e, rep in eds:
            for k in (s, e):
                if not any(lit.value_start <= k <= lit.value_end and lit.is_boundary(k, text)
                           for lit in source._literals):
                    line, column = source.source_position(k)
                    raise EmbeddedError(f"edit boundary {k} falls inside an escape sequence "
                                        "or a UTF-8 character", line, column)
            # the part holding the range; an insertion at the joint of two parts goes to the
            # start of the later one (where source_offset(s) points)
            owner = next((i for i, lit in reversed(list(enumerate(source._literals)))
                          if lit.value_start <= s and e <= lit.value_end), None)
            if owner is None:
                line, column = source.source_position(s)
                raise EmbeddedError(f"edit [{s}, {e}) spans two parts of a string concatenation",
                                    line, column)
            per_literal.setdefault(owner, []).append((s, e, rep))
        for i, lit_edits in per_literal.items():
            splices += _render(source._literals[i], data, text, lit_edits)
        new_text, cur = [], 0
        for s, e, rep in eds:
            new_text += [text[cur:s], rep.encode("utf-8")]
            cur = e
        new_text.append(text[cur:])
        expected[source.index] = (source, b"".join(new_text).decode("utf-8"))

    splices.sort(key=lambda t: (t[0], t[1]))
    out, cur = [], 0
    for s, e, new in splices:
        if s < cur:  # pragma: no cover - edits are disjoint per literal
            raise EmbeddedError("internal error: overlapping splices")
        out += [data[cur:s], new]
        cur = e
    out.append(data[cur:])
    result = b"".join(out)

    try:
        found, _ = find_embedded(result)
    except EmbeddedError as e:  # pragma: no cover - guarded by the per-literal checks
        raise EmbeddedError(f"the edited file no longer reads back: {e.message}",
                            e.line, e.column) from None
    for index, (source, want) in expected.items():
        got = found[index] if index < len(found) else None
        if got is None or got.kind != source.kind or got.text != want:
            raise EmbeddedError(f"embedded source {index} does not read back as the edited text",
                                source.line, source.column)
    return result.decode("utf-8")
