"""The loads and stores of a kernel, in any spelling: which memory, which element, how wide.

:func:`accesses` lists one :class:`Access` per load or store of global or shared memory in
a function. Each is reduced to the array it addresses (``base``: a kernel parameter, a
``__shared__`` or ``__device__`` array), an element offset into it (``index``, an
:class:`~kltrans.analysis.affine.Affine` in elements of the base's type, over thread and
block ids, loop variables and sizes) and a ``width`` (elements of that type moved at once).

Read: subscripts ``x[i]``, multi-dimensional arrays ``tile[ty][tx]`` (flattened with the
declared dimensions), dereferences ``*(x + i)``, ``*p++``, shared and ``__device__``
scalars named on their own, and the address operands of the model's operations
(:mod:`kltrans.model.ops`): cached loads and stores (``__ldg(&x[i])``, ``__stcs(y + i, v)``,
which set ``hint``), atomics (also those the table does not name: ``atomicExch`` ...) and
asynchronous copies (a read of ``src`` and a write of ``dst``, width from a constant size).
Pointers are followed through casts, ``&x[i]``, ``p + k``, local aliases and aliases of
aliases (``auto`` too), typedef'd pointers, ``extern __shared__`` buffers re-typed and split
into sub-arrays, a zero-argument accessor returning a shared buffer (a device function, or
a struct's conversion operator: ``T* s = SharedMemory<T>();``, specializations honoured),
a pointer member of a by-value kernel argument (base ``args.data``).

Pointer advances (``p += k``, ``p -= k``, ``p = p + k``, ``p++``) count as often as they
have run when the access runs: once when before it (``A += blockIdx.y * BM * K;``), once per
past iteration of a loop around both. **The iteration count is written in the loop's
induction variable when the division is exact**: ``A += BK`` in ``for (k = 0; k < K; k +=
BK)`` adds ``k`` and ``B += BK * N`` adds ``k*N`` (the index the non-advancing spelling
``A[... + k]`` has); otherwise ``#iter(k)`` (the symbol the affine analysis uses for an
iteration count), or ``#iter@LINE`` for a loop with no integer induction variable.

Vector views: ``width = sizeof(view) / sizeof(element)`` (``float4`` over ``float``: 4,
``int4`` over ``__half``: 8, a 16-byte ``struct __align__(16)`` over ``float``: 4) and the
index counts elements (``reinterpret_cast<float4*>(x)[i]`` is ``4*i`` over ``x``). An
``extern __shared__`` buffer re-typed to a type of unknown size (``T`` unbound) is measured
in that type. Element types go through ``typedef``/``using`` and through template
parameters that every instantiation, launch and call in the unit binds to one type
(otherwise they keep the parameter's name).

Not read, knowingly: registers and local arrays (``float acc[4][4]``, a local union) are
left out, not reported; a device function's pointer parameters have space ``"unknown"``
(the caller decides); a pointer passed to another function is that function's business;
``float& r = x[i]`` is a read at its binding; ``v4[i].x = a`` is a write at the vector's
width; ``break``/``continue`` are not seen by the advance count. A pointer chosen by a
condition, re-assigned in a loop, advanced under a condition or in a loop of unknown trip
count, or stored in an array of pointers keeps its base when every choice shares it, with
``index=None``; one loaded from memory or held behind ``->`` has no base (space
``"unknown"``); each says why in ``reason``. ``__constant__`` arrays have space
``"constant"``. Nothing raises on odd code.

Layering: :mod:`kltrans.syntax`, the public names of :mod:`kltrans.analysis` and
:mod:`kltrans.model.ops`. Name lookup, typedefs and template bindings are small local
helpers here (the analysis package keeps its own resolver private).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from kltrans.analysis.affine import Affine, affine_explain, affine_of, strip_parens
from kltrans.analysis.loops import loop_of
from kltrans.analysis.smem import type_size
from kltrans.model.launch import template_bindings
from kltrans.model.ops import operations
from kltrans.syntax.cuda import find_functions, head_words

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")
_FUNCS = ("function_definition", "lambda_expression")
_DECLARATORS = ("init_declarator", "pointer_declarator", "array_declarator",
                "reference_declarator", "parenthesized_declarator", "attributed_declarator")
_UNEVALUATED = ("sizeof_expression", "alignof_expression", "decltype", "type_descriptor",
                "template_argument_list")
_RECORDS = ("struct_specifier", "class_specifier", "union_specifier")
_CASTS = ("reinterpret_cast", "static_cast", "const_cast", "bit_cast")
_ATOMICS = {"atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax", "atomicInc",
            "atomicDec", "atomicCAS", "atomicAnd", "atomicOr", "atomicXor"}
_BUILTINS = {"threadIdx", "blockIdx", "blockDim", "gridDim"}
_ONE = Affine.const(1)


@dataclass(frozen=True)
class Access:
    """One load or store of global or shared memory.

    ``mode``: read, write, readwrite (``+=``, ``++``) or atomic; ``space``: global,
    shared, constant or unknown; ``base``: the parameter or array addressed, None when
    unknown; ``elem_type``: the base's element type, resolved; ``view``: the type the
    access moves; ``width``: elements of ``elem_type`` moved; ``index``: the offset into
    ``base`` in elements of ``elem_type`` (None when not affine); ``hint``: a cache hint
    (``ldg``, ``ldcs``, ``stcs`` ...); ``op``: the model's operation doing the access
    (``load.cached``, ``atomic.add``, ``copy.async``); ``reason``: what was not resolved.
    """

    node: "Node" = field(compare=False, repr=False)
    line: int
    column: int
    mode: str
    space: str
    base: str | None
    elem_type: str | None
    width: int | None
    index: Affine | None
    hint: str | None = None
    op: str | None = None
    view: str | None = None
    function: str | None = None
    reason: str | None = None

    @property
    def writes(self) -> bool:
        """Whether the access changes memory (a write, a read-modify-write, an atomic)."""
        return self.mode in ("write", "readwrite", "atomic")


@dataclass(frozen=True)
class _Addr:
    """Where a pointer points: ``offset`` elements into ``base``; ``shape``, the inner
    dimensions of the array it points into (``tile`` of ``tile[N][M]`` has ``(M,)``)."""

    space: str
    base: str | None = None
    elem: str | None = None
    view: str | None = None
    offset: Affine | None = None
    shape: tuple = ()
    reason: str | None = None
    raw: str | None = None  # an extern __shared__ buffer: its declared element type


def _unknown(reason: str, like: _Addr | None = None) -> _Addr:
    """An unknown offset (into ``like``'s base, when it has one)."""
    if like is not None and like.base is not None:
        return replace(like, offset=None, reason=like.reason or reason)
    return _Addr("unknown", reason=reason)


@dataclass(frozen=True)
class _Decl:
    kind: str  # param, local, file, tparam
    name: str
    node: "Node"  # the declaration, parameter declaration or template declaration
    ident: "Node | None" = None
    value: "Node | None" = None
    fn: "Node | None" = None


@dataclass(frozen=True)
class _Site:
    kind: str  # init, assign, advance, other (the address is taken, an odd operator)
    node: "Node"
    rhs: "Node | None" = None
    sign: int = 1
    prefix: bool = True


def accesses(unit: "Unit", fn: "Function") -> list[Access]:
    """Every load and store of global or shared memory in ``fn``, in file order (cached)."""
    return unit.memo(f"model.accesses:{fn.node.id}", lambda u: _Reader(u, fn).run())


def accesses_by_base(unit: "Unit", fn: "Function") -> dict[str | None, list[Access]]:
    """:func:`accesses` grouped by ``base``."""
    out: dict[str | None, list[Access]] = {}
    for a in accesses(unit, fn):
        out.setdefault(a.base, []).append(a)
    return out


class _Reader:
    def __init__(self, unit: "Unit", fn: "Function"):
        self.unit, self.fn = unit, fn
        self.tbind = _template_bindings(unit, fn)
        self.typedefs = unit.memo("model.accesses.typedefs", _typedefs)
        self._sites: dict | None = None
        self.active: set = set()

    def run(self) -> list[Access]:
        u, out = self.unit, []
        ops = {o.node.id: o for o in operations(u)}
        scalars = {d.name for d in u.shared_decls() if not d.dims} | {
            name for name, ds in _file_decls(u).items()
            if head_words(u, ds[-1][0], ds[-1][1]) & {"__device__", "__constant__", "__managed__"}}
        for n in u.walk(self.fn.node):
            t = n.type
            try:
                if t == "call_expression":
                    out.extend(self._call(n, ops.get(n.id)))
                    continue
                if not (t == "subscript_expression" or t == "identifier" and u.text(n) in scalars
                        or t in ("pointer_expression", "field_expression") and
                        self._op(n) in ("*", "->")) or self._address_of(n):
                    continue
                a, width = self._access(n), 0
                if a is not None and n.type == "field_expression":
                    f = u.text(n.child_by_field_name("field"))
                    a, width = replace(a, reason=a.reason or f"a member `{f}` of {a.view}: its "
                                       "place in the struct is not modelled"), None
                if a is not None and a.space != "local":
                    out.append(self._emit(n, self._mode(n), a, width=width))
            except RecursionError:  # pragma: no cover - defensive
                out.append(self._emit(n, "read", _unknown("too deeply nested to follow")))
        return sorted(out, key=lambda a: (a.node.start_byte, a.mode))

    def _access(self, n: "Node") -> _Addr | None:
        """The element a subscript, dereference, ``->`` or scalar name moves, or None."""
        t = n.type
        if t == "subscript_expression":
            got = self._subscript(n, 0)
            return None if got is None or got[1] else got[0]
        if t == "pointer_expression" and self._op(n) == "*" or \
                t == "field_expression" and self._op(n) == "->":
            return self.addr(n.child_by_field_name("argument"), 0)
        if t == "identifier":
            p, d = n.parent, _lookup(self.unit, n, self.unit.text(n))
            if d is None or d.ident is None or d.ident.id == n.id or p.type == "call_expression" \
                    and p.child_by_field_name("function") == n:
                return None
            space, ty, ptr, dims = self._declared(d)
            if space not in ("local", "unknown") and not ptr and not dims:
                return _Addr(space, d.name, ty, ty, Affine())
        return None

    def _op(self, n: "Node") -> str:
        o = n.child_by_field_name("operator")
        return self.unit.text(o) if o is not None else ""

    def _lvalue_parent(self, n: "Node") -> tuple["Node", "Node | None"]:
        """(``n`` through parentheses and ``.member``, its parent)."""
        c, p = n, n.parent
        while p is not None and (p.type == "parenthesized_expression" or p.type ==
                                 "field_expression" and self._op(p) == "." and
                                 p.child_by_field_name("argument") == c):
            c, p = p, p.parent
        return c, p

    def _address_of(self, n: "Node") -> bool:
        """``n`` is under ``&`` (an address, nothing moves) or unevaluated (``sizeof``)."""
        _, p = self._lvalue_parent(n)
        if p is not None and p.type == "pointer_expression" and self._op(p) == "&":
            return True
        while p is not None and p.type not in _FUNCS:
            if p.type in _UNEVALUATED:
                return True
            p = p.parent
        return False

    def _mode(self, n: "Node") -> str:
        c, p = self._lvalue_parent(n)
        if p is not None and p.type == "assignment_expression" and \
                p.child_by_field_name("left") == c:
            return "write" if self._op(p) == "=" else "readwrite"
        return "readwrite" if p is not None and p.type == "update_expression" else "read"

    def _emit(self, node, mode, a: _Addr, hint=None, op=None, width=0) -> Access:
        loc = self.unit.location(node.start_byte)
        width = self._ratio(a.view, a.elem) if width == 0 else width
        reason = a.reason or (f"the size of {a.view} in {a.elem} elements is unknown"
                              if width is None else None)
        return Access(node, loc.line, loc.column, mode, a.space, a.base, a.elem, width,
                      a.offset, hint, op, a.view, self.fn.name, reason)

    def _call(self, n: "Node", op) -> list[Access]:
        """The accesses a call makes: cached loads and stores, atomics, async copies."""
        out = []
        if op is not None and op.name == "copy.async":
            size = op.operands.get("size")
            nbytes = affine_of(self.unit, size) if size is not None else None
            nb = nbytes.value() if nbytes is not None else None
            for key, mode in (("src", "read"), ("dst", "write")):
                a = self.addr(op.operands.get(key), 0)
                if a is None or a.space == "local":
                    continue
                es = type_size(self.unit, a.elem) if a.elem else None
                w = nb // es if nb is not None and es and nb >= es and nb % es == 0 else None
                a = replace(a, view=None, reason=a.reason or (
                    None if w else "the copy's size in elements is unknown"))
                out.append(self._emit(n, mode, a, op=op.name, width=w))
            return out
        f, args = n.child_by_field_name("function"), n.child_by_field_name("arguments")
        name = self.unit.text(f).split("::")[-1] if f is not None else ""
        atomic = name.replace("_block", "").replace("_system", "")
        if op is not None and (op.name.startswith("atomic.") or op.name.endswith(".cached")):
            mode = {"load.cached": "read", "store.cached": "write"}.get(op.name, "atomic")
            hint = op.spelling.split("::")[-1].lstrip("_") if mode != "atomic" else None
            a, opname = self.addr(op.operands.get("address"), 0), op.name
        elif op is None and atomic in _ATOMICS and args is not None and args.named_child_count:
            mode, hint, opname = "atomic", None, f"atomic.{atomic[6:].lower()}"
            a = self.addr(args.named_children[0], 0)
        else:
            return out
        if a is not None and a.space != "local":
            out.append(self._emit(n, mode, a, hint, opname))
        return out

    # ------------------------------------------------------------------ addresses
    def addr(self, node: "Node | None", depth: int) -> _Addr | None:
        """Where a pointer-valued expression points; None when it is not a pointer."""
        node = strip_parens(node) if node is not None else None
        if node is None:
            return None
        if depth > 24:
            return _unknown("the pointer chain is too long")
        u, t, op = self.unit, node.type, self._op(node)
        arg = node.child_by_field_name("argument")
        text = _short(u, node)
        if t == "identifier":
            return self._ident_addr(node, depth)
        if t == "binary_expression" and op in ("+", "-"):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            la = self.addr(left, depth + 1)
            ra = self.addr(right, depth + 1) if op == "+" else None
            if la is not None and (ra is None or la.space != "unknown"):
                return self._shift(la, right, -1 if op == "-" else 1)
            return self._shift(ra, left, 1) if ra is not None else None
        if t == "pointer_expression":
            if op == "&":
                return self._lvalue_addr(arg, depth + 1)
            return self.addr(arg, depth + 1) and _unknown(f"`{text}` is a pointer loaded "
                                                          "from memory")
        if t == "cast_expression":
            base, ptr = self._descriptor(node.child_by_field_name("type"))
            return self._retype(self.addr(node.child_by_field_name("value"), depth + 1),
                                base, ptr, text) if ptr else None
        if t == "call_expression":
            return self._call_addr(node, depth)
        if t == "subscript_expression":
            got = self._subscript(node, depth + 1)
            if got is None or got[1]:
                return got and got[0]
            why = f"`{text}` is a pointer loaded from memory"
            return self._pointer_array(node, why, depth) if got[0].space == "local" \
                else _unknown(why)
        if t == "conditional_expression":
            a = self.addr(node.child_by_field_name("consequence"), depth + 1)
            b = self.addr(node.child_by_field_name("alternative"), depth + 1)
            if a == b:
                return a
            same = a is None or b is None or (a.space, a.base) == (b.space, b.base)
            return _unknown(f"the pointer `{text}` is chosen by a condition",
                            a or b if same else None)
        if t == "field_expression":
            return self._field_addr(node)
        if t == "update_expression" or t == "assignment_expression" and op in ("+=", "-="):
            # *p++, *(p += 4): the step is counted or not by _times_before
            return self.addr(arg if arg is not None else node.child_by_field_name("left"),
                             depth + 1)
        if t in ("number_literal", "null", "nullptr", "true", "false", "char_literal",
                 "sizeof_expression", "unary_expression"):
            return None
        return _unknown(f"cannot follow the pointer `{text}`")

    def _step(self, a: _Addr) -> Affine | None:
        """Elements of the base one step of the pointer moves."""
        r = self._ratio(a.view, a.elem)
        if r is None:
            return None
        s = Affine.const(r)
        for d in a.shape:
            s = s * d
        return s

    def _shift(self, a: _Addr, k: "Node", sign: int) -> _Addr:
        if a.offset is None or a.space == "local":
            return a
        step = self._step(a)
        if step is None:
            return _unknown(f"the size of {a.view} in {a.elem} elements is unknown", a)
        v, why = affine_explain(self.unit, k)
        return _unknown(why or "not affine", a) if v is None else \
            replace(a, offset=a.offset + v * step * sign)

    def _subscript(self, n: "Node", depth: int) -> tuple[_Addr, bool] | None:
        """(where ``a[i]`` is, whether it is a row of an array rather than an element)."""
        a = self.addr(n.child_by_field_name("argument"), depth + 1)
        if a is None:
            return None
        idx = n.child_by_field_name("indices") or n.child_by_field_name("index")
        inner = [c for c in idx.named_children if c.type != "comment"] if idx is not None else []
        if len(inner) != 1:
            return _unknown("a subscript with several indices", a), bool(a.shape)
        return replace(self._shift(a, inner[0], 1), shape=a.shape[1:]), bool(a.shape)

    def _lvalue_addr(self, node: "Node | None", depth: int) -> _Addr | None:
        """The address of an lvalue: ``&x[i]``, ``&s``, ``&*p``, ``&x[i].m``."""
        node = strip_parens(node) if node is not None else None
        t = node.type if node is not None else None
        if t == "subscript_expression":
            got = self._subscript(node, depth + 1)
            return got and got[0]
        if t == "pointer_expression" and self._op(node) == "*":
            return self.addr(node.child_by_field_name("argument"), depth + 1)
        if t == "identifier":
            d = _lookup(self.unit, node, self.unit.text(node))
            if d is None:
                return _unknown(f"`{self.unit.text(node)}` is not declared in the unit")
            space, ty, ptr, dims = self._declared(d)
            return self._ident_addr(node, depth) if dims and not ptr else \
                _Addr(space, d.name, ty, ty, Affine())
        if t == "field_expression":
            arg = node.child_by_field_name("argument")
            inner = self._lvalue_addr(arg, depth + 1) if self._op(node) == "." else \
                self.addr(arg, depth + 1)
            return inner and _unknown(f"`{_short(self.unit, node)}` is the address of a "
                                      "member", inner)
        return node and _unknown(f"cannot take the address of `{_short(self.unit, node)}`")

    def _retype(self, inner: _Addr | None, base: str, ptr: int, text: str) -> _Addr:
        if inner is None:
            return _unknown(f"`{text}` makes a pointer of an integer")
        view = base + "*" * (ptr - 1)
        if inner.raw and inner.offset == 0:  # storage of unknown size ratio: in the view
            elem = view if self._ratio(view, inner.raw) is None else inner.raw
            return replace(inner, elem=elem, view=view, shape=())
        return replace(inner, view=view, shape=())

    def _call_addr(self, node: "Node", depth: int) -> _Addr | None:
        """A cast, or a zero-argument accessor returning a pointer (a shared buffer)."""
        u = self.unit
        f, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        argl = [a for a in args.named_children if a.type != "comment"] if args else []
        targs = f.child_by_field_name("arguments") if f is not None and \
            f.type == "template_function" else None
        name = u.text(f.child_by_field_name("name") if targs is not None else f).split("::")[-1] \
            if f is not None else ""
        targ = targs.named_children[0] if targs is not None and targs.named_children else None
        if name in _CASTS and len(argl) == 1 and targ is not None:
            base, ptr = self._descriptor(targ)
            return self._retype(self.addr(argl[0], depth + 1), base, ptr, _short(u, node)) \
                if ptr else None
        got = [] if argl else [self.addr(r, depth + 1) for r in _returned(
            u, name, self._resolve(u.text(targ))[0] if targ is not None else None)]
        if got and all(g is not None and (g.space, g.base, g.offset) ==
                       (got[0].space, got[0].base, got[0].offset) for g in got):
            return got[0]  # every return gives the same buffer
        return _unknown(f"`{_short(u, node)}` returns a pointer the model does not follow")

    def _pointer_array(self, node: "Node", why: str, depth: int) -> _Addr:
        """An element of a local array of pointers (``rows[r]``): its base when every
        pointer stored in the array points into the same one."""
        u = self.unit
        arr = strip_parens(node.child_by_field_name("argument"))
        d = _lookup(u, arr, u.text(arr)) if arr is not None and arr.type == "identifier" else None
        if d is None or d.ident is None:
            return _unknown(why)
        vals = [d.value] if d.value is not None else []
        if vals and vals[0].type == "initializer_list":
            vals = list(vals[0].named_children)
        for n in u.nodes_of_type("assignment_expression", within=self.fn.node):
            left = strip_parens(n.child_by_field_name("left"))
            a = strip_parens(left.child_by_field_name("argument")) \
                if left is not None and left.type == "subscript_expression" else None
            if self._op(n) == "=" and a is not None and u.text(a) == d.name:
                vals.append(n.child_by_field_name("right"))
        return self._common(vals, f"`{_short(u, node)}`: which pointer stored in `{d.name}` "
                                  "is unknown", depth) or _unknown(why)

    def _common(self, values: list, reason: str, depth: int) -> _Addr | None:
        """Unknown within one base, when every value points into the same one."""
        got = [self.addr(v, depth + 1) if v is not None else None for v in values]
        if got and all(g is not None and g.base and (g.space, g.base) ==
                       (got[0].space, got[0].base) for g in got):
            return _unknown(reason, got[0])
        return None

    def _field_addr(self, node: "Node") -> _Addr | None:
        """``args.data``: a pointer member of a by-value kernel argument points to global
        memory; a member array of a local is a register; ``p->x`` is loaded from memory."""
        u = self.unit
        arg, fld = strip_parens(node.child_by_field_name("argument")), \
            node.child_by_field_name("field")
        text = _short(u, node)
        if arg is None or arg.type != "identifier" or fld is None or self._op(node) != ".":
            return _unknown(f"a pointer read through `{text}`")
        if u.text(arg) in _BUILTINS:
            return None
        d = _lookup(u, arg, u.text(arg))
        got = _member(u, self._resolve(_type_text(u, d.node))[0], u.text(fld)) \
            if d is not None and d.kind != "tparam" else None
        if got is not None and not got[1]:
            return _Addr("local") if got[2] else None
        if d is None or d.kind != "param" or not self.fn.is_kernel or got is None:
            return _unknown(f"a pointer held in `{text}`")
        elem, extra = self._resolve(got[0])
        elem += "*" * (got[1] + extra - 1)
        return _Addr("global", text, elem, elem, Affine())

    # ------------------------------------------------------------------ variables
    def _ident_addr(self, node: "Node", depth: int) -> _Addr | None:
        u, name = self.unit, self.unit.text(node)
        d = _lookup(u, node, name)
        if d is None:
            return None if name in ("NULL", "nullptr") else \
                _unknown(f"`{name}` is not declared in the unit")
        space, ty, ptr, dims = self._declared(d)
        if d.kind == "tparam" or not ptr and not dims:
            return None
        why = None if self.fn.is_kernel or d.kind != "param" else \
            "a parameter of a device function: its caller decides the memory"
        if ty == "?":
            return _unknown(f"`{name}` points to arrays: not modelled")
        if dims and ptr and d.kind != "param":
            return _Addr("local") if space == "local" else _unknown(f"`{name}` holds pointers")
        shape = tuple(self._dim(n, i, name) for i, n in enumerate(dims[1:], 1))
        elem = ty + "*" * (ptr - (0 if dims else 1))
        raw = ty if space == "shared" and "extern" in head_words(u, d.node, d.ident) else None
        init = _Addr(space, name, elem, elem, Affine(), shape, why, raw)
        if d.kind == "param" or d.kind == "local" and not dims:
            return self._var_value(d, init if d.kind == "param" else None, node, depth)
        return init if dims else _unknown(f"`{name}` is a pointer variable of the file")

    def _declared(self, d: _Decl) -> tuple[str, str, int, list]:
        """(space, element type, pointer depth, array dimension nodes) of a declaration."""
        if d.kind == "tparam" or d.ident is None:
            return "unknown", "?", 0, []
        ptr, dims, p = 0, [], d.ident.parent
        while p is not None and p.type in _DECLARATORS:
            if p.type == "pointer_declarator":
                ptr += 1
            elif p.type == "array_declarator":
                if ptr:
                    return "unknown", "?", 1, []  # a pointer to an array: not modelled
                dims.append(p.child_by_field_name("size"))
            p = p.parent
        ty, extra = self._resolve(_type_text(self.unit, d.node))
        words = head_words(self.unit, d.node, d.ident)
        space = "shared" if "__shared__" in words else "constant" if "__constant__" in words \
            else ("global" if self.fn.is_kernel else "unknown") if d.kind == "param" \
            else ("global" if words & {"__device__", "__managed__"} else "unknown") \
            if d.kind == "file" else "local"
        return space, ty, ptr + extra, dims

    def _dim(self, n: "Node | None", i: int, name: str) -> Affine:
        a = affine_of(self.unit, n) if n is not None else None
        return a if a is not None else Affine.sym(f"dim{i}({name})")

    def _var_value(self, d: _Decl, init: _Addr | None, use: "Node", depth: int) -> _Addr:
        """A pointer variable at ``use``: its reaching definition plus every advance that
        has run since (``init``: a parameter's value on entry)."""
        u, key = self.unit, (d.ident.id, use.id)
        sites = self.sites().get(d.ident.id, [])
        if key in self.active:
            return _unknown(f"`{d.name}` is defined through itself")
        if init is not None and not sites:
            return init
        body = d.fn.child_by_field_name("body") if d.fn is not None else None
        entry = _Site("init", body if init is not None and body is not None else d.node, d.value)
        plain = [entry] + [s for s in sites if s.kind == "assign"]
        self.active.add(key)
        try:
            before = [s for s in plain if s is entry and init is not None or
                      s.node.start_byte <= use.start_byte and not _encloses(s.node, use)]
            D = max(before, key=lambda s: s.node.start_byte) if before else None
            d_loops = {lp.id for lp in _loops_of(D.node)} if D is not None else set()
            why = f"the address of `{d.name}` is taken" if any(
                s.kind == "other" for s in sites) else \
                f"`{d.name}` has no value before line {_line(u, use)}" if D is None else \
                f"`{d.name}` is assigned under a condition" if not _dominates(D, use) else \
                f"`{d.name}` is re-assigned in a loop" if any(
                    o is not D and _in_loop(lp, o.node) for o in plain for lp in _loops_of(use)
                    if lp.id not in d_loops) else None
            if why is not None:
                return _unknown(why, init or self._common(
                    [s.rhs for s in plain if s.rhs is not None], why, depth))
            val = init if D is entry and init is not None else \
                self.addr(D.rhs, depth + 1) if D.rhs is not None else None
            if val is None:
                return _unknown(f"`{d.name}` holds no pointer the model follows")
            _, ty, ptr, _ = self._declared(d)
            if init is None and ptr and ty not in ("auto", "decltype(auto)"):
                val = self._retype(val, ty, ptr, d.name)  # the declared pointee
            advances = [s for s in sites if s.kind == "advance" and
                        s.node.start_byte > D.node.start_byte]
            if not advances or val.offset is None or val.space == "local":
                return val
            step = self._step(val)
            if step is None:
                return _unknown(f"the size of {val.view} in {val.elem} elements is unknown", val)
            total = val.offset
            for s in advances:
                amount = affine_of(u, s.rhs) if s.rhs is not None else _ONE
                terms, why = self._times_before(s, use, d_loops) if amount is not None else \
                    (None, "not affine")
                if terms is None:
                    return _unknown(f"`{_short(u, s.node)}`: {why}", val)
                for num, den, fallback, mult in terms:
                    k = mult * amount * step * s.sign
                    total = total + _div_or(num * k, den, fallback * k)
            return replace(val, offset=total)
        finally:
            self.active.discard(key)

    def sites(self) -> dict:
        """Declaration identifier id -> the places the function changes that variable."""
        if self._sites is None:
            u, self._sites = self.unit, {}
            for n in u.walk(self.fn.node):
                op = self._op(n)
                if n.type == "assignment_expression":
                    left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
                    site = _Site("advance", n, right, -1 if op == "-=" else 1) \
                        if op in ("+=", "-=") else self._assign(n, left, right) if op == "=" \
                        else _Site("other", n)
                    ident = left
                elif n.type == "update_expression":
                    ident = n.child_by_field_name("argument")
                    site = _Site("advance", n, None, -1 if op == "--" else 1,
                                 ident is None or n.children[0].id != ident.id)
                elif n.type == "pointer_expression" and op == "&":
                    ident, site = n.child_by_field_name("argument"), _Site("other", n)
                else:
                    continue
                ident = strip_parens(ident)
                d = _lookup(u, ident, u.text(ident)) if ident is not None and \
                    ident.type == "identifier" else None
                if d is not None and d.ident is not None:
                    self._sites.setdefault(d.ident.id, []).append(site)
        return self._sites

    def _assign(self, n: "Node", left: "Node", right: "Node") -> _Site:
        """``p = p + k`` is an advance; any other ``p = e`` a plain assignment."""
        u, left, r = self.unit, strip_parens(left), strip_parens(right)
        if r is not None and r.type == "binary_expression" and self._op(r) in ("+", "-"):
            a, b = r.child_by_field_name("left"), r.child_by_field_name("right")
            if u.text(strip_parens(a)) == u.text(left):
                return _Site("advance", n, b, -1 if self._op(r) == "-" else 1)
            if self._op(r) == "+" and u.text(strip_parens(b)) == u.text(left):
                return _Site("advance", n, a, 1)
        return _Site("assign", n, right)

    def _times_before(self, s: _Site, use: "Node", d_loops: set):
        """How often advance ``s`` has run when ``use`` runs, since the definition (whose
        loops are ``d_loops``): (numerator, divisor, fallback, multiplier) terms, or
        (None, why)."""
        u, excl = self.unit, []
        if _encloses(s.node, use):  # *p++ reads before the step, *++p after it
            lca, same = s.node, s.prefix
        else:
            c, p = s.node, s.node.parent
            while p is not None and not _encloses(p, use):
                if p.type in _LOOPS and _in_iteration(p, c) and p.id not in d_loops:
                    excl.append(p)
                if _conditional(self, p, c):
                    return None, f"runs under a condition (line {_line(u, p)})"
                c, p = p, p.parent
            if p is None:
                return None, "not in the function of its use"
            lca, same = p, _runs_before(p, c, use)
        common = [lp for lp in ([lca] if lca.type in _LOOPS else []) + _loops_of(lca)
                  if lp.id not in d_loops and _in_loop(lp, s.node) and _in_loop(lp, use)]
        c, p = lca, lca.parent
        while common and p is not None and p.id != common[-1].id:
            if _conditional(self, p, c):
                return None, f"runs under a condition (line {_line(u, p)})"
            c, p = p, p.parent
        if not same and not common:
            return [], None
        mult, terms, ids = _ONE, [], [lp.id for lp in common]
        for lp in excl + [None] + common:  # s's own loops, then the loops around both
            if lp is None:
                terms += [(_ONE, _ONE, _ONE, mult)] if same else []
                continue
            if lp.id in ids:
                terms.append(self._iteration(lp) + (mult,))
            if [lp.id] != ids[-1:]:
                info = loop_of(u, lp)
                if info is None or info.trip_count is None:
                    return None, f"in a loop of unknown trip count (line {_line(u, lp)})"
                mult = mult * info.trip_count
        return terms, None

    def _iteration(self, loop: "Node") -> tuple[Affine, Affine, Affine]:
        """(numerator, divisor, fallback symbol) of the iteration number of a loop."""
        lp = loop_of(self.unit, loop)
        fallback = Affine.sym(f"#iter@{_line(self.unit, loop)}")
        if lp is None or lp.var is None or lp.init is None or lp.step is None or lp.step == 0:
            return fallback, _ONE, fallback
        d = _lookup(self.unit, lp.var_node if lp.var_node is not None else loop, lp.var)
        if d is not None and any(self._declared(d)[2:]):
            return fallback, _ONE, fallback  # a pointer as the loop variable
        v = affine_of(self.unit, lp.var_node) if lp.var_node is not None else None
        v = v if v is not None and v.symbols() == {lp.var} else Affine.sym(lp.var)
        return v - lp.init, lp.step, Affine.sym(f"#iter({lp.var})")

    # ---------------------------------------------------------------------- types
    def _descriptor(self, td: "Node | None") -> tuple[str, int]:
        """(resolved base type, pointer depth) of a type descriptor (``const float4*``)."""
        ty = td.child_by_field_name("type") if td is not None else None
        if ty is None:
            return "?", 0
        base, extra = self._resolve(self.unit.text(ty))
        return base, extra + sum(1 for x in self.unit.walk(td)
                                 if x.type == "abstract_pointer_declarator")

    def _resolve(self, text: str) -> tuple[str, int]:
        """A type through template bindings and typedefs: (type, extra pointer depth)."""
        t, extra = " ".join(text.split()), 0
        for _ in range(12):
            for q in ("struct ", "class ", "union ", "typename ", "const ", "volatile "):
                t = t[len(q):] if t.startswith(q) else t
            if t in self.tbind:
                t = self.tbind[t]
            elif t in self.typedefs:
                t, p = self.typedefs[t]
                extra += p
            else:
                break
        return t, extra

    def _ratio(self, view: str | None, elem: str | None) -> int | None:
        """Elements of ``elem`` in one ``view`` (None when not a whole known number)."""
        if view is None or elem is None or view == elem:
            return None if view is None or elem is None else 1
        a, b = type_size(self.unit, view), type_size(self.unit, elem)
        return a // b if a is not None and b and a % b == 0 else None


# =================================================================== tree helpers
def _short(unit: "Unit", node: "Node") -> str:
    t = " ".join(unit.text(node).split())
    return t if len(t) <= 60 else t[:57] + "..."


def _line(unit: "Unit", node: "Node") -> int:
    return unit.location(node.start_byte).line


def _encloses(a: "Node", b: "Node") -> bool:
    """``a`` is ``b`` or an ancestor of it."""
    p = b
    while p is not None and p.start_byte >= a.start_byte:
        if p.id == a.id:
            return True
        p = p.parent
    return False


def _in_iteration(loop: "Node", child: "Node") -> bool:
    """Whether ``child`` of ``loop`` runs on every iteration (not a for's initializer, not
    a range-for's range)."""
    fields = ("initializer", "right") if loop.type in ("for_statement", "for_range_loop") else ()
    return all((x := loop.child_by_field_name(f)) is None or x.id != child.id for f in fields)


def _in_loop(loop: "Node", node: "Node") -> bool:
    c = node
    while c.parent is not None and c.parent.id != loop.id:
        c = c.parent
    return c.parent is not None and _in_iteration(loop, c)


def _loops_of(node: "Node") -> list["Node"]:
    """The loops whose every iteration runs ``node``, innermost first."""
    out, c, p = [], node, node.parent
    while p is not None and p.type not in _FUNCS:
        if p.type in _LOOPS and _in_iteration(p, c):
            out.append(p)
        c, p = p, p.parent
    return out


def _conditional(r: _Reader, p: "Node", c: "Node") -> bool:
    """Whether ``c``, a child of ``p``, runs only under a condition."""
    if p.type in ("if_statement", "conditional_expression"):
        cond = p.child_by_field_name("condition")
        return cond is None or cond.id != c.id
    if p.type == "binary_expression" and r._op(p) in ("&&", "||"):
        return p.child_by_field_name("right") == c
    return p.type in ("switch_statement", "case_statement")


def _runs_before(lca: "Node", cs: "Node", use: "Node") -> bool:
    """Whether the part ``cs`` of ``lca`` runs before the part holding ``use``, in one
    pass (a for runs condition, body, then update; a do its body first)."""
    cu = use
    while cu.parent is not None and cu.parent.id != lca.id:
        cu = cu.parent
    order = {"for_statement": ("initializer", "condition", "body", "update"),
             "while_statement": ("condition", "body"),
             "do_statement": ("body", "condition")}.get(lca.type, ())
    rank = {x.id: i for i, f in enumerate(order) if (x := lca.child_by_field_name(f))}
    if cs.id in rank and cu.id in rank:
        return rank[cs.id] < rank[cu.id]
    return cs.start_byte < cu.start_byte


def _dominates(d: _Site, use: "Node") -> bool:
    """A definition that always runs before ``use``: its statement sits in a block, or a
    for's initializer, enclosing ``use`` (a parameter's entry: the body)."""
    n, p = d.node, d.node.parent
    if d.kind == "init":
        p = n if n.type == "compound_statement" else p
        return p is not None and p.type in ("compound_statement", "for_statement") and \
            _encloses(p, use)
    while p is not None and p.type == "parenthesized_expression":
        n, p = p, p.parent
    if p is not None and p.type == "expression_statement":
        return p.parent is not None and p.parent.type == "compound_statement" and \
            _encloses(p.parent, use)
    init = p.child_by_field_name("initializer") if p is not None and \
        p.type == "for_statement" else None
    return init is not None and init.id == n.id and _encloses(p, use)


def _div_or(a: Affine, d: Affine, fallback: Affine) -> Affine:
    """``a / d`` when every term of ``a`` divides by the monomial ``d``, else ``fallback``."""
    q = a.div_monomial(d)
    return fallback if q is None else q


def _ident_of(node: "Node | None", stop=("identifier",)) -> "Node | None":
    """The identifier a declarator declares."""
    while node is not None and node.type not in stop:
        nxt = node.child_by_field_name("declarator")
        if nxt is None:
            named = [c for c in node.named_children if c.type != "type_qualifier"]
            nxt = named[-1] if named and node.type in _DECLARATORS else None
        node = nxt
    return node


def _declarators(unit: "Unit", decl: "Node"):
    """(identifier, value) for each name a declaration introduces."""
    for d in decl.children_by_field_name("declarator"):
        ident = _ident_of(d) if d.type in _DECLARATORS + ("identifier",) else None
        if ident is not None:
            yield ident, d.child_by_field_name("value") if d.type == "init_declarator" else None


def _lookup(unit: "Unit", use: "Node", name: str) -> _Decl | None:
    """What the identifier ``name`` at ``use`` declares: earlier declarations of the
    enclosing blocks, for initializers, parameters, template parameters, then the file."""
    c, p = use, use.parent
    while p is not None:
        t = p.type
        scope = [ch for ch in p.named_children if ch.type == "declaration" and
                 ch.start_byte < c.start_byte] if t == "compound_statement" else \
            [p] if t == "declaration" and p.parent is not None and \
            p.parent.type == "for_statement" else []
        if t == "for_statement" and (x := p.child_by_field_name("initializer")) is not None \
                and x.type == "declaration" and x.id != c.id:
            scope = [x]
        for decl in reversed(scope):
            for ident, value in _declarators(unit, decl):
                if unit.text(ident) == name and ident.start_byte <= use.start_byte:
                    return _Decl("local", name, decl, ident, value, _fn_of(p))
        if t in _FUNCS:
            d = p.child_by_field_name("declarator")
            while d is not None and d.type not in ("function_declarator",
                                                   "abstract_function_declarator"):
                d = d.child_by_field_name("declarator")
            pl = d.child_by_field_name("parameters") if d is not None else None
            for prm in pl.named_children if pl is not None else ():
                ident = _ident_of(prm.child_by_field_name("declarator"))
                if ident is not None and unit.text(ident) == name:
                    return _Decl("param", name, prm, ident, None, p)
            tp = p.parent
            pl = tp.child_by_field_name("parameters") if tp is not None and \
                tp.type == "template_declaration" else None
            for x in pl.named_children if pl is not None else ():
                nm = x.child_by_field_name("name") or _ident_of(
                    x.child_by_field_name("declarator")) or next(
                    (y for y in x.named_children if y.type == "type_identifier"), None)
                if nm is not None and unit.text(nm) == name:
                    return _Decl("tparam", name, tp)
            if t == "function_definition":
                break
        c, p = p, p.parent
    got = _file_decls(unit).get(name)
    if not got:
        return None
    decl, ident, value = ([g for g in got if g[0].start_byte < use.start_byte] or got)[-1]
    return _Decl("file", name, decl, ident, value)


def _fn_of(node: "Node") -> "Node | None":
    while node is not None and node.type not in _FUNCS:
        node = node.parent
    return node


def _file_decls(unit: "Unit") -> dict:
    """name -> [(declaration, identifier, value)] of the declarations outside functions."""
    def compute(u):
        out: dict = {}
        stack = [u.root]
        while stack:
            n = stack.pop()
            if n.type == "declaration":
                for ident, value in _declarators(u, n):
                    out.setdefault(u.text(ident), []).append((n, ident, value))
            elif n.type not in _FUNCS + _RECORDS:
                stack.extend(reversed(n.children))
        return out
    return unit.memo("model.accesses.file_decls", compute)


def _type_text(unit: "Unit", decl: "Node") -> str:
    ty = decl.child_by_field_name("type")
    if ty is not None and ty.type in _RECORDS:
        ty = ty.child_by_field_name("name")
    return unit.text(ty) if ty is not None else "?"


def typedefs(unit: "Unit") -> dict[str, tuple[str, int]]:
    """name -> (type, pointer depth) of every ``typedef`` and ``using`` alias of the unit."""
    return unit.memo("model.accesses.typedefs", _typedefs)


def _typedefs(unit: "Unit") -> dict[str, tuple[str, int]]:
    """name -> (type, pointer depth) of every ``typedef`` and ``using`` alias."""
    out = {}
    for n in unit.nodes_of_type("type_definition"):
        for d in n.children_by_field_name("declarator"):
            ptr = 0
            while d is not None and d.type == "pointer_declarator":
                ptr, d = ptr + 1, d.child_by_field_name("declarator")
            if d is not None and d.type == "type_identifier":
                out.setdefault(unit.text(d), (" ".join(_type_text(unit, n).split()), ptr))
    for n in unit.nodes_of_type("alias_declaration"):
        name, td = n.child_by_field_name("name"), n.child_by_field_name("type")
        ty = td.child_by_field_name("type") if td is not None else None
        if name is not None and ty is not None:
            ptr = sum(1 for x in unit.walk(td) if x.type == "abstract_pointer_declarator")
            out.setdefault(unit.text(name), (" ".join(unit.text(ty).split()), ptr))
    return out


def _template_bindings(unit: "Unit", fn: "Function") -> dict[str, str]:
    """Type template parameters of ``fn`` that every explicit instantiation, launch and
    call of it in the unit binds to one type (or that have a default and no binding); the
    launch contract's instantiation (``// kltrans: launch k<float> ...``) is one launch."""
    names = {tp.name for tp in fn.template_params if tp.kind == "type" and tp.name}
    seen: dict[str, set[str]] = {}
    for k, v in template_bindings(unit, fn).items():
        if k in names:
            seen.setdefault(k, set()).add(" ".join(v.split()))
    for n in unit.nodes_of_type("template_function") if names else ():
        nm, args, p = n.child_by_field_name("name"), n.child_by_field_name("arguments"), n.parent
        if nm is None or args is None or unit.text(nm).split("::")[-1] != fn.name or \
                _encloses(fn.node, n) or not (p.type == "function_declarator" or
                                              p.type == "call_expression" and
                                              p.child_by_field_name("function") == n):
            continue
        for tp, a in zip(fn.template_params, [a for a in args.named_children
                                              if a.type != "comment"]):
            if tp.name in names:
                seen.setdefault(tp.name, set()).add(" ".join(unit.text(a).split()))
    out = {}
    for tp in fn.template_params:
        vals = seen.get(tp.name, set())
        if tp.name in names and len(vals) == 1 and not vals & names:
            out[tp.name] = next(iter(vals))
        elif tp.name in names and not vals and tp.default:
            out[tp.name] = tp.default
    return out


def _returned(unit: "Unit", name: str, targ: str | None) -> list["Node"]:
    """What the zero-argument functions ``name`` return, or the conversion operators of
    the struct ``name`` (its specialization for ``targ`` when the unit has one)."""
    bodies = [f.node for f in find_functions(unit) if f.name == name and not f.params]
    primary, special = [], []
    for s in unit.nodes_of_type("struct_specifier") + unit.nodes_of_type("class_specifier"):
        nm = s.child_by_field_name("name")
        if nm is None or unit.text(nm).split("<")[0].strip() != name:
            continue
        ops = [f for f in unit.nodes_of_type("function_definition", within=s)
               if (d := f.child_by_field_name("declarator")) is not None and
               d.type == "operator_cast"]
        if nm.type != "template_type":
            primary += ops
        elif targ is not None and "".join(unit.text(nm).split()) == f"{name}<{targ}>".replace(
                " ", ""):
            special += ops
    rets = [r for b in bodies + (special or primary)
            for r in unit.nodes_of_type("return_statement", within=b)]
    return [r.named_children[0] for r in rets] if all(r.named_children for r in rets) else []


def _member(unit: "Unit", record: str, member: str) -> tuple[str, int, list] | None:
    """(type, pointer depth, array dimensions) of a member of a struct or union."""
    for s in [s for t in _RECORDS for s in unit.nodes_of_type(t)]:
        nm = s.child_by_field_name("name")
        if nm is None or unit.text(nm) != record.split("::")[-1]:
            continue
        for f in unit.nodes_of_type("field_declaration", within=s):
            for d in f.children_by_field_name("declarator"):
                ptr, dims, node = 0, [], d
                while node is not None and node.type != "field_identifier":
                    ptr += node.type == "pointer_declarator"
                    if node.type == "array_declarator":
                        dims.append(node.child_by_field_name("size"))
                    node = node.child_by_field_name("declarator")
                if node is not None and unit.text(node) == member:
                    return _type_text(unit, f), ptr, dims
    return None
