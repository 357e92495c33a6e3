"""Register blocking (micro-tiles): ``register-block`` (optimize) and ``unregister-block``.

Each thread of a matrix-product kernel computes a ``TM x TN`` tile of outputs instead of
one, from per-k register fragments ``a[TM]`` and ``b[TN]`` that are loaded once and used
``TM * TN`` times. Two kernel forms are recognised:

* the **plain** form, every operand read from global memory::

      int col = blockIdx.x * blockDim.x + threadIdx.x;
      int row = blockIdx.y * blockDim.y + threadIdx.y;
      if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
      }

  The block keeps its shape and covers ``TM x TN`` times as many outputs: the launch
  header's grid is divided by ``TN`` in x and ``TM`` in y.

* the **tiled** form, operands staged through shared memory by one loop over k-tiles
  with barriers::

      for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = ...; Bs[ty][tx] = ...;      // load phase: one element per thread
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
      }
      if (row < M && col < N) C[row * N + col] = acc;

  The grid and the block's tile of outputs stay the same; the block shrinks to
  ``(BX / TN, BY / TM)`` threads and each thread loads ``TM * TN`` elements of each
  shared tile in the load phase.

Both are one rewrite: each new thread plays the ``TM x TN`` threads of the old kernel
whose row-side indices are ``v + i*blockDim.y`` (``layout=strided``) or ``v + i``
(``layout=contiguous``, the thread's own ``threadIdx.y`` scaled by ``TM``), and likewise
for the columns with ``j``. Every statement that depends on the thread (the load phase,
the epilogue that stores the output) runs once per played thread inside two ``#pragma
unroll`` loops, with each index variable ``v`` rewritten to ``v + offset``; the
accumulator becomes ``acc[TM][TN]``; the accumulation becomes the fragment loads and the
``TM x TN`` outer product.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kltrans.analysis.affine import affine_of, sources
from kltrans.analysis.barriers import barrier_calls
from kltrans.analysis.loops import assigned_in
from kltrans.analysis.pointers import pointer_params
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.predicates import pure
from kltrans.passes import Choice, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.analysis.affine import strip_parens as _strip
from kltrans.passes.guard import builtin
from kltrans.passes.rewrite import (
    call_parts, declared_names, fresh_numbered as fresh, header_expr, indent_of as line_indent,
    indent_step, inside, int_text, norm, shift, statements, unshift)

FACTORS = (1, 2, 4, 8)
#: register words a thread may spend on the tile and its fragments (TM*TN + TM + TN)
BUDGET = 96
DTYPES = {"float": ("0.0f", 1), "double": ("0.0", 2), "int": ("0", 1)}
ROW_COUNTERS = ("i", "ii", "ti", "mi")
COL_COUNTERS = ("j", "jj", "tj", "nj")
ROW_FRAGS = ("a", "ra", "fa", "a_frag")
COL_FRAGS = ("b", "rb", "fb", "b_frag")
_LOOPS = ("for_statement", "while_statement", "do_statement")
_BUILTIN_RE = re.compile(r"^(threadIdx|blockIdx|blockDim|gridDim)\.([xyz])$")


# ===================================================================== small helpers
class _Refuse(Exception):
    def __init__(self, pre: str, reason: str):
        super().__init__(reason)
        self.pre = pre
        self.reason = reason


def _line(unit, node) -> int:
    return unit.line_col(node.start_byte)[0]


def _idents(unit, node, names=None):
    for n in unit.walk(node):
        if n.type == "identifier" and (names is None or unit.text(n) in names):
            yield n


def _mentions(unit, nodes, names) -> "object | None":
    for node in nodes:
        for n in _walk_any(unit, node):
            if n.type == "identifier" and unit.text(n) in names:
                return n
    return None


def _pragma_start(unit, node) -> int:
    """Start of ``node``'s line, extended upward over ``#pragma`` lines right above it."""
    src = unit.source
    start = src.rfind(b"\n", 0, node.start_byte) + 1
    if src[start:node.start_byte].strip():
        return node.start_byte
    while start > 0:
        prev = src.rfind(b"\n", 0, start - 1) + 1
        if not src[prev:start].strip().startswith(b"#pragma"):
            break
        start = prev
    return start


def _is_barrier_stmt(unit, node) -> bool:
    return node.type == "expression_statement" and \
        norm(unit.text(node)).replace(" ", "") == "__syncthreads();"


def _needs_parens(node) -> bool:
    """Whether ``v + off`` standing where ``node`` stands needs parentheses."""
    p = node.parent
    if p is None:
        return True
    t = p.type
    if t in ("subscript_argument_list", "argument_list", "init_declarator", "condition_clause",
             "expression_statement", "return_statement", "initializer_list",
             "conditional_expression", "comma_expression"):
        return False
    if t == "assignment_expression":
        right = p.child_by_field_name("right")
        return right is None or right.id != node.id
    if t == "binary_expression":
        op = p.child_by_field_name("operator")
        op = op.type if op is not None else ""
        if op in ("+", "-"):
            return p.child_by_field_name("left").id != node.id
        return op not in ("<", ">", "<=", ">=", "==", "!=", "&&", "||", "&", "|", "^",
                          "<<", ">>")
    return True


def _decl_parts(unit, decl):
    """(type node, [declarators]) of a declaration, or None for other statements."""
    if decl is None or decl.type != "declaration":
        return None
    return decl.child_by_field_name("type"), decl.children_by_field_name("declarator")


def _declarator_name(unit, d) -> str | None:
    while d is not None and d.type not in ("identifier",):
        if d.type in ("init_declarator", "array_declarator", "pointer_declarator"):
            d = d.child_by_field_name("declarator")
        else:
            return None
    return unit.text(d) if d is not None else None


def _is_shared(unit, decl) -> bool:
    return any(c.type in ("type_qualifier", "storage_class_specifier", "attribute_specifier")
               and "__shared__" in unit.text(c) for c in decl.children) or \
        "__shared__" in unit.text(decl).split("[")[0].split("=")[0]


def _loop_body(loop):
    return loop.child_by_field_name("body")


def _body_head_end(loop) -> int:
    """End of the node just before a loop's body (the ``)`` of its header)."""
    body = _loop_body(loop)
    prev = None
    for c in loop.children:
        if c.id == body.id:
            break
        prev = c
    return prev.end_byte


def _elem_type(unit, fn, node) -> tuple[str | None, str | None, str]:
    """(element type, array name, kind: param | shared | ?) of a subscript read ``node``."""
    n = _strip(node)
    depth = 0
    while n is not None and n.type == "subscript_expression":
        n = _strip(n.child_by_field_name("argument"))
        depth += 1
    if n is None or n.type != "identifier" or depth == 0:
        return None, None, "?"
    name = unit.text(n)
    for p in fn.params:
        if p.name == name and (p.pointer or p.array):
            base = norm(p.base_type.replace("__restrict__", " ").replace("const", " "))
            return base, name, "param"
    for s in unit.walk(fn.body):
        if s.type == "declaration" and _is_shared(unit, s):
            for d in s.children_by_field_name("declarator"):
                if _declarator_name(unit, d) == name:
                    ty = s.child_by_field_name("type")
                    return norm(unit.text(ty)), name, "shared"
    return None, name, "?"


# ===================================================================== the forward shape
@dataclass
class Shape:
    form: str = ""  # plain | tiled
    acc: str = ""
    acc_decl: object = None
    acc_type: str = ""
    acc_init: object = None
    accum: object = None  # the accumulate statement
    x: object = None
    y: object = None
    x_rows: bool = True  # the left factor is the row-side operand
    kloop: object = None
    guard: object = None  # plain: the if statement
    cond_r: object = None  # plain: the row conjunct
    cond_c: object = None
    tile_loop: object = None  # tiled
    loads: list = field(default_factory=list)  # tiled: load-phase statements
    after: list = field(default_factory=list)  # tiled: tile-loop statements after the loads
    epi: list = field(default_factory=list)
    uniform: list = field(default_factory=list)  # statements that must not depend on the thread
    rows: dict = field(default_factory=dict)  # name -> declarator value node
    cols: dict = field(default_factory=dict)
    index_values: list = field(default_factory=list)  # (value node, axis)
    elem: str = ""
    failed: str | None = None
    reason: str = ""
    passed: list = field(default_factory=list)  # (precondition, reason) that held


FORWARD_ORDER = ("no-early-exit", "kernel-shape", "thread-map", "operand-index", "element-type",
                 "barrier-phases", "read-only-operands", "single-store")
_CACHE: dict = {}


def _forward(site) -> Shape:
    key = (id(site.unit), site.unit.source, site.node.start_byte, site.node.end_byte)
    sh = _CACHE.get(key)
    if sh is None:
        if len(_CACHE) > 256:
            _CACHE.clear()
        sh = Shape()
        stages = (_st_exit, _st_shape, _st_thread_map, _st_operands, _st_dtype, _st_barriers,
                  _st_read_only, _st_single_store)
        for name, stage in zip(FORWARD_ORDER, stages):
            try:
                sh.passed.append((name, stage(site, sh)))
            except _Refuse as e:
                sh.failed, sh.reason = e.pre, e.reason
                break
        _CACHE[key] = sh
    return sh


def _stage_verdict(name):
    def check(site, ctx) -> Verdict:
        sh = _forward(site)
        for n, why in sh.passed:
            if n == name:
                return Verdict.yes(why)
        if sh.failed == name:
            return Verdict.no(sh.reason)
        return Verdict.unknown(f"not checked: precondition {sh.failed} fails first")
    return check


def _st_exit(site, sh):
    unit, fn = site.unit, site.function
    for n in unit.walk(fn.body):
        if n.type == "return_statement":
            raise _Refuse("no-early-exit", f"`{norm(unit.text(n))}` at line {_line(unit, n)} "
                          "leaves the kernel early: a thread that plays TM x TN old threads "
                          "cannot return for one of them; write the bound check as "
                          "`if (row < M && col < N) { ... }` so it can move into the loads and "
                          "the store")
    return "the kernel has no return statement"


def _st_shape(site, sh):
    unit, fn = site.unit, site.function
    pre = "kernel-shape"
    s = site.node
    sh.accum = s
    sh.acc = site.text("ACC")
    sh.x, sh.y = site.match.bindings["X"], site.match.bindings["Y"]
    # the k-loop
    par = s.parent
    k = par if par.type in _LOOPS else (par.parent if par.type == "compound_statement" else None)
    if k is None or k.type not in _LOOPS:
        raise _Refuse(pre, f"`{norm(unit.text(s))}` is not in the body of a loop over k")
    if par.type == "compound_statement" and par.parent.id != k.id:
        raise _Refuse(pre, f"`{norm(unit.text(s))}` is nested in a block inside its loop")
    sh.kloop = k
    body = fn.body
    top = statements(body)
    # the accumulator declaration
    decl = None
    for n in unit.walk(body):
        if n.type == "declaration":
            for d in n.children_by_field_name("declarator"):
                if _declarator_name(unit, d) == sh.acc:
                    decl = n
    if decl is None:
        raise _Refuse(pre, f"the accumulator {sh.acc} is not declared in {fn.name}")
    ty, ds = _decl_parts(unit, decl)
    extra = [c for c in decl.children if c.id not in {ty.id, *(d.id for d in ds)} and c.type != ";"]
    if len(ds) != 1 or ds[0].type != "init_declarator" or \
            ds[0].child_by_field_name("declarator").type != "identifier" or extra or \
            unit.text(ds[0]).find("=") < 0:
        raise _Refuse(pre, f"`{norm(unit.text(decl))}`: the accumulator must be declared alone "
                      f"as a scalar, `T {sh.acc} = init;`")
    sh.acc_decl, sh.acc_type, sh.acc_init = decl, norm(unit.text(ty)), ds[0].child_by_field_name("value")
    if not pure(unit, sh.acc_init) or (sources(unit, sh.acc_init) & _THREADISH):
        raise _Refuse(pre, f"the initial value `{unit.text(sh.acc_init)}` of {sh.acc} depends "
                      "on the thread or has side effects")
    if k.parent.type == "compound_statement" and k.parent.parent is not None and \
            k.parent.parent.type == "if_statement" and k.parent.parent.parent is not None and \
            k.parent.parent.parent.id == body.id:
        _shape_plain(site, sh, k.parent.parent, top)
    elif k.parent.type == "compound_statement" and k.parent.parent is not None and \
            k.parent.parent.type in _LOOPS and k.parent.parent.parent is not None and \
            k.parent.parent.parent.id == body.id:
        _shape_tiled(site, sh, k.parent.parent, top)
    else:
        raise _Refuse(pre, "the k-loop is neither the body of the bound check `if (row < M && "
                      "col < N) { ... }` (plain form) nor a statement of a loop over k-tiles "
                      "(tiled form), each a statement of the kernel body")
    # the accumulator is used only by the accumulation and the epilogue
    allowed = [sh.acc_decl, sh.accum] + sh.epi
    for n in _idents(unit, body, {sh.acc}):
        if not any(inside(n, a) for a in allowed):
            raise _Refuse(pre, f"{sh.acc} is used at line {_line(unit, n)} outside its "
                          "accumulation and the epilogue")
    for n in _idents(unit, sh.accum, {sh.acc}):
        if inside(n, sh.x) or inside(n, sh.y):
            raise _Refuse(pre, f"the accumulation reads {sh.acc} inside its own product")
    for st in sh.epi:
        if assigned_in(unit, st, sh.acc):
            raise _Refuse(pre, f"the epilogue assigns {sh.acc} (line {_line(unit, st)})")
    return (f"{sh.form} form: `{norm(unit.text(s))}` in a loop over k, {sh.acc} declared "
            f"`{norm(unit.text(decl))}`, {len(sh.epi)} epilogue statement(s)")


def _shape_plain(site, sh, guard, top):
    unit = site.unit
    pre = "kernel-shape"
    sh.form, sh.guard = "plain", guard
    if guard.child_by_field_name("alternative") is not None:
        raise _Refuse(pre, "the bound check has an else branch")
    if top[-1].id != guard.id:
        raise _Refuse(pre, "the bound check is not the last statement of the kernel")
    gb = statements(guard.child_by_field_name("consequence"))
    if not gb or gb[0].id != sh.acc_decl.id:
        raise _Refuse(pre, f"the accumulator {sh.acc} is not declared by the first statement "
                      f"of the bound check `if {norm(unit.text(guard.child_by_field_name('condition')))}`")
    ki = next(n for n, st in enumerate(gb) if st.id == sh.kloop.id)
    for st in gb[1:ki]:
        if st.type != "declaration" or not pure(unit, st):
            raise _Refuse(pre, f"`{norm(unit.text(st))}` before the k-loop is not a plain "
                          "declaration: it would run for rows and columns past the bound")
    sh.uniform = gb[1:ki]
    sh.epi = gb[ki + 1:]
    if not sh.epi:
        raise _Refuse(pre, "nothing follows the k-loop inside the bound check: no store")
    sh.uniform = sh.uniform + [_loop_header(sh.kloop)]
    sh.uniform += [c for c in statements(_loop_body(sh.kloop)) if c.id != sh.accum.id]
    for st in top[:-1]:
        if st.type != "declaration":
            raise _Refuse(pre, f"`{norm(unit.text(st))}` before the bound check is not a "
                          "declaration")


def _loop_header(loop):
    """A stand-in node list for a loop's header: its non-body children."""
    return _Header(loop)


class _Header:
    """The header of a loop (every child but the body), walked like a node."""

    def __init__(self, loop):
        self.loop = loop
        body = _loop_body(loop)
        self.children = [c for c in loop.children if c.id != body.id]
        self.start_byte = loop.start_byte
        self.end_byte = _body_head_end(loop)
        self.type = "loop_header"


def _shape_tiled(site, sh, tloop, top):
    unit = site.unit
    pre = "kernel-shape"
    sh.form, sh.tile_loop = "tiled", tloop
    ti = next(n for n, st in enumerate(top) if st.id == tloop.id)
    ai = next((n for n, st in enumerate(top) if st.id == sh.acc_decl.id), None)
    if ai is None or ai > ti:
        raise _Refuse(pre, f"the accumulator {sh.acc} is not declared by a statement of the "
                      "kernel body before the loop over k-tiles")
    if tloop.type == "do_statement":
        raise _Refuse(pre, "the loop over k-tiles is a do-while loop")
    tb = statements(_loop_body(tloop))
    first = next((n for n, st in enumerate(tb) if _is_barrier_stmt(unit, st)), None)
    if first is None or first == 0:
        raise _Refuse(pre, "the loop over k-tiles does not start with a load phase ended by "
                      "`__syncthreads();`")
    sh.loads = tb[:first]
    sh.epi = top[ti + 1:]
    if not sh.epi:
        raise _Refuse(pre, "nothing follows the loop over k-tiles: no store")
    for st in sh.loads:
        if st.type in ("declaration",):
            names = {n for n, _ in declared_names(unit, st)}
            later = [x for x in tb[first:] + sh.epi if _mentions(unit, [x], names)]
            if later:
                raise _Refuse(pre, f"`{norm(unit.text(st))}` in the load phase declares a "
                              "name used after it")
    sh.uniform = [st for st in top[ai + 1:ti]] + [_loop_header(tloop)]
    sh.after = [st for st in tb[first:] if st.id != sh.kloop.id]
    sh.uniform += [_loop_header(sh.kloop)]
    sh.uniform += [c for c in statements(_loop_body(sh.kloop)) if c.id != sh.accum.id]
    for st in top[:ai]:
        if st.type != "declaration":
            raise _Refuse(pre, f"`{norm(unit.text(st))}` before the accumulator is not a "
                          "declaration")


_THREADISH = frozenset({f"{b}.{c}" for b in ("threadIdx", "blockIdx", "blockDim", "gridDim")
                        for c in "xyz"} | {"?"})


def _st_thread_map(site, sh):
    unit, fn = site.unit, site.function
    pre = "thread-map"
    body = fn.body
    top = statements(body)
    stop = sh.guard if sh.form == "plain" else sh.tile_loop
    head = top[:next(n for n, st in enumerate(top) if st.id == stop.id)]
    decl_nodes = []
    for st in head:
        if _is_shared(unit, st) or st.id == sh.acc_decl.id or st.type != "declaration":
            continue
        for d in st.children_by_field_name("declarator"):
            if d.type != "init_declarator":
                continue
            v = d.child_by_field_name("value")
            if not (sources(unit, v) & _THREADISH):
                continue
            name = _declarator_name(unit, d)
            a = affine_of(unit, v, fn)
            axis = _axis_of(a)
            if axis is None or d.child_by_field_name("declarator").type != "identifier":
                raise _Refuse(pre, f"`{name} = {norm(unit.text(v))}` is not a row or column "
                              "index: it must be threadIdx.y (or .x) plus an optional "
                              "blockIdx.y * S (or .x), with coefficient 1 on the thread index")
            bad = _scalable(unit, v, axis)
            if bad:
                raise _Refuse(pre, f"`{name} = {norm(unit.text(v))}`: {bad}")
            (sh.rows if axis == "y" else sh.cols)[name] = v
            sh.index_values.append((v, axis))
            decl_nodes.append(st)
    if not sh.rows or not sh.cols:
        raise _Refuse(pre, "no " + ("row" if not sh.rows else "column") + " index variable "
                      "(threadIdx.y / threadIdx.x plus a block offset) is declared before the "
                      "accumulation")
    names = set(sh.rows) | set(sh.cols)
    for n in unit.walk(body):
        b = builtin(unit, n)
        if b and not any(inside(n, d) for d in decl_nodes):
            raise _Refuse(pre, f"{b} is used at line {_line(unit, n)} outside the index "
                          "declarations: the thread-to-output map changes")
    for nm in names:
        if assigned_in(unit, body, nm):
            raise _Refuse(pre, f"the index {nm} is assigned after its declaration")
        if [x for x, _ in declared_names(unit, fn.node) if x == nm] != [nm]:
            raise _Refuse(pre, f"the index {nm} is declared more than once")
    # statements that run once per thread must not see the index
    for u in sh.uniform:
        if any(u is d for d in decl_nodes):
            continue
        hit = _mentions(unit, [u], names | {sh.acc}) if u is not None else None
        if hit is not None:
            raise _Refuse(pre, f"`{unit.text(hit)}` is used at line {_line(unit, hit)} by code "
                          "that runs once per thread (loop headers, statements around the "
                          "k-loop): only the loads, the accumulation and the epilogue may use "
                          "the row and column indices")
        for n in _walk_any(unit, u):
            if n.type == "identifier" and (sources(unit, n) & _THREADISH) and \
                    unit.text(n) not in names:
                raise _Refuse(pre, f"`{unit.text(n)}` at line {_line(unit, n)} depends on the "
                              "thread in code that runs once per thread")
    return (f"rows {', '.join(sorted(sh.rows))} and columns {', '.join(sorted(sh.cols))} are "
            "affine in threadIdx.y / threadIdx.x with coefficient 1")


def _walk_any(unit, node):
    if isinstance(node, _Header):
        for c in node.children:
            yield from unit.walk(c)
    else:
        yield from unit.walk(node)


def _axis_of(a) -> str | None:
    """``y`` for threadIdx.y [+ blockIdx.y * S], ``x`` likewise, else None."""
    if a is None:
        return None
    terms = dict(a.terms)
    for axis in ("x", "y"):
        if terms.get((f"threadIdx.{axis}",)) != 1:
            continue
        rest = [m for m in terms if m != (f"threadIdx.{axis}",)]
        if len(rest) > 1:
            continue
        if rest and (f"blockIdx.{axis}" not in rest[0] or
                     any(x in _THREADISH and x not in (f"blockIdx.{axis}", f"blockDim.{axis}")
                         for x in rest[0])):
            continue
        return axis
    return None


def _block_product(unit, value, axis):
    """The product ``blockIdx.A * S`` in ``value`` (or None), or a reason string."""
    hits = [n for n in unit.walk(value) if builtin(unit, n) == f"blockIdx.{axis}"]
    if not hits:
        return None
    if len(hits) > 1:
        return f"names blockIdx.{axis} {len(hits)} times"
    p = hits[0].parent
    while p is not None and p.type == "parenthesized_expression":
        p = p.parent
    if p is None or p.type != "binary_expression" or \
            unit.text(p.child_by_field_name("operator")) != "*":
        return f"blockIdx.{axis} is not multiplied by a block size"
    return p


def _scalable(unit, value, axis) -> str | None:
    """Why the declaration cannot be rescaled (None when it can)."""
    t = [n for n in unit.walk(value) if builtin(unit, n) == f"threadIdx.{axis}"]
    if len(t) > 1:
        return f"names threadIdx.{axis} {len(t)} times"
    bp = _block_product(unit, value, axis)
    if isinstance(bp, str):
        return bp
    for n in unit.walk(value):
        b = builtin(unit, n)
        if b == f"blockDim.{axis}" and (bp is None or not inside(n, bp)):
            return f"blockDim.{axis} appears outside the block offset blockIdx.{axis} * S"
        if b and b.startswith("gridDim"):
            return f"{b} is used"
    return None


def _st_operands(site, sh):
    unit = site.unit
    pre = "operand-index"
    R, C = set(sh.rows), set(sh.cols)
    ux, uy = _uses(unit, sh.x, R, C), _uses(unit, sh.y, R, C)
    if ux == "row" and uy == "col":
        sh.x_rows = True
    elif ux == "col" and uy == "row":
        sh.x_rows = False
    else:
        raise _Refuse(pre, f"`{norm(unit.text(sh.x))}` uses {ux} and `{norm(unit.text(sh.y))}` "
                      f"uses {uy}: one factor must be indexed by the row only (A, row-major) "
                      "and the other by the column only (B), so each is reused across the "
                      "tile's columns or rows")
    for nd in (sh.x, sh.y):
        for n in unit.walk(nd):
            if n.type == "identifier" and (sources(unit, n) & _THREADISH) and \
                    unit.text(n) not in R | C:
                raise _Refuse(pre, f"`{unit.text(n)}` in `{norm(unit.text(nd))}` depends on "
                              "the thread other than through the row and column indices")
    if sh.form == "plain":
        cond = _strip(sh.guard.child_by_field_name("condition").child_by_field_name("value")) \
            if sh.guard.child_by_field_name("condition").child_by_field_name("value") is not None \
            else None
        if cond is None or cond.type != "binary_expression" or \
                unit.text(cond.child_by_field_name("operator")) != "&&":
            raise _Refuse(pre, "the bound check is not `row_bound && col_bound`")
        l, r = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        ul, ur = _uses(unit, l, R, C), _uses(unit, r, R, C)
        if {ul, ur} != {"row", "col"}:
            raise _Refuse(pre, f"the bound check `{norm(unit.text(cond))}` does not split into "
                          "one bound on the row and one on the column")
        for part in (l, r):
            if not pure(unit, part):
                raise _Refuse(pre, f"the bound `{norm(unit.text(part))}` has side effects")
        sh.cond_r, sh.cond_c = (l, r) if ul == "row" else (r, l)
        extra = " and the bound check splits into a row and a column bound"
    else:
        extra = ""
    return (f"`{norm(unit.text(sh.x if sh.x_rows else sh.y))}` depends on the row only, "
            f"`{norm(unit.text(sh.y if sh.x_rows else sh.x))}` on the column only{extra}")


def _uses(unit, node, R, C) -> str:
    r = _mentions(unit, [node], R) is not None
    c = _mentions(unit, [node], C) is not None
    return {(True, False): "row", (False, True): "col", (True, True): "both"}.get((r, c),
                                                                                "neither")


def _st_dtype(site, sh):
    unit, fn = site.unit, site.function
    pre = "element-type"
    tx, nx, _ = _elem_type(unit, fn, sh.x)
    ty, ny, _ = _elem_type(unit, fn, sh.y)
    for t, nd in ((tx, sh.x), (ty, sh.y)):
        if t is None:
            raise _Refuse(pre, f"`{norm(unit.text(nd))}` is not an element of a pointer "
                          "parameter or of a __shared__ array: its type is unknown")
    if sh.acc_type not in DTYPES:
        raise _Refuse(pre, f"the accumulator type {sh.acc_type} is not float, double or int")
    if not (tx == ty == sh.acc_type):
        raise _Refuse(pre, f"{nx} holds {tx}, {ny} holds {ty} and {sh.acc} is {sh.acc_type}: "
                      "the fragments a[] and b[] take the accumulator's type, so all three "
                      "must be the same")
    sh.elem = sh.acc_type
    return f"{nx}, {ny} and {sh.acc} are {sh.acc_type}"


def _st_barriers(site, sh):
    unit, fn = site.unit, site.function
    pre = "barrier-phases"
    calls = barrier_calls(unit, fn)
    if sh.form == "plain":
        if calls:
            node = calls[0][0]
            raise _Refuse(pre, f"a barrier at line {_line(unit, node)} in the plain form")
        return "no barrier: nothing to keep in step"
    tb = statements(_loop_body(sh.tile_loop))
    for node, _ in calls:
        if not (node.parent is not None and node.parent.parent is not None and
                node.parent.parent.id == _loop_body(sh.tile_loop).id and
                _is_barrier_stmt(unit, node.parent)):
            raise _Refuse(pre, f"the barrier at line {_line(unit, node)} is not a statement of "
                          "the loop over k-tiles")
    ki = next(n for n, st in enumerate(tb) if st.id == sh.kloop.id)
    if not any(_is_barrier_stmt(unit, st) for st in tb[ki + 1:]):
        raise _Refuse(pre, "no `__syncthreads();` follows the k-loop: the next load phase "
                      "would overwrite tiles still being read")
    names = set(sh.rows) | set(sh.cols) | {sh.acc}
    for st in sh.after:
        hit = _mentions(unit, [st], names)
        dep = [n for n in unit.walk(st) if n.type == "identifier" and
               unit.text(n) not in names and (sources(unit, n) & _THREADISH)]
        if hit is not None or dep:
            raise _Refuse(pre, f"`{norm(unit.text(st))}` after the first barrier uses the "
                          "thread's row or column: only one load phase, before the first "
                          "barrier, is played per thread")
    return "one load phase, then the k-loop between barriers"


def _st_read_only(site, sh):
    unit, fn = site.unit, site.function
    pre = "read-only-operands"
    pps = {p.name: p for p in pointer_params(unit, fn)}
    reads = []
    for nd in (sh.x, sh.y):
        _, name, kind = _elem_type(unit, fn, nd)
        reads.append((name, kind))
    if sh.form == "tiled":
        for st in sh.loads:
            for n in _idents(unit, st, set(pps)):
                reads.append((unit.text(n), "param"))
    for name, kind in reads:
        if kind == "param":
            p = pps.get(name)
            if p is None or p.written is None:
                raise _Refuse(pre, f"cannot tell whether {name} is written: "
                              f"{p.reason if p else 'not a pointer parameter'}")
            if p.written:
                raise _Refuse(pre, f"{name} is written by the kernel (line "
                              f"{_line(unit, p.writes[0]) if p.writes else '?'}): fragments "
                              "loaded once per k would go stale")
        elif kind == "shared":
            for n in unit.walk(fn.body):
                if n.type == "assignment_expression":
                    left = n.child_by_field_name("left")
                    if _mentions(unit, [left], {name}) is not None and \
                            not any(inside(n, ld) for ld in sh.loads):
                        raise _Refuse(pre, f"the tile {name} is written at line "
                                      f"{_line(unit, n)}, outside the load phase")
    names = sorted({n for n, _ in reads})
    return f"{', '.join(names)} are only read where fragments are loaded"


def _st_single_store(site, sh):
    unit, fn = site.unit, site.function
    pre = "single-store"
    writes = []
    for p in pointer_params(unit, fn):
        if p.written is None:
            raise _Refuse(pre, f"cannot tell what the kernel writes through {p.name}: {p.reason}")
        writes += [(p.name, w) for w in p.writes]
    if not writes:
        raise _Refuse(pre, "the kernel writes no output")
    for name, w in writes:
        if not any(inside(w, e) for e in sh.epi):
            raise _Refuse(pre, f"{name} is written at line {_line(unit, w)}, outside the "
                          "epilogue after the k-loop")
    if len(writes) != 1:
        lines = ", ".join(str(_line(unit, w)) for _, w in writes)
        raise _Refuse(pre, f"the epilogue writes global memory {len(writes)} times (lines "
                      f"{lines}): one output element per (row, col) is supported")
    name, w = writes[0]
    p = w.parent
    while p is not None and not any(p.id == e.id for e in sh.epi):
        if p.type in _LOOPS:
            raise _Refuse(pre, f"the store to {name} at line {_line(unit, w)} is inside a loop")
        p = p.parent
    return f"{name} is written once, by the epilogue, per (row, col)"


def _register_tile(site, ctx) -> Verdict:
    p = site.pass_
    tm, tn = p.tm, p.tn
    if tm * tn == 1:
        return Verdict.no("tm = tn = 1 is one output per thread: nothing to block")
    sh = _forward(site)
    words = DTYPES.get(sh.elem or sh.acc_type, ("", 1))[1]
    need = (tm * tn + tm + tn) * words
    if need > BUDGET:
        return Verdict.no(f"acc[{tm}][{tn}] plus fragments a[{tm}], b[{tn}] of "
                          f"{sh.elem or sh.acc_type} need {need} registers per thread, over the "
                          f"budget of {BUDGET}: it would spill")
    return Verdict.yes(f"acc[{tm}][{tn}] + a[{tm}] + b[{tn}] = {need} registers <= {BUDGET}")


def _contract(site):
    from kltrans.syntax.contract import contracts

    fn = site.function
    c = contracts(site.unit).get(fn.name)
    if c is None:
        return None, (f"{fn.name} has no launch contract: add the header line "
                      f"`// kltrans: launch {fn.name} grid=... block=...`")
    if c.source != "header":
        return None, (f"the launch of {fn.name} is read from a host launcher; the pass changes "
                      "the launch, which it can only do in a `// kltrans: launch` header line")
    if len(c.grid) < 2 or len(c.block) < 2:
        return None, (f"the launch of {fn.name} is not 2-D (grid={c.grid}, block={c.block})")
    return c, None


def _const_value(site, ctx, text: str) -> int | None:
    v = int_text(text)
    if v is not None:
        return v
    if text.strip() in ctx.sizes:
        return int(ctx.sizes[text.strip()])
    m = re.search(rf"^[ \t]*#[ \t]*define[ \t]+{re.escape(text.strip())}[ \t]+(\d+)[ \t]*$",
                  site.unit.source.decode("utf-8", "replace"), re.MULTILINE)
    return int(m.group(1)) if m else None


def _launch_contract(site, ctx) -> Verdict:
    c, why = _contract(site)
    if c is None:
        return Verdict.no(why)
    p = site.pass_
    sh = _forward(site)
    if sh.form != "tiled":
        return Verdict.yes(f"grid=({', '.join(c.grid)}) is divided by {p.tn} in x and {p.tm} "
                           "in y")
    for dim, f, ax in ((c.block[0], p.tn, "x"), (c.block[1], p.tm, "y")):
        v = _const_value(site, ctx, dim)
        if v is None:
            if not ctx.divisible(dim.strip(), f):
                return Verdict.unknown(f"block.{ax} = {dim} must be a multiple of {f}: not "
                                       f"known; say --assume '{dim.strip()}%{f}==0'")
        elif v % f:
            return Verdict.no(f"block.{ax} = {dim} is not a multiple of {f}: the smaller block "
                              "cannot cover the tile")
    return Verdict.yes(f"block=({', '.join(c.block[:2])}) divides by ({p.tn}, {p.tm}); the "
                       "grid is unchanged")


# ===================================================================== rendering
def _offsets(layout, i, j):
    if layout == "contiguous":
        return i, j
    return f"{i} * blockDim.y", f"{j} * blockDim.x"


def _subst(unit, start, end, reps_by_name, acc=None, acc_sub=None, extra=()):
    """The source [start, end) with row/col identifiers replaced by ``v + off``."""
    reps = list(extra)
    for n in unit.walk(unit.root):
        if n.end_byte <= start or n.start_byte >= end:
            continue
        if n.type != "identifier":
            continue
        if any(s <= n.start_byte and n.end_byte <= e for s, e, _ in extra):
            continue
        name = unit.text(n)
        if name in reps_by_name:
            t = f"{name} + {reps_by_name[name]}"
            reps.append((n.start_byte, n.end_byte, f"({t})" if _needs_parens(n) else t))
        elif acc is not None and name == acc:
            reps.append((n.start_byte, n.end_byte, acc_sub))
    out, pos = [], start
    for s, e, t in sorted(reps):
        out.append(unit.source[pos:s].decode("utf-8"))
        out.append(t)
        pos = e
    out.append(unit.source[pos:end].decode("utf-8"))
    return "".join(out)


def _ij_head(ind, st, i, j, tm, tn):
    return (f"#pragma unroll\n{ind}for (int {i} = 0; {i} < {tm}; ++{i})\n"
            f"{ind}{st}#pragma unroll\n{ind}{st}for (int {j} = 0; {j} < {tn}; ++{j})")


@dataclass(frozen=True)
class RegisterBlock(Pass):
    """Register-block a matrix product: each thread computes a TM x TN tile of outputs.

    Before (``sgemm`` plain form; the tiled form, with a loop over shared-memory k-tiles,
    is rewritten the same way)::

        // kltrans: launch sgemm grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
        int col = blockIdx.x * blockDim.x + threadIdx.x;
        int row = blockIdx.y * blockDim.y + threadIdx.y;
        if (row < M && col < N) {
          float acc = 0.0f;
          for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
          C[row * N + col] = acc;
        }

    After ``register-block{tm=2,tn=2}`` (layout ``strided``)::

        // kltrans: launch sgemm grid=(ceil_div(ceil_div(N, 16), 2), ceil_div(ceil_div(M, 16), 2)) block=(16, 16)
        int col = blockIdx.x * blockDim.x * 2 + threadIdx.x;
        int row = blockIdx.y * blockDim.y * 2 + threadIdx.y;
        float acc[2][2];
        #pragma unroll
        for (int i = 0; i < 2; ++i)
          #pragma unroll
          for (int j = 0; j < 2; ++j)
            acc[i][j] = 0.0f;
        for (int k = 0; k < K; ++k) {
          float a[2], b[2];
          #pragma unroll
          for (int i = 0; i < 2; ++i)
            a[i] = row + i * blockDim.y < M ? A[(row + i * blockDim.y) * K + k] : 0.0f;
          #pragma unroll
          for (int j = 0; j < 2; ++j)
            b[j] = col + j * blockDim.x < N ? B[k * N + (col + j * blockDim.x)] : 0.0f;
          #pragma unroll
          for (int i = 0; i < 2; ++i)
            #pragma unroll
            for (int j = 0; j < 2; ++j)
              acc[i][j] += a[i] * b[j];
        }
        #pragma unroll
        for (int i = 0; i < 2; ++i)
          #pragma unroll
          for (int j = 0; j < 2; ++j)
            if (row + i * blockDim.y < M && col + j * blockDim.x < N) {
              C[(row + i * blockDim.y) * N + (col + j * blockDim.x)] = acc[i][j];
            }

    Plain form: the bound check moves into the fragment loads (zero past M or N) and the
    store; the block keeps its shape and the launch header's grid is divided by TN in x and
    TM in y. Tiled form (``for (t...) { As[ty][tx] = ..; Bs[ty][tx] = ..; __syncthreads();
    for (k < TILE) acc += As[ty][k] * Bs[k][tx]; __syncthreads(); }``): the grid and the
    block's output tile stay, the block shrinks to (BX / TN, BY / TM) threads and the load
    phase runs TM x TN times per thread (each thread loads TM*TN elements of each tile).
    ``layout=strided`` gives thread (ty, tx) rows ``row + i*blockDim.y`` and columns ``col +
    j*blockDim.x``: neighbouring threads still touch neighbouring columns, so the B loads,
    the C stores and the shared-tile reads stay coalesced / conflict-free.
    ``layout=contiguous`` gives it rows ``row*TM + i`` and columns ``col*TN + j`` (the
    thread index is scaled by TM, TN): a thread's outputs are adjacent (good for later
    vectorization) but a warp's accesses are TN elements apart.

    Ragged sizes need no fact: every load past M or N reads zero and every store is
    guarded. In the tiled form the block sizes must be multiples of TN and TM: known from
    literals and ``#define``s, otherwise required from the context (``--assume
    'TILE%4==0'``).

    Preconditions: no-early-exit (pipeline: no return), kernel-shape (pipeline: the
    accumulation ``acc += X * Y;`` in a k-loop, ``T acc = init;`` a scalar, in the plain or
    tiled shape, the epilogue after it), thread-map (layout: row/column indices are
    ``[blockIdx * S +] threadIdx`` with coefficient 1, builtins nowhere else, code that runs
    once per thread does not use them), operand-index (layout: one factor indexed by the
    row only, the other by the column only; plain: the bound check is ``row_bound &&
    col_bound``), element-type (dtype: the operands and acc are all float, double or int),
    barrier-phases (pipeline: tiled: one load phase, the k-loop, a barrier after it),
    read-only-operands (storage: A, B and the shared tiles are not written elsewhere),
    single-store (storage: one global store, in the epilogue, not in a loop),
    register-tile (storage: TM*TN > 1 and TM*TN + TM + TN registers <= 96, doubles count
    twice), launch-contract (hardware: a 2-D ``// kltrans: launch`` header; tiled: the
    block divides by (TN, TM)).

    Options: ``tm``, ``tn`` (1, 2, 4, 8; not both 1; default 4, 4), ``layout``
    (``strided`` or ``contiguous``; default strided).
    """

    name = "register-block"
    kind = "optimize"
    inverse = "unregister-block"
    anchor = Rule(pattern="$ACC += $X * $Y;", inside_kernel=True,
                  constraints={"ACC": {"kind": "identifier"}})
    preconditions = (
        Precondition("no-early-exit", "pipeline",
                     "no return: the bound check must be able to move into loads and store",
                     _stage_verdict("no-early-exit")),
        Precondition("kernel-shape", "pipeline",
                     "acc += X * Y in a k-loop, in the plain or tiled matrix-product shape",
                     _stage_verdict("kernel-shape")),
        Precondition("thread-map", "layout",
                     "row/col are [blockIdx * S +] threadIdx (coefficient 1), builtins only there",
                     _stage_verdict("thread-map")),
        Precondition("operand-index", "layout",
                     "A is indexed by the row only, B by the column only",
                     _stage_verdict("operand-index")),
        Precondition("element-type", "dtype",
                     "A, B and acc share one type: float, double or int",
                     _stage_verdict("element-type")),
        Precondition("barrier-phases", "pipeline",
                     "tiled form: one load phase, then the k-loop, then a barrier",
                     _stage_verdict("barrier-phases")),
        Precondition("read-only-operands", "storage",
                     "A, B (and the shared tiles outside the load phase) are never written",
                     _stage_verdict("read-only-operands")),
        Precondition("single-store", "storage",
                     "the epilogue writes the output once per (row, col); no other writes",
                     _stage_verdict("single-store")),
        Precondition("register-tile", "storage",
                     f"TM*TN > 1 and TM*TN + TM + TN <= {BUDGET} registers", _register_tile),
        Precondition("launch-contract", "hardware",
                     "a 2-D launch header to rewrite; tiled: block divisible by (TN, TM)",
                     _launch_contract),
    )

    tm: int = option(4, Choice(*FACTORS), "rows of outputs per thread", tune=True)
    tn: int = option(4, Choice(*FACTORS), "columns of outputs per thread", tune=True)
    layout: str = option("strided", Choice("strided", "contiguous"),
                         "rows/columns of a thread: blockDim apart (strided) or adjacent",
                         tune=True)

    def _names(self, site):
        unit, fn = site.unit, site.function
        i = fresh(unit, fn, ROW_COUNTERS)
        j = fresh(unit, fn, COL_COUNTERS, taken={i})
        a = fresh(unit, fn, ROW_FRAGS, taken={i, j})
        b = fresh(unit, fn, COL_FRAGS, taken={i, j, a})
        return i, j, a, b

    def rewrite(self, site, ctx):
        unit, fn = site.unit, site.function
        sh = _forward(site)
        tm, tn = self.tm, self.tn
        i, j, a, b = self._names(site)
        oi, oj = _offsets(self.layout, i, j)
        sub = {**{r: oi for r in sh.rows}, **{c: oj for c in sh.cols}}
        top = statements(fn.body)
        ind = line_indent(unit, top[0].start_byte)
        st = indent_step(unit, top[0])
        edits = _scale_edits(unit, sh.index_values, sh.form, self.layout, tm, tn)
        zero = DTYPES[sh.elem][0]
        accsub = f"{sh.acc}[{i}][{j}]"

        def acc_block(at):
            return (f"{sh.acc_type} {sh.acc}[{tm}][{tn}];\n{at}" + _ij_head(at, st, i, j, tm, tn) +
                    f"\n{at}{st}{st}{sh.acc}[{i}][{j}] = {unit.text(sh.acc_init)};")

        # the fragments
        s = sh.accum
        bare = s.parent.id == sh.kloop.id
        kin = line_indent(unit, sh.kloop.start_byte)
        fin = kin + st if bare else line_indent(unit, s.start_byte)
        xa = _subst(unit, (sh.x if sh.x_rows else sh.y).start_byte,
                    (sh.x if sh.x_rows else sh.y).end_byte, sub)
        yb = _subst(unit, (sh.y if sh.x_rows else sh.x).start_byte,
                    (sh.y if sh.x_rows else sh.x).end_byte, sub)
        if sh.form == "plain":
            cr = _subst(unit, sh.cond_r.start_byte, sh.cond_r.end_byte, sub)
            cc = _subst(unit, sh.cond_c.start_byte, sh.cond_c.end_byte, sub)
            xa, yb = f"{cr} ? {xa} : {zero}", f"{cc} ? {yb} : {zero}"
        prod = f"{a}[{i}] * {b}[{j}]" if sh.x_rows else f"{b}[{j}] * {a}[{i}]"
        frag = (f"{sh.elem} {a}[{tm}], {b}[{tn}];\n"
                f"{fin}#pragma unroll\n{fin}for (int {i} = 0; {i} < {tm}; ++{i})\n"
                f"{fin}{st}{a}[{i}] = {xa};\n"
                f"{fin}#pragma unroll\n{fin}for (int {j} = 0; {j} < {tn}; ++{j})\n"
                f"{fin}{st}{b}[{j}] = {yb};\n"
                f"{fin}" + _ij_head(fin, st, i, j, tm, tn) +
                f"\n{fin}{st}{st}{sh.acc}[{i}][{j}] {unit.text(s.named_children[0].child_by_field_name('operator'))} {prod};")
        if bare:
            frag_edit = Edit(_body_head_end(sh.kloop), s.end_byte,
                             f" {{\n{fin}{frag}\n{kin}}}")
        else:
            frag_edit = Edit(s.start_byte, s.end_byte, frag)

        if sh.form == "plain":
            g = sh.guard
            mid = _splice_text(unit, sh.acc_decl.start_byte, sh.kloop.end_byte,
                               [(sh.acc_decl.start_byte, sh.acc_decl.end_byte,
                                 acc_block(ind + st)),
                                (frag_edit.start, frag_edit.end, frag_edit.replacement.decode())])
            mid = unshift(mid, st)
            e0, e1 = sh.epi[0], sh.epi[-1]
            epi = shift(_subst(unit, e0.start_byte, e1.end_byte, sub, sh.acc, accsub), st + st)
            cond = _subst(unit, g.child_by_field_name("condition").start_byte,
                          g.child_by_field_name("condition").end_byte, sub)
            text = (mid + f"\n{ind}" + _ij_head(ind, st, i, j, tm, tn) +
                    f"\n{ind}{st}{st}if {cond} {{\n{ind}{st}{st}{st}{epi}\n{ind}{st}{st}}}")
            edits.append(Edit(g.start_byte, g.end_byte, text))
            return edits
        # tiled
        edits.append(Edit(sh.acc_decl.start_byte, sh.acc_decl.end_byte, acc_block(ind)))
        edits.append(frag_edit)
        for group in (sh.loads, sh.epi):
            edits.append(_wrap_edit(unit, group, sub, sh.acc, accsub, st, i, j, tm, tn))
        return edits

    def update_contract(self, contract, site, ctx):
        sh = _forward(site)
        if sh.form == "plain":
            g = list(contract.grid)
            fn = "CEIL_DIV" if "CEIL_DIV(" in "".join(g) else "ceil_div"
            if self.tn > 1:
                g[0] = f"{fn}({g[0]}, {self.tn})"
            if self.tm > 1:
                g[1] = f"{fn}({g[1]}, {self.tm})"
            return contract.with_(grid=tuple(g))
        b = list(contract.block)
        for k, f in ((0, self.tn), (1, self.tm)):
            if f > 1:
                v = int_text(b[k])
                b[k] = str(v // f) if v is not None else f"{b[k]} / {f}"
        return contract.with_(block=tuple(b))

    def inverse_for(self, site, ctx):
        sh = _forward(site)
        bare = sh.accum is not None and sh.accum.parent.id == sh.kloop.id
        return UnregisterBlock(braces="drop" if bare else "keep")


def _splice_text(unit, start, end, reps):
    out, pos = [], start
    for s, e, t in sorted(reps):
        out.append(unit.source[pos:s].decode("utf-8"))
        out.append(t)
        pos = e
    out.append(unit.source[pos:end].decode("utf-8"))
    return "".join(out)


def _wrap_edit(unit, group, sub, acc, accsub, st, i, j, tm, tn):
    ind = line_indent(unit, group[0].start_byte)
    body = _subst(unit, group[0].start_byte, group[-1].end_byte, sub, acc, accsub)
    if len(group) == 1 and group[0].type != "compound_statement":
        text = _ij_head(ind, st, i, j, tm, tn) + f"\n{ind}{st}{st}" + shift(body, st + st)
    else:
        text = (_ij_head(ind, st, i, j, tm, tn) + f" {{\n{ind}{st}{st}" + shift(body, st + st) +
                f"\n{ind}{st}}}")
    return Edit(group[0].start_byte, group[-1].end_byte, text)


def _scale_edits(unit, index_values, form, layout, tm, tn):
    edits = []
    for v, axis in index_values:
        f = tm if axis == "y" else tn
        if f == 1:
            continue
        bp = _block_product(unit, v, axis)
        if bp is not None and (form == "plain" or any(builtin(unit, n) == f"blockDim.{axis}"
                                                       for n in unit.walk(bp))):
            edits.append(Edit.insert(bp.end_byte, f" * {f}"))
        if layout == "contiguous":
            for n in unit.walk(v):
                if builtin(unit, n) == f"threadIdx.{axis}":
                    edits.append(Edit.insert(n.end_byte, f" * {f}"))
    return edits


# ===================================================================== the inverse
BLOCKED = Rule(pattern="$T $ACC[$TM][$TN];", inside_kernel=False,
               constraints={"ACC": {"kind": "identifier"}, "TM": {"predicate": "int-literal"},
                            "TN": {"predicate": "int-literal"}})


@dataclass
class Blocked:
    form: str = ""
    acc: str = ""
    acc_type: str = ""
    tm: int = 0
    tn: int = 0
    i: str = ""
    j: str = ""
    a: str = ""
    b: str = ""
    init_loop: object = None
    init: object = None
    frag_decl: object = None
    frag_loops: tuple = ()
    kloop: object = None
    x: object = None  # the a-load expression (consequence of ?: in plain form)
    y: object = None
    cond_r: object = None
    cond_c: object = None
    x_rows: bool = True
    op: str = "+="
    epi_loop: object = None
    epi_if: object = None
    load_loop: object = None
    tile_loop: object = None
    layout: str = ""
    frag_type: str = ""
    failed: str | None = None
    reason: str = ""
    passed: list = field(default_factory=list)


INVERSE_ORDER = ("blocked-shape", "tile-factors", "element-type", "blocked-index",
                 "names-private")


def _ij_loops(unit, node, i=None, j=None, tm=None, tn=None):
    """(i, j, inner body) when ``node`` is ``for (int i = 0; i < TM; ++i) for (int j ...) B``."""
    li = _counted(unit, node, i, tm)
    if li is None:
        return None
    lj = _counted(unit, _loop_body(node), j, tn)
    if lj is None:
        return None
    return li[0], lj[0], _loop_body(_loop_body(node))


def _counted(unit, node, name=None, bound=None):
    if node is None or node.type != "for_statement":
        return None
    m = re.fullmatch(r"for\s*\(\s*int\s+(\w+)\s*=\s*0\s*;\s*(\w+)\s*<\s*(\d+)\s*;\s*\+\+\s*(\w+)\s*\)",
                     unit.source[node.start_byte:_body_head_end(node)].decode("utf-8", "replace"))
    if m is None or not (m.group(1) == m.group(2) == m.group(4)):
        return None
    if name is not None and m.group(1) != name:
        return None
    if bound is not None and int(m.group(3)) != bound:
        return None
    return m.group(1), int(m.group(3))


def _assign_parts(unit, stmt):
    """(left text, operator, right node) of an expression statement ``L op R;``."""
    if stmt is None or stmt.type != "expression_statement":
        return None
    e = stmt.named_children[0] if stmt.named_children else None
    if e is None or e.type != "assignment_expression":
        return None
    return (norm(unit.text(e.child_by_field_name("left"))),
            unit.text(e.child_by_field_name("operator")), e.child_by_field_name("right"))


def _backward(site) -> Blocked:
    key = ("inv", id(site.unit), site.unit.source, site.node.start_byte)
    bl = _CACHE.get(key)
    if bl is None:
        bl = Blocked()
        stages = (_inv_shape, _inv_factors, _inv_dtype, _inv_index, _inv_names)
        for name, stage in zip(INVERSE_ORDER, stages):
            try:
                bl.passed.append((name, stage(site, bl)))
            except _Refuse as e:
                bl.failed, bl.reason = e.pre, e.reason
                break
        _CACHE[key] = bl
    return bl


def _inv_verdict(name):
    def check(site, ctx) -> Verdict:
        bl = _backward(site)
        for n, why in bl.passed:
            if n == name:
                return Verdict.yes(why)
        if bl.failed == name:
            return Verdict.no(bl.reason)
        return Verdict.unknown(f"not checked: precondition {bl.failed} fails first")
    return check


def _inv_shape(site, bl):
    unit, fn = site.unit, site.function
    pre = "blocked-shape"
    decl = site.node
    bl.acc, bl.acc_type = site.text("ACC"), norm(site.text("T"))
    bl.tm, bl.tn = int_text(site.text("TM")), int_text(site.text("TN"))
    if fn is None or fn.body is None or decl.parent is None:
        raise _Refuse(pre, "not inside a function body")
    sib = statements(decl.parent)
    k = next(n for n, s in enumerate(sib) if s.id == decl.id)
    init = sib[k + 1] if k + 1 < len(sib) else None
    got = _ij_loops(unit, init, None, None, bl.tm, bl.tn)
    if got is None:
        raise _Refuse(pre, f"`{norm(unit.text(decl))}` is not followed by the loops "
                      f"`for (int i = 0; i < {bl.tm}; ++i) for (int j = 0; j < {bl.tn}; ++j) "
                      f"{bl.acc}[i][j] = init;`")
    bl.i, bl.j, inner = got
    ap = _assign_parts(unit, inner)
    if ap is None or ap[0] != f"{bl.acc}[{bl.i}][{bl.j}]" or ap[1] != "=":
        raise _Refuse(pre, f"the loops after `{norm(unit.text(decl))}` do not set "
                      f"{bl.acc}[{bl.i}][{bl.j}]")
    bl.init_loop, bl.init = init, ap[2]
    # the fragment declaration and its three loops
    found = None
    for n in unit.walk(fn.body):
        if n.type == "declaration" and n.parent is not None and \
                n.parent.type == "compound_statement":
            ds = n.children_by_field_name("declarator")
            if len(ds) == 2 and all(d.type == "array_declarator" for d in ds):
                sz = [int_text(unit.text(d.child_by_field_name("size"))) for d in ds]
                if sz == [bl.tm, bl.tn]:
                    found = n
    if found is None:
        raise _Refuse(pre, f"no fragment declaration `T a[{bl.tm}], b[{bl.tn}];` loaded by "
                      f"`a[i] = ...` loops: the {bl.acc}[{bl.tm}][{bl.tn}] tile is not fed by "
                      "register-block's fragments")
    bl.frag_decl = found
    ds = found.children_by_field_name("declarator")
    bl.a = _declarator_name(unit, ds[0])
    bl.b = _declarator_name(unit, ds[1])
    bl.frag_type = norm(unit.text(found.child_by_field_name("type")))
    fs = statements(found.parent)
    fk = next(n for n, s in enumerate(fs) if s.id == found.id)
    loops = fs[fk + 1:fk + 4]
    if len(loops) != 3:
        raise _Refuse(pre, "the fragment declaration is not followed by three loops")
    la, lb, lf = loops
    ca, cb = _counted(unit, la, bl.i, bl.tm), _counted(unit, lb, bl.j, bl.tn)
    pa, pb = _assign_parts(unit, _loop_body(la)), _assign_parts(unit, _loop_body(lb))
    if ca is None or cb is None or pa is None or pb is None or \
            pa[0] != f"{bl.a}[{bl.i}]" or pb[0] != f"{bl.b}[{bl.j}]" or pa[1] != "=" or pb[1] != "=":
        raise _Refuse(pre, f"the fragments are not loaded by `for (i < {bl.tm}) {bl.a}[i] = ...;` "
                      f"and `for (j < {bl.tn}) {bl.b}[j] = ...;`")
    gf = _ij_loops(unit, lf, bl.i, bl.j, bl.tm, bl.tn)
    pf = _assign_parts(unit, gf[2]) if gf else None
    prods = (f"{bl.a}[{bl.i}] * {bl.b}[{bl.j}]", f"{bl.b}[{bl.j}] * {bl.a}[{bl.i}]")
    if pf is None or pf[0] != f"{bl.acc}[{bl.i}][{bl.j}]" or pf[1] != "+=" or \
            norm(unit.text(pf[2])) not in prods:
        raise _Refuse(pre, f"the fragments are not combined by `{bl.acc}[i][j] += "
                      f"{bl.a}[i] * {bl.b}[j];` over i < {bl.tm}, j < {bl.tn}")
    bl.op, bl.x_rows = pf[1], norm(unit.text(pf[2])) == prods[0]
    bl.frag_loops = (la, lb, lf)
    par = found.parent
    bl.kloop = par.parent if par.parent is not None and par.parent.type in _LOOPS else None
    if bl.kloop is None:
        raise _Refuse(pre, "the fragments are not loaded inside a loop over k")
    top = statements(fn.body)
    if bl.kloop.parent.id == fn.body.id:
        bl.form = "plain"
        last = top[-1]
        ge = _ij_loops(unit, last, bl.i, bl.j, bl.tm, bl.tn)
        if ge is None or ge[2].type != "if_statement" or \
                ge[2].child_by_field_name("alternative") is not None or \
                ge[2].child_by_field_name("consequence").type != "compound_statement":
            raise _Refuse(pre, "plain form: the kernel does not end with the guarded store "
                          "loops `for (i) for (j) if (...) { ... }`")
        if decl.parent.id != fn.body.id or not any(x.id == bl.kloop.id for x in sib[k + 1:]):
            raise _Refuse(pre, "the accumulator tile is not declared in the kernel body")
        bl.epi_loop, bl.epi_if = last, ge[2]
        for part, name in ((pa[2], "a"), (pb[2], "b")):
            pe = _strip(part)
            if pe.type != "conditional_expression":
                raise _Refuse(pre, f"plain form: fragment {name} is not loaded as "
                              "`bound ? value : 0`")
        ta, tb_ = _strip(pa[2]), _strip(pb[2])
        bl.cond_r, bl.x = ta.child_by_field_name("condition"), ta.child_by_field_name("consequence")
        bl.cond_c, bl.y = tb_.child_by_field_name("condition"), tb_.child_by_field_name("consequence")
    else:
        tl = bl.kloop.parent.parent if bl.kloop.parent.type == "compound_statement" else None
        if tl is None or tl.type not in _LOOPS or tl.parent.id != fn.body.id:
            raise _Refuse(pre, "the k-loop is neither a statement of the kernel body nor of a "
                          "loop over k-tiles")
        bl.form, bl.tile_loop = "tiled", tl
        tb = statements(_loop_body(tl))
        lw = _ij_loops(unit, tb[0], bl.i, bl.j, bl.tm, bl.tn)
        if lw is None or len(tb) < 2 or not _is_barrier_stmt(unit, tb[1]):
            raise _Refuse(pre, "tiled form: the loop over k-tiles does not start with the load "
                          "loops `for (i) for (j) { ... }` and a barrier")
        bl.load_loop = tb[0]
        ti = next(n for n, s in enumerate(top) if s.id == tl.id)
        if ti != len(top) - 2 or _ij_loops(unit, top[-1], bl.i, bl.j, bl.tm, bl.tn) is None:
            raise _Refuse(pre, "tiled form: the loop over k-tiles is not followed by exactly "
                          "one epilogue loop `for (i) for (j) ...`")
        bl.epi_loop = top[-1]
        bl.x, bl.y = pa[2], pb[2]
    return (f"{bl.form} form: {bl.acc}[{bl.tm}][{bl.tn}] fed by fragments {bl.a}[{bl.tm}], "
            f"{bl.b}[{bl.tn}] in a loop over k")


def _inv_factors(site, bl):
    if bl.tm not in FACTORS or bl.tn not in FACTORS or bl.tm * bl.tn == 1:
        raise _Refuse("tile-factors", f"the tile is {bl.tm} x {bl.tn}: register-block only "
                      f"makes tiles of {', '.join(map(str, FACTORS))} (not 1 x 1)")
    return f"the tile {bl.tm} x {bl.tn} is one register-block makes"


def _inv_dtype(site, bl):
    if bl.acc_type not in DTYPES or bl.frag_type != bl.acc_type:
        raise _Refuse("element-type", f"{bl.acc} is {bl.acc_type} and the fragments are "
                      f"{bl.frag_type}: register-block gives them one type (float, double or "
                      "int)")
    return f"{bl.acc} and the fragments are {bl.acc_type}"


def _offset_nodes(unit, region_nodes, bl):
    """(node to replace, variable, axis, layout) for each ``v + i[*blockDim.y]`` in the regions."""
    out = []
    pats = {}
    for ax, c in (("y", bl.i), ("x", bl.j)):
        pats[c] = (ax, "contiguous")
        pats[f"{c} * blockDim.{ax}"] = (ax, "strided")
    for reg in region_nodes:
        for n in unit.walk(reg):
            if n.type != "binary_expression" or unit.text(n.child_by_field_name("operator")) != "+":
                continue
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            key = norm(unit.text(right))
            if left.type != "identifier" or key not in pats:
                continue
            p = n.parent
            tgt = p if p is not None and p.type == "parenthesized_expression" and \
                _needs_parens(p) else n
            out.append((tgt, unit.text(left), *pats[key]))
    return out


def _inv_index(site, bl):
    unit, fn = site.unit, site.function
    pre = "blocked-index"
    regions = [bl.x, bl.y, bl.epi_loop] + ([bl.cond_r, bl.cond_c] if bl.form == "plain"
                                           else [bl.load_loop])
    offs = _offset_nodes(unit, regions, bl)
    layouts = {o[3] for o in offs}
    if len(layouts) != 1:
        raise _Refuse(pre, "the row/column offsets mix `v + i` and `v + i * blockDim.y`"
                      if layouts else "no row/column offset `v + i` is used by the loads and "
                      "the store")
    bl.layout = layouts.pop()
    rows = {o[1] for o in offs if o[2] == "y"}
    cols = {o[1] for o in offs if o[2] == "x"}
    top = statements(fn.body)
    stop = next(n for n, s in enumerate(top) if s.id == site.node.id) if \
        site.node.parent.id == fn.body.id else 0
    vals = {}
    for st in top[:stop]:
        if st.type != "declaration" or _is_shared(unit, st):
            continue
        for d in st.children_by_field_name("declarator"):
            if d.type == "init_declarator":
                v = d.child_by_field_name("value")
                if sources(unit, v) & _THREADISH:
                    vals[_declarator_name(unit, d)] = v
    for nm in rows | cols:
        if nm not in vals:
            raise _Refuse(pre, f"{nm}, offset by the tile counters, is not an index declared "
                          "before the tile")
    bl_edits = []
    for nm, v in vals.items():
        axis = "y" if nm in rows else "x" if nm in cols else None
        if axis is None:
            a = affine_of(unit, v, fn)
            axis = _axis_of(a) if a is not None else None
            if axis is None:
                terms = dict(a.terms) if a is not None else {}
                axis = "y" if any("threadIdx.y" in m for m in terms) else \
                    "x" if any("threadIdx.x" in m for m in terms) else None
        if axis is None:
            raise _Refuse(pre, f"`{nm} = {norm(unit.text(v))}` is neither a row nor a column "
                          "index")
        f = bl.tm if axis == "y" else bl.tn
        if f == 1:
            continue
        want_block = bl.form == "plain"
        hits = [n for n in unit.walk(v) if builtin(unit, n) == f"blockIdx.{axis}"]
        if hits:
            p = hits[0].parent
            while p is not None and p.type == "parenthesized_expression":
                p = p.parent
            outer = p.parent if p is not None else None
            scaled = outer is not None and outer.type == "binary_expression" and \
                unit.text(outer.child_by_field_name("operator")) == "*" and \
                outer.child_by_field_name("left").id == p.id and \
                int_text(unit.text(outer.child_by_field_name("right"))) == f
            has_dim = any(builtin(unit, n) == f"blockDim.{axis}" for n in unit.walk(p))
            need = want_block or has_dim
            if need and not scaled:
                raise _Refuse(pre, f"`{nm} = {norm(unit.text(v))}`: the block offset is not "
                              f"scaled by {f}")
            if need:
                bl_edits.append(Edit.delete(p.end_byte, outer.end_byte))
        if bl.layout == "contiguous":
            for n in unit.walk(v):
                if builtin(unit, n) == f"threadIdx.{axis}":
                    p = n.parent
                    if p is None or p.type != "binary_expression" or \
                            p.child_by_field_name("left").id != n.id or \
                            int_text(unit.text(p.child_by_field_name("right"))) != f:
                        raise _Refuse(pre, f"`{nm} = {norm(unit.text(v))}`: contiguous layout "
                                      f"but threadIdx.{axis} is not scaled by {f}")
                    bl_edits.append(Edit.delete(n.end_byte, p.end_byte))
    bl.index_edits = bl_edits
    bl.offsets = offs
    return (f"{bl.layout} layout: rows {', '.join(sorted(rows)) or '-'} and columns "
            f"{', '.join(sorted(cols)) or '-'} offset by {bl.i}, {bl.j}")


def _inv_names(site, bl):
    unit, fn = site.unit, site.function
    names = (bl.i, bl.j, bl.a, bl.b)
    allowed = [site.node, bl.frag_decl]
    heads = [bl.init_loop, _loop_body(bl.init_loop), *bl.frag_loops,
             _loop_body(bl.frag_loops[2]), bl.epi_loop, _loop_body(bl.epi_loop)]
    if bl.load_loop is not None:
        heads += [bl.load_loop, _loop_body(bl.load_loop)]
    spans = [(h.start_byte, _body_head_end(h)) for h in heads]
    # the generated statements: acc[i][j] = init, a[i] = .., b[j] = .., acc[i][j] += a[i] * b[j]
    for st in (_loop_body(_loop_body(bl.init_loop)), _loop_body(_loop_body(bl.frag_loops[2]))):
        spans.append((st.start_byte, st.end_byte))
    for lp in bl.frag_loops[:2]:
        left = _loop_body(lp).named_children[0].child_by_field_name("left")
        spans.append((left.start_byte, left.end_byte))
    spans += [(o[0].start_byte, o[0].end_byte) for o in bl.offsets]
    spans += [(n.start_byte, n.end_byte) for n in unit.walk(fn.body)
              if n.type == "subscript_expression" and
              norm(unit.text(n)) == f"{bl.acc}[{bl.i}][{bl.j}]"]
    spans += [(x.start_byte, x.end_byte) for x in allowed]
    for n in unit.walk(fn.node):
        if n.type != "identifier" or unit.text(n) not in names:
            continue
        if any(s <= n.start_byte and n.end_byte <= e for s, e in spans):
            continue
        raise _Refuse("names-private", f"{unit.text(n)} at line {_line(unit, n)} is used outside "
                      "the code register-block generates: removing the tile loops would "
                      "change what it means")
    return f"{', '.join(names)} are used only by the generated loops"


def _inv_contract(site, ctx) -> Verdict:
    bl = _backward(site)
    if bl.failed is not None:
        return Verdict.unknown(f"not checked: precondition {bl.failed} fails first")
    c, why = _contract(site)
    if c is None:
        return Verdict.no(why)
    if bl.form == "plain":
        for k, f, ax in ((0, bl.tn, "x"), (1, bl.tm, "y")):
            if f == 1:
                continue
            got = call_parts(c.grid[k])
            if got is None or len(got[1]) != 2 or int_text(got[1][1]) != f:
                return Verdict.no(f"grid.{ax} = {c.grid[k]} is not ceil_div(G, {f}): cannot "
                                  "tell the grid of one output per thread")
        return Verdict.yes(f"grid=({', '.join(c.grid)}): multiplied back by ({bl.tn}, {bl.tm})")
    for k, f, ax in ((0, bl.tn, "x"), (1, bl.tm, "y")):
        if f == 1:
            continue
        v = int_text(c.block[k])
        m = re.fullmatch(rf"\s*(.+?)\s*/\s*{f}\s*", c.block[k])
        if v is None and m is None:
            return Verdict.no(f"block.{ax} = {c.block[k]} is neither a literal nor `B / {f}`")
    return Verdict.yes(f"block=({', '.join(c.block)}): multiplied back by ({bl.tn}, {bl.tm})")


def _unsub(unit, start, end, bl, extra=()):
    """Text of [start, end) with every ``v + off`` back to ``v`` and acc[i][j] back to acc."""
    reps = list(extra)
    for tgt, v, _, _ in bl.offsets:
        if start <= tgt.start_byte and tgt.end_byte <= end:
            reps.append((tgt.start_byte, tgt.end_byte, v))
    for n in unit.walk(unit.root):
        if n.end_byte <= start or n.start_byte >= end:
            continue
        if n.type == "subscript_expression" and norm(unit.text(n)) == f"{bl.acc}[{bl.i}][{bl.j}]":
            reps.append((n.start_byte, n.end_byte, bl.acc))
    reps = [r for r in reps if not any(o is not r and o[0] <= r[0] and r[1] <= o[1] and
                                       (o[0], o[1]) != (r[0], r[1]) for o in reps)]
    return _splice_text(unit, start, end, reps)


@dataclass(frozen=True)
class UnregisterBlock(Pass):
    """Undo register blocking: one output per thread again, the TM x TN tile dissolved.

    Before (what ``register-block{tm=2,tn=2}`` writes, plain form)::

        // kltrans: launch sgemm grid=(ceil_div(ceil_div(N, 16), 2), ceil_div(ceil_div(M, 16), 2)) block=(16, 16)
        int col = blockIdx.x * blockDim.x * 2 + threadIdx.x;
        int row = blockIdx.y * blockDim.y * 2 + threadIdx.y;
        float acc[2][2];
        for (int i = 0; i < 2; ++i) for (int j = 0; j < 2; ++j) acc[i][j] = 0.0f;
        for (int k = 0; k < K; ++k) {
          float a[2], b[2];
          for (int i = 0; i < 2; ++i)
            a[i] = row + i * blockDim.y < M ? A[(row + i * blockDim.y) * K + k] : 0.0f;
          for (int j = 0; j < 2; ++j)
            b[j] = col + j * blockDim.x < N ? B[k * N + (col + j * blockDim.x)] : 0.0f;
          for (int i = 0; i < 2; ++i) for (int j = 0; j < 2; ++j) acc[i][j] += a[i] * b[j];
        }
        for (int i = 0; i < 2; ++i) for (int j = 0; j < 2; ++j)
          if (row + i * blockDim.y < M && col + j * blockDim.x < N) {
            C[(row + i * blockDim.y) * N + (col + j * blockDim.x)] = acc[i][j];
          }

    After ``unregister-block``::

        // kltrans: launch sgemm grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
        int col = blockIdx.x * blockDim.x + threadIdx.x;
        int row = blockIdx.y * blockDim.y + threadIdx.y;
        if (row < M && col < N) {
          float acc = 0.0f;
          for (int k = 0; k < K; ++k) { acc += A[row * K + k] * B[k * N + col]; }
          C[row * N + col] = acc;
        }

    The tiled form (load loops ``for (i) for (j) { As[..] = ..; }`` before the first barrier,
    epilogue loops after the loop over k-tiles) goes back to one load per thread, the block
    multiplied back by (TN, TM). Only register-block's own shape is recognised: a micro-tile
    fed otherwise (float4 fragments, double-buffered fragments, ``fmaf``) is reported, not
    rewritten.

    Preconditions: blocked-shape (pipeline: ``T acc[TM][TN]`` zeroed by two loops, fed by
    ``T a[TM], b[TN]`` fragment loops and the outer product in a k-loop, stored by the
    epilogue loops; plain or tiled), tile-factors (storage: TM, TN in 1, 2, 4, 8, not both
    1), element-type (dtype: acc and the fragments share float, double or int),
    blocked-index (layout: the loads and the store offset the indices by ``i`` or ``i *
    blockDim.y`` consistently, the index declarations carry the scaling), names-private
    (pipeline: the counters and fragments are used nowhere else), contract-shape (hardware:
    plain: the grid is ``(ceil_div(Gx, TN), ceil_div(Gy, TM))``; tiled: the block is
    literal or ``B / TN``).

    Options: ``braces`` (``keep``: a k-loop body that holds only the fragment code becomes
    ``{ acc += X * Y; }``; ``drop``: the bare statement ``acc += X * Y;``).
    """

    name = "unregister-block"
    kind = "simplify"
    inverse = "register-block"
    scope = "device"
    anchor = BLOCKED
    preconditions = (
        Precondition("blocked-shape", "pipeline",
                     "a TM x TN accumulator tile fed by register-block's fragment loops",
                     _inv_verdict("blocked-shape")),
        Precondition("tile-factors", "storage", "TM, TN in 1, 2, 4, 8, not both 1",
                     _inv_verdict("tile-factors")),
        Precondition("element-type", "dtype", "acc and the fragments share one type",
                     _inv_verdict("element-type")),
        Precondition("blocked-index", "layout",
                     "offsets v + i (or i * blockDim.y) and the scaled index declarations agree",
                     _inv_verdict("blocked-index")),
        Precondition("names-private", "pipeline",
                     "the tile counters and fragments are used only by the generated code",
                     _inv_verdict("names-private")),
        Precondition("contract-shape", "hardware",
                     "plain: grid = ceil_div(G, TN/TM); tiled: block literal or B / TN",
                     _inv_contract),
    )

    braces: str = option("keep", Choice("keep", "drop"),
                         "a k-loop body holding only the fragments becomes { acc += ...; } "
                         "(keep) or a bare statement (drop)")

    def rewrite(self, site, ctx):
        unit, fn = site.unit, site.function
        bl = _backward(site)
        top = statements(fn.body)
        ind = line_indent(unit, top[0].start_byte)
        st = indent_step(unit, top[0])
        edits = list(bl.index_edits)
        decl = site.node
        acc_decl = f"{bl.acc_type} {bl.acc} = {unit.text(bl.init)};"
        # the accumulation
        la, lb, lf = bl.frag_loops
        x = _unsub(unit, bl.x.start_byte, bl.x.end_byte, bl)
        y = _unsub(unit, bl.y.start_byte, bl.y.end_byte, bl)
        if not bl.x_rows:
            x, y = y, x
        accum = f"{bl.acc} {bl.op} {x} * {y};"
        body = bl.frag_decl.parent
        only = len(statements(body)) == 4
        kin = line_indent(unit, bl.kloop.start_byte)
        if only and self.braces == "drop":
            acc_edit = (_body_head_end(bl.kloop), body.end_byte, f"\n{kin}{st}{accum}")
        else:
            acc_edit = (bl.frag_decl.start_byte, lf.end_byte, accum)
        if bl.form == "plain":
            e_if = bl.epi_if
            cond = _unsub(unit, e_if.child_by_field_name("condition").start_byte,
                          e_if.child_by_field_name("condition").end_byte, bl)
            cons = e_if.child_by_field_name("consequence")
            es = statements(cons)
            epi = unshift(_unsub(unit, es[0].start_byte, es[-1].end_byte, bl), st + st)
            mid = _splice_text(unit, bl.init_loop.end_byte, bl.kloop.end_byte, [acc_edit])
            text = (f"if {cond} {{\n{ind}{st}{acc_decl}" + shift(mid, st) +
                    f"\n{ind}{st}{epi}\n{ind}}}")
            edits.append(Edit(decl.start_byte, bl.epi_loop.end_byte, text))
            return edits
        edits.append(Edit(decl.start_byte, bl.init_loop.end_byte, acc_decl))
        edits.append(Edit(*acc_edit))
        for wrap in (bl.load_loop, bl.epi_loop):
            inner = _loop_body(_loop_body(wrap))
            if inner.type == "compound_statement":
                ss = statements(inner)
                s0, s1 = ss[0].start_byte, ss[-1].end_byte
            else:
                s0, s1 = inner.start_byte, inner.end_byte
            w0 = _pragma_start(unit, wrap)
            edits.append(Edit(w0, wrap.end_byte, line_indent(unit, wrap.start_byte) +
                              unshift(_unsub(unit, s0, s1, bl), st + st)))
        return edits

    def update_contract(self, contract, site, ctx):
        bl = _backward(site)
        if bl.form == "plain":
            g = list(contract.grid)
            for k, f in ((0, bl.tn), (1, bl.tm)):
                got = call_parts(g[k]) if f > 1 else None
                if got is not None and len(got[1]) == 2 and int_text(got[1][1]) == f:
                    g[k] = header_expr(got[1][0])
            return contract.with_(grid=tuple(g))
        b = list(contract.block)
        for k, f in ((0, bl.tn), (1, bl.tm)):
            if f == 1:
                continue
            v = int_text(b[k])
            m = re.fullmatch(rf"\s*(.+?)\s*/\s*{f}\s*", b[k])
            if v is not None:
                b[k] = str(v * f)
            elif m is not None:
                b[k] = m.group(1)
        return contract.with_(block=tuple(b))

    def inverse_for(self, site, ctx):
        bl = _backward(site)
        return RegisterBlock(tm=bl.tm, tn=bl.tn, layout=bl.layout or "strided")
