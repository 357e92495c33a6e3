"""Grouped block rasterization: ``swizzle-blocks`` (optimize) and ``unswizzle-blocks`` (simplify).

``swizzle-blocks`` renumbers the blocks of a 2-D grid so that consecutive block ids walk
down groups of ``group`` block-rows column by column (the "grouped ordering" of tiled
GEMMs, for L2 reuse of the operand tiles). ``unswizzle-blocks`` takes any run of integer
declarations that permutes the 2-D grid back to the plain ``blockIdx.y`` / ``blockIdx.x``
numbering, after checking that the run is a bijection of the grid.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.pattern import tokens
from kltrans.passes import Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.passes.base import Site
from kltrans.syntax import Edit, parse
from kltrans.passes.guard import builtin
from kltrans.passes.rewrite import indent_of as line_indent, norm
from kltrans.passes.launch_facts import device_sites

_INT_TYPES = {"int", "unsigned", "unsigned int", "long", "long long", "size_t", "int32_t",
              "int64_t", "uint32_t", "unsigned long long", "long int"}
_COMMUNICATION = ("atomic", "__threadfence", "grid.sync", "this_grid", "cooperative_groups")
#: grid shapes the bijection check enumerates (x, y), non-square so rows and columns differ
_GRIDS = [(1, 1), (1, 5), (3, 1), (2, 3), (3, 7), (5, 2), (4, 9), (7, 13), (9, 4), (11, 17),
          (16, 8), (6, 20)]
#: values tried for names the run reads but the file does not fix (template parameters)
_FREE = (1, 2, 3, 4, 8)


class _Unknown(Exception):
    pass


# ------------------------------------------------------------------ evaluation
def _macros(unit) -> dict:
    """``#define NAME <integer>`` of the file (the last definition wins)."""
    out = {}
    for n in unit.nodes_of_type("preproc_def"):
        name = n.child_by_field_name("name")
        val = n.child_by_field_name("value")
        if name is None or val is None:
            continue
        t = unit.text(val).split("//")[0].strip().strip("()").rstrip("uUlL")
        try:
            out[unit.text(name)] = int(t, 0)
        except ValueError:
            continue
    return out


def _cdiv(a, b):
    if b == 0:
        raise _Unknown("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _eval(unit, node, env):
    t = node.type
    if t == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1:
            raise _Unknown(unit.text(node))
        return _eval(unit, inner[0], env)
    if t == "number_literal":
        try:
            return int(unit.text(node).rstrip("uUlL"), 0)
        except ValueError:
            raise _Unknown(unit.text(node)) from None
    if t == "identifier":
        name = unit.text(node)
        if name not in env:
            raise _Unknown(name)
        return env[name]
    if t == "field_expression":
        b = builtin(unit, node)
        if b is None or b not in env:
            raise _Unknown(unit.text(node))
        return env[b]
    if t == "binary_expression":
        a = _eval(unit, node.child_by_field_name("left"), env)
        b = _eval(unit, node.child_by_field_name("right"), env)
        op = unit.text(node.child_by_field_name("operator"))
        ops = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
               "/": lambda: _cdiv(a, b), "%": lambda: a - _cdiv(a, b) * b,
               "<<": lambda: a << b, ">>": lambda: a >> b, "&": lambda: a & b,
               "|": lambda: a | b, "^": lambda: a ^ b, "<": lambda: int(a < b),
               "<=": lambda: int(a <= b), ">": lambda: int(a > b), ">=": lambda: int(a >= b),
               "==": lambda: int(a == b), "!=": lambda: int(a != b)}
        if op not in ops:
            raise _Unknown(op)
        return ops[op]()
    if t == "conditional_expression":
        c = _eval(unit, node.child_by_field_name("condition"), env)
        return _eval(unit, node.child_by_field_name("consequence" if c else "alternative"), env)
    if t == "call_expression":
        f = unit.text(node.child_by_field_name("function"))
        args = [c for c in node.child_by_field_name("arguments").named_children
                if c.type != "comment"]
        if f in ("min", "max", "std::min", "std::max", "umin", "umax") and len(args) == 2:
            vals = [_eval(unit, a, env) for a in args]
            return min(vals) if "min" in f else max(vals)
        raise _Unknown(f)
    raise _Unknown(unit.text(node))


# ------------------------------------------------------------------ the run
def _decl_parts(unit, stmt):
    """[(name, value node)] of a declaration whose declarators all have plain values."""
    if stmt is None or stmt.type != "declaration":
        return None
    out = []
    for d in stmt.children_by_field_name("declarator"):
        if d.type != "init_declarator":
            return None
        ident = d.child_by_field_name("declarator")
        if ident is None or ident.type != "identifier":
            return None
        out.append((unit.text(ident), d.child_by_field_name("value")))
    return out or None


def _decl_type(unit, stmt) -> str:
    ty = stmt.child_by_field_name("type")
    return norm(unit.text(ty)) if ty is not None else ""


def _idents(unit, node):
    return {unit.text(n) for n in unit.walk(node) if n.type == "identifier"
            and not (n.parent is not None and builtin(unit, n.parent))}


def _builtins(unit, node):
    return {b for n in unit.walk(node) for b in [builtin(unit, n)] if b}


def _siblings(stmt):
    p = stmt.parent
    if p is None or p.type != "compound_statement":
        return None
    return [c for c in p.named_children if c.type != "comment"]


@dataclass
class _Run:
    stmts: list  # the declarations of the run, in order
    names: list  # every name the run declares, in order
    outputs: list  # (name, value node, S node) of the two results, in declaration order
    internal: list  # names declared and used only inside the run
    rest: list  # statements after the run, in the same block


def _member(unit, stmt, declared) -> bool:
    parts = _decl_parts(unit, stmt)
    if parts is None:
        return False
    for _, v in parts:
        bs = _builtins(unit, v)
        if not (bs & {"blockIdx.x", "blockIdx.y", "gridDim.x", "gridDim.y"}
                or _idents(unit, v) & set(declared)):
            return False
    return True


def _run(unit, start) -> "_Run | str":
    sibs = _siblings(start)
    if sibs is None:
        return "the declaration is not a statement of a block"
    i0 = next(k for k, s in enumerate(sibs) if s.id == start.id)
    i = i0
    stmts, names = [], []
    while i < len(sibs) and _member(unit, sibs[i], names):
        stmts.append(sibs[i])
        names += [n for n, _ in _decl_parts(unit, sibs[i])]
        i += 1
    # the shortest prefix after which exactly two block-dependent values are used
    dep, declared, last = set(), [], None
    for L, s in enumerate(stmts, 1):
        for n, v in _decl_parts(unit, s):
            if _builtins(unit, v) & {"blockIdx.x", "blockIdx.y"} or _idents(unit, v) & dep:
                dep.add(n)
            declared.append(n)
        used_after = set()
        for t in sibs[i0 + L:]:
            used_after |= _idents(unit, t)
        inside = set()
        for t in stmts[:L]:
            inside |= _idents(unit, t)
        outs = [n for n in declared if n in used_after]
        last = outs
        if len(outs) == 2 and all(n in dep and n not in inside - {n} for n in outs) and \
                not any(n in _idents(unit, v) for t in stmts[:L]
                        for m, v in _decl_parts(unit, t) for n in outs if m != n):
            r = _make_run(unit, stmts[:L], declared, outs, sibs[i0 + L:])
            if not isinstance(r, str):
                return r
            last = [r]
    return (f"the run of {len(stmts)} declaration(s) from `{norm(unit.text(start))[:40]}` "
            f"never leaves exactly a block row and a block column for the code after it "
            f"(at its end: {', '.join(last or []) or 'none'})")


def _make_run(unit, stmts, names, outs, rest):
    internal = [n for n in names if n not in outs]
    outputs = []
    for s in stmts:
        parts = _decl_parts(unit, s)
        for n, v in parts:
            if n in outs:
                if len(parts) != 1:
                    return f"{n} is declared together with other names"
                sub = _swizzled_part(unit, v, set(internal))
                if sub is None:
                    return (f"the value of {n} does not read the run through one "
                            "subexpression")
                outputs.append((n, v, sub))
    for n, v, _ in outputs:
        if _idents(unit, v) & {o for o, _, _ in outputs}:
            return f"the value of {n} reads the other result"
    return _Run(stmts, names, outputs, internal, rest)


def _swizzled_part(unit, value, internal):
    """The smallest node of ``value`` holding every read of the run (with its parentheses)."""
    refs = [n for n in unit.walk(value)
            if (n.type == "identifier" and unit.text(n) in internal)
            or builtin(unit, n) in ("blockIdx.x", "blockIdx.y", "gridDim.x", "gridDim.y")]
    if not refs:
        return None
    node = refs[0]
    while not all(node.start_byte <= r.start_byte and r.end_byte <= node.end_byte for r in refs):
        node = node.parent
    while node.type in ("identifier", "field_identifier") and node.parent.type == "field_expression":
        node = node.parent
    if node.parent is not None and node.parent.type == "parenthesized_expression" and \
            node.parent.id != value.id:
        node = node.parent
    return node


def _grid_map(unit, run, macros):
    """{free-name assignment: ok} — raises _Unknown; returns (row output index, why-not)."""
    outs = {n for n, _, _ in run.outputs}
    inner = [s for s in run.stmts if _decl_parts(unit, s)[0][0] not in outs]
    free = set()
    for s in inner:
        for _, v in _decl_parts(unit, s):
            free |= _idents(unit, v)
    for _, _, sub in run.outputs:
        free |= _idents(unit, sub)
    free -= set(run.names)
    free -= set(macros)
    free -= {"min", "max", "umin", "umax"}
    free = sorted(free)
    if len(free) > 2:
        raise _Unknown(f"the run reads {', '.join(free)}, which the file does not fix")
    row = None
    for vals in itertools.product(_FREE, repeat=len(free)):
        base = dict(macros)
        base.update(zip(free, vals))
        for gx, gy in _GRIDS:
            seen = set()
            firsts = []
            for by in range(gy):
                for bx in range(gx):
                    env = dict(base)
                    env.update({"blockIdx.x": bx, "blockIdx.y": by, "gridDim.x": gx,
                                "gridDim.y": gy})
                    for s in inner:
                        for n, v in _decl_parts(unit, s):
                            env[n] = _eval(unit, v, env)
                    pair = tuple(_eval(unit, sub, env) for _, _, sub in run.outputs)
                    seen.add(pair)
                    firsts.append(pair)
            want_a = {(y, x) for y in range(gy) for x in range(gx)}
            want_b = {(x, y) for y in range(gy) for x in range(gx)}
            fits = []
            if seen == want_a and len(firsts) == len(want_a):
                fits.append(0)
            if seen == want_b and len(firsts) == len(want_b):
                fits.append(1)
            if not fits:
                return None, (f"with gridDim = ({gx}, {gy})"
                              + (f" and {', '.join(f'{a}={b}' for a, b in zip(free, vals))}"
                                 if free else "")
                              + " the run does not map the blocks one to one onto the grid")
            if gx != gy:
                if row is not None and row != fits[0]:
                    return None, "the run swaps rows and columns depending on the grid"
                row = fits[0]
    return row, None


def _identity(unit, run) -> bool:
    """The run already is the plain numbering (nothing to undo)."""
    return all(norm(unit.text(sub)).strip("()") in ("blockIdx.x", "blockIdx.y")
               for _, _, sub in run.outputs) and not run.internal


# ------------------------------------------------------------------ shared checks
def _block_independent(site, ctx) -> Verdict:
    text = site.unit.source.decode("utf-8", "replace")
    for w in _COMMUNICATION:
        if w in text:
            return Verdict.no(f"the file uses `{w}`: blocks may communicate, so the order "
                              "in which they are numbered can change the result")
    return Verdict.yes("no atomics, fences or grid synchronization: blocks are independent, "
                       "any one-to-one renumbering gives the same result")


# ------------------------------------------------------------------ canonical text
def _canonical(p, ind: str) -> list[str]:
    g = str(p.group)
    return [
        f"{ind}const int {p.grid_x} = gridDim.x, {p.grid_y} = gridDim.y;",
        f"{ind}const int {p.id} = blockIdx.y * {p.grid_x} + blockIdx.x;",
        f"{ind}const int {p.group_var} = {p.id} / ({g} * {p.grid_x});",
        f"{ind}const int {p.first} = {p.group_var} * {g};",
        f"{ind}const int {p.rows} = min({g}, {p.grid_y} - {p.first});",
        f"{ind}const int {p.local} = {p.id} - {p.group_var} * {g} * {p.grid_x};",
    ]


def _pair(unit, start):
    """(row decl, col decl, first, second) for the adjacent declarations of a plain grid."""
    sibs = _siblings(start)
    if sibs is None:
        return None
    i = next(k for k, s in enumerate(sibs) if s.id == start.id)
    if i + 1 >= len(sibs):
        return None
    a, b = sibs[i], sibs[i + 1]
    pa, pb = _decl_parts(unit, a), _decl_parts(unit, b)
    if not pa or not pb or len(pa) != 1 or len(pb) != 1:
        return None
    ba, bb = _builtins(unit, pa[0][1]), _builtins(unit, pb[0][1])
    if "blockIdx.y" in ba and "blockIdx.x" in bb:
        return a, b
    if "blockIdx.x" in ba and "blockIdx.y" in bb:
        return b, a
    return None


def _count(unit, node, name):
    return sum(1 for n in unit.walk(node) if builtin(unit, n) == name)


def _grid_2d(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    pr = _pair(unit, site.node)
    if pr is None:
        return Verdict.no("not two adjacent declarations, one reading blockIdx.y and the "
                          "next blockIdx.x (or the other way round)")
    for b in ("blockIdx.x", "blockIdx.y"):
        if _count(unit, fn.body, b) != 1:
            return Verdict.no(f"{fn.name} reads {b} {_count(unit, fn.body, b)} times: the "
                              "renumbering replaces its one read")
    for b in ("blockIdx.z", "gridDim.z"):
        if _count(unit, fn.body, b):
            return Verdict.no(f"{fn.name} reads {b}: only a 2-D grid is renumbered")
    for decl in pr:
        v = _decl_parts(unit, decl)[0][1]
        for b in ("blockIdx.x", "blockIdx.y"):
            for n in unit.walk(v):
                if builtin(unit, n) == b and n.parent.type not in (
                        "binary_expression", "init_declarator", "parenthesized_expression"):
                    return Verdict.no(f"{b} is not an operand of arithmetic in "
                                      f"`{norm(unit.text(decl))}`")
    return Verdict.yes("the block row and column come from one read of blockIdx.y and one of "
                       "blockIdx.x, in adjacent declarations")


def _int_decls(site, ctx) -> Verdict:
    unit = site.unit
    pr = _pair(unit, site.node)
    if pr is None:
        return Verdict.unknown("no block row/column declarations")
    for d in pr:
        ty = _decl_type(unit, d)
        if ty not in _INT_TYPES:
            return Verdict.no(f"`{norm(unit.text(d))}` has type {ty}, not an integer type")
    return Verdict.yes("the block row and column are integers")


def _fresh(site, ctx) -> Verdict:
    p = site.pass_
    unit, fn = site.unit, site.function
    used = {unit.text(n) for n in unit.walk(fn.node) if n.type == "identifier"}
    names = [p.grid_x, p.grid_y, p.id, p.group_var, p.first, p.rows, p.local]
    if len(set(names)) != len(names):
        return Verdict.no("two of the temporaries have the same name")
    for n in names:
        if n in used:
            return Verdict.no(f"the temporary name {n} is already used in {fn.name}")
    if isinstance(p.group, str):
        if p.group not in _macros(unit) and p.group not in used:
            return Verdict.no(f"the group size {p.group} is not a macro or name of the file")
    return Verdict.yes(f"temporaries {', '.join(names)} are fresh")


@dataclass(frozen=True)
class SwizzleBlocks(Pass):
    """Renumber the blocks of a 2-D grid in groups of ``group`` block-rows (L2 reuse).

    Before::

        const int bm = blockIdx.y * BM;
        const int bn = blockIdx.x * BN;

    After ``swizzle-blocks{group=8}``::

        const int gx = gridDim.x, gy = gridDim.y;
        const int id = blockIdx.y * gx + blockIdx.x;
        const int group = id / (8 * gx);
        const int first_row = group * 8;
        const int rows = min(8, gy - first_row);
        const int local = id - group * 8 * gx;
        const int bm = (first_row + local % rows) * BM;
        const int bn = (local / rows) * BN;

    The linear block id walks down ``group`` block-rows column by column, so blocks that
    run together share rows of A and columns of B in L2. The last group has ``rows =
    min(group, gy - first_row)`` rows, which keeps the map a bijection of the grid for
    every grid size: no size fact is needed, and the launch is unchanged.

    Preconditions: grid-2d (layout: one read each of blockIdx.y and blockIdx.x, in two
    adjacent integer declarations, as operands of arithmetic; no z dimension),
    block-independent (pipeline: no atomics, fences or grid synchronization in the file,
    so the order blocks are numbered in cannot change the result), int-index (dtype: the
    two declarations are integers), fresh-names (pipeline: the temporaries are unused
    names; a named group size is a macro or name of the file).

    Options: ``group`` (block-rows per group: an integer 1..64 or a macro name; default
    8), ``grid-x``, ``grid-y``, ``id``, ``group-var``, ``first``, ``rows``, ``local``
    (names of the temporaries; defaults gx, gy, id, group, first_row, rows, local).
    """

    name = "swizzle-blocks"
    kind = "optimize"
    inverse = "unswizzle-blocks"
    scope = "device"
    anchor = Rule(kind="declaration", inside_kernel=False)
    preconditions = (
        Precondition("grid-2d", "layout",
                     "one read each of blockIdx.y and blockIdx.x, in adjacent declarations",
                     _grid_2d),
        Precondition("block-independent", "pipeline",
                     "no atomics, fences or grid synchronization", _block_independent),
        Precondition("int-index", "dtype", "the block row and column are integers",
                     _int_decls),
        Precondition("fresh-names", "pipeline", "the temporaries are unused names", _fresh),
    )

    group: object = option(8, OneOf(IntRange(1, 64), Identifier(words=())),
                           "block-rows per group (integer or macro name)", tune=True)
    grid_x: str = option("gx", Identifier(words=()), "name of the gridDim.x copy")
    grid_y: str = option("gy", Identifier(words=()), "name of the gridDim.y copy")
    id: str = option("id", Identifier(words=()), "name of the linear block id")
    group_var: str = option("group", Identifier(words=()), "name of the group index")
    first: str = option("first_row", Identifier(words=()), "name of the group's first row")
    rows: str = option("rows", Identifier(words=()), "name of the group's row count")
    local: str = option("local", Identifier(words=()), "name of the id within the group")

    def sites(self, unit, ctx):
        out = []
        for s in device_sites(self, unit, ctx):
            pr = _pair(unit, s.node)
            if pr is None or s.node.id != min(pr, key=lambda n: n.start_byte).id:
                continue
            out.append(Site(unit, s.match, s.function, len(out) + 1, self))
        return out

    def rewrite(self, site, ctx):
        unit = site.unit
        row, col = _pair(unit, site.node)
        first = min((row, col), key=lambda n: n.start_byte)
        ind = line_indent(unit, first.start_byte)
        pre = "\n".join(_canonical(self, ind)).lstrip(" \t") + "\n" + ind
        edits = [Edit.insert(first.start_byte, pre)]
        for decl, b, repl in ((row, "blockIdx.y", f"{self.first} + {self.local} % {self.rows}"),
                              (col, "blockIdx.x", f"{self.local} / {self.rows}")):
            n = next(n for n in unit.walk(decl) if builtin(unit, n) == b)
            bare = n.parent.type in ("init_declarator", "parenthesized_expression")
            edits.append(Edit.replace(n, repl if bare else f"({repl})"))
        return edits

    def inverse_for(self, site, ctx):
        return UnswizzleBlocks()


# ------------------------------------------------------------------ simplify
def _run_form(site, ctx) -> Verdict:
    unit = site.unit
    r = _run(unit, site.node)
    if isinstance(r, str):
        return Verdict.no(r)
    if _identity(unit, r):
        return Verdict.no("the blocks are already numbered plainly")
    return Verdict.yes(f"{len(r.stmts)} declarations compute the block row/column "
                       f"{' and '.join(n for n, _, _ in r.outputs)} from blockIdx and gridDim")


def _run_ints(site, ctx) -> Verdict:
    unit = site.unit
    r = _run(unit, site.node)
    if isinstance(r, str):
        return Verdict.unknown(r)
    for s in r.stmts:
        ty = _decl_type(unit, s)
        if ty not in _INT_TYPES:
            return Verdict.no(f"`{norm(unit.text(s))[:50]}` has type {ty}, not an integer "
                              "type (the check evaluates integer arithmetic)")
    return Verdict.yes("every declaration of the run is an integer")


def _bijection(site, ctx) -> Verdict:
    unit = site.unit
    r = _run(unit, site.node)
    if isinstance(r, str):
        return Verdict.unknown(r)
    try:
        row, why = _grid_map(unit, r, _macros(unit))
    except _Unknown as e:
        return Verdict.unknown(f"cannot evaluate the run ({e})")
    if why:
        return Verdict.no(why)
    if row is None:
        return Verdict.unknown("only square grids were checked")
    return Verdict.yes(f"on {len(_GRIDS)} grid shapes the run maps the blocks one to one "
                       f"onto (row {r.outputs[row][0]}, column {r.outputs[1 - row][0]})")


def _row_index(unit, r):
    row, _ = _grid_map(unit, r, _macros(unit))
    return row


def _run_names(unit, r):
    """The options of swizzle-blocks that spell this run, when it has the canonical form."""
    if len(r.stmts) != 6 + 2 or len(r.internal) != 7:
        return None
    gx, gy, id_, grp, first, rows, local = r.internal
    d3 = _decl_parts(unit, r.stmts[3])[0][1]
    g = d3.child_by_field_name("right") if d3.type == "binary_expression" else None
    if g is None:
        return None
    gt = unit.text(g)
    group = int(gt) if gt.isdigit() else gt
    try:
        p = SwizzleBlocks(group=group, grid_x=gx, grid_y=gy, id=id_, group_var=grp,
                          first=first, rows=rows, local=local)
    except Exception:
        return None
    want = "\n".join(_canonical(p, ""))
    u2 = parse(("void __f() {\n" + want + "\n}\n").encode())
    b2 = u2.root.named_children[0].child_by_field_name("body")
    exp = tuple(x for s in b2.named_children for x in tokens(u2, s))
    got = tuple(x for s in r.stmts[:6] for x in tokens(unit, s))
    return p if exp == got else None


@dataclass(frozen=True)
class UnswizzleBlocks(Pass):
    """Undo a renumbering of the blocks of a 2-D grid: back to blockIdx.y / blockIdx.x.

    Before::

        const int gx = gridDim.x, gy = gridDim.y;
        const int id = blockIdx.y * gx + blockIdx.x;
        const int group = id / (GROUP * gx);
        const int first_row = group * GROUP;
        const int rows = min(GROUP, gy - first_row);
        const int local = id - group * GROUP * gx;
        const int bm = (first_row + local % rows) * BM;
        const int bn = (local / rows) * BN;

    After ``unswizzle-blocks``::

        const int bm = blockIdx.y * BM;
        const int bn = blockIdx.x * BN;

    A site is a run of consecutive integer declarations, each reading blockIdx.x/y,
    gridDim.x/y or an earlier name of the run, of which exactly two names are used after
    the run (the block row and column). In each of the two, the smallest subexpression
    holding all reads of the run is replaced by ``blockIdx.y`` (row) or ``blockIdx.x``
    (column) and the rest of the run is deleted. The run is evaluated on 12 grid shapes
    (names the file does not fix, such as a template group size, take the values 1, 2,
    3, 4, 8): it must map the blocks one to one onto the grid, and which result is the
    row is read from that map. The exact inverse is the canonical spelling that
    ``swizzle-blocks`` writes (its names are read back as options); other spellings
    (any bijection, e.g. a Z-order or snake walk) are also undone, without an exact
    inverse.

    Preconditions: run-form (layout: the run and its two results, each reading the run
    through one subexpression; not already the plain numbering), int-index (dtype: the
    run's declarations are integers), bijection (layout: a one-to-one map onto the grid,
    checked by enumeration), block-independent (pipeline: no atomics, fences or grid
    synchronization in the file).

    Options: none.
    """

    name = "unswizzle-blocks"
    kind = "simplify"
    inverse = "swizzle-blocks"
    scope = "device"
    anchor = Rule(kind="declaration")
    preconditions = (
        Precondition("run-form", "layout",
                     "a run of declarations computing a block row and column", _run_form),
        Precondition("int-index", "dtype", "the run's declarations are integers", _run_ints),
        Precondition("bijection", "layout",
                     "the run maps the blocks one to one onto the grid", _bijection),
        Precondition("block-independent", "pipeline",
                     "no atomics, fences or grid synchronization", _block_independent),
    )

    def sites(self, unit, ctx):
        out, covered = [], set()
        for s in device_sites(self, unit, ctx):
            st = s.node
            if st.parent is None or st.parent.type != "compound_statement":
                continue
            if st.id in covered:
                continue  # inside the run of an earlier site
            parts = _decl_parts(unit, st)
            if not parts or not any(_builtins(unit, v) & {"gridDim.x", "gridDim.y"}
                                    for _, v in parts):
                continue
            r = _run(unit, st)
            if not isinstance(r, str):
                covered |= {x.id for x in r.stmts}
            out.append(Site(unit, s.match, s.function, len(out) + 1, self))
        return out

    def rewrite(self, site, ctx):
        unit = site.unit
        r = _run(unit, site.node)
        row = _row_index(unit, r)
        edits = []
        outs = {n for n, _, _ in r.outputs}
        keep = [s for s in r.stmts if _decl_parts(unit, s)[0][0] in outs]
        for s in r.stmts:
            if s in keep or any(s.id == k.id for k in keep):
                continue
            edits.append(_delete_stmt(unit, s))
        for k, (n, v, sub) in enumerate(r.outputs):
            edits.append(Edit.replace(sub, "blockIdx.y" if k == row else "blockIdx.x"))
        return edits

    def inverse_for(self, site, ctx):
        unit = site.unit
        r = _run(unit, site.node)
        if isinstance(r, str):
            return SwizzleBlocks()
        return _run_names(unit, r) or SwizzleBlocks()


def _delete_stmt(unit, stmt) -> Edit:
    """Delete a statement's whole line(s), with comment lines right above it."""
    src = unit.source
    start = src.rfind(b"\n", 0, stmt.start_byte) + 1
    prev = stmt.prev_sibling
    while prev is not None and prev.type == "comment" and \
            src[prev.end_byte:start].strip() == b"" and \
            src[src.rfind(b"\n", 0, prev.start_byte) + 1:prev.start_byte].strip() == b"":
        start = src.rfind(b"\n", 0, prev.start_byte) + 1
        prev = prev.prev_sibling
    end = stmt.end_byte
    if src[end:end + 1] == b"\n":
        end += 1
    return Edit.delete(start, end)


# ------------------------------------------------------------------ helpers shared with
# vector_c_update (candidates for the framework)


