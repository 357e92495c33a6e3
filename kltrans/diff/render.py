"""Rendering a diff: inline text hunks, side by side, --stat (JSON is ``Diff.to_json``).

Changed tokens are highlighted: with colors (rich) when the output is a terminal, and
otherwise marked in the text, wdiff style: ``[-old-]`` on lines of A, ``{+new+}`` on lines
of B.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from rich.text import Text

    from kltrans.diff.core import Diff, FileDiff

STYLES = {"a": {"delete": "bold red", "update": "bold red", "move": "bold yellow"},
          "b": {"insert": "bold green", "update": "bold green", "move": "bold yellow"}}
MARK = {"a": ("[-", "-]"), "b": ("{+", "+}")}


def _line_text(unit, line: int, marks, side: str, color: bool) -> "Text":
    from rich.text import Text

    starts = unit._starts()
    ls = starts[line - 1]
    le = starts[line] if line < len(starts) else len(unit.source)
    raw = unit.source[ls:le].rstrip(b"\r\n")
    le = ls + len(raw)
    text = Text(no_wrap=True)
    pos = ls
    for s, e, kind in marks:
        if e <= ls or s >= le:
            continue
        s, e = max(s, ls), min(e, le)
        if s < pos:
            s = pos
        if s >= e:
            continue
        text.append(unit.source[pos:s].decode("utf-8", "replace"))
        tok = unit.source[s:e].decode("utf-8", "replace")
        if color:
            text.append(tok, style=STYLES[side].get(kind, "bold"))
        else:
            o, c = MARK[side]
            text.append(f"{o}{tok}{c}")
        pos = e
    text.append(unit.source[pos:le].decode("utf-8", "replace"))
    text.expand_tabs(4)
    return text


def _marks_in(marks, unit, lines):
    if not lines:
        return []
    starts = unit._starts()
    lo = starts[min(lines) - 1]
    hi = starts[max(lines)] if max(lines) < len(starts) else len(unit.source)
    return [m for m in marks if m[1] > lo and m[0] < hi]


def _origin(unit, line: int) -> int:
    return unit.location(unit._starts()[line - 1]).line


def _header(d: "Diff", h) -> str:
    def rng(unit, r):
        if r is None:
            return f"{unit.origin.path}:-"
        a, b = _origin(unit, r[0]), _origin(unit, r[1])
        return f"{unit.origin.path}:{a}" + (f"-{b}" if b != a else "")

    where = f" {h.kernel}" if h.kernel else ""
    return f"@@ {rng(d.a, h.a_range)} {rng(d.b, h.b_range)} @@{where}"


def _kernel_lines(d: "Diff") -> list[str]:
    out = []
    for k in d.kernels:
        if k.status == "same":
            continue
        extra = f" (similarity {k.similarity:.2f})" if k.status == "renamed" else ""
        out.append(f"{k.kind} {k.label}: {k.status}{extra}")
    return out


def _summary(d: "Diff") -> str:
    c = d.counts()
    parts = [f"{c[k]} {k}{'s' if c[k] != 1 else ''}" for k in ("update", "insert", "delete", "move")]
    return ", ".join(parts)


def render_text(fd: "FileDiff", color: bool, side_by_side: bool = False,
                width: int = 160) -> list:
    """Lines (rich Text) of the inline or side-by-side view."""
    from rich.text import Text

    out: list = []
    head = Text(f"--- {fd.a_path}\n+++ {fd.b_path}", style="bold" if color else None)
    out.append(head)
    if fd.equal:
        out.append(Text("no structural difference"))
        return out
    for d in fd.units:
        if d.equal:
            continue
        if len(fd.units) > 1:
            out.append(Text(f"unit {d.a.path} -> {d.b.path}", style="bold" if color else None))
        for line in _kernel_lines(d):
            out.append(Text(line, style="cyan" if color else None))
        ma, mb = d.marks()
        for h in d.hunks():
            out.append(Text(_header(d, h), style="bold cyan" if color else None))
            la = list(range(h.a_range[0], h.a_range[1] + 1)) if h.a_range else []
            lb = list(range(h.b_range[0], h.b_range[1] + 1)) if h.b_range else []
            pa = _marks_in(ma, d.a, la)
            pb = _marks_in(mb, d.b, lb)
            if side_by_side:
                out.extend(_side_rows(d, la, lb, pa, pb, set(h.a_lines), set(h.b_lines),
                                      color, width))
                continue
            for ln in la:
                out.append(_row("-" if ln in h.a_lines else " ", _origin(d.a, ln),
                                _line_text(d.a, ln, pa, "a", color), color, "red"))
            for ln in lb:
                out.append(_row("+" if ln in h.b_lines else " ", _origin(d.b, ln),
                                _line_text(d.b, ln, pb, "b", color), color, "green"))
        out.append(Text(_summary(d)))
    return out


def _row(sign: str, num: int, body: "Text", color: bool, style: str) -> "Text":
    from rich.text import Text

    t = Text(f"{sign}{num:>5} | ", style=(style if color and sign != " " else "dim" if color else None))
    t.append_text(body)
    return t


def _side_rows(d, la, lb, pa, pb, ca, cb, color, width) -> list:
    from rich.text import Text

    col = max(20, (width - 17) // 2)
    rows = []
    for i in range(max(len(la), len(lb))):
        t = Text(no_wrap=True)
        if i < len(la):
            ln = la[i]
            t.append(f"{_origin(d.a, ln):>5} {'-' if ln in ca else ' '} ",
                     style="red" if color and ln in ca else None)
            body = _line_text(d.a, ln, pa, "a", color)
            body.truncate(col, overflow="ellipsis", pad=True)
            t.append_text(body)
        else:
            t.append(" " * (col + 8))
        t.append(" | ")
        if i < len(lb):
            ln = lb[i]
            t.append(f"{_origin(d.b, ln):>5} {'+' if ln in cb else ' '} ",
                     style="green" if color and ln in cb else None)
            body = _line_text(d.b, ln, pb, "b", color)
            body.truncate(col, overflow="ellipsis")
            t.append_text(body)
        rows.append(t)
    return rows


def render_stat(fd: "FileDiff") -> list[str]:
    out = []
    for d in fd.units:
        s = d.stat()
        out.append(f"{d.a.path} -> {d.b.path}: {s['hunks']} hunk(s), {s['lines_removed']} "
                   f"line(s) removed, {s['lines_added']} added; {_summary(d)}")
        for k in d.kernels:
            per = s["by_kernel"].get(k.label, {})
            if k.status == "same" and not per:
                continue
            counts = ", ".join(f"{n} {kind}" for kind, n in sorted(per.items())) or "-"
            out.append(f"  {k.kind:<6} {k.label:<30} {k.status:<8} {counts}")
        top = s["by_kernel"].get("(file scope)")
        if top:
            counts = ", ".join(f"{n} {kind}" for kind, n in sorted(top.items()))
            out.append(f"  {'':<6} {'(file scope)':<30} {'changed':<8} {counts}")
    return out
