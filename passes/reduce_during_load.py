"""First add during load: ``reduce-during-load`` (optimize) and ``reduce-after-load`` (simplify).

A block reduction whose load phase stores one guarded element per thread into shared
memory, ``sdata[tid] = (i < n) ? in[i] : 0;``, combines ``factor`` elements ``blockDim.x``
apart while loading instead (Harris' reduction #4), and the grid shrinks by the factor.
"""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis.affine import Affine, affine_of
from kltrans.analysis.pointers import pointer_params
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Choice, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.guard import index_decl
from kltrans.passes.rewrite import call_parts, contract_of, header_expr, norm
from passes.warp_reduce import _int, _parse_tree, _squash, _strip, _values

FACTORS = (2, 4, 8)
LOAD_OPS = ("+", "|", "^")  # combined with infix operators; 0 is their identity
FLOAT_TYPES = ("float", "double", "__half", "half", "__nv_bfloat16")


def _parts(unit, node):
    """(cond, then, else) of a (parenthesized) conditional expression, or None."""
    node = _strip(node)
    if node is None or node.type != "conditional_expression":
        return None
    return (_strip(node.child_by_field_name("condition")),
            _strip(node.child_by_field_name("consequence")),
            _strip(node.child_by_field_name("alternative")))


def _guarded_load(unit, node):
    """(index name, bound node, input name, pad node) of ``(I < N) ? IN[I] : Z``."""
    got = _parts(unit, node)
    if got is None:
        return None
    cond, then, pad = got
    if cond is None or cond.type != "binary_expression" or \
            unit.text(cond.child_by_field_name("operator")) != "<":
        return None
    i = _strip(cond.child_by_field_name("left"))
    if i is None or i.type != "identifier" or then is None or then.type != "subscript_expression":
        return None
    arr = then.child_by_field_name("argument")
    idx = [c for c in then.child_by_field_name("indices").named_children if c.type != "comment"]
    if arr is None or arr.type != "identifier" or len(idx) != 1 or unit.text(idx[0]) != unit.text(i):
        return None
    return unit.text(i), cond.child_by_field_name("right"), unit.text(arr), pad


@dataclass
class _Load:
    stmt: object
    assign: object
    shared: str
    tid: str
    rhs: object
    index: str
    bound: object
    src: str
    pad: object
    decl: object  # IndexDecl of the index
    stride: object  # X in blockIdx.x * X (node)
    terms: list  # reduce-after-load: the F guarded terms
    factor: int


def _block_factor(unit, value):
    """The node X of the product ``blockIdx.x * X`` in ``value`` (or why not)."""
    found = []
    for n in unit.walk(value):
        if n.type == "field_expression" and _squash(unit.text(n)) == "blockIdx.x":
            found.append(n)
    if len(found) != 1:
        return None, f"`{norm(unit.text(value))}` names blockIdx.x {len(found)} times"
    p = found[0].parent
    while p is not None and p.type == "parenthesized_expression":
        p = p.parent
    if p is None or p.type != "binary_expression" or \
            unit.text(p.child_by_field_name("operator")) != "*":
        return None, f"blockIdx.x in `{norm(unit.text(value))}` is not multiplied by the block size"
    sides = [p.child_by_field_name(k) for k in ("left", "right")]
    other = sides[1] if _strip(sides[0]).start_byte == found[0].start_byte or \
        sides[0].start_byte <= found[0].start_byte < sides[0].end_byte else sides[0]
    return other, None


def _load(site, after: bool) -> "_Load | str":
    unit, fn = site.unit, site.function
    assign = site.node
    stmt = assign.parent
    if stmt is None or stmt.type != "expression_statement":
        return "the store is not a statement of its own"
    lhs = _strip(assign.child_by_field_name("left"))
    if lhs.type != "subscript_expression":
        return "the store does not write an array element"
    shared = unit.text(lhs.child_by_field_name("argument"))
    if not any(d.name == shared and d.function in (fn.name, None) for d in unit.shared_decls()):
        return f"{shared} is not a __shared__ array"
    tid_n = [c for c in lhs.child_by_field_name("indices").named_children if c.type != "comment"]
    if len(tid_n) != 1 or affine_of(unit, tid_n[0], fn) != Affine.sym("threadIdx.x"):
        return f"the store `{norm(unit.text(lhs))}` is not indexed by threadIdx.x"
    tid = norm(unit.text(tid_n[0]))
    rhs = _strip(assign.child_by_field_name("right"))
    terms = [rhs]
    if after:
        terms = []
        x = rhs
        while True:
            xs = _strip(x)
            if xs.type != "binary_expression" or \
                    unit.text(xs.child_by_field_name("operator")) not in LOAD_OPS or \
                    _parts(unit, xs.child_by_field_name("right")) is None:
                break
            terms.insert(0, xs.child_by_field_name("right"))
            x = xs.child_by_field_name("left")
        terms.insert(0, x)
        if len(terms) not in FACTORS:
            return f"the store combines {len(terms)} guarded loads, not 2, 4 or 8"
        if terms[0].type != "parenthesized_expression":
            return "the first guarded load is not parenthesized"
    g = _guarded_load(unit, terms[0])
    if g is None:
        return "the stored value is not `(i < n) ? in[i] : pad`"
    index, bound, src, pad = g
    d = index_decl(unit, fn, index)
    if isinstance(d, str):
        return d
    stride, why = _block_factor(unit, d.value)
    if stride is None:
        return why
    f = len(terms)
    if after:
        st = _strip(stride)
        m = None
        if st.type == "binary_expression" and unit.text(st.child_by_field_name("operator")) == "*":
            m = _int(unit.text(st.child_by_field_name("right")))
        if stride.type != "parenthesized_expression" or m != f:
            return f"`{index} = {norm(unit.text(d.value))}` does not scale the block size by {f}"
        stride = st.child_by_field_name("left")
        a = affine_of(unit, stride, fn)
        want = Affine.sym("blockIdx.x") * a * f + Affine.sym("threadIdx.x") if a is not None \
            else None
    else:
        a = affine_of(unit, stride, fn)
        want = Affine.sym("blockIdx.x") * a + Affine.sym("threadIdx.x") if a is not None else None
    got = affine_of(unit, d.value, fn)
    if want is None or got is None or got != want:
        return f"`{index} = {norm(unit.text(d.value))}` is not blockIdx.x * B + threadIdx.x"
    for n in unit.walk(fn.body):
        if n.type == "identifier" and unit.text(n) == index and \
                not (d.decl.start_byte <= n.start_byte < d.decl.end_byte) and \
                not (stmt.start_byte <= n.start_byte < stmt.end_byte):
            return (f"{index} is used at line {unit.line_col(n.start_byte)[0]} outside the load: "
                    "the rest of the kernel must see the data only through the shared array")
    ld = _Load(stmt, assign, shared, tid, rhs, index, bound, src, pad, d, stride, terms, f)
    if after:
        want_txt = _combined(unit, ld, f, unit.text(terms[0])[1:-1], _join_op(unit, rhs, f))
        if _squash(want_txt) != _squash(unit.text(rhs)):
            return "the guarded loads are not the ones reduce-during-load writes"
    return ld


def _join_op(unit, rhs, f) -> str:
    x = _strip(rhs)
    return unit.text(x.child_by_field_name("operator")) if x.type == "binary_expression" else "+"


def _combined(unit, ld: _Load, f: int, first: str, op: str) -> str:
    from kltrans.passes.rewrite import indent_of as line_indent

    indent = line_indent(unit, ld.stmt.start_byte)
    """``(first) op (i + B < n ? in[i + B] : pad) op ...`` for ``f`` elements."""
    b = norm(unit.text(ld.stride))
    if ld.stride.type not in ("identifier", "field_expression", "number_literal"):
        b = f"({b})"
    terms = [f"({first})"]
    for k in range(1, f):
        off = b if k == 1 else f"{k} * {b}"
        terms.append(f"({ld.index} + {off} < {norm(unit.text(ld.bound))} ? "
                     f"{ld.src}[{ld.index} + {off}] : {norm(unit.text(ld.pad))})")
    if f == 2:
        return f" {op} ".join(terms)
    return f"\n{indent}    {op} ".join(terms)


def _tree_after(site, ld: _Load):
    """The tree reduction over the shared array later in the kernel, or None."""
    unit = site.unit
    for n in unit.walk(site.function.body):
        if n.start_byte > ld.stmt.end_byte and n.type in ("for_statement", "while_statement"):
            for reduced in (False, True):
                t = _parse_tree(unit, n, reduced)
                if not isinstance(t, str) and t.arr == ld.shared:
                    return t
    return None


# ------------------------------------------------------------------ preconditions
def _load_form(site, ctx) -> Verdict:
    ld = _load(site, after=False)
    if isinstance(ld, str):
        return Verdict.no(ld)
    return Verdict.yes(f"{ld.shared}[{ld.tid}] = guarded {ld.src}[{ld.index}], {ld.index} = "
                       f"blockIdx.x * {norm(site.unit.text(ld.stride))} + threadIdx.x, used "
                       "nowhere else")


def _elem_type(site, ld) -> str | None:
    for p in pointer_params(site.unit, site.function):
        if p.name == ld.src:
            return norm(p.param.base_type)
    return None


def _operator(site, ctx) -> Verdict:
    ld = _load(site, after=False)
    if isinstance(ld, str):
        return Verdict.no(ld)
    t = _tree_after(site, ld)
    if t is None:
        return Verdict.no(f"no tree reduction over {ld.shared} follows the load: the operator "
                          "to combine with is unknown")
    if t.combine not in LOAD_OPS:
        return Verdict.no(f"the tree combines with `{t.combine}`; only + | ^ (identity 0) are "
                          "combined during the load")
    if _int(norm(site.unit.text(ld.pad)).rstrip("fF").replace(".0", "").replace(".", "")) != 0:
        return Verdict.no(f"the padding `{norm(site.unit.text(ld.pad))}` is not 0, the identity "
                          f"of `{t.combine}`")
    ty = _elem_type(site, ld)
    if ty is None:
        return Verdict.unknown(f"the element type of {ld.src} is not known")
    if ty in FLOAT_TYPES or ty not in ("int", "unsigned", "unsigned int", "long long",
                                       "unsigned long long", "long", "unsigned long"):
        if t.combine != "+":
            return Verdict.no(f"`{t.combine}` on {ty}")
        if not ctx.assumed("reassoc"):
            return Verdict.unknown(f"{ty} + is regrouped (each thread first adds its "
                                   f"{site.pass_.factor if site.pass_ else 2} elements): give "
                                   "--assume reassoc to accept the rounding change")
        return Verdict.yes(f"{ty} + regrouped, --assume reassoc given")
    return Verdict.yes(f"`{t.combine}` on {ty} is associative and commutative: exact")


def _read_only(site, ctx) -> Verdict:
    ld = _load(site, after=False)
    if isinstance(ld, str):
        return Verdict.no(ld)
    p = next((p for p in pointer_params(site.unit, site.function) if p.name == ld.src), None)
    if p is None:
        return Verdict.unknown(f"{ld.src} is not a pointer parameter")
    if p.written is None:
        return Verdict.unknown(f"{ld.src} escapes the analysis: {p.reason}")
    if p.written:
        return Verdict.no(f"{site.function.name} writes {ld.src}: the extra loads could read "
                          "elements another block has changed")
    return Verdict.yes(f"{ld.src} is only read")


def _contract(site, ctx) -> Verdict:
    ld = _load(site, after=False)
    if isinstance(ld, str):
        return Verdict.no(ld)
    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    got = call_parts(c.grid[0])
    n = norm(site.unit.text(ld.bound))
    if got is None or len(got[1]) != 2 or norm(got[1][0]) != n:
        return Verdict.no(f"grid={c.grid[0]} is not ceil_div({n}, B): one block per "
                          f"block-sized chunk of the {n} elements is what the factor divides")
    return Verdict.yes(f"grid={c.grid[0]}: becomes ceil_div({c.grid[0]}, F)")


def _block_stride(site, ctx) -> Verdict:
    ld = _load(site, after=False)
    if isinstance(ld, str):
        return Verdict.no(ld)
    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    x = norm(site.unit.text(ld.stride))
    got = call_parts(c.grid[0])
    if got is None or len(got[1]) != 2:
        return Verdict.no(f"grid={c.grid[0]} is not ceil_div(n, B)")
    if x == "blockDim.x" and norm(got[1][1]) == norm(c.block[0]):
        return Verdict.yes(f"the stride is blockDim.x = {c.block[0]}, the grid's chunk")
    vals = [_values(site, ctx, e) for e in (x.replace("blockDim.x", f"({c.block[0]})"),
                                            c.block[0], got[1][1])]
    if any(v[0] is None for v in vals):
        return Verdict.unknown(f"cannot tell that `{x}`, the block {c.block[0]} and the grid's "
                               f"chunk {got[1][1]} are equal")
    if not (vals[0][0] == vals[1][0] == vals[2][0]) or len(vals[0][0]) != 1:
        return Verdict.no(f"`{x}` ({vals[0][0]}), the block ({vals[1][0]}) and the grid's chunk "
                          f"({vals[2][0]}) differ: the second load would skip or repeat elements")
    return Verdict.yes(f"`{x}` = the block = the grid's chunk = {vals[0][0][0]}")


LOAD = Rule(pattern="$A[$T] = $V", inside_kernel=True,
            constraints={"V": {"kind": ("conditional_expression", "parenthesized_expression")}})


@dataclass(frozen=True)
class ReduceDuringLoad(Pass):
    """Combine ``factor`` elements per thread while loading a block reduction (first add during load).

    Before::

        // kltrans: launch reduce grid=ceil_div(n, 256) block=256
        unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
        sdata[tid] = (i < n) ? in[i] : 0;
        __syncthreads();
        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) { ... sdata[tid] += sdata[tid + s] ... }

    After ``reduce-during-load{factor=2}``::

        // kltrans: launch reduce grid=ceil_div(ceil_div(n, 256), 2) block=256
        unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
        sdata[tid] = ((i < n) ? in[i] : 0) + (i + blockDim.x < n ? in[i + blockDim.x] : 0);

    A block covers ``factor`` block-sized chunks; each thread adds its elements (every one
    under its own bound check, so no divisibility fact is needed) before the tree, which is
    unchanged. The launch header's grid is divided by the factor. The block size may be
    written ``blockDim.x`` or as a constant (``#define BLOCK``, a template parameter), in
    either order of the product (``threadIdx.x + BLOCK * blockIdx.x``).

    Preconditions: load-form (layout: ``A[tid] = (i < n) ? in[i] : pad`` with ``A``
    __shared__, ``tid`` = threadIdx.x and ``i = blockIdx.x * B + threadIdx.x`` used nowhere
    else: the rest of the kernel sees the data only through ``A``), operator (dtype: the
    tree after the load combines with + | ^ and the pad is 0, its identity; integer
    operands are exact; float + is regrouped and needs the context fact ``--assume
    reassoc``), input-read-only (storage: the kernel never writes ``in``), grid-shape
    (pipeline: the header's grid is ``ceil_div(n, B)`` with the load's bound ``n``),
    block-stride (hardware: ``B`` in the index, the 1-D block and the grid's chunk are the
    same size).

    Options: ``factor`` (2, 4 or 8 elements per thread during the load; default 2).
    """

    name = "reduce-during-load"
    kind = "optimize"
    inverse = "reduce-after-load"
    anchor = LOAD
    preconditions = (
        Precondition("load-form", "layout",
                     "A[tid] = (i < n) ? in[i] : pad, i = blockIdx.x * B + threadIdx.x used only "
                     "there", _load_form),
        Precondition("operator", "dtype",
                     "the tree combines with + | ^ and pad 0; float + needs --assume reassoc",
                     _operator),
        Precondition("input-read-only", "storage", "the kernel never writes the input",
                     _read_only),
        Precondition("grid-shape", "pipeline", "the header's grid is ceil_div(n, B)", _contract),
        Precondition("block-stride", "hardware",
                     "B in the index equals the block and the grid's chunk", _block_stride),
    )

    factor: int = option(2, Choice(*FACTORS), "elements combined per thread during the load",
                                              tune=True)

    def rewrite(self, site, ctx):
        unit = site.unit
        ld = _load(site, after=False)
        t = _tree_after(site, ld)
        x = unit.text(ld.stride)
        return [Edit(ld.stride.start_byte, ld.stride.end_byte, f"({x} * {self.factor})"),
                Edit(ld.rhs.start_byte, ld.rhs.end_byte,
                     _combined(unit, ld, self.factor, unit.text(ld.rhs), t.combine))]

    def update_contract(self, contract, site, ctx):
        g = contract.grid[0]
        fn = "CEIL_DIV" if g.startswith("CEIL_DIV(") else "ceil_div"
        return contract.with_(grid=(f"{fn}({g}, {self.factor})",))

    def inverse_for(self, site, ctx):
        return ReduceAfterLoad()


# ------------------------------------------------------------------------ inverse
def _combined_form(site, ctx) -> Verdict:
    ld = _load(site, after=True)
    if isinstance(ld, str):
        return Verdict.no(ld)
    return Verdict.yes(f"{ld.factor} guarded loads of {ld.src}, {ld.index} = blockIdx.x * "
                       f"({norm(site.unit.text(ld.stride))} * {ld.factor}) + threadIdx.x")


def _grid_back(site, ctx) -> Verdict:
    ld = _load(site, after=True)
    if isinstance(ld, str):
        return Verdict.no(ld)
    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    got = call_parts(c.grid[0])
    if got is None or len(got[1]) != 2 or _int(got[1][1]) != ld.factor:
        return Verdict.no(f"grid={c.grid[0]} is not ceil_div(G, {ld.factor}): cannot tell the "
                          "grid of one element per thread")
    return Verdict.yes(f"grid={c.grid[0]}: restored to {got[1][0]}")


LOADS = Rule(pattern="$A[$T] = $V", inside_kernel=True,
             constraints={"V": {"kind": "binary_expression"}})


@dataclass(frozen=True)
class ReduceAfterLoad(Pass):
    """Load one element per thread again: undo the additions during the load, grid multiplied back.

    Before::

        // kltrans: launch reduce grid=ceil_div(ceil_div(n, 256), 2) block=256
        unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
        sdata[tid] = ((i < n) ? in[i] : 0) + (i + blockDim.x < n ? in[i + blockDim.x] : 0);

    After ``reduce-after-load``::

        // kltrans: launch reduce grid=ceil_div(n, 256) block=256
        unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
        sdata[tid] = (i < n) ? in[i] : 0;

    Preconditions: combined-form (layout: the store is exactly the 2, 4 or 8 guarded loads
    reduce-during-load writes, the index ``blockIdx.x * (B * F) + threadIdx.x`` used
    nowhere else), grid-back (pipeline: the header's grid is ``ceil_div(G, F)``, restored
    to ``G``).

    Options: none.
    """

    name = "reduce-after-load"
    kind = "simplify"
    inverse = "reduce-during-load"
    anchor = LOADS
    preconditions = (
        Precondition("combined-form", "layout",
                     "the store adds the F guarded loads reduce-during-load writes",
                     _combined_form),
        Precondition("grid-back", "pipeline", "the header's grid is ceil_div(G, F)", _grid_back),
    )

    def rewrite(self, site, ctx):
        unit = site.unit
        ld = _load(site, after=True)
        scaled = ld.stride.parent  # B * F
        paren = scaled.parent
        first = unit.text(ld.terms[0])[1:-1]
        return [Edit(paren.start_byte, paren.end_byte, unit.text(ld.stride)),
                Edit(ld.rhs.start_byte, ld.rhs.end_byte, first)]

    def update_contract(self, contract, site, ctx):
        got = call_parts(contract.grid[0])
        ld = _load(site, after=True)
        if got is None or len(got[1]) != 2 or isinstance(ld, str) or _int(got[1][1]) != ld.factor:
            return contract
        return contract.with_(grid=(header_expr(got[1][0]),))

    def inverse_for(self, site, ctx):
        ld = _load(site, after=True)
        return ReduceDuringLoad(factor=ld.factor)
