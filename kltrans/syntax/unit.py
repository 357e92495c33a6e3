"""CUDA translation units.

A :class:`Unit` is one CUDA source: its original bytes, the tree-sitter tree of its
normalized text (see :mod:`kltrans.syntax.normalize`: same length, same offsets), its
path, and where it came from (a ``.cu``/``.cuh`` file, or a string literal inside a Python
file). Node text must be read with :meth:`Unit.text`, which slices the *original* bytes.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from kltrans.syntax.diagnostics import Diagnostic, InputError, Location
from kltrans.syntax.normalize import normalize

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node, Tree

    from kltrans.syntax.cuda import Pragma
    from kltrans.syntax.embedded import EmbeddedSource

CUDA_SUFFIXES = (".cu", ".cuh")
PYTHON_SUFFIXES = (".py",)
SUFFIXES = CUDA_SUFFIXES + PYTHON_SUFFIXES


@functools.lru_cache(maxsize=1)
def _parser():
    import tree_sitter
    import tree_sitter_cuda

    language = tree_sitter.Language(tree_sitter_cuda.language())
    return tree_sitter.Parser(language)


def language():
    return _parser().language


@functools.lru_cache(maxsize=None)
def _type_query(node_type: str):
    """A query capturing every node of a type, or None for types a query cannot name."""
    import tree_sitter

    if not node_type.replace("_", "").isalnum():
        return None
    try:
        return tree_sitter.Query(language(), f"({node_type}) @n")
    except Exception:
        return None


@dataclass(frozen=True)
class Origin:
    """Where a unit's bytes live: a CUDA file, or a literal in a Python file."""

    path: str
    embedded: "EmbeddedSource | None" = None

    @property
    def kind(self) -> str:
        return "python" if self.embedded is not None else "cuda"


class Unit:
    """One CUDA translation unit (immutable: edits produce a new unit)."""

    __slots__ = ("source", "path", "origin", "normalized", "normalizations", "tree",
                 "_line_starts", "_cache")

    def __init__(self, source: bytes, path: str = "<string>", origin: Origin | None = None):
        self.source = bytes(source)
        self.path = path
        self.origin = origin or Origin(path)
        self.normalized, self.normalizations = normalize(self.source)
        self.tree: "Tree" = _parser().parse(self.normalized)
        self._line_starts: list[int] | None = None
        self._cache: dict = {}

    # ----------------------------------------------------------------- text, positions
    @property
    def root(self) -> "Node":
        return self.tree.root_node

    def text(self, node_or_span) -> str:
        """Original text of a node (or a ``(start, end)`` byte span)."""
        if isinstance(node_or_span, tuple):
            start, end = node_or_span
        else:
            start, end = node_or_span.start_byte, node_or_span.end_byte
        return self.source[start:end].decode("utf-8", errors="replace")

    def _starts(self) -> list[int]:
        if self._line_starts is None:
            starts = [0]
            find = self.source.find
            i = find(b"\n")
            while i >= 0:
                starts.append(i + 1)
                i = find(b"\n", i + 1)
            self._line_starts = starts
        return self._line_starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a byte offset in this unit; column counts characters."""
        starts = self._starts()
        idx = bisect.bisect_right(starts, offset) - 1
        line_start = starts[idx]
        col = len(self.source[line_start:offset].decode("utf-8", errors="replace")) + 1
        return idx + 1, col

    def line_text(self, line: int) -> str:
        starts = self._starts()
        start = starts[line - 1]
        end = starts[line] if line < len(starts) else len(self.source)
        return self.source[start:end].decode("utf-8", errors="replace").rstrip("\r\n")

    def location(self, offset: int, length: int = 1) -> Location:
        """Where ``offset`` is in the *origin* file (a Python file for embedded CUDA)."""
        emb = self.origin.embedded
        if emb is not None:
            line, col = emb.source_position(offset)
            src_line = _read_line(self.origin.path, line)
            return Location(self.origin.path, line, col, src_line, length)
        line, col = self.line_col(offset)
        return Location(self.path, line, col, self.line_text(line), length)

    def node_location(self, node: "Node") -> Location:
        length = node.end_byte - node.start_byte
        if node.start_point[0] != node.end_point[0]:
            length = 1
        return self.location(node.start_byte, max(1, length))

    def diagnostic(self, node_or_offset, severity: str, message: str, hint: str | None = None,
                   code: str | None = None) -> Diagnostic:
        if isinstance(node_or_offset, int):
            loc = self.location(node_or_offset)
        else:
            loc = self.node_location(node_or_offset)
        return Diagnostic(severity, message, loc, hint=hint, code=code)

    def memo(self, key: str, compute):
        """``compute(self)``, computed once per unit and kept (analyses and the kernel
        model cache their results on the unit this way; a unit never changes)."""
        if key not in self._cache:
            self._cache[key] = compute(self)
        return self._cache[key]

    # ------------------------------------------------------------------- tree queries
    def walk(self, node: "Node | None" = None) -> Iterator["Node"]:
        """Every node under ``node`` (default: the root), in pre-order.

        The whole tree is walked once per unit and kept as a pre-order list with each
        node's subtree size; a walk under a node of this tree is then a slice of it
        (passes and analyses walk the same unit thousands of times)."""
        pre = self._cache.get("preorder")
        if pre is None:
            pre = self._cache["preorder"] = self._preorder()
        nodes, index, end = pre
        n = node or self.root
        at = index.get(n.id)
        if at is not None and (nodes[at].start_byte, nodes[at].end_byte, nodes[at].type) == \
                (n.start_byte, n.end_byte, n.type):
            return iter(nodes[at:end[at]])
        return self._walk_cursor(node)

    def _preorder(self) -> tuple:
        """Every node in pre-order, the index of each by id, and where each subtree ends
        (the index after its last descendant)."""
        nodes, end, open_ = [], [], []  # open_: [index, children not visited yet]
        for n in self._walk_cursor(None):
            while open_ and open_[-1][1] == 0:
                end[open_.pop()[0]] = len(nodes)
            if open_:
                open_[-1][1] -= 1
            open_.append([len(nodes), n.child_count])
            nodes.append(n)
            end.append(0)
        for i, _ in open_:
            end[i] = len(nodes)
        return nodes, {n.id: i for i, n in enumerate(nodes)}, end

    def _walk_cursor(self, node: "Node | None") -> Iterator["Node"]:
        cursor = (node or self.root).walk()
        visited_children = False
        depth = 0
        while True:
            if not visited_children:
                yield cursor.node
                if cursor.goto_first_child():
                    depth += 1
                    continue
            if depth > 0 and cursor.goto_next_sibling():
                visited_children = False
                continue
            if depth == 0 or not cursor.goto_parent():
                return
            depth -= 1
            visited_children = True

    def nodes_of_type(self, node_type: str, within: "Node | None" = None) -> list["Node"]:
        """Every node of ``node_type`` under ``within`` (default: the root), in pre-order.

        Uses a compiled tree-sitter query (C speed) instead of walking in Python.
        """
        q = _type_query(node_type)
        scope = within or self.root
        if q is None:
            return [n for n in self.walk(scope) if n.type == node_type]
        import tree_sitter

        nodes = tree_sitter.QueryCursor(q).captures(scope).get("n", [])
        nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))
        return nodes

    def error_nodes(self) -> list["Node"]:
        """ERROR and MISSING nodes left after normalization."""
        if "errors" not in self._cache:
            found = []
            if self.root.has_error:
                stack = [self.root]
                while stack:
                    n = stack.pop()
                    if not n.has_error:
                        continue
                    if n.is_error or n.is_missing:
                        found.append(n)
                        continue
                    stack.extend(reversed(n.children))
                found.sort(key=lambda n: n.start_byte)
            self._cache["errors"] = found
        return self._cache["errors"]

    @property
    def has_errors(self) -> bool:
        return bool(self.error_nodes())

    def poisoned_spans(self) -> list[tuple[int, int]]:
        """Byte spans no rewrite may touch: each top-level declaration holding a parse error.

        A wrong tree can mislead anywhere in the function it sits in, so the whole
        enclosing top-level declaration (function, struct, namespace member) is off limits.
        """
        spans = []
        for err in self.error_nodes():
            n = err
            while n.parent is not None and n.parent.type not in ("translation_unit", "declaration_list"):
                n = n.parent
            start, end = n.start_byte, max(n.end_byte, err.end_byte)
            if err.is_missing and start == end:
                end = start + 1
            spans.append((start, end))
        return spans

    def parse_diagnostics(self) -> list[Diagnostic]:
        """One error diagnostic per ERROR/MISSING node left after normalization."""
        diags = []
        for n in self.error_nodes():
            if n.is_missing:
                msg = f"expected '{n.type}'"
            else:
                tok = self.text(n).strip().split("\n")[0]
                if len(tok) > 40:
                    tok = tok[:37] + "..."
                msg = f"syntax error: cannot parse '{tok}'" if tok else "syntax error"
            diags.append(self.diagnostic(
                n, "error", msg,
                hint="kltrans leaves the enclosing declaration as it is (opt writes nothing "
                     "for the file unless --allow-errors); if this is valid CUDA, the grammar "
                     "needs a fix (grammars/README.md lists the known ones)",
                code="parse-error"))
        return diags

    # -------------------------------------------------------------- CUDA structure
    @property
    def pragmas(self) -> "list[Pragma]":
        from kltrans.syntax.cuda import find_pragmas

        if "pragmas" not in self._cache:
            self._cache["pragmas"] = find_pragmas(self)
        return self._cache["pragmas"]

    def kernels(self):
        from kltrans.syntax.cuda import find_functions

        return [f for f in find_functions(self) if f.is_kernel]

    def device_functions(self):
        from kltrans.syntax.cuda import find_functions

        return [f for f in find_functions(self) if not f.is_kernel and f.is_device]

    def shared_decls(self):
        from kltrans.syntax.cuda import find_shared

        return find_shared(self)

    def launches(self):
        from kltrans.syntax.cuda import find_launches

        return find_launches(self)

    def sexp(self) -> str:
        return str(self.root)

    def __repr__(self) -> str:
        return f"Unit({self.path!r}, {len(self.source)} bytes)"


@functools.lru_cache(maxsize=64)
def _file_lines(path: str, mtime_ns: int) -> tuple[str, ...]:
    with open(path, "rb") as f:
        return tuple(f.read().decode("utf-8", errors="replace").splitlines())


def _read_line(path: str, line: int) -> str | None:
    try:
        lines = _file_lines(path, os.stat(path).st_mtime_ns)
    except OSError:
        return None
    return lines[line - 1] if 0 < line <= len(lines) else None


def parse(source: str | bytes, path: str = "<string>", origin: Origin | None = None) -> Unit:
    """Parse CUDA source text into a :class:`Unit`."""
    if isinstance(source, str):
        source = source.encode("utf-8")
    return Unit(source, path, origin)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # echoed as U+FFFD, never to a terminal


#: the path a command names standard input by (``-`` on its command line), read as CUDA
STDIN = "<stdin>"
_stdin: list[bytes] = []


def stdin_path(arg: str) -> str:
    """A command-line file argument, ``-`` (standard input) as :data:`STDIN`."""
    return STDIN if arg == "-" else arg


def _read_bytes(path: str) -> bytes:
    if path == STDIN:  # read once: a command may read its input more than once
        if not _stdin:
            _stdin.append(sys.stdin.buffer.read())
        return _stdin[0]
    with open(path, "rb") as f:
        return f.read()


def read_source(path: str) -> str:
    """Read a text file (or standard input, :data:`STDIN`) as UTF-8, turning every failure
    into an :class:`InputError`."""
    try:
        data = _read_bytes(path)
    except FileNotFoundError:
        raise InputError.at(path, "no such file", hint="check the path", code="no-file") from None
    except IsADirectoryError:
        raise InputError.at(path, "is a directory", hint="name a .cu, .cuh or .py file",
                            code="is-dir") from None
    except PermissionError:
        raise InputError.at(path, "permission denied", code="no-access") from None
    except OSError as e:
        raise InputError.at(path, f"cannot read: {e.strerror}", code="io") from None
    nul = data.find(b"\0")
    if nul >= 0:  # an object file, an image: said, never echoed to the terminal
        raise InputError.at(path, f"a binary file, not source text (a NUL byte at offset {nul})",
                            hint="name a .cu, .cuh or .py source file", code="binary") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        line_start = data.rfind(b"\n", 0, e.start) + 1
        col = len(data[line_start:e.start].decode("utf-8", errors="replace")) + 1
        line_end = data.find(b"\n", e.start)
        src_line = _CONTROL.sub("\ufffd", data[line_start:line_end if line_end >= 0 else len(data)]
                               .decode("utf-8", errors="replace"))
        raise InputError.at(
            path, f"invalid UTF-8 byte 0x{data[e.start]:02x}", line=line, column=col,
            source_line=src_line, hint="kltrans reads sources as UTF-8; convert the file "
            "(e.g. iconv -f latin1 -t utf-8)", code="encoding") from None


def read_failure(e: InputError) -> tuple[Location, str]:
    """Where and why :func:`read_source` failed, for a caller that reports it in its own
    error (a lineage, a card, a record): not UTF-8 text, or not readable."""
    d = e.diagnostic
    why = f"not UTF-8 text ({d.message})" if d.code == "encoding" else f"cannot read: {d.message}"
    return d.location, why


def load(path: str) -> list[Unit]:
    """Load every CUDA unit in a file.

    A ``.cu``/``.cuh`` file gives one unit; a ``.py`` file gives one unit per embedded
    CUDA string (``load_inline``, ``cupy.RawKernel``/``RawModule``, ``cuda.core``
    ``Program``), possibly none.
    """
    text = read_source(path)
    if path.endswith(PYTHON_SUFFIXES):
        return load_python(path, text)
    if not path.endswith(CUDA_SUFFIXES) and path != STDIN:
        raise InputError.at(path, "not a CUDA or Python source",
                            hint="kltrans reads .cu, .cuh and .py files", code="suffix")
    return [parse(text, path)]


@functools.lru_cache(maxsize=8)
def _find_embedded(text: str):
    """find_embedded, once per text (load and the skipped-site warnings both need it)."""
    from kltrans.syntax.embedded import find_embedded

    return find_embedded(text)


def load_python(path: str, text: str | None = None) -> list[Unit]:
    from kltrans.syntax.embedded import EmbeddedError

    if text is None:
        text = read_source(path)
    try:
        found, _skipped = _find_embedded(text)
    except EmbeddedError as e:
        raise InputError.at(path, f"Python syntax error: {e}", line=e.line, column=e.column,
                            source_line=_read_line(path, e.line) if e.line else None,
                            hint="kltrans reads CUDA strings from Python files that parse",
                            code="python-syntax") from None
    units = []
    for emb in found:
        label = f"{path}[{emb.index}]"
        units.append(parse(emb.text, label, Origin(path, emb)))
    return units


def skipped_python_sites(path: str, text: str) -> list[Diagnostic]:
    """Warnings for embedded-CUDA call sites that kltrans cannot rewrite."""
    _found, skipped = _find_embedded(text)
    return [Diagnostic("warning", f"{s.kind}: {s.reason}",
                       Location(path, s.line, s.column, _read_line(path, s.line)),
                       code="embedded-skipped") for s in skipped]


def origin_text(path: str, pairs: list[tuple[Unit, Unit]]) -> bytes:
    """The new content of ``path`` after each unit ``before`` became ``after``.

    A CUDA file is the new unit's bytes. A Python file keeps every byte outside the
    edited string literals: each changed unit becomes one edit of its literal, covering
    the bytes between the longest common prefix and suffix of the old and new text.
    """
    if not path.endswith(PYTHON_SUFFIXES):
        [(_, after)] = pairs
        return after.source
    from kltrans.syntax.embedded import apply_embedded_edits

    with open(path, "rb") as f:
        original = f.read()
    edits = []
    for before, after in pairs:
        a, b = before.source, after.source
        if a == b:
            continue
        p = 0
        n = min(len(a), len(b))
        while p < n and a[p] == b[p]:
            p += 1
        s = 0
        while s < n - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
            s += 1
        # keep both ends of the edit on UTF-8 character boundaries
        while 0 < p < len(a) and (a[p] & 0xC0) == 0x80:
            p -= 1
        while s > 0 and (a[len(a) - s] & 0xC0) == 0x80:
            s -= 1
        edits.append((before.origin.embedded, p, len(a) - s,
                      b[p:len(b) - s].decode("utf-8")))
    if not edits:
        return original
    return apply_embedded_edits(original, edits).encode("utf-8")
