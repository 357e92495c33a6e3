"""Warp-shuffle reductions: ``warp-reduce`` (optimize) and its inverse ``smem-reduce`` (simplify).

Two shapes are handled in both directions:

*tree* — the shared-memory tree reduction of a block (Harris' reduction #3)::

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (tid < s) sdata[tid] += sdata[tid + s];
      __syncthreads();
    }

  ``warp-reduce`` stops the tree at 64 and lets warp 0 finish with shuffles; ``smem-reduce``
  restores the full tree.

*scratch* — a register warp reduction ``for (int off = 16; off > 0; off >>= 1) v +=
  __shfl_xor_sync(0xffffffff, v, off);`` (in a kernel or a ``__device__`` helper).
  ``smem-reduce`` replaces every shuffle by a write to a per-warp ``__shared__`` slot, a
  ``__syncwarp()``, a read of the partner lane's slot and a ``__syncwarp()``;
  ``warp-reduce`` turns that scratch form back into the shuffles.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.affine import THREAD_SYMBOLS, Affine, affine_of, sources
from kltrans.analysis.barriers import enclosing_conditions
from kltrans.analysis.verdict import Verdict
from kltrans.analysis.warps import warp_primitives, warp_uniform
from kltrans.match import Rule
from kltrans.passes import Bool, Choice, Identifier, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.reductions import strip_clause
from kltrans.passes.rewrite import (
    contract_of, indent_of as line_indent, norm, statements, used_names)

# ------------------------------------------------------------------------ constants
SHUFFLE_TYPES = frozenset({
    "int", "unsigned", "unsigned int", "long", "unsigned long", "long long",
    "unsigned long long", "float", "double", "__half", "__half2", "__nv_bfloat16",
    "__nv_bfloat162", "int32_t", "uint32_t", "int64_t", "uint64_t"})
INTEGER_TYPES = frozenset({"int", "unsigned", "unsigned int", "long", "unsigned long",
                           "long long", "unsigned long long", "int32_t", "uint32_t", "int64_t",
                           "uint64_t"})
COMPOUND_OPS = {"+=": "+", "&=": "&", "|=": "|", "^=": "^"}
BINARY_OPS = ("+", "&", "|", "^")
MINMAX = ("fmaxf", "fminf", "fmax", "fmin", "max", "min")
BITWISE = ("&", "|", "^")
MASKS = ("0xffffffff", "0xffffffffu", "0xffffffffU", "0xFFFFFFFF", "0xFFFFFFFFu", "0xFFFFFFFFU")
SHUFFLES = {"__shfl_down_sync": "down", "__shfl_xor_sync": "xor"}
LINEAR_ID = "threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)"
SLOTS_SIZE = 1024  # the largest block: one slot per thread of any block shape
VALUE_NAMES = ("v", "val", "acc", "partial")
OFFSET_NAMES = ("off", "offset", "delta", "d")
SLOTS_NAMES = ("warp_slots", "lane_slots", "slots")
SLOT_NAMES = ("slot", "lane_slot", "my_slot")


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _op(unit, node) -> str:
    o = node.child_by_field_name("operator")
    return unit.text(o) if o is not None else ""


def _int(text: str) -> int | None:
    m = re.fullmatch(r"\s*(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\s*", text)
    return int(m.group(1), 0) if m else None


def _sync_stmt(unit, node, name: str) -> bool:
    """``name();`` as an expression statement."""
    if node is None or node.type != "expression_statement":
        return False
    return _squash(unit.text(node)) == f"{name}();"


def _siblings(node) -> list:
    p = node.parent
    if p is None or p.type != "compound_statement":
        return []
    return [c for c in p.named_children if c.type != "comment"]


def _prev_stmt(node):
    sib = _siblings(node)
    ids = [c.id for c in sib]
    if node.id not in ids:
        return None
    k = ids.index(node.id)
    return sib[k - 1] if k > 0 else None


def _next_stmt(node):
    sib = _siblings(node)
    ids = [c.id for c in sib]
    if node.id not in ids:
        return None
    k = ids.index(node.id)
    return sib[k + 1] if k + 1 < len(sib) else None


def _line_span(unit, node) -> tuple[int, int]:
    """The bytes of ``node`` with its whole line(s) when it is alone on them."""
    src = unit.source
    s, e = node.start_byte, node.end_byte
    ls = src.rfind(b"\n", 0, s) + 1
    le = src.find(b"\n", e)
    le = len(src) if le < 0 else le
    if src[ls:s].strip() == b"" and src[e:le].strip() == b"":
        return ls, min(le + 1, len(src))
    return s, e


def _decl_of(unit, fn, name: str):
    """(type text, declaration node) of a local or parameter ``name`` in ``fn``."""
    for n in unit.walk(fn.node):
        if n.type not in ("declaration", "parameter_declaration"):
            continue
        for d in n.children_by_field_name("declarator"):
            x = d
            while x is not None and x.type in ("init_declarator", "reference_declarator"):
                x = x.child_by_field_name("declarator") or next(
                    (c for c in x.named_children if c.type == "identifier"), None)
            if x is not None and x.type == "identifier" and unit.text(x) == name:
                ty = n.child_by_field_name("type")
                return (norm(unit.text(ty)) if ty is not None else None), n
    return None, None


def _template_types(site, tname: str) -> list[str]:
    """Type arguments given to the kernel's template parameter ``tname`` in the unit."""
    fn = site.function
    pos = next((i for i, t in enumerate(fn.template_params) if t.name == tname), None)
    if pos is None:
        return []
    unit = site.unit
    out = []
    for n in unit.nodes_of_type("template_function"):
        if fn.node.start_byte <= n.start_byte < fn.node.end_byte:
            continue
        nm, args = n.child_by_field_name("name"), n.child_by_field_name("arguments")
        if nm is None or args is None or unit.text(nm).split("::")[-1] != fn.name:
            continue
        al = [a for a in args.named_children if a.type != "comment"]
        if pos < len(al):
            out.append(norm(unit.text(al[pos])))
    return sorted(set(out))


def _values(site, ctx, expr: str):
    from kltrans.passes.launch_facts import expr_values as lb_values

    return lb_values(site, ctx, expr)


# ======================================================================= tree form
@dataclass
class _Tree:
    loop: object
    kind: str  # for | while
    var: str
    decl: object  # the declaration of var (for initializer or the statement before while)
    init: object
    cmp: str
    bound: object
    if_node: object
    stmt: object  # the combining expression statement
    assign: object
    arr: str
    tid: str
    tid_node: object
    own: list  # A[TID] nodes in stmt
    other: object  # A[TID + var]
    combine: str  # "+", "&", "max"...
    barrier: object


def _subscript(unit, node, arr: str | None = None):
    """(array name, index node) of ``A[i]``."""
    node = strip_clause(node)
    if node is None or node.type != "subscript_expression":
        return None
    a = node.child_by_field_name("argument")
    idx = node.child_by_field_name("indices")
    if a is None or a.type != "identifier" or idx is None:
        return None
    items = [c for c in idx.named_children if c.type != "comment"]
    if len(items) != 1 or (arr is not None and unit.text(a) != arr):
        return None
    return unit.text(a), items[0]


def _halves(unit, upd, var: str) -> bool:
    if upd is None:
        return False
    upd = strip_clause(upd)
    if upd.type != "assignment_expression":
        return False
    left = upd.child_by_field_name("left")
    right = strip_clause(upd.child_by_field_name("right"))
    if left is None or unit.text(left) != var:
        return False
    op = _op(unit, upd)
    if op in (">>=", "/="):
        return _int(unit.text(right)) == (1 if op == ">>=" else 2)
    if op == "=" and right.type == "binary_expression":
        rl, rr = right.child_by_field_name("left"), right.child_by_field_name("right")
        o = _op(unit, right)
        return unit.text(rl) == var and ((o == ">>" and _int(unit.text(rr)) == 1) or
                                          (o == "/" and _int(unit.text(rr)) == 2))
    return False


def _parse_tree(unit, loop, reduced: bool) -> "_Tree | str":
    """The tree reduction in ``loop``; ``reduced``: the bound is the one warp-reduce writes."""
    kind = "for" if loop.type == "for_statement" else "while"
    if loop.type not in ("for_statement", "while_statement"):
        return "not a for or while loop"
    body = statements(loop.child_by_field_name("body"))
    cond = strip_clause(loop.child_by_field_name("condition"))
    if kind == "for":
        init = loop.child_by_field_name("initializer")
        upd = loop.child_by_field_name("update")
        if init is None or init.type != "declaration":
            return "the loop does not declare its stride variable"
        decl = init
        want = 2
    else:
        decl = _prev_stmt(loop)
        want = 3
        if decl is None or decl.type != "declaration":
            return "the while loop does not follow the declaration of its stride variable"
        upd = None
    ds = decl.children_by_field_name("declarator")
    if len(ds) != 1 or ds[0].type != "init_declarator":
        return "the stride variable is not declared alone with an initial value"
    var = unit.text(ds[0].child_by_field_name("declarator"))
    init_val = ds[0].child_by_field_name("value")
    if kind == "while":
        if len(body) != 3 or body[2].type != "expression_statement":
            return "the while body is not `if (tid < s) ...; __syncthreads(); s >>= 1;`"
        upd = [c for c in body[2].named_children if c.type != "comment"][0]
    if not _halves(unit, upd, var):
        return f"the stride {var} is not halved (s >>= 1, s /= 2) each iteration"
    if cond is None or cond.type != "binary_expression" or \
            unit.text(cond.child_by_field_name("left")) != var:
        return f"the loop condition is not a comparison of {var}"
    cmp, bound = _op(unit, cond), cond.child_by_field_name("right")
    b = _int(unit.text(bound))
    ok = {(">", 0), (">=", 1)} if not reduced else {(">", 32), (">=", 64)}
    if (cmp, b) not in ok:
        want_txt = f"{var} > 0 or {var} >= 1" if not reduced else f"{var} > 32 or {var} >= 64"
        return f"the loop condition `{norm(unit.text(cond))}` is not {want_txt}"
    if len(body) != want:
        return "the loop body is not `if (tid < s) COMBINE; __syncthreads();`"
    ifn, bar = body[0], body[1]
    if ifn.type != "if_statement" or ifn.child_by_field_name("alternative") is not None:
        return "the loop body does not start with `if (tid < s)` (without else)"
    if not _sync_stmt(unit, bar, "__syncthreads"):
        return "the combining step is not followed by __syncthreads()"
    ic = strip_clause(ifn.child_by_field_name("condition"))
    if ic is None or ic.type != "binary_expression" or _op(unit, ic) != "<" or \
            unit.text(ic.child_by_field_name("right")) != var:
        return f"the guard is not `tid < {var}`"
    tid_node = strip_clause(ic.child_by_field_name("left"))
    tid = norm(unit.text(tid_node))
    cons = ifn.child_by_field_name("consequence")
    inner = statements(cons)
    if len(inner) != 1 or inner[0].type != "expression_statement":
        return "the guarded step is not a single statement"
    stmt = inner[0]
    assign = strip_clause([c for c in stmt.named_children if c.type != "comment"][0])
    if assign.type != "assignment_expression":
        return "the guarded step is not an assignment"
    lhs = _subscript(unit, assign.child_by_field_name("left"))
    if lhs is None or norm(unit.text(lhs[1])) != tid:
        return f"the step does not write A[{tid}]"
    arr = lhs[0]

    def own(n):
        s = _subscript(unit, n, arr)
        return s is not None and norm(unit.text(s[1])) == tid

    def other(n):
        s = _subscript(unit, n, arr)
        if s is None:
            return False
        ix = strip_clause(s[1])
        if ix.type != "binary_expression" or _op(unit, ix) != "+":
            return False
        sides = {norm(unit.text(ix.child_by_field_name(k))) for k in ("left", "right")}
        return sides == {tid, var}

    op = _op(unit, assign)
    right = strip_clause(assign.child_by_field_name("right"))
    owns = [strip_clause(assign.child_by_field_name("left"))]
    if op != "=":
        combine = COMPOUND_OPS.get(op, op[:-1])
        if not other(right):
            return f"the step does not combine {arr}[{tid}] with {arr}[{tid} + {var}]"
        oth = right
    else:
        if right.type == "binary_expression":
            parts = [strip_clause(right.child_by_field_name(k)) for k in ("left", "right")]
            combine = _op(unit, right)
        elif right.type == "call_expression":
            args = right.child_by_field_name("arguments")
            parts = [strip_clause(a) for a in args.named_children if a.type != "comment"]
            combine = norm(unit.text(right.child_by_field_name("function")))
        else:
            return "the step is not A[tid] = A[tid] OP A[tid + s] or A[tid] = f(A[tid], A[tid + s])"
        if len(parts) != 2 or not ((own(parts[0]) and other(parts[1])) or
                                   (other(parts[0]) and own(parts[1]))):
            return f"the step does not combine {arr}[{tid}] with {arr}[{tid} + {var}]"
        oth = parts[1] if other(parts[1]) else parts[0]
        owns.append(parts[0] if oth.id == parts[1].id else parts[1])
    return _Tree(loop, kind, var, decl, init_val, cmp, bound, ifn, stmt, assign, arr, tid,
                 tid_node, owns, oth, combine, bar)


def _stmt_with(unit, t: _Tree, value: str, other_text: str) -> str:
    """The combining statement with A[TID] -> ``value`` and A[TID + s] -> ``other_text``."""
    reps = [(n.start_byte, n.end_byte, value) for n in t.own]
    reps.append((t.other.start_byte, t.other.end_byte, other_text))
    out, pos = [], t.stmt.start_byte
    for s, e, txt in sorted(reps):
        out.append(unit.source[pos:s].decode("utf-8"))
        out.append(txt)
        pos = e
    out.append(unit.source[pos:t.stmt.end_byte].decode("utf-8"))
    return norm("".join(out))


def _renamed(unit, node, old: str, new: str) -> str:
    reps = [(n.start_byte, n.end_byte) for n in unit.walk(node)
            if n.type == "identifier" and unit.text(n) == old]
    out, pos = [], node.start_byte
    for s, e in reps:
        out.append(unit.source[pos:s].decode("utf-8"))
        out.append(new)
        pos = e
    out.append(unit.source[pos:node.end_byte].decode("utf-8"))
    return "".join(out)


def _elem_type(unit, fn, arr: str) -> str | None:
    for d in unit.shared_decls():
        if d.name == arr and d.function in (fn.name, None):
            return norm(d.type)
    return None


def _tail_text(unit, t: _Tree, elem: str, value: str, offset: str, mask: str, shuffle: str,
               one_warp: bool, sync: bool, ind: str, st: str) -> str:
    """What warp-reduce writes after the shortened tree loop."""
    lines = [f"if ({t.tid} < 32) {{",
             f"{st}{elem} {value} = {t.arr}[{t.tid}];"]
    if not one_warp:
        lines.append(f"{st}" + _stmt_with(unit, t, value, _renamed(unit, t.other, t.var, "32")))
    lines.append(f"{st}for (int {offset} = 16; {offset} > 0; {offset} >>= 1)")
    call = f"__shfl_{shuffle}_sync({mask}, {value}, {offset})"
    lines.append(f"{st}{st}" + _stmt_with(unit, t, value, call))
    lines.append(f"{st}if ({t.tid} == 0) {t.arr}[0] = {value};")
    lines.append("}")
    if sync:
        lines.append("__syncthreads();")
    return ("\n" + ind).join(lines)


def _thread0(unit, node, tid: str) -> bool:
    """``node`` runs only in thread 0: under ``if (tid == 0)`` / ``threadIdx.x == 0``."""
    for cond, how in enclosing_conditions(unit, node):
        if how != "if":
            continue
        c = strip_clause(cond)
        if c.type == "binary_expression" and _op(unit, c) == "==":
            sides = [norm(unit.text(strip_clause(c.child_by_field_name(k)))) for k in ("left", "right")]
            if "0" in sides and ({tid, "threadIdx.x"} & set(sides)):
                return True
    return False


def _uses_after(unit, fn, after, arr: str, tid: str):
    """(verdict, needs a barrier) for the uses of ``arr`` after ``after`` in ``fn``."""
    sync = False
    for n in unit.walk(fn.body):
        if n.start_byte < after.end_byte or n.type != "identifier" or unit.text(n) != arr:
            continue
        line = unit.line_col(n.start_byte)[0]
        p = n.parent
        if p is None or p.type != "subscript_expression" or \
                p.child_by_field_name("argument").id != n.id:
            return Verdict.no(f"{arr} is used whole at line {line} after the reduction: its "
                              "other elements would hold different partial results"), sync
        s = _subscript(unit, p, arr)
        if s is None or _int(unit.text(s[1])) != 0:
            return Verdict.no(f"`{norm(unit.text(p))}` at line {line} reads an element other "
                              "than 0 after the reduction: only element 0 keeps its value"), sync
        q = p.parent
        while q is not None and q.type == "parenthesized_expression":
            q = q.parent
        if q is not None and ((q.type == "assignment_expression" and
                               q.child_by_field_name("left").id == p.id) or
                              q.type == "update_expression"):
            return Verdict.no(f"{arr}[0] is written at line {line} after the reduction"), sync
        if not _thread0(unit, n, tid):
            sync = True
    return Verdict.yes(f"after the reduction only {arr}[0] is read"), sync


def _needs_sync(unit, fn, after, t: _Tree) -> bool:
    sync = False
    for n in unit.walk(fn.body):
        if n.start_byte >= after.end_byte and n.type == "identifier" and unit.text(n) == t.arr:
            if not _thread0(unit, n, t.tid):
                sync = True
    return sync


# ==================================================================== scratch form
@dataclass
class _Group:
    write: object  # S[L] = X;
    sync1: object
    use: object  # the statement that reads the partner's slot
    read: object  # the S[...] node in it
    sync2: object
    value: str
    flavour: str


@dataclass
class _Scratch:
    loop: object
    off: str
    slots: str
    slot: str
    elem: str
    decls: tuple
    groups: list
    body: object


def _offset_loop(unit, loop) -> "str | None":
    """The variable of ``for (int off = 2^k; off > 0; off >>= 1)`` with 2^k <= 16, or None."""
    if loop.type != "for_statement":
        return None
    init = loop.child_by_field_name("initializer")
    if init is None or init.type != "declaration":
        return None
    ds = init.children_by_field_name("declarator")
    if len(ds) != 1 or ds[0].type != "init_declarator":
        return None
    var = unit.text(ds[0].child_by_field_name("declarator"))
    k = _int(unit.text(ds[0].child_by_field_name("value")))
    if k is None or k < 1 or k > 16 or k & (k - 1):
        return None
    cond = strip_clause(loop.child_by_field_name("condition"))
    if cond is None or cond.type != "binary_expression" or \
            norm(unit.text(cond)).replace(" ", "") not in (f"{var}>0", f"{var}>=1", f"{var}!=0"):
        return None
    if not _halves(unit, loop.child_by_field_name("update"), var):
        return None
    return var


def _read_index(slot: str, off: str, flavour: str) -> str:
    if flavour == "xor":
        return f"{slot} ^ {off}"
    return f"({slot} & 31) + {off} < 32 ? {slot} + {off} : {slot}"


def _parse_scratch(unit, loop) -> "_Scratch | str":
    off = _offset_loop(unit, loop)
    if off is None:
        return "not a `for (int off = 16; off > 0; off >>= 1)` loop"
    body = loop.child_by_field_name("body")
    sts = statements(body)
    if body.type != "compound_statement" or len(sts) < 6:
        return "the loop body is not the per-warp scratch form"
    d0, d1 = sts[0], sts[1]
    m = re.fullmatch(r"__shared__(.+?)(\w+)\[(\d+)\];", norm(unit.text(d0)))
    if d0.type != "declaration" or m is None or int(m.group(3)) != SLOTS_SIZE:
        return f"the loop body does not start with `__shared__ T slots[{SLOTS_SIZE}];`"
    elem, slots = m.group(1).strip(), m.group(2)
    m2 = re.fullmatch(r"const unsigned int (\w+) = (.+);", norm(unit.text(d1)))
    if d1.type != "declaration" or m2 is None or _squash(m2.group(2)) != _squash(LINEAR_ID):
        return "the second statement is not the slot of the thread (its linear index)"
    slot = m2.group(1)
    groups = []
    rest = sts[2:]
    k = 0
    while k < len(rest):
        s = rest[k]
        mw = re.fullmatch(rf"{re.escape(slots)}\[{re.escape(slot)}\]=(\w+);", _squash(unit.text(s)))
        if mw is None:
            k += 1
            continue
        if k + 3 >= len(rest) or not _sync_stmt(unit, rest[k + 1], "__syncwarp") or \
                not _sync_stmt(unit, rest[k + 3], "__syncwarp"):
            return f"the write of {slots}[{slot}] is not followed by __syncwarp(), a read, __syncwarp()"
        use = rest[k + 2]
        reads = [n for n in unit.walk(use) if n.type == "subscript_expression" and
                 _subscript(unit, n, slots) is not None]
        if len(reads) != 1:
            return "the statement after the write does not read exactly one slot"
        idx = _squash(unit.text(_subscript(unit, reads[0], slots)[1]))
        flavour = next((f for f in ("xor", "down") if idx == _squash(_read_index(slot, off, f))),
                       None)
        if flavour is None:
            return f"the slot read `{norm(unit.text(reads[0]))}` is not a lane xor or lane down"
        groups.append(_Group(s, rest[k + 1], use, reads[0], rest[k + 3], mw.group(1), flavour))
        k += 4
    if not groups:
        return "the loop body writes no slot"
    for n in unit.walk(body):
        if n.type == "identifier" and unit.text(n) in (slots, slot):
            if not (n.start_byte < d1.end_byte or any(
                    g.write.start_byte <= n.start_byte < g.write.end_byte or
                    g.read.start_byte <= n.start_byte < g.read.end_byte for g in groups)):
                return f"{unit.text(n)} is used outside the write/read pairs"
    return _Scratch(loop, off, slots, slot, elem, (d0, d1), groups, body)


# =========================================================== warp-reduce: analysis
def _form(site):
    """("tree", _Tree) or ("scratch", _Scratch) or (None, why)."""
    unit, node = site.unit, site.node
    if _offset_loop(unit, node) is not None:
        got = _parse_scratch(unit, node)
        return ("scratch", got) if not isinstance(got, str) else (None, got)
    got = _parse_tree(unit, node, reduced=False)
    return ("tree", got) if not isinstance(got, str) else (None, got)


def _tree_index(site, ctx) -> Verdict:
    kind, f = _form(site)
    if kind is None:
        return Verdict.no(f)
    unit = site.unit
    if kind == "scratch":
        return Verdict.yes(f"the per-warp scratch form: {len(f.groups)} slot exchange(s) on "
                           f"{f.slots}[{f.slot}]")
    a = affine_of(unit, f.tid_node, site.function)
    if a is None or a != Affine.sym("threadIdx.x"):
        return Verdict.no(f"`{f.tid}` is not threadIdx.x: warp 0 must hold elements 0..31 of "
                          f"{f.arr}")
    return Verdict.yes(f"the tree combines {f.arr}[{f.tid}] with {f.arr}[{f.tid} + {f.var}], "
                       f"{f.tid} = threadIdx.x")


def _operator(site, ctx) -> Verdict:
    kind, f = _form(site)
    if kind is None:
        return Verdict.no(f)
    if kind == "scratch":
        if f.elem not in SHUFFLE_TYPES:
            return Verdict.no(f"{f.elem} slots: shuffles carry {', '.join(sorted(SHUFFLE_TYPES))}")
        return Verdict.yes(f"{f.elem} moves through a shuffle unchanged")
    elem = _elem_type(site.unit, site.function, f.arr)
    if elem is None:
        return Verdict.unknown(f"the __shared__ declaration of {f.arr} is not in {site.function.name}")
    elem = re.sub(r"\b(volatile|const)\b", "", elem).strip()
    types = [elem]
    if any(t.name == elem for t in site.function.template_params):
        types = _template_types(site, elem)
        if not types:
            return Verdict.unknown(f"the element type {elem} is a template parameter with no "
                                   "explicit instantiation in the file")
    bad = [t for t in types if t not in SHUFFLE_TYPES]
    if bad:
        return Verdict.no(f"{f.arr} holds {bad[0]}, which __shfl_*_sync does not carry")
    c = f.combine
    if c in BITWISE and any(t not in INTEGER_TYPES for t in types):
        return Verdict.no(f"`{c}` on {types[0]} elements")
    if c not in BINARY_OPS and c not in MINMAX:
        return Verdict.no(f"`{c}` is not an associative and commutative operator (+, max, min, "
                          "&, |, ^): the pairs the shuffles combine must give the same result")
    return Verdict.yes(f"`{c}` over {', '.join(types)}: lane l combines with lane l + off exactly "
                       f"as thread t combined with t + s, so lane 0 gets the same value, "
                       f"rounding included")


def _result_only(site, ctx) -> Verdict:
    kind, f = _form(site)
    if kind is None:
        return Verdict.no(f)
    if kind == "scratch":
        return Verdict.yes(f"{f.slots} is private to the loop")
    unit, fn = site.unit, site.function
    decl = next((d for d in unit.shared_decls() if d.name == f.arr), None)
    if decl is None or decl.function != fn.name:
        return Verdict.unknown(f"{f.arr} is not a __shared__ array of {fn.name}: other functions "
                               "may read it")
    v, _ = _uses_after(unit, fn, f.loop, f.arr, f.tid)
    return v


def _uniform(site, ctx) -> Verdict:
    kind, f = _form(site)
    if kind is None:
        return Verdict.no(f)
    unit, fn = site.unit, site.function
    if kind == "scratch":
        prims = [p for p in warp_primitives(unit, fn) if p.name == "__syncwarp" and
                 site.node.start_byte <= p.node.start_byte < site.node.end_byte]
        bad = next((p for p in prims if p.uniform.fails), None)
        if bad is not None:
            return Verdict.no(f"__syncwarp() at line {bad.line}: {bad.uniform.reason}")
        return Verdict.yes("every lane reaches the exchanges (the full-warp __syncwarp() "
                           "demands it already)")
    p = f.loop.parent
    while p is not None and p.id != fn.node.id:
        if p.type in ("for_statement", "while_statement", "do_statement", "for_range_loop"):
            return Verdict.no(f"the reduction is inside the loop at line "
                              f"{unit.line_col(p.start_byte)[0]}: the next iteration would "
                              "overwrite the array while warp 0 still reads it")
        p = p.parent
    for cond, how in enclosing_conditions(unit, f.loop):
        v = warp_uniform(unit, cond, fn)
        line = unit.line_col(cond.start_byte)[0]
        why = (f"the reduction runs under `{norm(unit.text(cond))}` (line {line}): {v.reason}; "
               "the shuffles need all 32 lanes of warp 0")
        if v.fails:
            return Verdict.no(why)
        if not v.holds:
            return Verdict.unknown(why)
        deps = sources(unit, cond) & THREAD_SYMBOLS
        if deps:
            return Verdict.no(f"the reduction runs under `{norm(unit.text(cond))}` (line {line}), "
                              "which depends on the thread: the tree's __syncthreads() diverges")
    return Verdict.yes("the reduction runs in uniform control flow, outside any loop")


def _block_values(site, ctx, f: _Tree):
    """(block sizes, first strides) or (None, why)."""
    c, why = contract_of(site)
    if c is None:
        return None, why
    blocks, why = _values(site, ctx, c.block[0])
    if blocks is None:
        return None, (f"the block size `{c.block[0]}` has no known value ({why}); give it "
                      "with --assume NAME==V")
    unit = site.unit
    init = strip_clause(f.init)
    shift = 0
    while init.type == "binary_expression" and _op(unit, init) == ">>" and \
            _int(unit.text(init.child_by_field_name("right"))) is not None:
        shift += _int(unit.text(init.child_by_field_name("right")))
        init = strip_clause(init.child_by_field_name("left"))
    text = unit.text(init)
    expr = re.sub(r"\bblockDim\s*\.\s*x\b", f"({c.block[0]})", text)
    firsts, why = _values(site, ctx, expr)
    if firsts is None:
        return None, f"the first stride `{norm(unit.text(f.init))}` has no known value ({why})"
    return (blocks, [x >> shift for x in firsts]), None


def _block_size(site, ctx) -> Verdict:
    kind, f = _form(site)
    if kind is None:
        return Verdict.no(f)
    if kind == "scratch":
        return Verdict.yes("lanes are numbered from the linear thread index: any block shape")
    got, why = _block_values(site, ctx, f)
    if got is None:
        return Verdict.no(why) if "no launch contract" in why or "not 1-D" in why or \
            "host launcher" in why else Verdict.unknown(why)
    blocks, firsts = got
    small = [b for b in blocks if b < 32]
    if small:
        return Verdict.no(f"a block of {small[0]} threads is less than a warp: the full-mask "
                          "shuffles need 32 lanes in warp 0")
    bad = [s for s in firsts if s < 16 or s & (s - 1)]
    if bad:
        return Verdict.no(f"the tree starts at stride {bad[0]}: warp-reduce needs a power of two "
                          ">= 16 (a block of a whole number of warps, power of two)")
    if len({s == 16 for s in firsts}) > 1:
        return Verdict.no("the instantiations mix one-warp and multi-warp blocks")
    return Verdict.yes(f"block {'/'.join(map(str, blocks))}, first stride "
                       f"{'/'.join(map(str, firsts))}: warp 0 is whole")


def _names(p, site):
    unit, fn = site.unit, site.function
    v = p.value if p.value != "auto" else _fresh(unit, fn, VALUE_NAMES)
    o = p.offset if p.offset != "auto" else _fresh(unit, fn, OFFSET_NAMES, taken={v})
    return v, o


def _fresh(unit, fn, cands, taken=()):
    used = used_names(unit, fn) | set(taken)
    for c in cands:
        if c not in used:
            return c
    k = 0
    while f"{cands[0]}{k}" in used:
        k += 1
    return f"{cands[0]}{k}"


def _fresh_names(site, ctx) -> Verdict:
    kind, f = _form(site)
    if kind is None:
        return Verdict.no(f)
    if kind == "scratch":
        return Verdict.yes("no new names")
    v, o = _names(site.pass_, site)
    if v == o:
        return Verdict.no(f"the value and the offset are both named {v}")
    used = used_names(site.unit, site.function)
    for what, n in (("value", v), ("offset", o)):
        if n in used:
            return Verdict.no(f"the {what} name {n} is already used in {site.function.name}")
    return Verdict.yes(f"{v} and {o} are fresh")


REDUCTION_LOOP = Rule(any=(
    Rule(kind="for_statement", has=Rule(pattern="__syncthreads()")),
    Rule(kind="while_statement", has=Rule(pattern="__syncthreads()")),
    Rule(kind="for_statement", has=Rule(pattern="__syncwarp()"))))


@dataclass(frozen=True)
class WarpReduce(Pass):
    """Finish a shared-memory tree reduction with warp shuffles once 32 partial results remain.

    Before::

        // kltrans: launch reduce grid=ceil_div(n, 256) block=256
        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
          if (tid < s) sdata[tid] += sdata[tid + s];
          __syncthreads();
        }
        if (tid == 0) atomicAdd(out, sdata[0]);

    After ``warp-reduce{shuffle=down}``::

        for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
          if (tid < s) sdata[tid] += sdata[tid + s];
          __syncthreads();
        }
        if (tid < 32) {
          float v = sdata[tid];
          v += sdata[tid + 32];
          for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffff, v, off);
          if (tid == 0) sdata[0] = v;
        }
        if (tid == 0) atomicAdd(out, sdata[0]);

    The tree keeps its strides down to 64 (it runs no iteration when the block is one warp:
    then warp 0 starts from ``sdata[tid]`` alone); warp 0 does stride 32 from shared memory
    and strides 16..1 in registers. The result lands in ``sdata[0]``; when a thread other
    than thread 0 reads it afterwards a ``__syncthreads()`` follows the warp step. Accepted
    spellings: ``for`` or ``while`` (``unsigned s = ...; while (s > 0) {...; s >>= 1;}``),
    ``s >>= 1`` / ``s /= 2`` / ``s = s >> 1``, condition ``s > 0`` / ``s >= 1``, first stride
    ``blockDim.x / 2``, ``BLOCK / 2`` or ``BLOCK >> 1`` (``#define``, template or
    ``--assume BLOCK==256``), the step ``A[t] op= A[t + s]`` (op in + & | ^),
    ``A[t] = A[t] op A[t + s]`` or ``A[t] = f(A[t], A[t + s])`` (f in fmaxf fminf fmax fmin
    max min).

    Float ``+`` needs no ``--assume reassoc`` and no tolerance: lane ``l`` combines with lane
    ``l + off`` (``down``) or ``l ^ off`` (``xor``, which is ``l + off`` for every lane that
    feeds lane 0), exactly the pairs thread ``t`` and ``t + s`` of the tree, so lane 0
    computes the same expression tree and the same bits.

    It also undoes ``smem-reduce`` on a register warp reduction: a loop ``for (int off = 16;
    off > 0; off >>= 1)`` whose body exchanges values through a per-warp ``__shared__``
    scratch (write own slot, ``__syncwarp()``, read the partner's slot, ``__syncwarp()``)
    gets its ``__shfl_xor_sync`` / ``__shfl_down_sync`` calls back (the flavour is the one
    the slot index spells; ``mask`` and ``braces`` say how to write them).

    Preconditions: tree-index (layout: the tree reads ``A[tid]`` and ``A[tid + s]`` under
    ``if (tid < s)`` with ``tid`` = threadIdx.x, followed by ``__syncthreads()``), operator
    (dtype: + max min on a shuffle type, & | ^ on integers), result-only (storage: after
    the loop only ``A[0]`` is read: the other elements no longer hold the tree's partial
    results), uniform (pipeline: not inside a loop, and every condition around it is
    warp-uniform (kltrans.analysis.warps): all 32 lanes of warp 0 reach the full-mask
    shuffles), block-size (hardware: the launch header's 1-D block is >= 32 threads and the
    first stride a power of two >= 16; template instantiations and macros are evaluated;
    whole warp 0 is the real requirement: shuffles themselves exist since sm_30),
    fresh-names (pipeline). All of them are static; nothing is guarded at run time.

    Options: ``shuffle`` (``down`` or ``xor``; default down), ``mask`` (the spelling of the
    full mask; default 0xffffffff), ``value`` / ``offset`` (names of the register and the
    offset; auto: v, off), ``braces`` (scratch form: keep braces around a one-statement loop
    body; default false).
    """

    name = "warp-reduce"
    kind = "optimize"
    inverse = "smem-reduce"
    scope = "device"
    anchor = REDUCTION_LOOP
    preconditions = (
        Precondition("tree-index", "layout",
                     "the tree combines A[tid] and A[tid + s], tid = threadIdx.x, under "
                     "if (tid < s) followed by __syncthreads()", _tree_index),
        Precondition("operator", "dtype",
                     "+, max or min on a shuffle type, or & | ^ on integers", _operator),
        Precondition("result-only", "storage",
                     "after the reduction only A[0] is read", _result_only),
        Precondition("uniform", "pipeline",
                     "the reduction is in warp-uniform control flow, outside any loop", _uniform),
        Precondition("block-size", "hardware",
                     "the 1-D block has >= 32 threads, the first stride is a power of two >= 16",
                     _block_size),
        Precondition("fresh-names", "pipeline",
                     "the value and offset names are not used in the kernel", _fresh_names),
    )

    shuffle: str = option("down", Choice("down", "xor"), "shuffle flavour of the warp step")
    mask: str = option("0xffffffff", Choice(*MASKS), "spelling of the full lane mask")
    value: str = option("auto", Identifier(), "name of the register (auto: a fresh name)")
    offset: str = option("auto", Identifier(), "name of the shuffle offset (auto: a fresh name)")
    braces: bool = option(False, Bool(), "scratch form: braces around a one-statement body")

    def rewrite(self, site, ctx):
        kind, f = _form(site)
        unit = site.unit
        if kind == "scratch":
            return self._unscratch(unit, f)
        got, _ = _block_values(site, ctx, f)
        one_warp = got is not None and all(s == 16 for s in got[1])
        v, o = _names(self, site)
        elem = re.sub(r"\b(volatile|const)\b", "", _elem_type(unit, site.function, f.arr)).strip()
        elem = norm(elem)
        _, sync = _uses_after(unit, site.function, f.loop, f.arr, f.tid)
        ind = line_indent(unit, f.loop.start_byte)
        st = _step(unit, f)
        tail = _tail_text(unit, f, elem, v, o, self.mask, self.shuffle, one_warp, sync, ind, st)
        new_bound = "32" if f.cmp == ">" else "64"
        return [Edit(f.bound.start_byte, f.bound.end_byte, new_bound),
                Edit.insert(f.loop.end_byte, "\n" + ind + tail)]

    def _unscratch(self, unit, f: _Scratch):
        edits = []
        for d in f.decls:
            s, e = _line_span(unit, d)
            edits.append(Edit.delete(s, e))
        for g in f.groups:
            for n in (g.write, g.sync1, g.sync2):
                s, e = _line_span(unit, n)
                edits.append(Edit.delete(s, e))
            call = f"__shfl_{g.flavour}_sync({self.mask}, {g.value}, {f.off})"
            edits.append(Edit(g.read.start_byte, g.read.end_byte, call))
        sts = statements(f.body)
        kept = [s for s in sts if not any(s.id == n.id for n in f.decls) and
                not any(s.id in (g.write.id, g.sync1.id, g.sync2.id) for g in f.groups)]
        comments = [c for c in f.body.named_children if c.type == "comment"]
        if not self.braces and len(kept) == 1 and not comments:
            g = f.groups[0]
            use = g.use
            text = unit.source[use.start_byte:g.read.start_byte].decode() + \
                f"__shfl_{g.flavour}_sync({self.mask}, {g.value}, {f.off})" + \
                unit.source[g.read.end_byte:use.end_byte].decode()
            ind = line_indent(unit, f.loop.start_byte)
            st = line_indent(unit, use.start_byte)[len(ind):] or "    "
            return [Edit(f.body.prev_sibling.end_byte, f.body.end_byte, "\n" + ind + st + text)] \
                if kept[0].id == use.id else edits
        return edits

    def inverse_for(self, site, ctx):
        kind, f = _form(site)
        if kind == "scratch":
            return SmemReduce(slots=f.slots, slot=f.slot)
        return SmemReduce()


def _step(unit, t: _Tree) -> str:
    """One level of indentation, as the loop body is indented."""
    outer = line_indent(unit, t.loop.start_byte)
    inner = line_indent(unit, t.if_node.start_byte)
    return inner[len(outer):] if inner.startswith(outer) and len(inner) > len(outer) else "  "


# ==================================================================== smem-reduce
TAIL = Rule(pattern="if ($TID < 32) $BLOCK;", inside_kernel=True)
SHUFFLE_LOOP = Rule(kind="for_statement",
                    any=(Rule(has=Rule(pattern="__shfl_xor_sync($$$ARGS)")),
                         Rule(has=Rule(pattern="__shfl_down_sync($$$ARGS)"))))


@dataclass
class _Tail:
    tree: _Tree
    node: object  # the if statement
    sync: object  # the trailing __syncthreads(); or None
    value: str
    offset: str
    mask: str
    flavour: str


def _shuffle_calls(unit, node) -> list:
    out = []
    for n in unit.walk(node):
        if n.type == "call_expression":
            f = n.child_by_field_name("function")
            if f is not None and f.type == "identifier" and unit.text(f) in SHUFFLES:
                out.append(n)
    return out


def _args(unit, call) -> list:
    a = call.child_by_field_name("arguments")
    return [c for c in a.named_children if c.type != "comment"]


def _parse_tail(unit, fn, node) -> "_Tail | str":
    if node.type != "if_statement":
        return "not an if statement"
    prev = _prev_stmt(node)
    if prev is None or prev.type not in ("for_statement", "while_statement"):
        return "the warp step does not follow a tree loop"
    t = _parse_tree(unit, prev, reduced=True)
    if isinstance(t, str):
        return f"the loop before it is not a tree stopped at 32: {t}"
    body = statements(node.child_by_field_name("consequence"))
    if len(body) < 3 or body[0].type != "declaration":
        return "the warp step does not start with the declaration of its register"
    ds = body[0].children_by_field_name("declarator")
    value = unit.text(ds[0].child_by_field_name("declarator")) if ds and \
        ds[0].type == "init_declarator" else None
    loops = [s for s in body if s.type == "for_statement"]
    calls = _shuffle_calls(unit, node)
    if value is None or len(loops) != 1 or len(calls) != 1:
        return "the warp step is not one register, one shuffle loop"
    off = _offset_loop(unit, loops[0])
    if off is None:
        return "the shuffle loop is not `for (int off = 16; off > 0; off >>= 1)`"
    args = _args(unit, calls[0])
    flavour = SHUFFLES[unit.text(calls[0].child_by_field_name("function"))]
    mask = unit.text(args[0]) if args else ""
    one_warp = len(body) == 3
    elem = norm(unit.text(body[0].child_by_field_name("type")))
    nxt = _next_stmt(node)
    sync = nxt if _sync_stmt(unit, nxt, "__syncthreads") and _needs_sync(unit, fn, nxt, t) \
        else None
    want = _tail_text(unit, t, elem, value, off, mask, flavour, one_warp, sync is not None, "", "")
    got = unit.text(node) + (unit.text(sync) if sync is not None else "")
    if _squash(want) != _squash(got):
        return "the warp step is not the one warp-reduce writes for the tree above it"
    return _Tail(t, node, sync, value, off, mask, flavour)


def _sform(site):
    """("tail", _Tail) or ("shuffle", loop info) or (None, why)."""
    unit, node, fn = site.unit, site.node, site.function
    if node.type == "if_statement":
        got = _parse_tail(unit, fn, node)
        return ("tail", got) if not isinstance(got, str) else (None, got)
    p = node.parent
    while p is not None and p.id != fn.node.id:
        if p.type == "if_statement" and not isinstance(_parse_tail(unit, fn, p), str):
            return None, "the loop is the warp step of a warp-reduce rewrite: the tree is " \
                         "restored from its if statement"
        p = p.parent
    off = _offset_loop(unit, node)
    if off is None:
        return None, "the loop is not `for (int off = 2^k; off > 0; off >>= 1)` with 2^k <= 16"
    body = node.child_by_field_name("body")
    calls = _shuffle_calls(unit, body)
    if not calls:
        return None, "no shuffle in the loop body"
    holders = []
    direct = statements(body)
    for c in calls:
        args = _args(unit, c)
        if len(args) != 3:
            return None, (f"`{norm(unit.text(c))}` passes a width: only whole-warp shuffles are "
                          "rewritten")
        if unit.text(args[2]) != off:
            return None, f"`{norm(unit.text(c))}` does not shuffle by the loop's offset {off}"
        if args[1].type != "identifier":
            return None, f"`{norm(unit.text(c))}` shuffles an expression, not a variable"
        h = next((s for s in direct if s.start_byte <= c.start_byte < s.end_byte), None)
        if h is None or h.type not in ("expression_statement", "declaration"):
            return None, (f"`{norm(unit.text(c))}` is not in a plain statement of the loop body")
        if any(x.id == h.id for x, _ in holders):
            return None, "two shuffles in one statement"
        holders.append((h, c))
    return "shuffle", (off, holders, body)


def _s_shape(site, ctx) -> Verdict:
    kind, f = _sform(site)
    if kind is None:
        return Verdict.no(f)
    if kind == "tail":
        return Verdict.yes(f"the warp step after the tree on {f.tree.arr} is warp-reduce's")
    off, holders, _ = f
    return Verdict.yes(f"{len(holders)} shuffle(s) by {off}, each in its own statement")


def _s_mask(site, ctx) -> Verdict:
    kind, f = _sform(site)
    if kind is None:
        return Verdict.no(f)
    unit = site.unit
    calls = _shuffle_calls(unit, f.node) if kind == "tail" else [c for _, c in f[1]]
    masks = set()
    for c in calls:
        m = unit.text(_args(unit, c)[0])
        if _int(m) != 0xFFFFFFFF:
            return Verdict.no(f"the mask `{m}` is not all 32 lanes: a partial-warp shuffle has no "
                              "shared-memory equivalent with __syncwarp() over the whole warp")
        if m not in MASKS:
            return Verdict.no(f"the mask is spelt `{m}`; warp-reduce can write back only "
                              f"{', '.join(MASKS)}")
        masks.add(m)
    if len(masks) > 1:
        return Verdict.no(f"the shuffles spell the mask differently ({', '.join(sorted(masks))})")
    return Verdict.yes(f"full mask {masks.pop()}: all 32 lanes take part")


def _s_type(site, ctx) -> Verdict:
    kind, f = _sform(site)
    if kind is None:
        return Verdict.no(f)
    if kind == "tail":
        return Verdict.yes(f"the tree works on {f.tree.arr} as before")
    unit, fn = site.unit, site.function
    types = set()
    for _, c in f[1]:
        name = unit.text(_args(unit, c)[1])
        ty, _ = _decl_of(unit, fn, name)
        if ty is None:
            return Verdict.unknown(f"no declaration of {name} in {fn.name}")
        ty = norm(re.sub(r"\b(const|volatile)\b", "", ty))
        if ty not in SHUFFLE_TYPES:
            return Verdict.no(f"{name} is a {ty}: the scratch slots hold one of "
                              f"{', '.join(sorted(SHUFFLE_TYPES))}")
        types.add(ty)
    if len(types) > 1:
        return Verdict.no(f"the shuffled values have different types ({', '.join(sorted(types))}): "
                          "one scratch array holds one type")
    return Verdict.yes(f"the shuffled values are {types.pop()}")


def _s_lanes(site, ctx) -> Verdict:
    kind, f = _sform(site)
    if kind is None:
        return Verdict.no(f)
    if kind == "tail":
        return Verdict.yes("the tree keeps its __syncthreads() in uniform flow")
    unit, fn = site.unit, site.function
    for p in warp_primitives(unit, fn):
        if site.node.start_byte <= p.node.start_byte < site.node.end_byte and p.uniform.fails:
            return Verdict.no(f"{p.name} at line {p.line}: {p.uniform.reason}")
    return Verdict.yes("no shuffle is under a lane-divergent condition (the full mask obliges "
                       "all 32 lanes to arrive, as __syncwarp() will)")


def _s_result(site, ctx) -> Verdict:
    kind, f = _sform(site)
    if kind is None:
        return Verdict.no(f)
    if kind == "shuffle":
        return Verdict.yes("registers only: no shared array changes meaning")
    v, _ = _uses_after(site.unit, site.function, f.sync or f.node, f.tree.arr, f.tree.tid)
    return v


def _s_names(p, site):
    unit, fn = site.unit, site.function
    a = p.slots if p.slots != "auto" else _fresh(unit, fn, SLOTS_NAMES)
    b = p.slot if p.slot != "auto" else _fresh(unit, fn, SLOT_NAMES, taken={a})
    return a, b


def _s_fresh(site, ctx) -> Verdict:
    kind, f = _sform(site)
    if kind is None:
        return Verdict.no(f)
    if kind == "tail":
        return Verdict.yes("no new names")
    a, b = _s_names(site.pass_, site)
    if a == b:
        return Verdict.no(f"the scratch array and the slot index are both named {a}")
    used = used_names(site.unit, site.function)
    for what, n in (("scratch array", a), ("slot index", b)):
        if n in used:
            return Verdict.no(f"the {what} name {n} is already used in {site.function.name}")
    return Verdict.yes(f"{a} and {b} are fresh")


def _s_whole_first(site, ctx) -> Verdict:
    """The shuffles of a block reduction that ``atomic-per-thread`` removes whole, or of
    the group merge helper ``merge-row-stats`` writes (``direct-row-stats`` removes it),
    stay shuffles until then: those passes match the shuffle form token for token, so
    turning the shuffles into shared-memory exchanges first would leave a reduction no
    pass removes, and the walk would end short of naive. (``atomic-per-thread`` at an
    atomic reads the fold in any spelling with the block machine: it does not wait.)"""
    from kltrans.passes.registry import get_pass
    from kltrans.passes.helper_forms import group_merge_names

    unit, node, fn = site.unit, site.node, site.function
    if fn is not None and group_merge_names(unit, fn.name) is not None:
        return Verdict.no(f"{fn.name} is the group merge merge-row-stats writes: "
                          f"direct-row-stats removes it whole, shuffles and all")
    whole = get_pass("atomic-per-thread")()
    try:
        sites = whole.sites(unit, ctx)
    except Exception:  # a broken pass must not decide this one
        sites = []
    for s in sites:
        if s.node.type == "call_expression":
            continue  # read by the block machine in any spelling: still there afterwards
        if any(not v.holds for _, v in whole.check(s, ctx)):
            continue
        try:
            edits = whole.rewrite(s, ctx)
        except Exception:
            continue
        if any(e.start <= node.start_byte and node.end_byte <= e.end and e.start < e.end
               for e in edits):
            line = unit.line_col(s.node.start_byte)[0]
            return Verdict.no(f"atomic-per-thread at line {line} removes this block "
                              f"reduction whole: it goes first")
    return Verdict.yes("no pending simplification removes this reduction whole")


@dataclass(frozen=True)
class SmemReduce(Pass):
    """Reduce through shared memory only: undo a warp-shuffle tail, or replace register shuffles.

    Before (what ``warp-reduce`` writes)::

        for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) { ... }
        if (tid < 32) {
          float v = sdata[tid];
          v += sdata[tid + 32];
          for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffff, v, off);
          if (tid == 0) sdata[0] = v;
        }

    After ``smem-reduce``::

        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) { ... }

    Before (a register warp reduction, in a kernel or a ``__device__`` helper)::

        for (int off = 16; off > 0; off >>= 1)
          v += __shfl_xor_sync(0xffffffff, v, off);

    After ``smem-reduce``::

        for (int off = 16; off > 0; off >>= 1) {
          __shared__ float warp_slots[1024];
          const unsigned int slot = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
          warp_slots[slot] = v;
          __syncwarp();
          v += warp_slots[slot ^ off];
          __syncwarp();
        }

    Each shuffle becomes: write the own slot, ``__syncwarp()``, read the partner lane's slot
    (``slot ^ off`` for xor; ``(slot & 31) + off < 32 ? slot + off : slot`` for down, which
    returns the own value past lane 31 as ``__shfl_down_sync`` does), ``__syncwarp()`` (so
    the next write waits for every read). Lanes are numbered by the linear thread index, as
    the hardware numbers them, so every lane gets exactly the value the shuffle gave it, for
    any block shape; 1024 slots cover the largest block. Several shuffles in one loop
    (softmax's ``m`` and ``s``) share the array, one exchange each.

    Preconditions: shape (layout: the tail is exactly warp-reduce's for the tree before it;
    or the loop is ``for (int off = 2^k; off > 0; off >>= 1)`` with 2^k <= 16 whose
    shuffles each sit in their own statement of the body and shuffle a variable by
    ``off``), full-mask (hardware: every mask is 0xffffffff, no width argument: the
    replacement's ``__syncwarp()`` waits for the whole warp), shuffled-type (dtype: the
    shuffled variables share one shuffle type, the type of the slots), all-lanes (pipeline:
    no shuffle under a lane-divergent condition, by kltrans.analysis.warps), result-only
    (storage: after the restored tree only ``A[0]`` is read), fresh-names (pipeline),
    whole-first (pipeline: no ``atomic-per-thread`` that removes the whole block reduction
    is pending, and the loop is not in the group merge helper ``merge-row-stats`` writes,
    which ``direct-row-stats`` removes: both match the shuffle form).

    Options: ``slots`` / ``slot`` (names of the scratch array and the slot index; auto:
    warp_slots, slot).
    """

    name = "smem-reduce"
    kind = "simplify"
    inverse = "warp-reduce"
    scope = "device"
    anchor = Rule(any=(TAIL, SHUFFLE_LOOP))
    preconditions = (
        Precondition("shape", "layout",
                     "warp-reduce's tail after a tree stopped at 32, or a halving offset loop "
                     "with one shuffle per statement", _s_shape),
        Precondition("full-mask", "hardware",
                     "every shuffle has the full mask and no width", _s_mask),
        Precondition("shuffled-type", "dtype",
                     "the shuffled variables have one shuffle type", _s_type),
        Precondition("all-lanes", "pipeline",
                     "no shuffle is under a lane-divergent condition", _s_lanes),
        Precondition("result-only", "storage",
                     "after the restored tree only A[0] is read", _s_result),
        Precondition("fresh-names", "pipeline",
                     "the scratch array and slot names are not used in the function", _s_fresh),
        Precondition("whole-first", "pipeline",
                     "no simplification that removes the whole reduction is pending: "
                     "atomic-per-thread over it, or direct-row-stats of the group merge it "
                     "is in", _s_whole_first),
    )

    slots: str = option("auto", Identifier(), "name of the __shared__ scratch (auto: warp_slots)")
    slot: str = option("auto", Identifier(), "name of the thread's slot index (auto: slot)")

    def rewrite(self, site, ctx):
        kind, f = _sform(site)
        unit = site.unit
        if kind == "tail":
            t = f.tree
            edits = [Edit(t.bound.start_byte, t.bound.end_byte, "0" if t.cmp == ">" else "1")]
            end = (f.sync or f.node).end_byte
            start = t.loop.end_byte
            edits.append(Edit.delete(start, end))
            return edits
        off, holders, body = f
        slots, slot = _s_names(self, site)
        ty, _ = _decl_of(unit, site.function, unit.text(_args(unit, holders[0][1])[1]))
        ty = norm(re.sub(r"\b(const|volatile)\b", "", ty))
        loop = site.node
        if body.type == "compound_statement":
            first = next(c for c in body.named_children)
            ind = line_indent(unit, first.start_byte)
        else:
            ind = line_indent(unit, body.start_byte)
            if unit.source[body.start_byte - len(ind) - 1:body.start_byte - len(ind)] != b"\n" \
                    or len(ind) <= len(line_indent(unit, loop.start_byte)):
                ind = line_indent(unit, loop.start_byte) + "    "
            first = None
        decls = [f"__shared__ {ty} {slots}[{SLOTS_SIZE}];",
                 f"const unsigned int {slot} = {LINEAR_ID};"]
        parts = {}
        for h, c in holders:
            args = _args(unit, c)
            flavour = SHUFFLES[unit.text(c.child_by_field_name("function"))]
            read = f"{slots}[{_read_index(slot, off, flavour)}]"
            stmt = unit.source[h.start_byte:c.start_byte].decode() + read + \
                unit.source[c.end_byte:h.end_byte].decode()
            parts[h.id] = (h, [f"{slots}[{slot}] = {unit.text(args[1])};", "__syncwarp();", stmt,
                               "__syncwarp();"])
        if first is None:
            h, lines = parts[body.id]
            outer = line_indent(unit, loop.start_byte)
            text = " {\n" + "\n".join(ind + x for x in decls + lines) + "\n" + outer + "}"
            return [Edit(body.prev_sibling.end_byte, body.end_byte, text)]
        edits = [Edit.insert(first.start_byte, "".join(x + "\n" + ind for x in decls))]
        for h, lines in parts.values():
            hi = line_indent(unit, h.start_byte)
            edits.append(Edit(h.start_byte, h.end_byte, ("\n" + hi).join(lines)))
        return edits

    def inverse_for(self, site, ctx):
        kind, f = _sform(site)
        if kind == "tail":
            return WarpReduce(shuffle=f.flavour, mask=f.mask, value=f.value, offset=f.offset)
        off, holders, body = f
        mask = site.unit.text(_args(site.unit, holders[0][1])[0])
        return WarpReduce(mask=mask if mask in MASKS else MASKS[0],
                          braces=body.type == "compound_statement")
