"""No-alias pointers: ``restrict-pointers`` (optimize) and ``unrestrict-pointers`` (simplify)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from kltrans.analysis.pointers import pointer_params
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Bool, NameList, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.reductions import local_assigned


def _params(site):
    return pointer_params(site.unit, site.function)


def _decl(site, name: str):
    """The parameter_declaration node of parameter ``name``."""
    unit = site.unit
    fdecl = site.function.node.child_by_field_name("declarator")
    while fdecl is not None and fdecl.type != "function_declarator":
        fdecl = fdecl.child_by_field_name("declarator")
    for c in fdecl.child_by_field_name("parameters").named_children:
        d = c.child_by_field_name("declarator")
        while d is not None and d.type != "identifier":
            d = d.child_by_field_name("declarator") or next(
                (x for x in d.named_children if x.type != "type_qualifier"), None)
        if d is not None and unit.text(d) == name:
            return c
    raise LookupError(name)


def _plain_pointer(site, p) -> bool:
    """A one-level pointer parameter ``T* name`` (not ``T (*name)[N]`` nor a function
    pointer): the only kind restrict-pointers qualifies."""
    try:
        decl = _decl(site, p.name)
    except LookupError:
        return False
    ptr = decl.child_by_field_name("declarator")
    return ptr is not None and ptr.type == "pointer_declarator" and \
        ptr.child_by_field_name("declarator") is not None and \
        ptr.child_by_field_name("declarator").type == "identifier"


def _targets(site):
    """Pointer parameters restrict-pointers would change: those without __restrict__
    (one-level pointers only)."""
    return [p for p in _params(site) if not p.restrict and p.param.pointer == 1
            and _plain_pointer(site, p)]


_RESTRICT = ("__restrict__", "__restrict", "restrict")


@dataclass
class _Local:
    """A pointer declared in the kernel body: ``[const] T* [__restrict__] name = init;``"""

    name: str
    decl: object  # the declaration statement
    ptr: object  # its pointer_declarator
    restrict: bool
    assigned: bool


def _local_pointers(unit, fn) -> list:
    """The kernel body's one-declarator local pointer declarations (single level)."""
    out = []
    for n in unit.walk(fn.body):
        if n.type != "declaration":
            continue
        ds = n.children_by_field_name("declarator")
        if len(ds) != 1:
            continue
        d = ds[0].child_by_field_name("declarator") if ds[0].type == "init_declarator" else ds[0]
        if d is None or d.type != "pointer_declarator":
            continue
        inner = d.child_by_field_name("declarator")
        if inner is None or inner.type != "identifier":
            continue  # pointer to pointer, or a function pointer: left alone
        name = unit.text(inner)
        restrict = any(c.type == "type_qualifier" and unit.text(c) in _RESTRICT
                       for c in d.children)
        out.append(_Local(name, n, d, restrict, local_assigned(unit, fn, name)))
    return out


def _names_opt(value: str) -> set | None:
    """``all`` -> None (every one), ``none`` -> empty set, else the names."""
    if value == "none":
        return set()
    return NameList.names(value)


def _views(unit, fn, params: set) -> list:
    """The body's top-level local pointers that are views of a pointer parameter:
    declared among the kernel body's statements, initialized from a parameter, never
    reassigned (restricted or not)."""
    out = []
    for lp in _local_pointers(unit, fn):
        if lp.assigned or lp.decl.parent is None or lp.decl.parent.id != fn.body.id:
            continue
        init = lp.decl.child_by_field_name("declarator").child_by_field_name("value")
        if init is not None and any(n.type == "identifier" and unit.text(n) in params
                                    for n in unit.walk(init)):
            out.append(lp)
    return out


def _sole_views(unit, fn, params: set) -> list:
    """The views (``_views``) that are the only view of their parameter: two views of one
    parameter may overlap, which no ``no_alias`` fact about parameters rules out."""
    views = _views(unit, fn, params)
    of = {}
    for lp in views:
        init = lp.decl.child_by_field_name("declarator").child_by_field_name("value")
        ps = {unit.text(n) for n in unit.walk(init) if n.type == "identifier" and
              unit.text(n) in params}
        of[lp.name] = ps
    out = []
    for lp in views:
        if not any(of[lp.name] & of[o.name] for o in views if o is not lp):
            out.append(lp)
    return out


def _local_targets(site) -> list:
    """Local pointers restrict-pointers changes: unrestricted views of a pointer
    parameter (``_views``) that are the only view of it."""
    unit, fn = site.unit, site.function
    return [lp for lp in _sole_views(unit, fn, {p.name for p in _params(site)})
            if not lp.restrict]


def _mentions(unit, node, name: str) -> bool:
    return node is not None and any(n.type == "identifier" and unit.text(n) == name
                                    for n in unit.walk(node))


def _const_blocker(site, name: str):
    """The first use of pointer parameter ``name`` that would not accept a pointer to
    const (None when there is none): a pointer variable declared or assigned from it
    without ``const``, a call passing it where a device function of the unit takes a
    non-const pointer, a ``reinterpret_cast``/``static_cast`` of it to a non-const
    pointer. Adding ``const`` there is a compile error even though nothing writes
    through it (a view declared and never used, a helper that only reads)."""
    from kltrans.analysis.affine import unit_info
    from kltrans.analysis.barriers import call_name

    unit, fn = site.unit, site.function
    info = unit_info(unit)
    body = fn.body if fn.body is not None else fn.node
    # pointer variables of the body declared without const (every declarator of every
    # declaration: ``float *a, *b;`` then ``a = x;``): assigning ``name`` to one
    nonconst_locals = _nonconst_pointer_locals(unit, body)
    for n in unit.walk(body):
        if n.type == "init_declarator" and _mentions(unit, n.child_by_field_name("value"), name):
            d = n.child_by_field_name("declarator")
            decl = n.parent
            if d is None or d.type != "pointer_declarator" or decl is None:
                continue
            ty = decl.child_by_field_name("type")
            if ty is not None and unit.text(ty) in ("auto", "decltype(auto)"):
                continue
            if not any(c.type == "type_qualifier" and unit.text(c) == "const"
                       for c in decl.children):
                return n
        elif n.type == "assignment_expression" and \
                _mentions(unit, n.child_by_field_name("right"), name):
            left = n.child_by_field_name("left")
            if left is not None and left.type == "identifier" and \
                    unit.text(left) in nonconst_locals:
                return n
        elif n.type == "call_expression":
            callee, kind = call_name(unit, n)
            args = n.child_by_field_name("arguments")
            argl = [a for a in args.named_children if a.type != "comment"] if args else []
            if kind == "template" and callee in ("reinterpret_cast", "static_cast"):
                targ = n.child_by_field_name("function").child_by_field_name("arguments")
                t = unit.text(targ) if targ is not None else ""
                if "*" in t and "const" not in t and argl and _mentions(unit, argl[0], name):
                    return n
                continue
            for f in info.functions.get(callee, ()) if kind in ("identifier", "template",
                                                                  "qualified") else ():
                for i, a in enumerate(argl):
                    if i < len(f.params) and (f.params[i].pointer or f.params[i].array) and \
                            not f.params[i].const and _mentions(unit, a, name):
                        return n
    return None


def _nonconst_pointer_locals(unit, body) -> set:
    """Names of the pointer variables declared in ``body`` whose pointee is not const
    (``float* p``, ``float *a, **b``, ``float* const q``), at any depth and in any
    declaration, however many declarators it has."""
    out = set()
    for n in unit.walk(body):
        if n.type != "declaration" or any(c.type == "type_qualifier" and
                                          unit.text(c) == "const" for c in n.children):
            continue
        for d in n.children_by_field_name("declarator"):
            if d.type == "init_declarator":
                d = d.child_by_field_name("declarator")
            if d is None or d.type != "pointer_declarator":
                continue
            while d is not None and d.type != "identifier":
                d = d.child_by_field_name("declarator")
            if d is not None:
                out.add(unit.text(d))
    return out


def _gets_const(site, p) -> bool:
    """Whether ``const`` is added to parameter ``p`` (read-only, not const yet, and every
    use of it accepts a pointer to const)."""
    return not p.const and p.written is False and _const_blocker(site, p.name) is None


# ------------------------------------------------------------------ preconditions
def _has_targets(site, ctx) -> Verdict:
    ptrs = _params(site)
    loc = _local_targets(site)
    if not ptrs and not loc:
        return Verdict.no(f"{site.function.name} has no pointer parameters")
    t = [p.name for p in _targets(site)] + [lp.name for lp in loc]
    if t:
        return Verdict.yes("pointers without __restrict__: " + ", ".join(t))
    return Verdict.no("every pointer parameter is already __restrict__")


def _no_alias(site, ctx) -> Verdict:
    ptrs = [p.name for p in _params(site)] + [lp.name for lp in _local_targets(site)]
    pairs = [(a, b) for a, b in combinations(ptrs, 2) if not ctx.assumed("no_alias", a, b)]
    if not pairs:
        return Verdict.yes("no two pointer parameters alias (assumed)")
    a, b = pairs[0]
    return Verdict.unknown(f"{a} and {b} may alias: aliasing is a property of the call site; "
                           f"pass --assume no_alias({a},{b}) or --assume 'no_alias(*)'")


def _writes_known(site, ctx) -> Verdict:
    esc = [p for p in _params(site) if p.written is None]
    if esc:
        return Verdict.unknown(f"{esc[0].name} escapes the analysis (passed to a call or "
                               f"copied to another pointer): kltrans cannot tell whether it "
                               f"is written, so it cannot decide where const is safe")
    ro = [p.name for p in _params(site) if p.written is False]
    return Verdict.yes("read-only: " + (", ".join(ro) or "none") + "; the others are written")


@dataclass(frozen=True)
class RestrictPointers(Pass):
    """Mark pointer parameters ``__restrict__``, and read-only ones ``const __restrict__``.

    Before::

        __global__ void axpy(float a, float* x, float* y, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) y[i] += a * x[i];
        }

    After ``restrict-pointers`` (with ``--assume 'no_alias(*)'``)::

        __global__ void axpy(float a, const float* __restrict__ x, float* __restrict__ y, int n) { ... }

    ``const __restrict__`` on a read-only pointer lets the compiler keep its loads in
    registers across stores and use the read-only (non-coherent) data path.

    It also restricts the local views of pointer parameters: a one-level pointer declared
    among the kernel body's statements, initialized from a parameter and never reassigned
    (``const uint4* dv = reinterpret_cast<const uint4*>(x + head);`` becomes
    ``const uint4* __restrict__ dv = ...``; ``const`` is never added to a local), when it
    is the only such view of its parameter (two views of one buffer, such as
    ``counter = scratch`` and ``status = scratch + 1``, may overlap: no ``no_alias`` fact
    about parameters says otherwise, so they are left alone).

    Preconditions: has-targets (some pointer parameter lacks ``__restrict__``), writes-known (no pointer parameter escapes the write
    analysis), no-alias (no two pointer parameters, or restricted locals, overlap: a fact
    of the call site, so it must come from the context: ``--assume 'no_alias(*)'`` or
    ``no_alias(x,y)``).

    Device functions are sites too (their pointer parameters get the same treatment;
    aliasing is still a fact of every call site, so it comes from the context). Only
    one-level pointers ``T* p`` are qualified: ``T (*p)[N]`` and function pointers are
    left alone.

    Options: ``const`` (default true): also add ``const`` to the pointee of the read-only
    pointers it restricts when it is missing, and where every use of the pointer accepts a
    pointer to const (not where it initializes or is assigned to a non-const pointer
    variable, is passed to a device function's non-const pointer parameter, or is cast to
    a non-const pointer: that would not compile).

    Round trip: ``inverse_for`` gives ``unrestrict-pointers{params=...}`` naming exactly
    the pointers restricted here, with ``const=true`` when every read-only one lacked
    ``const`` (so the ``const`` added is removed again). When some read-only pointers had
    ``const`` and others did not, the added ``const`` stays after the round trip.
    """

    name = "restrict-pointers"
    kind = "optimize"
    inverse = "unrestrict-pointers"
    scope = "device"
    anchor = Rule(kind="function_definition")
    preconditions = (
        Precondition("has-targets", "storage",
                     "a pointer parameter without __restrict__", _has_targets),
        Precondition("writes-known", "storage",
                     "every pointer parameter is provably read-only or written", _writes_known),
        Precondition("no-alias", "storage",
                     "no two pointer parameters overlap (from the context)", _no_alias),
    )

    const: bool = option(True, Bool(), "also make the restricted pointers point to const",
                                       tune=True)

    def rewrite(self, site, ctx):
        edits = []
        for p in _targets(site):
            edits.extend(_restrict_edits(site.unit, _decl(site, p.name),
                                         add_const=self.const and _gets_const(site, p)))
        for lp in _local_targets(site):
            star = next(c for c in lp.ptr.children if c.type == "*")
            edits.append(_restrict_after(site.unit, star))
        return edits

    def inverse_for(self, site, ctx):
        targets = _targets(site)
        # the read-only pointers const may be added to (a use that needs a non-const
        # pointer keeps its parameter out of it, either way)
        read_only = [p for p in targets if p.written is False
                     and (p.const or _gets_const(site, p))]
        drop = self.const and bool(read_only) and all(not p.const for p in read_only)
        every = [p.name for p in _params(site)]
        names = [p.name for p in targets]
        loc = [lp.name for lp in _local_targets(site)]
        return UnrestrictPointers(const=drop,
                                  params="all" if names == every else ("+".join(names) or "none"),
                                  locals="+".join(loc) or "none")


def _restrict_edits(unit, decl, add_const: bool) -> list[Edit]:
    edits = []
    if add_const:
        edits.append(Edit.insert(decl.start_byte, "const "))
    # insert after the '*' of the outermost pointer declarator
    ptr = decl.child_by_field_name("declarator")
    while ptr is not None and ptr.type != "pointer_declarator":
        ptr = ptr.child_by_field_name("declarator")
    star = next(c for c in ptr.children if c.type == "*")
    edits.append(_restrict_after(unit, star))
    return edits


def _restrict_after(unit, star) -> Edit:
    """`` __restrict__`` after a declarator's ``*``, spaced from a name that follows it
    directly (``float *A`` -> ``float * __restrict__ A``, never ``__restrict__A``)."""
    follows = unit.source[star.end_byte:star.end_byte + 1]
    return Edit.insert(star.end_byte, " __restrict__" + ("" if follows.isspace() else " "))


# ----------------------------------------------------------------------- inverse
def _restricted_locals(site) -> list:
    if not isinstance(site.pass_, UnrestrictPointers):
        return []
    want = _names_opt(site.pass_.locals)
    return [lp for lp in _local_pointers(site.unit, site.function)
            if lp.restrict and (want is None or lp.name in want)]


def _has_restrict(site, ctx) -> Verdict:
    only = NameList.names(site.pass_.params) if site.pass_ is not None else None
    r = [p.name for p in _params(site) if p.restrict and (only is None or p.name in only)]
    r += [lp.name for lp in _restricted_locals(site)]
    if r:
        return Verdict.yes("restricted pointers: " + ", ".join(r))
    which = "" if only is None else f" among {', '.join(sorted(only))}"
    return Verdict.no(f"{site.function.name} has no __restrict__ pointer parameter{which}")


@dataclass(frozen=True)
class UnrestrictPointers(Pass):
    """Remove ``__restrict__`` from the pointer parameters of a kernel or device function.

    Before::

        __global__ void axpy(float a, const float* __restrict__ x, float* __restrict__ y, int n)

    After ``unrestrict-pointers``::

        __global__ void axpy(float a, const float* x, float* y, int n)

    After ``unrestrict-pointers{const=true}``: read-only pointers also lose ``const``::

        __global__ void axpy(float a, float* x, float* y, int n)

    Local pointers declared ``T* __restrict__ p = ...;`` in the kernel body lose it too
    (``locals``, default ``all``).

    Removing ``__restrict__`` never changes what a correct kernel computes; it only takes
    away the compiler's no-alias knowledge.

    Preconditions: has-restrict (some pointer parameter, or local pointer, is
    ``__restrict__``).

    Options: ``const`` (default false): also drop ``const`` from the pointee of restricted
    pointers that are never written; ``params`` (default ``all``): only these parameters,
    as ``x+y`` (the exact inverse of a ``restrict-pointers`` that restricted only some);
    ``locals`` (default ``all``; ``none`` or ``p+q``): which local pointers.

    Round trip: ``restrict-pointers`` restores the parameters (when every one-level
    pointer parameter was restricted: it restricts them all) and the sole local views
    of parameters; a restricted local that is not such a view (a pointer into shared
    memory, one declared inside a nested block, or one of two views of a parameter)
    does not come back, so the walk rejects that step.
    """

    name = "unrestrict-pointers"
    kind = "simplify"
    inverse = "restrict-pointers"
    scope = "device"
    anchor = Rule(kind="function_definition")
    preconditions = (
        Precondition("has-restrict", "storage", "a __restrict__ pointer parameter", _has_restrict),
    )

    const: bool = option(False, Bool(), "also drop const from read-only restricted pointers")
    params: str = option("all", NameList(), "which pointer parameters (all, or x+y)")
    locals: str = option("all", NameList(), "which local pointers (all, none, or p+q)")

    def rewrite(self, site, ctx):
        unit = site.unit
        edits = []
        for lp in _restricted_locals(site):
            for n in lp.ptr.children:
                if n.type == "type_qualifier" and unit.text(n) in _RESTRICT:
                    edits.append(Edit.delete(*_restrict_span(unit, n)))
        only = NameList.names(self.params)
        for p in _params(site):
            if not p.restrict or (only is not None and p.name not in only):
                continue
            decl = _decl(site, p.name)
            for n in unit.walk(decl):
                if n.type == "type_qualifier" and unit.text(n) in _RESTRICT:
                    edits.append(Edit.delete(*_restrict_span(unit, n)))
            if self.const and p.const and p.written is False:
                for c in decl.children:
                    if c.type == "type_qualifier" and unit.text(c) == "const":
                        end = c.end_byte
                        while end < len(unit.source) and unit.source[end:end + 1] in (b" ", b"\t"):
                            end += 1
                        edits.append(Edit.delete(c.start_byte, end))
                        break
        return edits

    def inverse_for(self, site, ctx):
        return RestrictPointers(const=self.const)


def _restrict_span(unit, q) -> tuple[int, int]:
    """The bytes to delete with a ``__restrict__`` qualifier: the blank before it, and in
    the ``T *name`` style (a blank before the ``*``, as ``T * __restrict__ name`` is made
    from ``T *name``) the blank after it too, so the star is against the name again."""
    src = unit.source
    start, end = q.start_byte, q.end_byte
    while start > 0 and src[start - 1:start] in (b" ", b"\t"):
        start -= 1
    if src[start - 1:start] == b"*" and src[start - 2:start - 1] in (b" ", b"\t") \
            and src[end:end + 1] == b" ":
        end += 1
    return start, end

