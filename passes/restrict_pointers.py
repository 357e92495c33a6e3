"""No-alias pointers: ``restrict-pointers`` (optimize) and ``unrestrict-pointers`` (simplify)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from kltrans.analysis.pointers import pointer_params
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Bool, NameList, Pass, Precondition, option
from kltrans.syntax import Edit


def _params(site):
    return pointer_params(site.unit, site.function)


def _decl(site, name: str):
    """The parameter_declaration node of parameter ``name``."""
    unit = site.unit
    fdecl = site.function.node.child_by_field_name("declarator")
    while fdecl is not None and fdecl.type != "function_declarator":
        fdecl = fdecl.child_by_field_name("declarator")
    for c in fdecl.child_by_field_name("parameters").named_children:
        ids = [n for n in unit.walk(c) if n.type == "identifier"]
        if ids and unit.text(ids[-1]) == name:
            return c
    raise LookupError(name)


def _targets(site):
    """Pointer parameters restrict-pointers would change: those without __restrict__."""
    return [p for p in _params(site) if not p.restrict and p.param.pointer == 1]


# ------------------------------------------------------------------ preconditions
def _has_targets(site, ctx) -> Verdict:
    ptrs = _params(site)
    if not ptrs:
        return Verdict.no(f"{site.function.name} has no pointer parameters")
    t = _targets(site)
    if t:
        return Verdict.yes("pointers without __restrict__: " + ", ".join(p.name for p in t))
    return Verdict.no("every pointer parameter is already __restrict__")


def _no_alias(site, ctx) -> Verdict:
    ptrs = [p.name for p in _params(site)]
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

    Preconditions: has-targets (some pointer parameter lacks ``__restrict__``), writes-known (no pointer parameter escapes the write
    analysis), no-alias (no two pointer parameters overlap: a fact of the call site, so it
    must come from the context: ``--assume 'no_alias(*)'`` or ``no_alias(x,y)``).

    Options: ``const`` (default true): also add ``const`` to the pointee of the read-only
    pointers it restricts when it is missing.

    Round trip: ``inverse_for`` gives ``unrestrict-pointers{params=...}`` naming exactly
    the pointers restricted here, with ``const=true`` when every read-only one lacked
    ``const`` (so the ``const`` added is removed again). When some read-only pointers had
    ``const`` and others did not, the added ``const`` stays after the round trip.
    """

    name = "restrict-pointers"
    kind = "optimize"
    inverse = "unrestrict-pointers"
    anchor = Rule(kind="function_definition")
    preconditions = (
        Precondition("has-targets", "storage",
                     "a pointer parameter without __restrict__", _has_targets),
        Precondition("writes-known", "storage",
                     "every pointer parameter is provably read-only or written", _writes_known),
        Precondition("no-alias", "storage",
                     "no two pointer parameters overlap (from the context)", _no_alias),
    )

    const: bool = option(True, Bool(), "also make the restricted pointers point to const")

    def rewrite(self, site, ctx):
        edits = []
        for p in _targets(site):
            edits.extend(_restrict_edits(site.unit, _decl(site, p.name),
                                         add_const=self.const and not p.const
                                         and p.written is False))
        return edits

    def inverse_for(self, site, ctx):
        targets = _targets(site)
        read_only = [p for p in targets if p.written is False]
        drop = self.const and bool(read_only) and all(not p.const for p in read_only)
        every = [p.name for p in _params(site)]
        names = [p.name for p in targets]
        return UnrestrictPointers(const=drop,
                                  params="all" if names == every else "+".join(names))


def _restrict_edits(unit, decl, add_const: bool) -> list[Edit]:
    edits = []
    if add_const:
        edits.append(Edit.insert(decl.start_byte, "const "))
    # insert after the '*' of the outermost pointer declarator
    ptr = decl.child_by_field_name("declarator")
    while ptr is not None and ptr.type != "pointer_declarator":
        ptr = ptr.child_by_field_name("declarator")
    star = next(c for c in ptr.children if c.type == "*")
    edits.append(Edit.insert(star.end_byte, " __restrict__"))
    return edits


# ----------------------------------------------------------------------- inverse
def _has_restrict(site, ctx) -> Verdict:
    only = NameList.names(site.pass_.params) if site.pass_ is not None else None
    r = [p.name for p in _params(site) if p.restrict and (only is None or p.name in only)]
    if r:
        return Verdict.yes("restricted pointers: " + ", ".join(r))
    which = "" if only is None else f" among {', '.join(sorted(only))}"
    return Verdict.no(f"{site.function.name} has no __restrict__ pointer parameter{which}")


@dataclass(frozen=True)
class UnrestrictPointers(Pass):
    """Remove ``__restrict__`` from a kernel's pointer parameters.

    Before::

        __global__ void axpy(float a, const float* __restrict__ x, float* __restrict__ y, int n)

    After ``unrestrict-pointers``::

        __global__ void axpy(float a, const float* x, float* y, int n)

    After ``unrestrict-pointers{const=true}``: read-only pointers also lose ``const``::

        __global__ void axpy(float a, float* x, float* y, int n)

    Removing ``__restrict__`` never changes what a correct kernel computes; it only takes
    away the compiler's no-alias knowledge.

    Preconditions: has-restrict (some pointer parameter is ``__restrict__``).

    Options: ``const`` (default false): also drop ``const`` from the pointee of restricted
    pointers that are never written; ``params`` (default ``all``): only these parameters,
    as ``x+y`` (the exact inverse of a ``restrict-pointers`` that restricted only some).
    """

    name = "unrestrict-pointers"
    kind = "simplify"
    inverse = "restrict-pointers"
    anchor = Rule(kind="function_definition")
    preconditions = (
        Precondition("has-restrict", "storage", "a __restrict__ pointer parameter", _has_restrict),
    )

    const: bool = option(False, Bool(), "also drop const from read-only restricted pointers")
    params: str = option("all", NameList(), "which pointer parameters (all, or x+y)")

    def rewrite(self, site, ctx):
        unit = site.unit
        edits = []
        only = NameList.names(self.params)
        for p in _params(site):
            if not p.restrict or (only is not None and p.name not in only):
                continue
            decl = _decl(site, p.name)
            for n in unit.walk(decl):
                if n.type == "type_qualifier" and unit.text(n) in ("__restrict__", "__restrict", "restrict"):
                    start = n.start_byte
                    # take the blank before the qualifier with it
                    while start > 0 and unit.source[start - 1:start] in (b" ", b"\t"):
                        start -= 1
                    edits.append(Edit.delete(start, n.end_byte))
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

