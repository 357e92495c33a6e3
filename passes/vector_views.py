"""Vector views of scalar arrays, in any spelling: ``scalarize-vectors`` (simplify) and its
inverse ``vectorize-views`` (optimize).

Built on the kernel model: the sites of ``scalarize-vectors`` are the accesses that
:func:`kltrans.model.accesses.accesses` reads as vector views of a scalar array, however
they are spelled (``reinterpret_cast<const float4*>(x)[i]``, ``*reinterpret_cast<float4*>
(&x[j])``, ``((float4*)y)[i]``, a ``const float4*`` alias, through helpers); the model says
which array, which element type and how wide.
"""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis.affine import affine_of, strip_parens
from kltrans.analysis.verdict import Verdict
from kltrans.match import Match, Rule
from kltrans.model.accesses import accesses
from kltrans.passes import Bool, Choice, Identifier, Pass, Precondition, Site, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import brace, fresh_name, indent_of, line_start
from kltrans.syntax import Edit

# vector type -> (component type, width); each is built by its constructor (CONSTRUCTORS)
VECTORS = {"float2": ("float", 2), "float4": ("float", 4), "int2": ("int", 2),
           "int4": ("int", 4), "uint2": ("unsigned int", 2), "uint4": ("unsigned int", 4),
           "double2": ("double", 2), "longlong2": ("long long", 2),
           "ulonglong2": ("unsigned long long", 2)}
VECTORS.update({"__half2": ("__half", 2), "half2": ("__half", 2),
                "__nv_bfloat162": ("__nv_bfloat16", 2)})
CONSTRUCTORS = {v: f"make_{v}" for v in VECTORS}
CONSTRUCTORS.update({"__half2": "__halves2half2", "half2": "__halves2half2",
                     "__nv_bfloat162": "__halves2bfloat162"})
_BY_CONSTRUCTOR = {c: v for v, c in CONSTRUCTORS.items() if v != "half2"}
FIELDS = ("x", "y", "z", "w")
_SCALAR = {"unsigned": "unsigned int", "signed": "int", "signed int": "int", "half": "__half",
           "nv_bfloat16": "__nv_bfloat16"}
# a scalar view of a byte buffer (an extern __shared__ char array used as float*) is no
# vector access
_SCALARS = {"char", "unsigned char", "signed char", "short", "unsigned short", "int",
            "unsigned int", "long", "unsigned long", "long long", "unsigned long long", "float",
            "double", "__half", "half", "__nv_bfloat16", "bool"}


def _scalar(t: str | None) -> str:
    words = [w for w in (t or "").replace("*", " ").split()
             if w not in ("const", "volatile", "__restrict__", "__restrict", "restrict")]
    text = " ".join(words)
    return _SCALAR.get(text, text)


def _vector_of(elem: str, width: int) -> str | None:
    return next((v for v, (c, w) in VECTORS.items()
                 if c == _scalar(elem) and w == width and v != "half2"), None)


def _cast_target(unit, node):
    """(pointer operand, cast type text) when ``node`` is a cast to a pointer type."""
    node = strip_parens(node)
    if node.type == "cast_expression":
        return node.child_by_field_name("value"), unit.text(node.child_by_field_name("type"))
    if node.type == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is not None and fn.type == "template_function" and unit.text(
                fn.child_by_field_name("name")) in ("reinterpret_cast", "static_cast"):
            args = node.child_by_field_name("arguments").named_children
            if len(args) == 1:
                return args[0], unit.text(fn.child_by_field_name("arguments"))[1:-1]
    return None, None


def _plus(a: str, b: str) -> str:
    return b if a in ("", "0") else a if b in ("", "0") else f"{a} + {b}"


def _term(text: str) -> str:
    """``text`` as an operand of ``*`` or ``+``: parenthesized unless it is one token."""
    t = text.strip()
    return t if t.replace("_", "").replace(".", "").isalnum() else f"({t})"


# ------------------------------------------------------------ scalarize: site analysis
@dataclass(frozen=True)
class _View:
    pointer: str  # a scalar pointer expression (text) the components are read through
    offset: str  # the element offset of component 0 (text; "" for 0)
    vector: str
    width: int
    form: str  # subscript | deref | element (how the expert spelled it)
    const: bool
    call: str | None = None  # a cache-hinted load or store intrinsic (__ldg, __stcs ...)
    alias: str | None = None  # the vector pointer variable the expert read through

    def element(self, k: int) -> str:
        return f"{self.pointer}[{_plus(self.offset, str(k)) or '0'}]"


def _address(unit, node):
    """(vector pointer, index text, form, intrinsic) of a vector access node."""
    if node.type == "subscript_expression":
        idx = node.child_by_field_name("indices").named_children
        return (node.child_by_field_name("argument"),
                unit.text(idx[0]) if len(idx) == 1 else None, "subscript", None)
    if node.type == "pointer_expression":
        return node.child_by_field_name("argument"), "0", "deref", None
    if node.type == "call_expression":  # __ldg(p + i), __stcs(&p[i], v)
        args = node.child_by_field_name("arguments").named_children
        call = unit.text(node.child_by_field_name("function"))
        addr = strip_parens(args[0]) if args else None
        if addr is None:
            return None, None, "", call
        if addr.type == "binary_expression" and unit.text(addr.child_by_field_name("operator")) == "+":
            return addr.child_by_field_name("left"), unit.text(addr.child_by_field_name("right")), "subscript", call
        if addr.type == "pointer_expression" and unit.text(addr.child_by_field_name("operator")) == "&":
            sub = strip_parens(addr.child_by_field_name("argument"))
            if sub.type == "subscript_expression":
                idx = sub.child_by_field_name("indices").named_children
                return (sub.child_by_field_name("argument"),
                        unit.text(idx[0]) if len(idx) == 1 else None, "subscript", call)
        return addr, "0", "deref", call
    return None, None, "", None


def _alias_init(unit, fn, name: str, pos: int):
    """The initializer of local pointer ``name`` as seen at byte ``pos``: the innermost
    declaration with a value in a scope around ``pos`` and before it, when that scope never
    assigns ``name`` again; else None."""
    best = None
    for decl in unit.nodes_of_type("init_declarator", within=fn.node):
        target = decl.child_by_field_name("declarator")
        while target is not None and target.type == "pointer_declarator":
            target = target.child_by_field_name("declarator")
        scope = decl.parent.parent if decl.parent is not None else None
        if (target is None or unit.text(target) != name or scope is None
                or decl.end_byte > pos or not (scope.start_byte <= pos < scope.end_byte)):
            continue
        if best is None or scope.start_byte >= best[1].start_byte:
            best = (decl, scope)
    if best is None:
        return None
    for kind in ("assignment_expression", "update_expression"):
        for n in unit.nodes_of_type(kind, within=best[1]):
            target = n.child_by_field_name("left") or n.child_by_field_name("argument")
            if target is not None and unit.text(strip_parens(target)) == name:
                return None
    return best[0].child_by_field_name("value")


def _alias_value(unit, fn, ptr):
    """What ``ptr`` stands for: the initializer of the alias it names, else itself."""
    ptr = strip_parens(ptr)
    if ptr.type != "identifier" or fn is None:
        return ptr
    value = _alias_init(unit, fn, unit.text(ptr), ptr.start_byte)
    return ptr if value is None else value


def _peel(unit, inner, base: str | None):
    """(array, element offset) of a scalar pointer ``X``, ``X + J`` or ``&X[J]`` (``X`` the
    access's base when it is a bare name)."""
    inner = strip_parens(inner)
    if inner.type == "pointer_expression" and unit.text(inner.child_by_field_name("operator")) == "&":
        sub = strip_parens(inner.child_by_field_name("argument"))
        if sub.type == "subscript_expression":
            j = sub.child_by_field_name("indices").named_children
            if len(j) == 1:
                return unit.text(sub.child_by_field_name("argument")), unit.text(j[0])
    if inner.type == "binary_expression" and unit.text(inner.child_by_field_name("operator")) == "+":
        return unit.text(inner.child_by_field_name("left")), unit.text(inner.child_by_field_name("right"))
    if inner.type == "identifier" and (base is None or unit.text(inner) == base):
        return unit.text(inner), ""
    return None


def _view(site: Site) -> _View | None:
    unit, a = site.unit, site.match.get("ACCESS")
    vec = (a.view or "").replace("const", "").strip()
    ptr, index, form, call = _address(unit, a.node)
    if ptr is None or index is None or vec not in VECTORS:
        return None
    comp, width = VECTORS[vec]
    value = _alias_value(unit, site.function, ptr)
    alias = unit.text(strip_parens(ptr)) if value is not strip_parens(ptr) else None
    inner, cast = _cast_target(unit, value)
    const = "const" in (cast or "")
    offset = "" if index.strip() == "0" else f"{width} * {_term(index)}"
    peeled = _peel(unit, inner, None) if inner is not None else None
    if peeled is not None:
        if form == "subscript" and not offset and peeled[1] and not call:
            form = "element"  # reinterpret_cast<V*>(&x[j])[0]
        return _View(peeled[0], _plus(peeled[1], offset), vec, width, form, const, call, alias)
    # any other vector pointer: read the components through a cast back
    qual = "const " if a.mode == "read" else ""
    return _View(f"reinterpret_cast<{qual}{comp}*>({unit.text(ptr)})", offset, vec, width,
                 form, const, call)


# ----------------------------------------------------------- scalarize: preconditions
def _vector_type(site, ctx) -> Verdict:
    a = site.match.get("ACCESS")
    vec = (a.view or "").replace("const", "").strip()
    if vec not in VECTORS:
        return Verdict.no(f"a {a.view} view is not a CUDA vector type of one component "
                          f"type (packed halves and structs are not split here)")
    if VECTORS[vec][0] != _scalar(a.elem_type):
        return Verdict.no(f"a {vec} view of {a.elem_type} data: its components are not "
                          f"elements of {a.base}")
    return Verdict.yes(f"{vec}: {VECTORS[vec][1]} elements of {a.base} ({a.elem_type})")


def _whole_vector(site, ctx) -> Verdict:
    a = site.match.get("ACCESS")
    parent = a.node.parent
    if parent is not None and parent.type == "field_expression":
        return Verdict.no("only one component is used: the access is already scalar")
    if a.mode not in ("read", "write"):
        return Verdict.no(f"a {a.mode} access of the whole vector (not a plain load or store)")
    return Verdict.yes(f"a {a.mode} of the whole vector")


def _plain_store(site, ctx) -> Verdict:
    a = site.match.get("ACCESS")
    if a.mode != "write":
        return Verdict.yes("a load")
    if a.node.type == "call_expression":
        if a.node.parent is None or a.node.parent.type != "expression_statement":
            return Verdict.no("the store intrinsic's value is used")
        return Verdict.yes("a store intrinsic statement")
    asg = a.node.parent
    if (asg is None or asg.type != "assignment_expression"
            or site.unit.text(asg.child_by_field_name("operator")) != "="
            or asg.parent is None or asg.parent.type != "expression_statement"):
        return Verdict.no("the store is not a statement `VIEW = value;`")
    return Verdict.yes("a store statement")


@dataclass(frozen=True)
class ScalarizeVectors(Pass):
    """Split a vector access of a scalar array into one access per component.

    Before::

        const float4 v = reinterpret_cast<const float4*>(x)[i];
        reinterpret_cast<float4*>(y)[i] = w;

    After::

        const float4 v = make_float4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
        y[4 * i] = w.x;
        y[4 * i + 1] = w.y;
        y[4 * i + 2] = w.z;
        y[4 * i + 3] = w.w;

    Sites: every access the kernel model reads as a vector view of a scalar array, in any
    spelling (casts, ``*reinterpret_cast<...>(&x[j])``, aliases, helpers).

    Preconditions: vector-type (dtype: the view is a CUDA vector of the array's element
    type), whole-vector (layout: a load or store of all components), plain-store (layout:
    a store is a statement ``VIEW = value;``).

    Options: none.
    """

    name = "scalarize-vectors"
    kind = "simplify"
    inverse = "vectorize-views"
    anchor = Rule(kind="function_definition")
    scope = "device"
    preconditions = (
        Precondition("vector-type", "dtype", "the view is a CUDA vector of the array's "
                     "element type", _vector_type),
        Precondition("whole-vector", "layout", "the access loads or stores every component",
                     _whole_vector),
        Precondition("plain-store", "layout", "a store is a statement VIEW = value;",
                     _plain_store),
    )

    def sites(self, unit, ctx):
        out = []
        for s in super().sites(unit, ctx):
            if s.function is None:
                continue
            for a in accesses(unit, s.function):
                # a device function's pointer parameter is in an unknown space: splitting
                # a vector access is valid in every space
                if (a.width and a.width > 1 and a.base is not None
                        and a.space in ("global", "shared", "unknown")
                        and _scalar(a.view) not in _SCALARS):
                    out.append(Site(unit, Match(unit, a.node, {"ACCESS": a}), s.function,
                                    len(out) + 1, self))
        return out

    def rewrite(self, site, ctx):
        unit, a = site.unit, site.match.get("ACCESS")
        v = _view(site)
        if v is None:
            raise SkipSite("the vector's index is not one expression")
        elems = [v.element(k) for k in range(v.width)]
        if a.mode == "read":
            if v.call:
                elems = [f"{v.call}(&{e})" for e in elems]
            return [Edit.replace(a.node, f"{CONSTRUCTORS[v.vector]}({', '.join(elems)})")]
        if v.call:
            stmt = a.node.parent
            value = a.node.child_by_field_name("arguments").named_children[1]
        else:
            stmt = a.node.parent.parent
            value = a.node.parent.child_by_field_name("right")
        lines = []
        src = site.unit.text(value)
        if strip_parens(value).type != "identifier":
            tmp = fresh_name(unit, site.function.node, ("v4", "vec"))
            lines.append(f"const {v.vector} {tmp} = {src};")
            src = tmp
        if v.call:
            lines += [f"{v.call}(&{e}, {src}.{FIELDS[k]});" for k, e in enumerate(elems)]
        else:
            lines += [f"{e} = {src}.{FIELDS[k]};" for k, e in enumerate(elems)]
        indent = indent_of(unit, stmt.start_byte)
        own_line = unit.source[line_start(unit, stmt.start_byte):stmt.start_byte].strip() == b""
        sep = "\n" + indent + ("" if own_line else "    ")
        if stmt.parent is not None and stmt.parent.type != "compound_statement":
            edits = brace(unit, stmt)
            return edits[:1] + [Edit.replace(stmt, sep.join(lines))] + edits[1:]
        return [Edit.replace(stmt, sep.join(lines))]

    def inverse_for(self, site, ctx):
        v = _view(site)
        if v is None:
            return VectorizeViews()
        load = site.match.get("ACCESS").mode == "read"
        return VectorizeViews(form=v.form, const=v.const if load else True,
                              via=v.alias or "none")


# ---------------------------------------------------------------- vectorize: sites
def _element_access(unit, node):
    """(array, offset node, intrinsic or None) of ``X[E]`` or ``H(&X[E])``."""
    node = strip_parens(node)
    call = None
    if node.type == "call_expression":
        args = node.child_by_field_name("arguments").named_children
        call = unit.text(node.child_by_field_name("function"))
        node = strip_parens(args[0]) if args else node
        if node.type != "pointer_expression" or unit.text(node.child_by_field_name("operator")) != "&":
            return None
        node = strip_parens(node.child_by_field_name("argument"))
    if node.type != "subscript_expression":
        return None
    idx = node.child_by_field_name("indices").named_children
    if len(idx) != 1:
        return None
    return unit.text(node.child_by_field_name("argument")), idx[0], call


def _run_offsets(unit, subs):
    """(array, the offset node of component 0, intrinsic or None) when ``subs`` access one
    array at consecutive offsets, all plainly or all through the same intrinsic."""
    got = [_element_access(unit, s) for s in subs]
    if any(g is None for g in got) or len({(g[0], g[2]) for g in got}) != 1:
        return None
    first, text0 = affine_of(unit, got[0][1]), unit.text(got[0][1])
    for k, g in enumerate(got[1:], 1):
        e = affine_of(unit, g[1]) if first is not None else None
        # consecutive as polynomials, or written E, E + 1, E + 2 ... (a thread-dependent E
        # the polynomial reader refuses)
        if not (e is not None and e - first == k or unit.text(g[1]) == f"{text0} + {k}"):
            return None
    return got[0][0], got[0][1], got[0][2]


def _load_sites(unit, fn):
    for call in unit.nodes_of_type("call_expression", within=fn.node):
        name = unit.text(call.child_by_field_name("function"))
        vec = _BY_CONSTRUCTOR.get(name, "")
        if vec not in VECTORS:
            continue
        args = [c for c in call.child_by_field_name("arguments").named_children if c.type != "comment"]
        run = _run_offsets(unit, args) if len(args) == VECTORS[vec][1] else None
        if run is not None:
            yield call, {"VEC": vec, "ARRAY": run[0], "OFFSET": unit.text(run[1]),
                         "OFFSET_NODE": run[1], "CALL": run[2], "KIND": "load"}


def _store_sites(unit, fn):
    for block in unit.nodes_of_type("compound_statement", within=fn.node):
        stmts = [c for c in block.named_children if c.type != "comment"]
        i = 0
        while i < len(stmts):
            found = _store_run(unit, stmts, i)
            if found is None:
                i += 1
                continue
            width, array, off, call, value = found
            vec = _vector_of(_element_type(unit, fn, array) or "", width) or f"{width}-wide"
            yield stmts[i], {"VEC": vec, "WIDTH": width, "ARRAY": array,
                             "OFFSET": unit.text(off), "OFFSET_NODE": off, "CALL": call,
                             "VALUE": value, "RUN": tuple(stmts[i:i + width]), "KIND": "store"}
            i += width


def _stored(unit, st):
    """(element access node, value node) of ``X[E] = v;`` or ``H(&X[E], v);``."""
    e = st.named_children[0] if st.type == "expression_statement" and st.named_children else None
    if e is None:
        return None
    if e.type == "assignment_expression" and unit.text(e.child_by_field_name("operator")) == "=":
        return e.child_by_field_name("left"), e.child_by_field_name("right")
    if e.type == "call_expression":
        args = e.child_by_field_name("arguments").named_children
        if len(args) == 2:
            return e, args[1]
    return None


def _store_run(unit, stmts, i):
    """(width, array, offset node, intrinsic, value) when statements ``i..`` store the
    components of one vector value, in order, to consecutive elements of one array."""
    for width in (4, 2):
        run = stmts[i:i + width]
        if len(run) < width:
            continue
        lefts, value = [], None
        for k, st in enumerate(run):
            got = _stored(unit, st)
            if got is None:
                break
            right = strip_parens(got[1])
            if right.type != "field_expression" or unit.text(right.child_by_field_name("field")) != FIELDS[k]:
                break
            obj = unit.text(right.child_by_field_name("argument"))
            if value not in (None, obj):
                break
            value = obj
            lefts.append(got[0])
        else:
            found = _run_offsets(unit, lefts)
            if found is not None:
                return width, found[0], found[1], found[2], value
    return None


def _declared_type(unit, fn, name: str) -> str | None:
    for p in fn.params:
        if p.name == name:
            return p.type
    for decl in unit.nodes_of_type("declaration", within=fn.node):
        for d in decl.children_by_field_name("declarator"):
            target = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            stars = ""
            while target is not None and target.type == "pointer_declarator":
                target, stars = target.child_by_field_name("declarator"), stars + "*"
            if target is not None and unit.text(target) == name:
                return unit.text(decl.child_by_field_name("type")) + stars
    return None


def _element_type(unit, fn, array: str) -> str | None:
    """The array's element type as the model resolves it (typedefs, template parameters),
    else as its parameter declares it."""
    for a in accesses(unit, fn):
        if a.base == array and a.elem_type:
            return a.elem_type
    for p in fn.params:
        if p.name == array:
            return p.type
    return _declared_type(unit, fn, array)


def _component_type(site, ctx) -> Verdict:
    b = site.match.bindings
    elem = _element_type(site.unit, site.function, b["ARRAY"])
    if b["VEC"] not in VECTORS:
        return Verdict.no(f"{b['ARRAY']} holds {elem or 'an unknown type'}: no CUDA vector "
                          f"type has {b['WIDTH']} of them")
    comp = VECTORS[b["VEC"]][0]
    if _scalar(elem) != comp:
        return Verdict.no(f"{b['ARRAY']} holds {elem or 'an unknown type'}, not {comp}: a "
                          f"{b['VEC']} view would reinterpret its bytes")
    if b["KIND"] == "store":
        vt = _declared_type(site.unit, site.function, b["VALUE"])
        if vt is None or _scalar(vt) != b["VEC"]:
            return Verdict.unknown(f"{b['VALUE']} is not declared a {b['VEC']} here "
                                   f"({vt or 'no declaration found'})")
    return Verdict.yes(f"{b['ARRAY']} holds {comp}")


def _aligned(site, ctx) -> Verdict:
    b = site.match.bindings
    if b["VEC"] not in VECTORS:
        return Verdict.unknown("no vector type for the array's elements")
    comp, width = VECTORS[b["VEC"]]
    nbytes = {"double": 8, "long long": 8, "unsigned long long": 8}.get(comp, 4) * width
    off = affine_of(site.unit, b["OFFSET_NODE"])
    if off is None or off.divisible_by(width) is not True:
        if not ctx.divisible(b["OFFSET"], width):
            return Verdict.unknown(f"the offset {b['OFFSET']} is not known to be a multiple of "
                                   f"{width} (--assume '{b['OFFSET']}%{width}==0')")
    if not ctx.aligned(b["ARRAY"], nbytes):
        return Verdict.unknown(f"{b['ARRAY']} must be {nbytes}-byte aligned (--assume "
                               f"'aligned({b['ARRAY']},{nbytes})' or 'aligned(*,{nbytes})')")
    return Verdict.yes(f"{b['ARRAY']} is {nbytes}-byte aligned and {b['OFFSET']} a multiple "
                       f"of {width}")


@dataclass(frozen=True)
class VectorizeViews(Pass):
    """Load or store consecutive elements of an array as one vector access.

    Before::

        const float4 v = make_float4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
        y[4 * i] = w.x; y[4 * i + 1] = w.y; y[4 * i + 2] = w.z; y[4 * i + 3] = w.w;

    After::

        const float4 v = reinterpret_cast<const float4*>(x)[i];
        reinterpret_cast<float4*>(y)[4 * i / 4] = w;   (form=subscript: y[i] when the
                                                        offset is written 4 * i)

    Sites: a ``make_float4``/``make_int2``/... of consecutive elements of one array, and
    a run of statements storing the components of one vector, in order, to consecutive
    elements.

    Preconditions: component-type (dtype: the array's elements are the vector's
    component type, so the view does not reinterpret bytes), aligned (storage: the first
    offset is a multiple of the width and the array aligned to the vector's size).

    Options: ``form`` (``subscript``: ``reinterpret_cast<V*>(x)[i]``; ``deref``:
    ``*reinterpret_cast<V*>(&x[j])``; ``element``: ``reinterpret_cast<V*>(&x[j])[0]``),
    ``const`` (loads through a const view), ``via`` (a vector pointer variable of the array
    in scope to access through, as the expert did: ``x4[i]``).
    """

    name = "vectorize-views"
    kind = "optimize"
    inverse = "scalarize-vectors"
    anchor = Rule(kind="function_definition")
    scope = "device"
    preconditions = (
        Precondition("component-type", "dtype", "the array holds the vector's component type",
                     _component_type),
        Precondition("aligned", "storage", "the first offset is a multiple of the width and "
                     "the array is aligned to the vector's size", _aligned),
    )

    form: str = option("subscript", Choice("subscript", "deref", "element"),
                       "how the view is spelled: V(x)[i], *V(&x[j]) or V(&x[j])[0]")
    const: bool = option(True, Bool(), "loads through a const view")
    via: str = option("none", Identifier(words=("none",)),
                      "a vector pointer variable of the array to access through, when one "
                      "is in scope (none: a cast of the array)")

    def sites(self, unit, ctx):
        out = []
        for s in super().sites(unit, ctx):
            if s.function is None:
                continue
            found = list(_load_sites(unit, s.function)) + list(_store_sites(unit, s.function))
            for node, b in sorted(found, key=lambda t: t[0].start_byte):
                out.append(Site(unit, Match(unit, node, b), s.function, len(out) + 1, self))
        return out

    def _pointer(self, site, load: bool) -> tuple[str, str | None]:
        """(the vector pointer, its index or None) in the option's form."""
        b = site.match.bindings
        vec, width = b["VEC"], VECTORS[b["VEC"]][1]
        qual = "const " if load and self.const else ""
        off = b["OFFSET"].strip()
        start, ptr = "", f"reinterpret_cast<{qual}{vec}*>({b['ARRAY']})"
        via = self._via(site)
        if via is not None:
            start, ptr = via
        rest = off if not start else off[len(start) + 3:] if off.startswith(start + " + ") else None
        head = f"{width} * "
        if rest is not None and (self.form == "subscript" or via is not None) and (
                rest in ("", "0") or rest.startswith(head) and "+" not in rest[len(head):]):
            index = "0" if rest in ("", "0") else rest[len(head):].strip()
            if index.startswith("(") and index.endswith(")"):
                index = index[1:-1]
            return ptr, index
        if self.form == "element" and not b["CALL"]:
            return f"reinterpret_cast<{qual}{vec}*>(&{b['ARRAY']}[{off}])", "0"
        return f"reinterpret_cast<{qual}{vec}*>(&{b['ARRAY']}[{off}])", None

    def _via(self, site) -> tuple[str, str] | None:
        """(element offset where the ``via`` pointer starts, its name) when it is a view of
        the site's array declared once and never reassigned in the function."""
        if self.via == "none":
            return None
        unit, b = site.unit, site.match.bindings
        value = _alias_init(unit, site.function, self.via, site.node.start_byte)
        if value is None:
            return None
        inner, cast = _cast_target(unit, value)
        peeled = _peel(unit, inner, None) if inner is not None else None
        if peeled is None or peeled[0] != b["ARRAY"] or b["VEC"] not in (cast or ""):
            return None
        return peeled[1], self.via

    def _access(self, site, load: bool) -> str:
        b = site.match.bindings
        ptr, index = self._pointer(site, load)
        if b["CALL"]:
            return f"{ptr} + {index}" if index is not None else ptr
        return f"{ptr}[{index}]" if index is not None else f"*{ptr}"

    def rewrite(self, site, ctx):
        b = site.match.bindings
        if b["KIND"] == "load":
            text = self._access(site, True)
            return [Edit.replace(site.node, f"{b['CALL']}({text})" if b["CALL"] else text)]
        run = b["RUN"]
        text = self._access(site, False)
        stmt = (f"{b['CALL']}({text}, {b['VALUE']});" if b["CALL"]
                else f"{text} = {b['VALUE']};")
        return [Edit(run[0].start_byte, run[-1].end_byte, stmt)]

    def inverse_for(self, site, ctx):
        return ScalarizeVectors()
