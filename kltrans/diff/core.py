"""Structural diff of two CUDA units: kernels paired, trees matched, an edit script, hunks.

``diff_units(a, b)`` lowers both units (:mod:`kltrans.diff.tree`), pairs their function
definitions (kernels, device and host functions) by name and then, for the ones left, by
token similarity (a pair with different names is a *rename*), matches the trees inside
each pair and outside all functions (:mod:`kltrans.diff.match`), and returns a
:class:`Diff`: the edit script, the kernel pairs, and hunks on source lines.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kltrans.diff.match import Action, edit_script, match
from kltrans.diff.tree import Node, Tree, display_label, lower

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.syntax import Unit

RENAME_MIN_SIMILARITY = 0.5
_TOP = 0


@dataclass
class KernelPair:
    """A function of A and its counterpart in B (either may be missing)."""

    zone: int
    a: str | None
    b: str | None
    kind: str  # kernel | device | host
    status: str = "same"  # same | changed | renamed | added | removed
    similarity: float = 1.0

    @property
    def label(self) -> str:
        if self.a and self.b and self.a != self.b:
            return f"{self.a} -> {self.b}"
        return self.a or self.b or "?"

    def to_json(self) -> dict:
        return {"a": self.a, "b": self.b, "kind": self.kind, "status": self.status,
                "similarity": round(self.similarity, 3)}


@dataclass
class Span:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column,
                "end_line": self.end_line, "end_column": self.end_column, "text": self.text}


@dataclass
class Hunk:
    a_lines: list[int]  # changed lines of A (unit lines, 1-based)
    b_lines: list[int]
    kernel: str | None = None

    @property
    def a_range(self) -> tuple[int, int] | None:
        return (min(self.a_lines), max(self.a_lines)) if self.a_lines else None

    @property
    def b_range(self) -> tuple[int, int] | None:
        return (min(self.b_lines), max(self.b_lines)) if self.b_lines else None


@dataclass
class Diff:
    """The structural difference of two units."""

    ta: Tree
    tb: Tree
    actions: list[Action]
    kernels: list[KernelPair]
    strict: bool = False
    kernel: str | None = None  # the --kernel filter, if any
    _marks: tuple | None = field(default=None, repr=False)

    @property
    def a(self) -> "Unit":
        return self.ta.unit

    @property
    def b(self) -> "Unit":
        return self.tb.unit

    @property
    def equal(self) -> bool:
        return not self.actions

    def kernel_of(self, action: Action) -> KernelPair | None:
        z = action.zone
        return next((k for k in self.kernels if k.zone == z), None)

    def counts(self) -> dict:
        c = Counter(x.kind for x in self.actions)
        return {k: c.get(k, 0) for k in ("update", "insert", "delete", "move")}

    # ------------------------------------------------------------------ spans
    def span(self, side: str, node: Node, limit: int = 200) -> Span:
        unit = self.a if side == "a" else self.b
        start, end = node.start, max(node.end, node.start)
        s = unit.location(start)
        e = unit.location(end)
        if node.children:
            text = unit.text((start, end))
        else:
            text = display_label(node.label)
        if len(text) > limit:
            text = text[:limit - 3] + "..."
        return Span(s.path, s.line, s.column, e.line, e.column, text)

    def describe(self, action: Action) -> str:
        """One line: ``update identifier 'x' -> 'y' at a.cu:3:9 -> b.cu:3:9``."""
        t = action.node_type
        if action.kind == "update":
            sa, sb = self.span("a", action.a, 60), self.span("b", action.b, 60)
            if sa.text == sb.text:  # --strict: only the spacing before the token changed
                return f"update spacing before {t} {sa.text!r} at {sa} -> {sb}"
            return f"update {t} {sa.text!r} -> {sb.text!r} at {sa} -> {sb}"
        if action.kind == "move":
            sa, sb = self.span("a", action.a, 60), self.span("b", action.b, 60)
            return f"move {t} {_short(sa.text)!r} from {sa} to {sb}"
        if action.kind == "delete":
            sa = self.span("a", action.a, 60)
            return f"delete {t} {_short(sa.text)!r} at {sa}"
        sb = self.span("b", action.b, 60)
        return f"insert {t} {_short(sb.text)!r} at {sb}"

    # ------------------------------------------------------------------ marks, hunks
    def marks(self) -> tuple[list, list]:
        """Changed token spans: ``[(start, end, kind)]`` for A and for B."""
        if self._marks is not None:
            return self._marks
        ma, mb = [], []
        for x in self.actions:
            if x.kind == "update":
                ma.append((x.a.start, x.a.end, "update"))
                mb.append((x.b.start, x.b.end, "update"))
            elif x.kind == "delete":
                ma.extend((n.start, n.end, "delete") for n in x.a.leaves()
                          if n.partner is None)
            elif x.kind == "insert":
                mb.extend((n.start, n.end, "insert") for n in x.b.leaves()
                          if n.partner is None)
            else:
                ma.extend((n.start, n.end, "move") for n in x.a.leaves())
                mb.extend((n.start, n.end, "move") for n in x.b.leaves())
        self._marks = (_merge(self.a, ma), _merge(self.b, mb))
        return self._marks

    def hunks(self, context: int = 3) -> list[Hunk]:
        ma, mb = self.marks()
        la = _lines_of(self.a, ma)
        lb = _lines_of(self.b, mb)
        if not la and not lb:
            return []
        pairs = []  # (A line, B line) of matched, unchanged leaves
        for n in self.ta.nodes:
            p = n.partner
            if p is not None and not n.children and n.label == p.label:
                pairs.append((self.a.line_col(n.start)[0], self.b.line_col(p.start)[0]))
        pairs.sort()
        by_b = sorted((y, x) for x, y in pairs)

        def est(table, line):
            import bisect

            i = bisect.bisect_right(table, (line, float("inf"))) - 1
            if i < 0:
                return line
            x, y = table[i]
            return y + (line - x)

        items = [(float(l), "a", l) for l in sorted(la)]
        items += [(est(by_b, l) + 0.5, "b", l) for l in sorted(lb)]
        items.sort()
        hunks: list[Hunk] = []
        last = None
        for key, side, line in items:
            if last is None or key - last > context:
                hunks.append(Hunk([], []))
            (hunks[-1].a_lines if side == "a" else hunks[-1].b_lines).append(line)
            last = key
        for h in hunks:
            h.a_lines = sorted(set(h.a_lines))
            h.b_lines = sorted(set(h.b_lines))
            h.kernel = self._kernel_at(h)
        return hunks

    def _kernel_at(self, h: Hunk) -> str | None:
        for x in self.actions:
            n, unit, lines = (x.a, self.a, h.a_lines) if x.a is not None else (x.b, self.b, h.b_lines)
            if unit.line_col(n.start)[0] in lines:
                k = self.kernel_of(x)
                return k.label if k else None
        return None

    # ------------------------------------------------------------------ data
    def stat(self) -> dict:
        ma, mb = self.marks()
        per = {}
        for x in self.actions:
            k = self.kernel_of(x)
            key = k.label if k else "(file scope)"
            per.setdefault(key, Counter())[x.kind] += 1
        return {"counts": self.counts(), "lines_removed": len(_lines_of(self.a, ma)),
                "lines_added": len(_lines_of(self.b, mb)),
                "hunks": len(self.hunks()),
                "by_kernel": {k: dict(v) for k, v in per.items()}}

    def to_json(self) -> dict:
        acts = []
        for x in self.actions:
            d = {"action": x.kind, "type": x.node_type}
            if x.a is not None:
                d["a"] = self.span("a", x.a).to_json()
            if x.b is not None:
                d["b"] = self.span("b", x.b).to_json()
            k = self.kernel_of(x)
            d["kernel"] = k.label if k else None
            acts.append(d)
        hunks = []
        for h in self.hunks():
            hunks.append({"kernel": h.kernel,
                          "a": [self._origin_line(self.a, l) for l in h.a_lines],
                          "b": [self._origin_line(self.b, l) for l in h.b_lines]})
        return {"a": self.a.path, "b": self.b.path, "equal": self.equal, "strict": self.strict,
                "kernel": self.kernel, "kernels": [k.to_json() for k in self.kernels],
                "actions": acts, "hunks": hunks, "stat": self.stat()}

    @staticmethod
    def _origin_line(unit, line: int) -> int:
        return unit.location(unit._starts()[line - 1]).line


def _merge(unit, marks) -> list:
    """Sorted marks, neighbours of one kind joined across spaces (not across lines)."""
    out: list = []
    for s, e, kind in sorted(set(marks)):
        if out and out[-1][2] == kind and out[-1][1] <= s:
            gap = unit.source[out[-1][1]:s]
            if not gap.strip() and b"\n" not in gap:
                out[-1] = (out[-1][0], e, kind)
                continue
        if out and s < out[-1][1]:  # nested (a moved node inside a deleted one)
            continue
        out.append((s, e, kind))
    return out


def _short(text: str) -> str:
    first = text.split("\n", 1)[0]
    return first + (" ..." if "\n" in text else "")


def _lines_of(unit, marks) -> set[int]:
    out = set()
    for s, e, _ in marks:
        l0 = unit.line_col(s)[0]
        l1 = unit.line_col(max(s, e - 1))[0]
        out.update(range(l0, l1 + 1))
    return out


# ---------------------------------------------------------------------- kernels
def _functions(unit: "Unit", tree: Tree) -> list[tuple[object, Node]]:
    """(Function, its outermost lowered node) for every function definition."""
    from kltrans.syntax.cuda import find_functions

    by_span = {}
    for n in tree.nodes:
        if n.type in ("function_definition", "template_declaration"):
            by_span.setdefault((n.start, n.end, n.type), n)
    out = []
    for f in find_functions(unit):
        o = f.outer
        node = by_span.get((o.start_byte, o.end_byte, o.type))
        if node is not None:
            out.append((f, node))
    # a definition nested in another one (a function inside a namespace is not nested)
    return out


def _kind(f) -> str:
    return "kernel" if f.is_kernel else ("device" if f.is_device else "host")


def _bag(n: Node) -> Counter:
    return Counter((x.type, x.label) for x in n.leaves())


def _bag_dice(a: Counter, b: Counter) -> float:
    ta, tb = sum(a.values()), sum(b.values())
    if ta + tb == 0:
        return 1.0
    return 2.0 * sum((a & b).values()) / (ta + tb)


def pair_functions(ua, ta: Tree, ub, tb: Tree) -> tuple[list[KernelPair], list[tuple[Node, Node]]]:
    fa, fb = _functions(ua, ta), _functions(ub, tb)
    pairs: list[tuple] = []
    left_b = list(range(len(fb)))
    left_a = []
    for i, (f, n) in enumerate(fa):
        j = next((j for j in left_b if fb[j][0].qualified_name == f.qualified_name), None)
        if j is None:
            left_a.append(i)
        else:
            left_b.remove(j)
            pairs.append((i, j, "same", 1.0))
    if left_a and left_b:
        bags_a = {i: _bag(fa[i][1]) for i in left_a}
        bags_b = {j: _bag(fb[j][1]) for j in left_b}
        scored = sorted(((_bag_dice(bags_a[i], bags_b[j]), i, j) for i in left_a for j in left_b
                         if _kind(fa[i][0]) == _kind(fb[j][0])), reverse=True)
        for sim, i, j in scored:
            if sim < RENAME_MIN_SIMILARITY:
                break
            if i in left_a and j in left_b:
                left_a.remove(i)
                left_b.remove(j)
                pairs.append((i, j, "renamed", sim))
    kernels: list[KernelPair] = []
    forced: list[tuple[Node, Node]] = []
    zone = 1
    for i, j, status, sim in sorted(pairs):
        f, na = fa[i]
        g, nb = fb[j]
        _set_zone(na, zone)
        _set_zone(nb, zone)
        kernels.append(KernelPair(zone, f.name, g.name, _kind(g), status, sim))
        forced.append((na, nb))
        if f.node is not f.outer or g.node is not g.outer:
            ia = _find(na, f.node)
            ib = _find(nb, g.node)
            if ia is not None and ib is not None:
                forced.append((ia, ib))
        zone += 1
    for i in left_a:
        f, na = fa[i]
        _set_zone(na, zone)
        kernels.append(KernelPair(zone, f.name, None, _kind(f), "removed", 0.0))
        zone += 1
    for j in left_b:
        g, nb = fb[j]
        _set_zone(nb, zone)
        kernels.append(KernelPair(zone, None, g.name, _kind(g), "added", 0.0))
        zone += 1
    return kernels, forced


def _find(root: Node, ts) -> Node | None:
    for n in root.preorder():
        if n.start == ts.start_byte and n.end == ts.end_byte and n.type == ts.type:
            return n
    return None


def _set_zone(node: Node, zone: int) -> None:
    for n in node.preorder():
        n.zone = zone


# ------------------------------------------------------------------------- entry
def diff_units(a: "Unit", b: "Unit", strict: bool = False, kernel: str | None = None) -> Diff:
    """The structural diff of two units.

    ``strict``: comments and formatting are differences too. ``kernel``: keep only the
    actions inside that kernel (named as in A or B; a renamed kernel by either name);
    :class:`KeyError` when neither unit has it.
    """
    ta, tb = lower(a, strict), lower(b, strict)
    kernels, forced = pair_functions(a, ta, b, tb)
    # the content hashes must see zones: identical code in different kernels is not "same"
    match(ta, tb, forced)
    actions = edit_script(ta, tb)
    touched = Counter(x.zone for x in actions)
    for k in kernels:
        if k.status == "same" and touched.get(k.zone):
            k.status = "changed"
        elif k.status == "renamed" and not touched.get(k.zone):
            k.status = "same"  # pragma: no cover - a rename always updates the name
    if kernel is not None:
        pick = [k for k in kernels if kernel in (k.a, k.b)]
        if not pick:
            raise KeyError(kernel)
        zones = {k.zone for k in pick}
        actions = [x for x in actions if x.zone in zones]
        kernels = pick
    return Diff(ta, tb, actions, kernels, strict, kernel)


@dataclass
class FileDiff:
    """The diff of two files: one :class:`Diff` per pair of units (a Python file may hold
    several CUDA sources; they are paired in order)."""

    a_path: str
    b_path: str
    units: list[Diff]

    @property
    def equal(self) -> bool:
        return all(d.equal for d in self.units)

    def to_json(self) -> dict:
        return {"a": self.a_path, "b": self.b_path, "equal": self.equal,
                "units": [d.to_json() for d in self.units]}


def diff_files(a_path: str, b_path: str, strict: bool = False,
               kernel: str | None = None) -> FileDiff:
    """Load both files (``.cu``, ``.cuh``, or ``.py`` with embedded CUDA) and diff them.

    Raises :class:`~kltrans.syntax.InputError` for a missing file, a parse error, a Python
    file with no CUDA, or a kernel that neither file has.
    """
    from kltrans.syntax import InputError, load, parse

    ua_list, ub_list = load(a_path), load(b_path)
    for path, units in ((a_path, ua_list), (b_path, ub_list)):
        for u in units:
            diags = u.parse_diagnostics()
            if diags:
                raise InputError(diags[0])
        if not units:
            raise InputError.at(path, "no CUDA source found",
                                hint="kltrans looks for load_inline(cuda_sources=...), cupy "
                                     "RawKernel/RawModule and cuda.core Program in Python files",
                                code="no-cuda")
    out = []
    n = max(len(ua_list), len(ub_list))
    for i in range(n):
        ua = ua_list[i] if i < len(ua_list) else parse("", f"{a_path}[{i}] (absent)")
        ub = ub_list[i] if i < len(ub_list) else parse("", f"{b_path}[{i}] (absent)")
        try:
            out.append(diff_units(ua, ub, strict, kernel))
        except KeyError:
            out.append(None)
    if kernel is not None:
        if all(d is None for d in out):
            names = sorted({k for u in ua_list + ub_list for k in
                            [f.name for f in u.kernels() + u.device_functions()]})
            raise InputError.at(a_path, f"no kernel or device function named {kernel!r} in "
                                f"either file", hint="functions: " + (", ".join(names) or "none"),
                                code="unknown-kernel")
        out = [d for d in out if d is not None]
    return FileDiff(a_path, b_path, out)
