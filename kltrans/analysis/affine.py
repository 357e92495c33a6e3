"""Index expressions as integer polynomials over symbols.

:func:`affine_of` reads a CUDA expression as an :class:`Affine`: a polynomial with integer
coefficients over *symbols* — ``threadIdx.x``, ``blockIdx.y``, ``blockDim.x``, parameters
(``n``), template parameters (``BLOCK``), induction variables (``k``) and *opaque* terms
(``"(n + 3) / 4"``, ``"min(n, 64)"``). Despite the name it is not restricted to degree 1:
``blockIdx.x * blockDim.x`` is a degree-2 monomial, which keeps the form exact in the thread
indices (``coeff("threadIdx.x")`` is what a coalescing check needs).

How an expression is read:

- integer literals (``4u``, ``0x10``, ``1'000``), ``warpSize`` (= 32), ``sizeof(T)`` for
  known types, ``true``/``false``;
- ``threadIdx.*``, ``blockIdx.*``, ``blockDim.*``, ``gridDim.*`` are symbols of that name;
  other identifiers are symbols named by the identifier;
- ``+ - *``, unary minus, parentheses, ``<<`` by a constant (a multiplication); integer
  casts (``(int)e``, ``(size_t)e``, ``static_cast<int>(e)``, ``int(e)``) are transparent;
  ``/ % >> & | ^`` and comparisons are folded when their operands are constants, and ``/``
  and ``>>`` are exact when every coefficient is divisible;
- a local variable is replaced by the value of the definition that reaches the use when
  one plain definition (``int i = e;`` or a statement ``i = e;``) dominates it and no other
  definition can reach it (no loop around the use assigns it); otherwise — a loop
  induction variable, a variable assigned in a branch — it stays a symbol named by the
  variable;
- object-like macros (``#define TILE 32``), file-scope ``const``/``constexpr`` integers and
  enumerators are substituted; function-like macros (``CEIL_DIV(a, b)``) are expanded;
- a sub-expression that is not a polynomial (``(n + 3) / 4``, ``min(n, 64)``, ``a[i]``,
  ``c ? x : y``) becomes ONE opaque symbol named by its whitespace-normalized text, unless
  it depends on ``threadIdx`` — then the whole expression is not affine (``None``).

Every symbol that stands for something computed (an opaque term, a re-assigned
variable) remembers what it depends on (:meth:`Affine.depends`), so :meth:`Affine.coeff`
answers ``None`` instead of a wrong coefficient when a symbol hides the one asked about.

The module also holds the name-resolution and def-use machinery the other analyses share
(private helpers, prefixed with ``_``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Iterable, Mapping

from kltrans.analysis.verdict import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

BUILTIN_BASES = ("threadIdx", "blockIdx", "blockDim", "gridDim")
THREAD_SYMBOLS = frozenset(f"threadIdx.{c}" for c in "xyz")
BLOCK_SYMBOLS = frozenset(f"blockIdx.{c}" for c in "xyz")
DIM_SYMBOLS = frozenset(f"{b}.{c}" for b in ("blockDim", "gridDim") for c in "xyz")
INDEX_SYMBOLS = THREAD_SYMBOLS | BLOCK_SYMBOLS
BUILTIN_SYMBOLS = INDEX_SYMBOLS | DIM_SYMBOLS
WARP_SIZE = 32
# in a dependence set: "may depend on any thread or block index" (a device function's
# parameter, whose value comes from the caller)
UNKNOWN_DEP = "?"

LOOP_NODE_TYPES = ("for_statement", "while_statement", "do_statement", "for_range_loop")
_WS = re.compile(r"\s+")
_SIMPLE_NAME = re.compile(r"[A-Za-z_][\w.]*(->[A-Za-z_]\w*)*")
_FLOAT_TYPES = {"float", "double", "half", "__half", "__nv_bfloat16", "nv_bfloat16",
                "__nv_fp8_e4m3", "__nv_fp8_e5m2", "long double", "bool", "float2", "float4",
                "half2", "__half2", "__nv_bfloat162"}
_INT_FUNCS = {"int", "unsigned", "long", "short", "size_t", "int32_t", "uint32_t", "int64_t",
              "uint64_t", "int16_t", "uint16_t", "int8_t", "uint8_t", "ptrdiff_t", "ssize_t",
              "index_t", "unsigned int", "long long", "unsigned long long", "char"}
# calls whose value depends on the calling thread even with no argument saying so
_THREAD_CALLS = {"thread_rank", "thread_index", "__lane_id", "lane_id", "laneid", "meta_group_rank",
                 "thread_idx", "block_rank", "clock", "clock64", "__clock", "globaltimer"}


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


# =============================================================================== Affine
class Affine:
    """An immutable integer polynomial over symbols.

    ``terms`` maps a monomial — a sorted tuple of symbol names, ``()`` for the constant —
    to its non-zero integer coefficient. Symbols that stand for computed values carry
    their dependencies (``depends(symbol)``); they are not part of equality.
    """

    __slots__ = ("_terms", "_deps", "_hash")

    def __init__(self, terms: Mapping[tuple[str, ...], int] | None = None,
                 deps: Mapping[str, Iterable[str]] | None = None):
        clean: dict[tuple[str, ...], int] = {}
        for mono, c in (terms or {}).items():
            mono = tuple(sorted(mono))
            clean[mono] = clean.get(mono, 0) + int(c)
        clean = {m: c for m, c in clean.items() if c != 0}
        object.__setattr__(self, "_terms", clean)
        used = {s for m in clean for s in m}
        d = {}
        for s, ds in (deps or {}).items():
            ds = frozenset(ds) - {s}
            if s in used and ds:
                d[s] = ds
        object.__setattr__(self, "_deps", d)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name, value):  # immutable
        raise AttributeError("Affine is immutable")

    # ------------------------------------------------------------------ constructors
    @staticmethod
    def const(c: int) -> "Affine":
        """The constant ``c``."""
        return Affine({(): int(c)})

    @staticmethod
    def sym(name: str, depends: Iterable[str] = ()) -> "Affine":
        """The symbol ``name`` (optionally computed from the symbols in ``depends``)."""
        return Affine({(name,): 1}, {name: depends} if depends else None)

    @staticmethod
    def of(value: "Affine | int") -> "Affine":
        """``value`` as an Affine (ints become constants)."""
        return value if isinstance(value, Affine) else Affine.const(value)

    # ----------------------------------------------------------------------- views
    @property
    def terms(self) -> Mapping[tuple[str, ...], int]:
        """Monomial -> coefficient (read-only)."""
        return MappingProxyType(self._terms)

    def depends(self, symbol: str) -> frozenset[str]:
        """The symbols a computed symbol (opaque term, re-assigned variable) depends on."""
        return self._deps.get(symbol, frozenset())

    def symbols(self) -> set[str]:
        """Every symbol that appears with a non-zero coefficient."""
        return {s for m in self._terms for s in m}

    def free_symbols(self) -> set[str]:
        """The symbols, plus every symbol a computed one depends on."""
        out = self.symbols()
        for ds in self._deps.values():
            out |= ds
        return out

    def is_const(self) -> bool:
        """True when no symbol appears."""
        return all(m == () for m in self._terms)

    def value(self) -> int | None:
        """The constant value, or None when a symbol appears."""
        return self._terms.get((), 0) if self.is_const() else None

    def constant(self) -> int:
        """The constant term."""
        return self._terms.get((), 0)

    def degree(self) -> int:
        """The largest monomial degree (0 for constants)."""
        return max((len(m) for m in self._terms), default=0)

    # ------------------------------------------------------------------ arithmetic
    def _merge_deps(self, other: "Affine") -> dict:
        if not other._deps:
            return self._deps
        d = dict(self._deps)
        for s, ds in other._deps.items():
            d[s] = d.get(s, frozenset()) | ds
        return d

    def __add__(self, other):
        other = Affine.of(other) if isinstance(other, int) else other
        if not isinstance(other, Affine):
            return NotImplemented
        t = dict(self._terms)
        for m, c in other._terms.items():
            t[m] = t.get(m, 0) + c
        return Affine(t, self._merge_deps(other))

    __radd__ = __add__

    def __neg__(self):
        return Affine({m: -c for m, c in self._terms.items()}, self._deps)

    def __sub__(self, other):
        other = Affine.of(other) if isinstance(other, int) else other
        if not isinstance(other, Affine):
            return NotImplemented
        return self + (-other)

    def __rsub__(self, other):
        return Affine.of(other) - self

    def __mul__(self, other):
        other = Affine.of(other) if isinstance(other, int) else other
        if not isinstance(other, Affine):
            return NotImplemented
        t: dict[tuple[str, ...], int] = {}
        for m1, c1 in self._terms.items():
            for m2, c2 in other._terms.items():
                m = tuple(sorted(m1 + m2))
                t[m] = t.get(m, 0) + c1 * c2
        return Affine(t, self._merge_deps(other))

    __rmul__ = __mul__

    def __eq__(self, other):
        if isinstance(other, int):
            other = Affine.const(other)
        if not isinstance(other, Affine):
            return NotImplemented
        return self._terms == other._terms

    def __hash__(self):
        h = self._hash
        if h is None:
            h = hash(frozenset(self._terms.items()))
            object.__setattr__(self, "_hash", h)
        return h

    # ------------------------------------------------------------------- queries
    def coeff(self, symbol: str) -> "Affine | None":
        """What multiplies ``symbol`` (the sum of the degree-1 terms in it, divided by it).

        None when ``symbol`` appears with degree > 1, or when a computed symbol of this
        polynomial depends on ``symbol`` (the true coefficient is then not visible).
        """
        t: dict[tuple[str, ...], int] = {}
        for m, c in self._terms.items():
            n = m.count(symbol)
            if n > 1:
                return None
            if n == 1:
                rest = list(m)
                rest.remove(symbol)
                t[tuple(rest)] = t.get(tuple(rest), 0) + c
            else:
                for s in m:
                    ds = self._deps.get(s, ())
                    if symbol in ds or (UNKNOWN_DEP in ds and symbol in INDEX_SYMBOLS):
                        return None
        return Affine(t, self._deps)

    def without(self, symbol: str) -> "Affine":
        """The terms free of ``symbol``."""
        return Affine({m: c for m, c in self._terms.items() if symbol not in m}, self._deps)

    def subs(self, mapping: Mapping[str, "Affine | int"]) -> "Affine":
        """Replace symbols by values (Affines or ints)."""
        if not mapping:
            return self
        out = Affine()
        for m, c in self._terms.items():
            term = Affine({(): c}, None)
            rest = []
            for s in m:
                if s in mapping:
                    term = term * Affine.of(mapping[s])
                else:
                    rest.append(s)
            if rest:
                term = term * Affine({tuple(rest): 1}, {s: self._deps.get(s, ()) for s in rest})
            out = out + term
        return out

    def divisible_by(self, k: int) -> bool | None:
        """Whether the value is a multiple of ``k`` for every value of the symbols.

        True when every coefficient (the constant included) is divisible by ``k``; False
        when every symbolic coefficient is but the constant is not (never a multiple);
        None when it depends on the symbols' values.
        """
        k = abs(int(k))
        if k == 0:
            return None
        if k == 1:
            return True
        symbolic_ok = all(c % k == 0 for m, c in self._terms.items() if m)
        const_ok = self.constant() % k == 0
        if symbolic_ok:
            return const_ok
        return None

    def exact_div(self, k: int) -> "Affine | None":
        """``self / k`` when every coefficient is divisible by ``k``, else None."""
        if k == 0 or any(c % k for c in self._terms.values()):
            return None
        return Affine({m: c // k for m, c in self._terms.items()}, self._deps)

    def div_monomial(self, d: "Affine") -> "Affine | None":
        """``self / d`` for ``d`` a constant or one monomial (``4``, ``BK``, ``2*blockDim.x``),
        when every term of ``self`` is a multiple of it; else None."""
        if d.is_const():
            return self.exact_div(d.value()) if d.value() else None
        if len(d._terms) != 1:
            return None
        [(mono, c)] = d._terms.items()
        out = {}
        for m, k in self._terms.items():
            rest = list(m)
            for s in mono:
                if s not in rest:
                    return None
                rest.remove(s)
            if k % c:
                return None
            out[tuple(rest)] = k // c
        return Affine(out, {s: self.depends(s) for s in self.symbols()})

    # ------------------------------------------------------------------- printing
    def __str__(self) -> str:
        if not self._terms:
            return "0"
        single = len(self._terms) == 1
        items = sorted(self._terms.items(), key=lambda mc: (-len(mc[0]), mc[0]))
        parts = []
        for i, (m, c) in enumerate(items):
            names = [s if (single and len(m) == 1) or _SIMPLE_NAME.fullmatch(s) or _wrapped(s)
                     else f"({s})" for s in m]
            mag = abs(c)
            if not m:
                body = str(mag)
            elif mag == 1:
                body = "*".join(names)
            else:
                body = f"{mag}*" + "*".join(names)
            if i == 0:
                parts.append(("-" if c < 0 else "") + body)
            else:
                parts.append((" - " if c < 0 else " + ") + body)
        return "".join(parts)

    def __repr__(self) -> str:
        return f"Affine({str(self)!r})"


def _wrapped(s: str) -> bool:
    """True when ``s`` needs no parentheses as a factor: a call, a subscript, or (...)."""
    if re.fullmatch(r"[A-Za-z_][\w.:<>]*\s*\(.*\)", s) or re.fullmatch(r"[\w.]+\[.*\]", s):
        return _balanced_tail(s)
    if s.startswith("(") and s.endswith(")"):
        return _balanced_tail(s[s.index("("):])
    return False


def _balanced_tail(s: str) -> bool:
    """The first bracket opened in ``s`` closes at its very end."""
    depth = 0
    started = False
    for i, ch in enumerate(s):
        if ch in "([":
            depth += 1
            started = True
        elif ch in ")]":
            depth -= 1
            if started and depth == 0 and i != len(s) - 1:
                return False
    return True


# ============================================================ unit-wide information
_CACHE_KEY = "kltrans.analysis"


def _cache(unit: "Unit") -> dict:
    """This package's cache on a unit (the unit is immutable, so it never goes stale)."""
    c = unit._cache.get(_CACHE_KEY)
    if c is None:
        c = unit._cache[_CACHE_KEY] = {}
    return c


@dataclass(frozen=True)
class _Macro:
    name: str
    params: tuple[str, ...] | None  # None: object-like
    body: str
    start: int
    variadic: bool = False


class _UnitInfo:
    """Macros, file-scope constants, enumerators, typedefs, structs and functions."""

    def __init__(self, unit: "Unit"):
        from kltrans.syntax.cuda import find_functions

        self.unit = unit
        self.macros: dict[str, list[_Macro]] = {}
        self.enums: dict[str, tuple["Node", "Node | None", int]] = {}  # name -> (list, value, index)
        self.globals: dict[str, list[tuple["Node", "Node", "Node | None"]]] = {}
        self.typedefs: dict[str, str] = {}
        self.structs: dict[str, "Node"] = {}
        self.functions: dict[str, list["Function"]] = {}
        self.fn_by_node: dict[int, "Function"] = {}
        for f in find_functions(unit):
            self.functions.setdefault(f.name, []).append(f)
            self.fn_by_node[f.node.id] = f
        stack = [unit.root]
        while stack:
            n = stack.pop()
            t = n.type
            if t in ("preproc_def", "preproc_function_def"):
                m = _read_macro(unit, n)
                if m is not None:
                    self.macros.setdefault(m.name, []).append(m)
                continue
            if t in ("function_definition", "lambda_expression"):
                continue
            if t == "enumerator_list":
                for i, e in enumerate(c for c in n.named_children if c.type == "enumerator"):
                    name = e.child_by_field_name("name")
                    if name is not None:
                        self.enums[unit.text(name)] = (n, e.child_by_field_name("value"), i)
            elif t == "declaration" and n.parent is not None and n.parent.type in (
                    "translation_unit", "declaration_list", "preproc_ifdef", "preproc_if",
                    "preproc_else", "linkage_specification"):
                for top, ident, value in _declarators(unit, n):
                    self.globals.setdefault(unit.text(ident), []).append((n, ident, value))
            elif t == "type_definition":
                ty = n.child_by_field_name("type")
                for d in n.children_by_field_name("declarator"):
                    if d.type == "type_identifier" and ty is not None:
                        self.typedefs[unit.text(d)] = _norm(unit.text(ty))
            elif t == "alias_declaration":
                name = n.child_by_field_name("name")
                ty = n.child_by_field_name("type")
                if name is not None and ty is not None:
                    self.typedefs[unit.text(name)] = _norm(unit.text(ty))
            elif t in ("struct_specifier", "class_specifier", "union_specifier"):
                name = n.child_by_field_name("name")
                if name is not None and n.child_by_field_name("body") is not None:
                    self.structs[unit.text(name)] = n
            stack.extend(reversed(n.children))

    def macro(self, name: str, before: int) -> _Macro | None:
        """The one definition of macro ``name`` visible at offset ``before`` (None if none or
        if several different definitions are)."""
        defs = [m for m in self.macros.get(name, ()) if m.start < before]
        if not defs:
            return None
        if len({(m.params, m.body) for m in defs}) > 1:
            return _Macro(name, None, "", defs[-1].start)  # ambiguous: a bare symbol
        return defs[-1]


def unit_info(unit: "Unit") -> _UnitInfo:
    c = _cache(unit)
    info = c.get("unit")
    if info is None:
        info = c["unit"] = _UnitInfo(unit)
    return info


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _read_macro(unit: "Unit", node: "Node") -> _Macro | None:
    text = unit.text(node).replace("\\\r\n", " ").replace("\\\n", " ")
    m = re.match(r"\s*#\s*define\s+([A-Za-z_]\w*)(\(([^)]*)\))?", text)
    if m is None:
        return None
    body = _norm(_COMMENT.sub(" ", text[m.end():]))
    if m.group(2) is None:
        return _Macro(m.group(1), None, body, node.start_byte)
    params = [p.strip() for p in m.group(3).split(",") if p.strip()]
    variadic = any(p.endswith("...") for p in params)
    return _Macro(m.group(1), tuple(p for p in params if not p.endswith("...")), body,
                  node.start_byte, variadic)


def macro_expr(unit: "Unit", macro: _Macro) -> "tuple[Unit, Node] | None":
    """The macro body parsed as one expression (in a tiny unit of its own), or None."""
    c = _cache(unit).setdefault("macro_expr", {})
    key = (macro.name, macro.start)
    if key not in c:
        got = None
        if macro.body and not macro.variadic:
            from kltrans.syntax.unit import parse

            sub = parse(f"int __kl_macro__ = {macro.body};\n", f"<macro {macro.name}>")
            if not sub.has_errors:
                decl = sub.root.named_children[0] if sub.root.named_children else None
                init = None
                if decl is not None and decl.type == "declaration":
                    init = decl.child_by_field_name("declarator")
                if init is not None and init.type == "init_declarator":
                    val = init.child_by_field_name("value")
                    if val is not None:
                        got = (sub, val)
        c[key] = got
    return c[key]


# ========================================================================= bindings
@dataclass(frozen=True)
class _Binding:
    """What an identifier refers to at one place in the source."""

    kind: str  # macro enum global_const global param tparam local builtin unknown
    name: str
    key: object  # identity of the declaration (node id) or the name
    decl: "Node | None" = None  # the declaration / parameter node
    ident: "Node | None" = None  # the declared identifier
    value: "Node | None" = None  # the initializer, when there is one
    fn: "Node | None" = None  # the function_definition / lambda the binding lives in
    kernel: bool = False  # a parameter of a __global__ function


def _declarators(unit: "Unit", decl: "Node"):
    """(declarator, identifier, value) for each name a declaration introduces."""
    out = []
    for d in decl.children_by_field_name("declarator"):
        value = None
        node = d
        if node.type == "init_declarator":
            value = node.child_by_field_name("value")
            node = node.child_by_field_name("declarator")
        while node is not None and node.type not in ("identifier", "field_identifier"):
            if node.type in ("pointer_declarator", "array_declarator", "reference_declarator",
                             "parenthesized_declarator", "attributed_declarator", "init_declarator"):
                nxt = node.child_by_field_name("declarator")
                if nxt is None:
                    named = [c for c in node.named_children
                             if c.type not in ("type_qualifier", "ms_pointer_modifier")]
                    nxt = named[-1] if named else None
                node = nxt
            else:
                node = None
        if node is not None and node.type == "identifier":
            out.append((d, node, value))
    return out


def _param_ident(unit: "Unit", p: "Node") -> "Node | None":
    node = p.child_by_field_name("declarator")
    while node is not None and node.type != "identifier":
        nxt = node.child_by_field_name("declarator")
        if nxt is None:
            named = [c for c in node.named_children if c.type not in ("type_qualifier",)]
            nxt = named[-1] if named else None
        node = nxt
    return node


def _is_const_decl(unit: "Unit", decl: "Node") -> bool:
    for c in decl.children:
        if c.type in ("type_qualifier", "storage_class_specifier") and unit.text(c) in (
                "const", "constexpr"):
            return True
        if c.type == "constexpr" or (not c.is_named and unit.text(c) == "constexpr"):
            return True
    return False


def _fn_params(fn_node: "Node"):
    """The parameter_declaration nodes of a function_definition or lambda."""
    if fn_node.type == "lambda_expression":
        d = fn_node.child_by_field_name("declarator")
    else:
        d = fn_node.child_by_field_name("declarator")
        while d is not None and d.type != "function_declarator":
            d = d.child_by_field_name("declarator")
    if d is None:
        return []
    pl = d.child_by_field_name("parameters")
    if pl is None:
        return []
    return [c for c in pl.named_children
            if c.type in ("parameter_declaration", "optional_parameter_declaration")]


def _is_kernel_node(fn_node: "Node") -> bool:
    return fn_node.type == "function_definition" and any(
        c.type == "__global__" for c in fn_node.children)


def resolve_name(unit: "Unit", node: "Node", name: str) -> _Binding:
    """What the identifier ``name`` used at ``node`` refers to (scope-aware, cached)."""
    cache = _cache(unit).setdefault("bind", {})
    key = (node.id, name)
    b = cache.get(key)
    if b is None:
        b = cache[key] = _resolve_uncached(unit, node, name)
    return b


def _resolve_uncached(unit: "Unit", node: "Node", name: str) -> _Binding:
    info = _unit_info(unit)
    m = info.macro(name, node.start_byte)
    if m is not None:
        return _Binding("macro", name, ("macro", m.name, m.start))
    if name == "warpSize":
        return _Binding("builtin", name, name)
    own = _declared_here(unit, node, name)
    if own is not None:
        return own
    c, p = node, node.parent
    while p is not None:
        t = p.type
        if t == "compound_statement":
            found = None
            for ch in p.named_children:
                if ch.start_byte >= c.start_byte:
                    break
                if ch.type == "declaration":
                    for top, ident, value in _declarators(unit, ch):
                        if unit.text(ident) == name:
                            found = (ch, ident, value)
            if found is not None:
                return _Binding("local", name, found[1].id, found[0], found[1], found[2],
                                _enclosing_fn_node(p))
        elif t == "for_statement":
            init = p.child_by_field_name("initializer")
            if init is not None and init.type == "declaration" and init.id != c.id:
                for top, ident, value in _declarators(unit, init):
                    if unit.text(ident) == name:
                        return _Binding("local", name, ident.id, init, ident, value,
                                        _enclosing_fn_node(p))
        elif t == "for_range_loop":
            d = p.child_by_field_name("declarator")
            if d is not None and c.id != d.id:
                ident = d if d.type == "identifier" else next(
                    (x for x in unit.walk(d) if x.type == "identifier"), None)
                if ident is not None and unit.text(ident) == name:
                    return _Binding("local", name, ident.id, p, ident, None, _enclosing_fn_node(p))
        elif t in ("function_definition", "lambda_expression"):
            kernel = _is_kernel_node(p)
            for prm in _fn_params(p):
                ident = _param_ident(unit, prm)
                if ident is not None and unit.text(ident) == name:
                    return _Binding("param", name, ident.id, prm, ident, None, p, kernel)
            if t == "function_definition":
                tp = p.parent
                if tp is not None and tp.type == "template_declaration":
                    from kltrans.syntax.cuda import template_params

                    pl = tp.child_by_field_name("parameters")
                    if pl is not None:
                        for tparam in template_params(unit, pl):
                            if tparam.name == name:
                                return _Binding("tparam", name, ("tparam", tp.id, name),
                                                tp, fn=p)
                break
        c, p = p, p.parent
    if name in info.enums:
        return _Binding("enum", name, ("enum", name))
    g = [x for x in info.globals.get(name, ()) if x[0].start_byte < node.start_byte] or \
        info.globals.get(name, [])
    if g:
        decl, ident, value = g[-1]
        kind = "global_const" if value is not None and _is_const_decl(unit, decl) and len(g) == 1 \
            else "global"
        return _Binding(kind, name, ident.id, decl, ident, value)
    return _Binding("unknown", name, ("unknown", name))


_DECLARATOR_TYPES = ("init_declarator", "pointer_declarator", "array_declarator",
                     "reference_declarator", "parenthesized_declarator", "attributed_declarator")


def _declared_here(unit: "Unit", node: "Node", name: str) -> _Binding | None:
    """The binding when ``node`` is the identifier a declaration or parameter introduces."""
    if node.type != "identifier":
        return None
    p = node.parent
    while p is not None and p.type in _DECLARATOR_TYPES:
        if p.type == "init_declarator":
            d = p.child_by_field_name("declarator")
            if d is None or not _is_ancestor(d, node):
                return None  # inside the initializer
        p = p.parent
    if p is None:
        return None
    if p.type == "declaration":
        for top, ident, value in _declarators(unit, p):
            if ident.id == node.id:
                fnn = _enclosing_fn_node(p)
                if fnn is None:
                    return None
                return _Binding("local", name, ident.id, p, ident, value, fnn)
    elif p.type in ("parameter_declaration", "optional_parameter_declaration"):
        fnn = _enclosing_fn_node(p)
        ident = _param_ident(unit, p)
        if fnn is not None and ident is not None and ident.id == node.id and \
                p.parent is not None and p.parent.type == "parameter_list":
            return _Binding("param", name, ident.id, p, ident, None, fnn, _is_kernel_node(fnn))
    return None


def _enclosing_fn_node(node: "Node") -> "Node | None":
    p = node
    while p is not None and p.type not in ("function_definition", "lambda_expression"):
        p = p.parent
    return p


def _is_ancestor(a: "Node", b: "Node") -> bool:
    """``a`` is ``b`` or an ancestor of it."""
    return a.start_byte <= b.start_byte and b.end_byte <= a.end_byte and _chain_has(b, a)


def _chain_has(b: "Node", a: "Node") -> bool:
    p = b
    while p is not None:
        if p.id == a.id:
            return True
        if p.start_byte < a.start_byte:
            return False
        p = p.parent
    return False


def strip_parens(node: "Node") -> "Node":
    """``node`` without the parentheses around it (``((a + b))`` -> ``a + b``)."""
    while node is not None and node.type == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1:
            break
        node = inner[0]
    return node


_strip_parens = strip_parens  # the name the engine's own modules use


def conjuncts(unit: "Unit", cond: "Node") -> list["Node"]:
    """The operands of a condition's top-level ``&&`` chain, parentheses stripped (an
    ``if``'s ``condition_clause`` is looked into): ``(a && (b && c))`` gives ``[a, b, c]``."""
    cond = strip_parens(cond)
    if cond.type == "condition_clause":
        inner = [c for c in cond.named_children if c.type != "comment"]
        cond = strip_parens(inner[0]) if len(inner) == 1 else cond
    if cond.type == "binary_expression" and unit.text(cond.child_by_field_name("operator")) == "&&":
        return conjuncts(unit, cond.child_by_field_name("left")) + \
            conjuncts(unit, cond.child_by_field_name("right"))
    return [cond]


# ================================================================== definitions
@dataclass(frozen=True)
class _Def:
    """One place that gives a variable a value."""

    kind: str  # decl param assign compound update addr ref range
    node: "Node"  # the assignment / update / declaration / call
    rhs: "Node | None"
    op: str
    pos: int


def _def_sites(unit: "Unit", fn_node: "Node") -> dict[str, list[tuple[str, "Node", "Node", str]]]:
    """name -> (kind, node, identifier, op) for every assignment-like site in a function."""
    c = _cache(unit).setdefault("defsites", {})
    got = c.get(fn_node.id)
    if got is not None:
        return got
    info = _unit_info(unit)
    out: dict[str, list] = {}
    for n in unit.walk(fn_node):
        t = n.type
        if t == "assignment_expression":
            left = _strip_parens(n.child_by_field_name("left"))
            op = n.child_by_field_name("operator")
            if left is not None and left.type == "identifier":
                kind = "assign" if op is not None and unit.text(op) == "=" else "compound"
                out.setdefault(unit.text(left), []).append(
                    (kind, n, left, unit.text(op) if op is not None else "="))
        elif t == "update_expression":
            arg = _strip_parens(n.child_by_field_name("argument"))
            op = n.child_by_field_name("operator")
            if arg is not None and arg.type == "identifier":
                out.setdefault(unit.text(arg), []).append(
                    ("update", n, arg, unit.text(op) if op is not None else "++"))
        elif t == "pointer_expression":
            op = n.child_by_field_name("operator")
            arg = _strip_parens(n.child_by_field_name("argument"))
            if op is not None and unit.text(op) == "&" and arg is not None and arg.type == "identifier":
                out.setdefault(unit.text(arg), []).append(("addr", n, arg, "&"))
        elif t == "call_expression":
            f = n.child_by_field_name("function")
            args = n.child_by_field_name("arguments")
            if f is None or args is None or f.type != "identifier":
                continue
            callees = info.functions.get(unit.text(f), ())
            if not callees:
                continue
            refs = _ref_param_positions(unit, callees)
            if not refs:
                continue
            for i, a in enumerate(x for x in args.named_children if x.type != "comment"):
                a = _strip_parens(a)
                if i in refs and a.type == "identifier":
                    out.setdefault(unit.text(a), []).append(("ref", n, a, "&"))
    c[fn_node.id] = out
    return out


def _ref_param_positions(unit: "Unit", callees) -> set[int]:
    """Positions of non-const reference parameters in any overload of a callee."""
    out = set()
    for f in callees:
        for i, p in enumerate(f.params):
            if p.reference and not p.const:
                out.add(i)
    return out


def _defs(unit: "Unit", b: _Binding) -> list[_Def]:
    """Every definition of a local variable or parameter, in source order."""
    c = _cache(unit).setdefault("defs", {})
    got = c.get(b.key)
    if got is not None:
        return got
    out: list[_Def] = []
    if b.kind == "param" and b.fn is not None:
        body = b.fn.child_by_field_name("body")
        out.append(_Def("param", b.decl, None, "", body.start_byte if body is not None else 0))
    elif b.kind == "local":
        if b.decl is not None and b.decl.type == "for_range_loop":
            out.append(_Def("range", b.decl, None, "", b.ident.start_byte))
        else:
            out.append(_Def("decl", b.decl, b.value, "=", b.ident.start_byte))
    if b.fn is not None and b.kind in ("local", "param"):
        for kind, node, ident, op in _def_sites(unit, b.fn).get(b.name, ()):
            if _resolve(unit, ident, b.name).key != b.key:
                continue
            rhs = None
            if kind in ("assign", "compound"):
                rhs = node.child_by_field_name("right")
            out.append(_Def(kind, node, rhs, op, node.start_byte))
    out.sort(key=lambda d: d.pos)
    c[b.key] = out
    return out


def _loop_body_contains(loop: "Node", node: "Node") -> bool:
    """``node`` is inside ``loop`` and runs on every iteration (a for's initializer does not)."""
    if not _is_ancestor(loop, node):
        return False
    if loop.type == "for_statement":
        init = loop.child_by_field_name("initializer")
        if init is not None and _is_ancestor(init, node):
            return False
    return True


def _dominates(d: _Def, use: "Node") -> bool:
    """A plain definition whose statement is always executed before ``use``."""
    if d.kind == "param":
        return True
    if d.kind == "decl":
        stmt = d.node
        p = stmt.parent
        if p is None:
            return False
        if p.type == "for_statement":
            return _is_ancestor(p, use)
        return p.type == "compound_statement" and _is_ancestor(p, use)
    if d.kind == "assign":
        n = d.node
        p = n.parent
        while p is not None and p.type == "parenthesized_expression":
            n, p = p, p.parent
        if p is None:
            return False
        if p.type == "expression_statement":
            return p.parent is not None and p.parent.type == "compound_statement" and \
                _is_ancestor(p.parent, use)
        if p.type == "for_statement":
            init = p.child_by_field_name("initializer")
            return init is not None and init.id == n.id and _is_ancestor(p, use)
    return False


def _reaching(unit: "Unit", b: _Binding, use: "Node") -> _Def | None:
    """The unique plain definition of ``b`` that reaches ``use``, or None.

    It must be the last definition before ``use`` in source order, dominate ``use``
    (its statement sits in a block enclosing ``use``), and no loop around ``use`` that
    does not also hold the definition may assign the variable.
    """
    defs = _defs(unit, b)
    if any(d.kind in ("addr", "ref", "range") for d in defs):
        return None
    before = [d for d in defs if d.pos < use.start_byte and not _is_ancestor(d.node, use)]
    if not before:
        return None
    d = before[-1]
    if d.kind not in ("decl", "assign", "param"):
        return None
    if d.kind in ("decl", "assign") and d.rhs is None:
        return None
    if not _dominates(d, use):
        return None
    p = use.parent
    while p is not None and p.type not in ("function_definition", "lambda_expression"):
        if p.type in LOOP_NODE_TYPES and not _loop_body_contains(p, d.node):
            for other in defs:
                if other is not d and other.kind != "param" and _loop_body_contains(p, other.node):
                    return None
        p = p.parent
    return d


# ================================================================== dependences
class _Sources:
    """What an expression's value may depend on: builtin index symbols, parameters,
    template parameters, unknown names, and the names of re-assigned variables."""

    def __init__(self, unit: "Unit"):
        self.unit = unit
        self.info = _unit_info(unit)
        self.memo: dict = _cache(unit).setdefault("sources", {})
        self.active: list = []
        self.cycle = False

    def of(self, node: "Node", sub: "Unit | None" = None, site: "Node | None" = None,
           skip=frozenset()) -> frozenset[str]:
        """Sources of an expression. With ``sub``/``site``: ``node`` is in a macro body
        (``sub``) expanded at ``site``; names in ``skip`` (macro parameters) are ignored."""
        unit = sub or self.unit
        out: set[str] = set()
        stack = [node]
        while stack:
            n = stack.pop()
            t = n.type
            if t == "field_expression":
                name = builtin_name(unit, n)
                if name is not None:
                    out.add(name)
                else:
                    arg = n.child_by_field_name("argument")
                    if arg is not None:
                        stack.append(arg)
                continue
            if t == "identifier":
                name = unit.text(n)
                if sub is None:
                    out |= self.ident(n, name)
                elif name not in skip:
                    out |= self.ident(site, name)
                continue
            if t == "call_expression":
                f = n.child_by_field_name("function")
                args = n.child_by_field_name("arguments")
                if f is not None:
                    fld = f.child_by_field_name("field") if f.type == "field_expression" else None
                    fname = unit.text(fld if fld is not None else f).split("::")[-1]
                    if fname in _THREAD_CALLS:
                        out |= THREAD_SYMBOLS
                    if f.type == "identifier":
                        m = self.info.macro(fname, (site or n).start_byte)
                        if m is not None and m.params is not None:
                            out |= self.macro_body(m, site or n, skip=set(m.params))
                        else:
                            for callee in self.info.functions.get(fname, ()):
                                out |= self.returns(callee)
                    elif f.type == "field_expression":
                        arg = f.child_by_field_name("argument")
                        if arg is not None:
                            stack.append(arg)
                if args is not None:
                    stack.extend(args.named_children)
                continue
            if t in ("sizeof_expression", "alignof_expression", "string_literal", "number_literal",
                     "char_literal", "type_descriptor", "template_argument_list", "comment",
                     "field_identifier", "type_identifier", "primitive_type", "template_function",
                     "namespace_identifier"):
                continue
            stack.extend(n.named_children)
        return frozenset(out)

    def macro_body(self, m: _Macro, site: "Node", skip=frozenset()) -> frozenset[str]:
        got = macro_expr(self.unit, m)
        if got is None:
            return frozenset({m.name}) if m.body else frozenset()
        key = ("macro", m.name, m.start, site.id)
        if key in self.active:
            self.cycle = True
            return frozenset()
        self.active.append(key)
        try:
            sub, expr = got
            return self.of(expr, sub=sub, site=site, skip=skip)
        finally:
            self.active.pop()

    def returns(self, callee: "Function") -> frozenset[str]:
        key = ("returns", callee.node.id)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            self.cycle = True
            return frozenset()
        self.active.append(key)
        saved = self.cycle
        self.cycle = False
        try:
            out: set[str] = set()
            for n in self.unit.walk(callee.node):
                if n.type == "return_statement":
                    for c in n.named_children:
                        out |= self.of(c) & INDEX_SYMBOLS
            res = frozenset(out)
            if not self.cycle:
                self.memo[key] = res
            return res
        finally:
            self.cycle = self.cycle or saved
            self.active.pop()

    def ident(self, use: "Node", name: str) -> frozenset[str]:
        unit = self.unit
        p = use.parent
        if p is not None and p.type == "call_expression" and p.child_by_field_name("function") is not None \
                and p.child_by_field_name("function").id == use.id:
            return frozenset()
        b = _resolve(unit, use, name)
        k = b.kind
        if k == "builtin":
            return frozenset()
        if k == "macro":
            m = self.info.macro(name, use.start_byte)
            if m is None or m.params is not None:
                return frozenset()
            return self.macro_body(m, use)
        if k == "enum":
            return frozenset()
        if k == "global_const":
            return self.node_once(("g", b.key), b.value)
        if k in ("tparam", "global", "unknown"):
            return frozenset({name})
        d = _reaching(unit, b, use)
        if d is not None and d.kind == "param":
            return frozenset({name}) if b.kernel else frozenset({name, "?"})
        if d is not None and d.rhs is not None:
            return self.node_once(("d", b.key, d.pos), d.rhs)
        return frozenset({name}) | self.binding(b)

    def node_once(self, key, node) -> frozenset[str]:
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            self.cycle = True
            return frozenset()
        self.active.append(key)
        saved = self.cycle
        self.cycle = False
        try:
            res = self.of(node)
            if not self.cycle:
                self.memo[key] = res
            return res
        finally:
            self.cycle = self.cycle or saved
            self.active.pop()

    def binding(self, b: _Binding) -> frozenset[str]:
        """Everything any definition of a variable may depend on."""
        key = ("b", b.key)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            self.cycle = True
            return frozenset()
        self.active.append(key)
        saved = self.cycle
        self.cycle = False
        try:
            out: set[str] = set()
            for d in _defs(self.unit, b):
                if d.kind == "param":
                    out.add(b.name)
                    if not b.kernel:
                        out.add("?")
                elif d.kind in ("addr", "ref"):
                    call = d.node
                    while call is not None and call.type != "call_expression":
                        call = call.parent
                    if call is not None:
                        args = call.child_by_field_name("arguments")
                        if args is not None:
                            for a in args.named_children:
                                out |= self.of(a)
                    else:
                        out.add("?")
                elif d.kind == "range":
                    r = d.node.child_by_field_name("right")
                    if r is not None:
                        out |= self.of(r)
                elif d.rhs is not None:
                    out |= self.of(d.rhs)
            out.discard(b.name)
            res = frozenset(out)
            if not self.cycle:
                self.memo[key] = res
            return res
        finally:
            self.cycle = self.cycle or saved
            self.active.pop()


def builtin_name(unit: "Unit", node: "Node") -> str | None:
    """``"threadIdx.x"`` for a ``threadIdx.x`` field expression, else None."""
    if node.type != "field_expression":
        return None
    arg = node.child_by_field_name("argument")
    fld = node.child_by_field_name("field")
    if arg is None or fld is None or arg.type != "identifier":
        return None
    base = unit.text(arg)
    f = unit.text(fld)
    if base in BUILTIN_BASES and f in ("x", "y", "z"):
        return f"{base}.{f}"
    return None


def sources(unit: "Unit", node: "Node") -> frozenset[str]:
    """The symbols the value of ``node`` may depend on, through local variables.

    Builtins (``threadIdx.x``, ``blockIdx.y``, ``blockDim.x``, ...), parameters, template
    parameters and unknown names by name, and the names of variables whose value could
    not be pinned to one definition (loop induction variables and the like). Data loaded
    from memory depends on the address: ``x[i]`` depends on what ``x`` and ``i`` depend on.
    """
    try:
        return _Sources(unit).of(node)
    except RecursionError:
        return frozenset({"?"})


def thread_dependent(unit: "Unit", node: "Node") -> frozenset[str]:
    """The ``threadIdx.*`` components (and ``?`` for unknown) the value of ``node`` depends on."""
    return frozenset(s for s in sources(unit, node) if s in THREAD_SYMBOLS or s == "?")


# ===================================================================== evaluation
class NotAffine(Exception):
    """Raised inside the evaluator; :func:`affine_of` turns it into None."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _NeedOpaque(Exception):
    pass


_INT_LITERAL = re.compile(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)([uUlLzZ]*)")


def int_literal(text: str) -> int | None:
    """The value of a C integer literal (``4u``, ``0x10``, ``0b11``, ``017``, ``1'000``)."""
    t = text.replace("'", "").strip()
    m = _INT_LITERAL.fullmatch(t)
    if m is None:
        return None
    digits = m.group(1)
    if digits.startswith(("0x", "0X")):
        return int(digits, 16)
    if digits.startswith(("0b", "0B")):
        return int(digits, 2)
    if len(digits) > 1 and digits.startswith("0"):
        return int(digits, 8)
    return int(digits)


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - b * _c_div(a, b)


class Evaluator:
    """Evaluates expression nodes of ``unit`` to :class:`Affine` forms (:meth:`ev`), the
    names in ``env`` bound, macros expanded in small units of their own."""

    def __init__(self, unit: "Unit", env: Mapping[str, "Affine | int"] | None = None,
                 outer: "Evaluator | None" = None, site: "Node | None" = None,
                 args: Mapping[str, Affine] | None = None):
        self.unit = unit
        self.env = {k: Affine.of(v) for k, v in (env or {}).items()}
        self.outer = outer
        self.site = site
        self.args = dict(args or {})
        self.strict = outer is not None  # inside a macro body: no opaque terms of its own
        self.active: set = outer.active if outer is not None else set()
        self.src = outer.src if outer is not None else None

    # ---------------------------------------------------------------- helpers
    def _sources(self) -> _Sources:
        root = self
        while root.outer is not None:
            root = root.outer
        if root.src is None:
            root.src = _Sources(root.unit)
        return root.src

    def text(self, node) -> str:
        return _norm(self.unit.text(node))

    def opaque(self, node: "Node", what: str = "") -> Affine:
        if self.strict:
            raise _NeedOpaque()
        name = self.text(node)
        if name in self.env:
            return self.env[name]
        deps = self._sources().of(node)
        thr = sorted(s for s in deps if s in THREAD_SYMBOLS)
        if thr:
            raise NotAffine(f"`{name}` is not a polynomial{what} and depends on {thr[0]}")
        return Affine.sym(name, deps)

    def named_opaque(self, name: str, deps) -> Affine:
        thr = sorted(s for s in deps if s in THREAD_SYMBOLS)
        if thr:
            raise NotAffine(f"`{name}` is not a polynomial and depends on {thr[0]}")
        return Affine.sym(name, deps)

    # ---------------------------------------------------------------- evaluation
    def ev(self, node: "Node") -> Affine:
        if node is None:
            raise NotAffine("missing expression")
        if node.has_error:
            raise NotAffine(f"`{self.text(node)}` does not parse")
        t = node.type
        if t == "number_literal":
            v = int_literal(self.unit.text(node))
            return Affine.const(v) if v is not None else self.opaque(node, " (not an integer)")
        if t == "char_literal":
            s = self.unit.text(node)
            if len(s) == 3 and s[0] == s[2] == "'":
                return Affine.const(ord(s[1]))
            return self.opaque(node)
        if t in ("true", "false"):
            return Affine.const(1 if t == "true" else 0)
        if t == "parenthesized_expression":
            inner = [c for c in node.named_children if c.type != "comment"]
            if len(inner) != 1:
                return self.opaque(node)
            return self.ev(inner[0])
        if t == "identifier":
            return self.ident(self.unit.text(node), node)
        if t == "field_expression":
            name = builtin_name(self.unit, node)
            if name is not None:
                if self.outer is not None and name not in self.env:
                    return self.outer.builtin(name)
                return self.builtin(name)
            return self.opaque(node)
        if t == "binary_expression":
            return self.binary(node)
        if t == "unary_expression":
            op = self.unit.text(node.child_by_field_name("operator"))
            arg = node.child_by_field_name("argument")
            if op == "-":
                return -self.ev(arg)
            if op == "+":
                return self.ev(arg)
            v = self.try_const(arg)
            if v is not None:
                if op == "~":
                    return Affine.const(~v)
                if op == "!":
                    return Affine.const(0 if v else 1)
            return self.opaque(node)
        if t == "cast_expression":
            ty = node.child_by_field_name("type")
            if ty is not None and _norm(self.unit.text(ty)) in _FLOAT_TYPES:
                return self.opaque(node, " (a cast to a non-integer type)")
            return self.ev(node.child_by_field_name("value"))
        if t == "call_expression":
            return self.call(node)
        if t == "sizeof_expression":
            return self.sizeof(node)
        if t == "conditional_expression":
            c = self.try_const(node.child_by_field_name("condition"))
            if c is not None:
                return self.ev(node.child_by_field_name("consequence" if c else "alternative"))
            return self.opaque(node)
        if t in ("assignment_expression", "update_expression", "comma_expression"):
            raise NotAffine(f"`{self.text(node)}` has a side effect")
        return self.opaque(node)

    def try_const(self, node) -> int | None:
        try:
            v = self.ev(node)
        except (NotAffine, _NeedOpaque):
            return None
        return v.value()

    def builtin(self, name: str) -> Affine:
        if name in self.env:
            return self.env[name]
        return Affine.sym(name)

    def binary(self, node: "Node") -> Affine:
        op = self.unit.text(node.child_by_field_name("operator"))
        ln, rn = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op in ("+", "-", "*"):
            l, r = self.ev(ln), self.ev(rn)
            return l + r if op == "+" else l - r if op == "-" else l * r
        if op == "<<":
            r = self.try_const(rn)
            if r is not None and 0 <= r < 64:
                return self.ev(ln) * (1 << r)
            return self.opaque(node)
        if op in ("/", ">>", "%"):
            try:
                l = self.ev(ln)
            except NotAffine:
                l = None
            r = self.try_const(rn)
            if l is not None and r is not None:
                if op == ">>":
                    if not 0 <= r < 64:
                        return self.opaque(node)
                    if l.is_const():
                        return Affine.const(l.value() >> r)
                    q = l.exact_div(1 << r)
                    if q is not None:
                        return q
                elif r == 0:
                    raise NotAffine(f"`{self.text(node)}` divides by zero")
                elif l.is_const():
                    return Affine.const(_c_div(l.value(), r) if op == "/" else _c_mod(l.value(), r))
                elif op == "/":
                    q = l.exact_div(r)
                    if q is not None:
                        return q
                elif op == "%" and l.divisible_by(r):
                    return Affine.const(0)
            return self.opaque(node)
        # bitwise and comparisons: fold constants only
        lv, rv = self.try_const(ln), self.try_const(rn)
        if lv is not None and rv is not None:
            fold = {
                "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
                "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b),
                ">": lambda a, b: int(a > b), ">=": lambda a, b: int(a >= b),
                "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
                "&&": lambda a, b: int(bool(a) and bool(b)), "||": lambda a, b: int(bool(a) or bool(b)),
            }.get(op)
            if fold is not None:
                return Affine.const(fold(lv, rv))
        return self.opaque(node)

    def call(self, node: "Node") -> Affine:
        unit = self.unit
        f = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        args = [a for a in args_node.named_children if a.type != "comment"] if args_node else []
        if f is None:
            return self.opaque(node)
        if f.type == "template_function":
            name = unit.text(f.child_by_field_name("name"))
            targs = f.child_by_field_name("arguments")
            if name in ("static_cast", "std::static_cast") and len(args) == 1:
                ty = _norm(unit.text(targs))[1:-1].strip() if targs is not None else ""
                if ty in _FLOAT_TYPES:
                    return self.opaque(node, " (a cast to a non-integer type)")
                return self.ev(args[0])
            return self.opaque(node)
        fname = _norm(unit.text(f))
        if f.type in ("identifier", "primitive_type", "sized_type_specifier") and \
                fname in _INT_FUNCS and len(args) == 1:
            return self.ev(args[0])  # functional cast int(e)
        if f.type == "identifier":
            m = self.macro_at(fname, node)
            if m is not None and m.params is not None and len(m.params) == len(args):
                return self.expand(m, node, args)
        base = fname.split("::")[-1]
        if base in ("min", "max", "umin", "umax", "imin", "imax", "llmin", "llmax", "ullmin",
                    "ullmax") and len(args) == 2:
            a, b = self.try_const(args[0]), self.try_const(args[1])
            if a is not None and b is not None:
                return Affine.const(min(a, b) if "min" in base else max(a, b))
        if base in ("abs", "llabs") and len(args) == 1:
            a = self.try_const(args[0])
            if a is not None:
                return Affine.const(abs(a))
        return self.opaque(node)

    def macro_at(self, name: str, node: "Node") -> _Macro | None:
        if self.outer is not None:
            return self.outer.macro_at(name, self.site)
        return _unit_info(self.unit).macro(name, node.start_byte)

    def expand(self, m: _Macro, node: "Node", args: list) -> Affine:
        key = ("macro", m.name, m.start)
        got = macro_expr(self._root_unit(), m)
        if got is None or key in self.active:
            return self.opaque(node)
        bound = {}
        for p, a in zip(m.params or (), args):
            bound[p] = self.ev(a)
        self.active.add(key)
        try:
            sub, expr = got
            site = node if self.outer is None else self.site
            return Evaluator(sub, self.env, outer=self._root(), site=site, args=bound).ev(expr)
        except _NeedOpaque:
            if self.strict:
                raise
            return self.opaque(node)
        finally:
            self.active.discard(key)

    def _root(self) -> "Evaluator":
        r = self
        while r.outer is not None:
            r = r.outer
        return r

    def _root_unit(self) -> "Unit":
        return self._root().unit

    def sizeof(self, node: "Node") -> Affine:
        from kltrans.analysis.smem import type_size

        ty = node.child_by_field_name("type")
        if ty is None:  # sizeof(float4) parses as sizeof of a parenthesized name
            val = node.child_by_field_name("value")
            inner = _strip_parens(val) if val is not None else None
            if inner is not None and inner.type in ("identifier", "type_identifier"):
                ty = inner
        if ty is not None:
            size = type_size(self._root_unit(), _norm(self.unit.text(ty)))
            if size is not None:
                return Affine.const(size)
        return self.opaque(node)

    def ident(self, name: str, node: "Node") -> Affine:
        if name in self.args:
            return self.args[name]
        if name in self.env:
            return self.env[name]
        if self.outer is not None:
            return self.outer.ident(name, self.site)
        unit = self.unit
        b = _resolve(unit, node, name)
        k = b.kind
        if k == "builtin":
            return Affine.const(WARP_SIZE)
        if k == "macro":
            m = _unit_info(unit).macro(name, node.start_byte)
            if m is None or m.params is not None or not m.body:
                return Affine.sym(name)
            key = ("macro", m.name, m.start)
            got = macro_expr(unit, m)
            if got is None or key in self.active:
                return Affine.sym(name)
            self.active.add(key)
            try:
                sub, expr = got
                return Evaluator(sub, self.env, outer=self, site=node).ev(expr)
            except _NeedOpaque:
                return self.named_opaque(name, self._sources().ident(node, name))
            finally:
                self.active.discard(key)
        if k == "enum":
            v = _enum_value(unit, name)
            return Affine.const(v) if v is not None else Affine.sym(name)
        if k == "global_const":
            return self.substitute(b.key, b.value, name, node)
        if k in ("local", "param"):
            d = _reaching(unit, b, node)
            if d is not None and d.kind == "param":
                # a device function's parameter may carry anything from its caller
                return Affine.sym(name) if b.kernel else Affine.sym(name, {UNKNOWN_DEP})
            if d is not None and d.rhs is not None and d.rhs.type != "initializer_list":
                return self.substitute((b.key, d.pos), d.rhs, name, node)
            return Affine.sym(name, self._sources().binding(b))
        return Affine.sym(name)

    def substitute(self, key, value: "Node", name: str, use: "Node") -> Affine:
        if key in self.active:
            return Affine.sym(name)
        self.active.add(key)
        try:
            return self.ev(value)
        finally:
            self.active.discard(key)


def _enum_value(unit: "Unit", name: str) -> int | None:
    info = _unit_info(unit)
    got = info.enums.get(name)
    if got is None:
        return None
    lst, value, index = got
    if value is not None:
        v = affine_of(unit, value)
        return v.value() if v is not None else None
    if index == 0:
        return 0
    prev = [c for c in lst.named_children if c.type == "enumerator"][index - 1]
    pname = prev.child_by_field_name("name")
    pv = _enum_value(unit, unit.text(pname)) if pname is not None else None
    return pv + 1 if pv is not None else None


# =========================================================================== API
def affine_explain(unit: "Unit", expr_node: "Node", fn: "Function | None" = None,
                   env: Mapping[str, "Affine | int"] | None = None) -> tuple[Affine | None, str | None]:
    """Like :func:`affine_of`, and also say why an expression is not affine.

    Returns ``(affine, None)`` or ``(None, reason)``.
    """
    if expr_node is None:
        return None, "no expression"
    try:
        return Evaluator(unit, env).ev(expr_node), None
    except NotAffine as e:
        return None, e.reason
    except RecursionError:
        return None, "expression too deeply nested"
    except Exception as e:  # never raise on odd code
        return None, f"cannot read `{_norm(unit.text(expr_node))[:60]}` ({type(e).__name__})"


def affine_of(unit: "Unit", expr_node: "Node", fn: "Function | None" = None,
              env: Mapping[str, "Affine | int"] | None = None) -> Affine | None:
    """The polynomial form of an integer expression, or None when it is not one.

    ``fn`` is accepted for symmetry with the other analyses (names are resolved from the
    node's own position); ``env`` binds symbols (``{"BLOCK": 256, "blockDim.x": 128}``)
    and may also bind opaque terms by their text. See the module docstring for the rules.
    """
    return affine_explain(unit, expr_node, fn, env)[0]


def _index_of(unit: "Unit", node: "Node") -> "Node":
    """The index of a subscript (``x[i]`` -> ``i``); other nodes are returned as they are."""
    if node is not None and node.type == "subscript_expression":
        idx = node.child_by_field_name("indices") or node.child_by_field_name("index")
        if idx is not None:
            inner = [c for c in idx.named_children if c.type != "comment"]
            if len(inner) == 1:
                return inner[0]
    return node


def _substitute_inductions(unit: "Unit", a: Affine, node: "Node", symbol: str) -> Affine | None:
    """Replace induction variables that depend on ``symbol`` by ``init + step * #iter``.

    Only variables of a loop enclosing ``node`` whose step is free of ``symbol`` and that
    are assigned nowhere else in the loop qualify; for any other variable hiding
    ``symbol``, None.
    """
    from kltrans.analysis.loops import _defs_in_loop, loop_of

    mapping: dict[str, Affine] = {}
    for s in sorted(a.symbols()):
        ds = a.depends(s)
        if symbol not in ds and not (UNKNOWN_DEP in ds and symbol in INDEX_SYMBOLS):
            continue
        p = node.parent
        found = None
        while p is not None and p.type not in ("function_definition", "lambda_expression"):
            if p.type in LOOP_NODE_TYPES:
                lp = loop_of(unit, p)
                if lp is not None and lp.var == s:
                    found = lp
                    break
            p = p.parent
        if found is None or found.init is None or found.step is None:
            return None
        if symbol in found.step.free_symbols() or _defs_in_loop(unit, found) != 1:
            return None
        mapping[s] = found.init + found.step * Affine.sym(f"#iter({s})")
    return a.subs(mapping) if mapping else a


def index_stride(unit: "Unit", index_node: "Node", symbol: str = "threadIdx.x",
                 fn: "Function | None" = None) -> Affine | None:
    """The coefficient of ``symbol`` in an index (how far the address moves per step of it).

    ``index_node`` may be any integer expression, the whole subscript ``x[i]`` or the
    index of one; for a subscript the whole address counts (see :func:`unit_stride`). Loop
    induction variables are seen through (``for (i = gid; ...; i += stride) x[i]``: the
    stride of ``x[i]`` in ``threadIdx.x`` is that of ``gid``). None when the index is not
    affine or the coefficient cannot be known.
    """
    return _stride_explain(unit, index_node, symbol, fn)[0]


def _subscript_of(node: "Node") -> "Node | None":
    """The subscript expression ``node`` is (``x[i]``) or is the index of (``i``)."""
    if node is None:
        return None
    if node.type == "subscript_expression":
        return node
    p = node.parent
    if p is not None and p.type == "subscript_argument_list":
        q = p.parent
        if q is not None and q.type == "subscript_expression":
            return q
    return None


def _decl_dims(unit: "Unit", b: _Binding) -> list["Node | None"] | None:
    """The array sizes of a declared name (outermost first), or None when not an array."""
    if b.ident is None:
        return None
    dims: list = []
    p = b.ident.parent
    while p is not None and p.type in _DECLARATOR_TYPES:
        if p.type == "array_declarator":
            dims.append(p.child_by_field_name("size"))
        p = p.parent
    return dims or None


def _declared_pointer(unit: "Unit", b: _Binding) -> bool:
    if b.ident is None:
        return False
    p = b.ident.parent
    while p is not None and p.type in _DECLARATOR_TYPES:
        if p.type in ("pointer_declarator", "array_declarator"):
            return True
        p = p.parent
    return False


def _pointer_type(unit: "Unit", ty: "Node | None") -> bool:
    return ty is not None and any(n.type in ("abstract_pointer_declarator", "pointer_declarator")
                                  for n in unit.walk(ty))


def _pointerish(unit: "Unit", node: "Node", depth: int = 0) -> bool:
    """Whether an expression is (most likely) a pointer or an array."""
    node = _strip_parens(node)
    if node is None or depth > 20:
        return False
    t = node.type
    if t == "identifier":
        b = _resolve(unit, node, unit.text(node))
        if b.kind in ("param", "local", "global", "global_const"):
            if _declared_pointer(unit, b):
                return True
            if b.kind == "local" and b.value is not None and b.decl is not None:
                ty = b.decl.child_by_field_name("type")
                if ty is not None and unit.text(ty) == "auto":
                    return _pointerish(unit, b.value, depth + 1)
        return False
    if t == "pointer_expression":
        return unit.text(node.child_by_field_name("operator")) == "&"
    if t == "cast_expression":
        return _pointer_type(unit, node.child_by_field_name("type"))
    if t == "call_expression":
        f = node.child_by_field_name("function")
        return f is not None and f.type == "template_function" and \
            _pointer_type(unit, f.child_by_field_name("arguments"))
    if t == "binary_expression":
        op = unit.text(node.child_by_field_name("operator"))
        return op in ("+", "-") and (_pointerish(unit, node.child_by_field_name("left"), depth + 1)
                                     or (op == "+" and _pointerish(
                                         unit, node.child_by_field_name("right"), depth + 1)))
    if t == "subscript_expression":  # a row of a 2D array
        chain, base = _subscript_chain(node)
        if base.type == "identifier":
            b = _resolve(unit, base, unit.text(base))
            dims = _decl_dims(unit, b)
            return dims is not None and len(dims) > len(chain)
    if t == "conditional_expression":
        return _pointerish(unit, node.child_by_field_name("consequence"), depth + 1)
    return False


def _subscript_chain(node: "Node"):
    """``a[i][j]`` -> ([i, j], a)."""
    idx = []
    while node is not None and node.type == "subscript_expression":
        i = _index_of(None, node)
        idx.insert(0, i)
        node = _strip_parens(node.child_by_field_name("argument"))
    return idx, node


class _AddrError(Exception):
    pass


def _base_offset(unit: "Unit", node: "Node", ev: "Evaluator", depth: int = 0) -> tuple[Affine, str]:
    """(element offset of a pointer expression from the array it points into, element type
    note). Raises _AddrError when it cannot be followed."""
    node = _strip_parens(node)
    if depth > 20:
        raise _AddrError("pointer chain too long")
    t = node.type
    text = _norm(unit.text(node))
    if t == "identifier":
        name = unit.text(node)
        b = _resolve(unit, node, name)
        if b.kind == "param":
            d = _reaching(unit, b, node)
            if d is not None and d.kind == "param":
                return Affine(), ""
        if b.kind in ("local", "param"):
            if _decl_dims(unit, b) is not None and b.kind == "local":
                return Affine(), ""  # an array: its own storage
            d = _reaching(unit, b, node)
            if d is not None and d.rhs is not None:
                return _base_offset(unit, d.rhs, ev, depth + 1)
            srcs = ev._sources().binding(b)
            if srcs & (THREAD_SYMBOLS | {UNKNOWN_DEP}):
                raise _AddrError(f"pointer `{name}` is re-assigned and depends on the thread")
            return Affine.sym(f"&{name}", srcs), ""
        return Affine(), ""
    if t == "binary_expression":
        op = unit.text(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op in ("+", "-") and _pointerish(unit, left):
            off, note = _base_offset(unit, left, ev, depth + 1)
            k = ev.ev(right)
            return (off + k if op == "+" else off - k), note
        if op == "+" and _pointerish(unit, right):
            off, note = _base_offset(unit, right, ev, depth + 1)
            return off + ev.ev(left), note
        raise _AddrError(f"cannot follow pointer `{text}`")
    if t == "pointer_expression" and unit.text(node.child_by_field_name("operator")) == "&":
        arg = _strip_parens(node.child_by_field_name("argument"))
        if arg is not None and arg.type == "subscript_expression":
            return element_address(unit, arg, ev, depth + 1)
        if arg is not None and arg.type == "identifier":
            return Affine(), ""  # the address of a variable: its own storage
        raise _AddrError(f"cannot follow pointer `{text}`")
    cast_inner = None
    if t == "cast_expression":
        cast_inner = node.child_by_field_name("value")
    elif t == "call_expression":
        f = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if f is not None and f.type == "template_function" and args is not None and \
                len(args.named_children) == 1:
            cast_inner = args.named_children[0]
    if cast_inner is not None:
        off, _note = _base_offset(unit, cast_inner, ev, depth + 1)
        if off == 0:
            return off, "cast"
        raise _AddrError(f"`{text}` re-types a pointer that is already offset")
    if t == "subscript_expression":  # a row of a multi-dimensional array
        return element_address(unit, node, ev, depth + 1, row=True)
    srcs = ev._sources().of(node)
    if srcs & (THREAD_SYMBOLS | {UNKNOWN_DEP}):
        raise _AddrError(f"cannot follow pointer `{text}`")
    return Affine.sym(f"&({text})", srcs), ""


def element_address(unit: "Unit", sub: "Node", ev: "Evaluator", depth: int = 0,
                    row: bool = False) -> tuple[Affine, str]:
    """Element offset of ``a[i]...[k]`` from the start of the array ``a`` points into.

    ``row``: the chain is a prefix (``tile[i]`` of ``tile[i][j]``): the result counts
    whole rows' worth of elements, ready to be added to the last index.
    """
    chain, base = _subscript_chain(sub)
    dims = None
    if base is not None and base.type == "identifier":
        b = _resolve(unit, base, unit.text(base))
        dnodes = _decl_dims(unit, b)
        if dnodes is not None:
            dims = []
            for i, dn in enumerate(dnodes):
                a = affine_of(unit, dn) if dn is not None else None
                dims.append(a if a is not None else Affine.sym(f"dim{i}({unit.text(base)})"))
    if dims is not None and len(dims) >= len(chain):
        addr = Affine()
        for i, idx in enumerate(chain):
            addr = addr * dims[i] + ev.ev(idx) if i else ev.ev(idx)
        for d in dims[len(chain):]:
            addr = addr * d
        return addr, ""
    if len(chain) > 1:
        raise _AddrError(f"the dimensions of `{_norm(unit.text(base))}` are unknown")
    off, note = _base_offset(unit, base, ev, depth + 1)
    return off + ev.ev(chain[0]), note


def _stride_explain(unit, index_node, symbol, fn) -> tuple[Affine | None, str | None, Affine | None]:
    sub = _subscript_of(index_node)
    if sub is not None:
        ev = Evaluator(unit)
        try:
            a = element_address(unit, sub, ev)[0]
        except _AddrError as e:
            return None, str(e), None
        except NotAffine as e:
            return None, e.reason, None
        except RecursionError:
            return None, "expression too deeply nested", None
        node = sub
    else:
        node = index_node
        a, why = affine_explain(unit, node, fn)
        if a is None:
            return None, why, None
    try:
        b = _substitute_inductions(unit, a, node, symbol)
    except Exception:  # pragma: no cover - defensive
        b = None
    if b is None:
        callers = sorted(s for s in a.symbols() if UNKNOWN_DEP in a.depends(s))
        if callers:
            return None, (f"`{callers[0]}` comes from the caller of the device function; "
                          f"its dependence on {symbol} is decided there"), a
        hidden = sorted(s for s in a.symbols() if symbol in a.depends(s))
        return None, (f"`{hidden[0]}` depends on {symbol} but is not an induction variable "
                      f"with a step free of {symbol}"
                      if hidden else f"cannot see through `{a}`"), a
    c = b.coeff(symbol)
    if c is None:
        callers = sorted(s for s in b.symbols() if UNKNOWN_DEP in b.depends(s))
        if callers:
            return None, (f"`{callers[0]}` comes from the caller of the device function; "
                          f"its dependence on {symbol} is decided there"), a
        return None, f"{symbol} appears non-linearly in {a}", a
    return c, None, a


def unit_stride(unit: "Unit", index_node: "Node", symbol: str = "threadIdx.x",
                fn: "Function | None" = None) -> Verdict:
    """Holds when the address moves by exactly 1 element per step of ``symbol``.

    For a subscript (or the index of one) the whole address is used: the offset of a
    local pointer it goes through (``float* row = x + r * n; row[j]``) and the row length
    of a multi-dimensional array (``tile[ty][tx]``) count.
    """
    c, why, a = _stride_explain(unit, index_node, symbol, fn)
    text = _norm(unit.text(_subscript_of(index_node) or index_node)) if index_node is not None else "?"
    if c is None:
        return Verdict.unknown(f"`{text}`: {why}")
    if c == 1:
        return Verdict.yes(f"`{text}` at offset {a}: stride 1 in {symbol}")
    if c.is_const():
        if c.value() == 0:
            return Verdict.no(f"`{text}` does not depend on {symbol} (stride 0)")
        return Verdict.no(f"`{text}` at offset {a}: stride {c} in {symbol}")
    return Verdict.unknown(f"`{text}` at offset {a}: stride {c} in {symbol}, 1 only when {c} == 1")


def is_coalesced(unit: "Unit", index_node: "Node", fn: "Function | None" = None) -> Verdict:
    """Holds when consecutive ``threadIdx.x`` give consecutive elements (stride 1).

    A stride of 0 (every thread of the warp reads the same element) is a broadcast, not a
    coalesced access, and fails with that reason.
    """
    v = unit_stride(unit, index_node, "threadIdx.x", fn)
    if v.fails and "stride 0" in v.reason:
        return Verdict.no(v.reason + ": a broadcast, not a coalesced access")
    if v.holds:
        return Verdict.yes(v.reason + ": consecutive threads touch consecutive elements")
    return v


_unit_info = unit_info  # the name the package's own modules use
_resolve = resolve_name  # the name the package's own modules use
