"""Rows spread over groups of G threads, G chosen from the row length at run time:
``group-rows`` (optimize) and its inverse ``ungroup-rows`` (simplify).

The G-threads-per-row template (the corpus layernorm form) sizes a row's group from the
row length: ``R`` rows per block of ``T`` threads while rows are at most ``W`` long, fewer
(down to one) for longer rows::

    const int q = (cols + W - 1) / W;
    const int rpb = q >= 1 && q <= R ? R / q : 1;   // rows per block
    const int G = T / rpb;                          // threads per row
    const int group = threadIdx.x / G;
    const int gt = threadIdx.x % G;                 // the thread's rank in its group
    const int row = blockIdx.x * rpb + group;

with the launch ``grid=ceil_div(rows, max(1, R / ceil_div(cols, W))) block=T``. When the
code after it only uses G and gt to split a row's work (loops ``for (int c = gt; c < n;
c += G)``, a ``gt == 0`` test for the row's single writes, tests ``G == K`` that pick a
path, and arguments of device functions that use their parameters the same way) and the
threads of a group never cooperate (no shared memory, warp primitive, barrier or atomic
in the kernel or the functions it calls), every group size computes the same rows,
G = 1 included. ``ungroup-rows`` gives each row one thread::

    const int G = 1;
    const int gt = 0;
    const int row = blockIdx.x * blockDim.x + threadIdx.x;

with ``grid=ceil_div(rows, T)``; ``group-rows`` writes the template back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Identifier, IntRange, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.rewrite import contract_of, header_expr, used_names
from kltrans.passes.launch_facts import GROUP_GRID as _GROUP_GRID
from kltrans.passes.token_forms import indent, line_start, template_regex, unparen as _unparen
from kltrans.passes.rewrite import token_text as norm

GROUPED = """\
const int {q} = ({n} + {W} - 1) / {W};
const int {rpb} = {q} >= 1 && {q} <= {R} ? {R} / {q} : 1;
const int {G} = {T} / {rpb};
const int {group} = threadIdx.x / {G};
const int {gt} = threadIdx.x % {G};
const int {row} = blockIdx.x * {rpb} + {group};"""

SINGLE = """\
const int {G} = 1;
const int {gt} = 0;
const int {row} = blockIdx.x * blockDim.x + threadIdx.x;"""

_COOPERATE = re.compile(r"\b(__syncthreads\w*|__syncwarp|__shfl\w*|__ballot_sync|__any_sync|"
                        r"__all_sync|__reduce_\w+_sync|__match_\w+_sync|__activemask|atomic\w+|"
                        r"__shared__|__threadfence\w*|cooperative_groups)\b")


def _stmts(block):
    return [c for c in block.named_children if c.type != "comment"]


def _run(unit, fn, template: str, size: int):
    """(first statement index, statements, names) of ``template`` among the body's
    consecutive top-level statements, or None."""
    sts = _stmts(fn.body)
    rx = template_regex(template, ("R", "W", "T"))
    for i in range(len(sts) - size + 1):
        text = " ".join(norm(unit.text(s)) for s in sts[i:i + size])
        m = rx.fullmatch(text)
        if m is not None:
            return i, sts[i:i + size], m.groupdict()
    return None


def _found(site):
    unit, fn = site.unit, site.function
    if site.pass_.kind == "simplify":
        got = _run(unit, fn, GROUPED, 6)
        return got if got is not None else \
            "no G-threads-per-row template (q, rpb, G, group, gt, row declared in a row)"
    got = _run(unit, fn, SINGLE, 3)
    return got if got is not None else \
        "no `const int G = 1; const int gt = 0; const int row = blockIdx.x * blockDim.x + threadIdx.x;`"


def _check(f):
    def check(site, ctx) -> Verdict:
        got = _found(site)
        if isinstance(got, str):
            return Verdict.unknown(got)
        return f(site, ctx, got)
    return check


def _callees(unit, fn, seen=None) -> list:
    """The device functions ``fn`` calls, transitively."""
    seen = set() if seen is None else seen
    out = []
    names = {f.name: f for f in unit.device_functions()}
    for n in unit.walk(fn.node):
        if n.type != "call_expression":
            continue
        f = n.child_by_field_name("function")
        if f is not None and f.type == "template_function":
            f = f.child_by_field_name("name")
        name = unit.text(f) if f is not None else ""
        if name in names and name not in seen:
            seen.add(name)
            out.append(names[name])
            out += _callees(unit, names[name], seen)
    return out


# ------------------------------------------------------------------- preconditions
def _form(site, ctx, got) -> Verdict:
    unit, fn = site.unit, site.function
    i, sts, names = got
    if site.pass_.kind == "simplify":
        for k in ("q", "rpb", "group"):
            uses = [n for n in unit.walk(fn.body) if n.type == "identifier"
                    and unit.text(n) == names[k]
                    and not (sts[0].start_byte <= n.start_byte < sts[-1].end_byte)]
            if uses:
                return Verdict.no(f"{names[k]} is used after the template (line "
                                  f"{unit.line_col(uses[0].start_byte)[0]}): it would be lost")
        return Verdict.yes(f"{names['G']} = {names['T']} / {names['rpb']} threads per row, rank "
                           f"{names['gt']}, row {names['row']}")
    p = site.pass_
    new = [p.q, p.rpb, p.group]
    if len(set(new)) != 3:
        return Verdict.no("two of q, rpb, group are the same")
    used = used_names(unit, fn)
    taken = [x for x in new if x in used]
    if taken:
        return Verdict.no(f"the name {taken[0]} is already used in {fn.name}")
    return Verdict.yes(f"{names['G']} = 1, {names['gt']} = 0: the group template goes in "
                       f"with {', '.join(new)}")


def _uses_ok(unit, fn, g: str, gt: str, depth: int = 0, skip=(0, 0)) -> str | None:
    """None when ``fn`` uses ``g`` and ``gt`` only to split a row's work; else why not."""
    if depth > 4:
        return "the calls nest too deep"
    for n in unit.walk(fn.body):
        if n.type != "identifier" or unit.text(n) not in (g, gt):
            continue
        if skip[0] <= n.start_byte < skip[1]:
            continue
        name = unit.text(n)
        p = n.parent
        # a declaration of the name itself (the template or a parameter)
        if p is not None and p.type == "init_declarator" and p.child_by_field_name("declarator").id == n.id:
            continue
        if p is not None and p.type == "argument_list":
            call = p.parent
            f = call.child_by_field_name("function")
            if f is not None and f.type == "template_function":
                f = f.child_by_field_name("name")
            callee = next((d for d in unit.device_functions() if d.name == unit.text(f)), None)
            if callee is None:
                return f"{name} is passed to {unit.text(f)}, which is not a device function here"
            args = [a for a in p.named_children if a.type != "comment"]
            if len(args) > len(callee.params):
                return f"more arguments than parameters of {callee.name}"
            # the callee's group size: the argument g, or a literal K under `if (g == K)`
            known = _known_size(unit, fn, call, g)
            gp = [callee.params[k].name for k, a in enumerate(args)
                  if unit.text(a) == g or (known is not None and unit.text(a) == known)]
            tp = [callee.params[k].name for k, a in enumerate(args) if unit.text(a) == gt]
            if len(gp) > 1 or len(tp) > 1:
                return f"{g} or {gt} is passed twice to {callee.name}"
            sub = _uses_ok(unit, callee, gp[0] if gp else "\0", tp[0] if tp else "\0",
                           depth + 1)
            if sub is not None:
                return f"{callee.name}: {sub}"
            continue
        stmt = n
        while stmt is not None and stmt.type not in ("for_statement", "if_statement",
                                                     "declaration", "expression_statement",
                                                     "return_statement"):
            stmt = stmt.parent
        if stmt is None:
            return f"{name} is used outside a statement"
        if stmt.type == "declaration" and stmt.parent is not None and \
                stmt.parent.type == "for_statement":
            stmt = stmt.parent
        if stmt.type == "for_statement":
            head = norm(unit.text(stmt)[:unit.text(stmt).index(")") + 1])
            m = re.fullmatch(r"for \( int (\w+) = (\w+) ; \1 < (\w+) ; \1 \+= (\w+) \)", head)
            if m is not None and m.group(2) == gt and m.group(4) == g and \
                    stmt.child_by_field_name("initializer").start_byte <= n.start_byte < \
                    stmt.child_by_field_name("update").end_byte:
                continue
            if stmt.child_by_field_name("body").start_byte <= n.start_byte:
                pass  # a use inside the loop body: judged by its own statement below
            else:
                return f"`{head}` is not `for (int c = {gt}; c < n; c += {g})`"
        cond = stmt.child_by_field_name("condition") if stmt.type == "if_statement" else None
        if cond is not None and cond.start_byte <= n.start_byte < cond.end_byte:
            c = norm(unit.text(cond))
            if name == gt and c == f"( {gt} == 0 )":
                continue
            if name == g and re.fullmatch(rf"\( {re.escape(g)} == \w+ \)", c):
                continue
            if name == g and re.fullmatch(rf"\( \w+ <= {re.escape(g)} \* [\w ]+\)", c):
                continue
        return f"`{norm(unit.text(n.parent))[:60]}` uses {name} other than to split the row"
    return None


def _known_size(unit, fn, node, g: str) -> str | None:
    """K when ``node`` sits in the branch of an ``if (g == K)`` (K a literal) in ``fn``."""
    n = node.parent
    while n is not None and n.id != fn.node.id:
        if n.type == "if_statement":
            cons = n.child_by_field_name("consequence")
            m = re.fullmatch(rf"\( {re.escape(g)} == (\d+) \)",
                             norm(unit.text(n.child_by_field_name("condition"))))
            if m is not None and cons.start_byte <= node.start_byte < cons.end_byte:
                return m.group(1)
        n = n.parent
    return None


def _strided(site, ctx, got) -> Verdict:
    unit, fn = site.unit, site.function
    i, sts, names = got
    why = _uses_ok(unit, fn, names["G"], names["gt"], skip=(sts[0].start_byte, sts[-1].end_byte))
    if why is not None:
        return Verdict.no(why)
    return Verdict.yes(f"{names['G']} and {names['gt']} only split each row's work (strided "
                       f"loops, `{names['gt']} == 0` writes, path tests): any group size covers "
                       "the row")


def _alone(site, ctx, got) -> Verdict:
    unit, fn = site.unit, site.function
    for f in [fn] + _callees(unit, fn):
        m = _COOPERATE.search(re.sub(r"//[^\n]*|/\*.*?\*/", " ", unit.text(f.node), flags=re.S))
        if m is not None:
            return Verdict.no(f"{f.name} uses {m.group(1)}: the threads of a group cooperate")
    return Verdict.yes("no shared memory, warp primitive, barrier or atomic in the kernel or "
                       "the functions it calls: each thread works alone")


def _writes(site, ctx, got) -> Verdict:
    """The writes are row-indexed: through the row's pointers or at [row]."""
    unit, fn = site.unit, site.function
    row = got[2]["row"]
    uses = [n for n in unit.walk(fn.body) if n.type == "identifier" and unit.text(n) == row]
    if not uses:
        return Verdict.no(f"{row} is never used: the kernel does not work per row")
    ptrs = [p for p in fn.params if p.pointer]
    bad = [(a.name, b.name) for k, a in enumerate(ptrs) for b in ptrs[k + 1:]
           if not (a.const and b.const) and not ctx.assumed("no_alias", a.name, b.name)]
    if bad:
        # the rows are disjoint slices of the buffers; overlapping buffers would make the
        # order of the row work (now one thread per row) visible
        return Verdict.unknown(f"{bad[0][0]} and {bad[0][1]} may overlap: pass --assume "
                               "'no_alias(*)'")
    return Verdict.yes(f"every thread works on row {row}: the buffers do not overlap (assumed)")


def _contract(site, ctx, got) -> Verdict:
    from kltrans.syntax.contract import evaluate, file_constants

    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    names = got[2]
    consts = file_constants(site.unit)
    try:
        block = int(evaluate(c.block[0], consts))
    except Exception:
        return Verdict.no(f"block={c.block[0]} is not a constant")
    grid = _unparen(c.grid[0])
    if site.pass_.kind == "simplify":
        try:
            T = int(evaluate(names["T"], consts))
            W = int(evaluate(names["W"], consts))
            R = int(evaluate(names["R"], consts))
        except Exception:
            return Verdict.no(f"{names['T']}, {names['R']} or {names['W']} is not a constant")
        m = _GROUP_GRID.fullmatch(grid)
        if T != block or R * 32 > T:
            return Verdict.no(f"{names['T']} = {T} is not the block size {block}, or R = {R} "
                              "rows of a warp do not fit it")
        if m is None or int(m.group(2)) != R or m.group(3) != names["n"] or int(m.group(4)) != W:
            return Verdict.no(f"grid={c.grid[0]} is not ceil_div(rows, max(1, {R} / "
                              f"ceil_div({names['n']}, {W}))): rows per block as in the kernel")
        return Verdict.yes(f"grid={c.grid[0]}, block={block}: becomes ceil_div({m.group(1)}, "
                           f"{block})")
    p = site.pass_
    try:
        T = int(evaluate(p.T, consts))
        W = int(evaluate(p.W, consts))
    except Exception:
        return Verdict.no(f"{p.T} or {p.W} is not a constant")
    if T != block or block % 32 or p.R * 32 > block:
        return Verdict.no(f"block={block} is not {p.T} = {T} whole warps with {p.R} rows of a "
                          "warp")
    m = re.fullmatch(r"ceil_div\((\w+),(\w+)\)", grid)
    if m is None or int(evaluate(m.group(2), consts)) != block:
        return Verdict.no(f"grid={c.grid[0]} is not ceil_div(rows, {block}): one thread per row")
    del W
    return Verdict.yes(f"grid={c.grid[0]}, block={block}: rows per block become "
                       f"max(1, {p.R} / ceil_div({p.n}, {p.W}))")


def _preconditions():
    return (
        Precondition("group-form", "layout",
                     "the group template (simplify) or G = 1, gt = 0 (optimize), names fresh",
                     _check(_form)),
        Precondition("strided-uses", "layout",
                     "G and gt only split the rows' work (here and in the functions called)",
                     _check(_strided)),
        Precondition("threads-alone", "pipeline",
                     "no shared memory, warp primitive, barrier or atomic", _check(_alone)),
        Precondition("row-writes", "storage", "the work is per row; buffers do not overlap",
                     _check(_writes)),
        Precondition("launch-shape", "hardware",
                     "the grid and block of the template (whole warps, T threads)",
                     _check(_contract)),
    )


# ======================================================================== the passes
@dataclass(frozen=True)
class GroupRows(Pass):
    """Spread each row over a group of G threads sized from the row length at run time.

    Before (``grid=ceil_div(rows, 128) block=128``)::

        const int G = 1;
        const int gt = 0;
        const int row = blockIdx.x * blockDim.x + threadIdx.x;

    After ``group-rows{W=LN_ROW_WARP,R=4,T=LN_THREADS,n=cols}``
    (``grid=ceil_div(rows, max(1, 4 / ceil_div(cols, 4096))) block=128``)::

        const int q = (cols + LN_ROW_WARP - 1) / LN_ROW_WARP;
        const int rpb = q >= 1 && q <= 4 ? 4 / q : 1;
        const int G = LN_THREADS / rpb;
        const int group = threadIdx.x / G;
        const int gt = threadIdx.x % G;
        const int row = blockIdx.x * rpb + group;

    The code after the declarations must already split its row by ``gt``/``G`` (strided
    loops, ``gt == 0`` for the row's single writes) and its threads must not cooperate:
    then any group size computes the same rows. The group's threads only share work; a
    later pass (``group-sum``) makes them share the sums.

    Runtime facts: none guarded; that the buffers do not overlap comes from the context
    (``--assume 'no_alias(*)'``).

    Preconditions: group-form (layout: the three declarations; q, rpb, group fresh),
    strided-uses (layout: G and gt only split the row's work, also in the device
    functions they are passed to), threads-alone (pipeline: no shared memory, warp
    primitive, barrier or atomic), row-writes (storage: the work is per row, no_alias
    from the context), launch-shape (hardware: block = T whole warps, grid one thread
    per row).

    Options: ``W`` (the columns one warp takes, a macro), ``R`` (rows per block while
    rows fit W), ``T`` (threads per block, a macro), ``n`` (the row length), ``q``,
    ``rpb``, ``group`` (the template's local names).
    """

    name = "group-rows"
    kind = "optimize"
    inverse = "ungroup-rows"
    anchor = Rule(kind="function_definition")
    preconditions = _preconditions()

    W: str = option("LN_ROW_WARP", Identifier(), "columns of a row one warp takes (macro)")
    R: int = option(4, IntRange(1, 32), "rows per block while rows fit W", tune=True)
    T: str = option("LN_THREADS", Identifier(), "threads per block (macro)")
    n: str = option("cols", Identifier(), "the row length")
    q: str = option("q", Identifier(), "the name of ceil(n / W)")
    rpb: str = option("rpb", Identifier(), "the name of the rows per block")
    group: str = option("group", Identifier(), "the name of the group index")

    def rewrite(self, site, ctx):
        i, sts, names = _found(site)
        src = site.unit.source
        ind = src[line_start(src, sts[0].start_byte):sts[0].start_byte].decode()
        text = GROUPED.format(q=self.q, n=self.n, W=self.W, rpb=self.rpb, R=self.R,
                              G=names["G"], T=self.T, group=self.group, gt=names["gt"],
                              row=names["row"])
        return [Edit(sts[0].start_byte, sts[-1].end_byte, indent(text, ind))]

    def update_contract(self, contract, site, ctx):
        from kltrans.syntax.contract import evaluate, file_constants

        m = re.fullmatch(r"ceil_div\((\w+),(\w+)\)", _unparen(contract.grid[0]))
        w = int(evaluate(self.W, file_constants(site.unit)))
        return contract.with_(grid=(header_expr(
            f"ceil_div({m.group(1)}, max(1, {self.R} / ceil_div({self.n}, {w})))"),))

    def inverse_for(self, site, ctx):
        return UngroupRows()


@dataclass(frozen=True)
class UngroupRows(Pass):
    """Give each row one thread instead of a group of G threads sized at run time.

    Before (``grid=ceil_div(rows, max(1, 4 / ceil_div(cols, 4096))) block=128``)::

        const int q = (cols + LN_ROW_WARP - 1) / LN_ROW_WARP;
        const int rpb = q >= 1 && q <= 4 ? 4 / q : 1;
        const int G = LN_THREADS / rpb;
        const int group = threadIdx.x / G;
        const int gt = threadIdx.x % G;
        const int row = blockIdx.x * rpb + group;

    After ``ungroup-rows`` (``grid=ceil_div(rows, 128)``)::

        const int G = 1;
        const int gt = 0;
        const int row = blockIdx.x * blockDim.x + threadIdx.x;

    The rest of the kernel is unchanged: its strided loops ``for (int c = gt; c < n; c +=
    G)`` now walk the whole row, ``gt == 0`` always holds, and tests ``G == K`` (K >= 32)
    send every row down the path for any group size.

    Preconditions: the five of ``group-rows`` (group-form, strided-uses: layout;
    threads-alone: pipeline; row-writes: storage; launch-shape: hardware), read on the
    template.

    Options: none (``inverse_for`` gives ``group-rows`` with the template's macros and
    names).
    """

    name = "ungroup-rows"
    kind = "simplify"
    inverse = "group-rows"
    anchor = Rule(kind="function_definition")
    preconditions = _preconditions()

    def rewrite(self, site, ctx):
        i, sts, names = _found(site)
        src = site.unit.source
        ind = src[line_start(src, sts[0].start_byte):sts[0].start_byte].decode()
        text = SINGLE.format(**names)
        return [Edit(sts[0].start_byte, sts[-1].end_byte, indent(text, ind))]

    def update_contract(self, contract, site, ctx):
        from kltrans.syntax.contract import evaluate, file_constants

        m = _GROUP_GRID.fullmatch(_unparen(contract.grid[0]))
        block = int(evaluate(contract.block[0], file_constants(site.unit)))
        return contract.with_(grid=(header_expr(f"ceil_div({m.group(1)}, {block})"),))

    def inverse_for(self, site, ctx):
        names = _found(site)[2]
        return GroupRows(W=names["W"], R=int(names["R"]), T=names["T"], n=names["n"],
                         q=names["q"], rpb=names["rpb"], group=names["group"])


__all__ = ["GroupRows", "UngroupRows"]
