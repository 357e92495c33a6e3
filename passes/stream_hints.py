"""Cache-streaming hints: ``stream-hints`` (optimize) and ``drop-stream-hints`` (simplify)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from kltrans.analysis.affine import resolve_name, strip_parens
from kltrans.analysis.loops import assigned_in
from kltrans.analysis.pointers import Aliases, may_alias, pointer_params
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.launch import template_bindings
from kltrans.passes import Choice, Pass, Precondition, option
from kltrans.passes.facts import arch_number
from kltrans.passes.options import Domain
from kltrans.syntax import Edit

#: the load / store hint intrinsics this module writes and removes (``__ldcv`` is not one:
#: a volatile re-fetch is not a plain load, so dropping it could change what a spin-wait sees)
LOAD_HINTS = ("ldcs", "ldg", "ldlu", "ldcg", "ldca")
STORE_HINTS = ("stcs", "stcg", "stwt", "stwb")
#: hints whose data must not be written while the kernel runs (non-coherent / evict-first
#: streaming paths: the brief of the pass and the CUDA guide's advice for __ldg)
NEEDS_READ_ONLY = ("ldg", "ldcs", "ldlu")
#: hints that say "this address is touched once": a re-read would miss the cache on purpose
NEEDS_ONCE = ("ldcs", "ldlu", "stcs")
#: element types with an overload of every __ld*/__st* hint (sm_32_intrinsics.h)
_SCALARS = ("char", "signed char", "unsigned char", "short", "unsigned short", "int",
            "unsigned int", "unsigned", "long", "unsigned long", "long long",
            "unsigned long long", "float", "double", "int8_t", "uint8_t", "int16_t", "uint16_t",
            "int32_t", "uint32_t", "int64_t", "uint64_t", "size_t")
_VECTORS = ("char2", "char4", "uchar2", "uchar4", "short2", "short4", "ushort2", "ushort4",
            "int2", "int4", "uint2", "uint4", "longlong2", "ulonglong2", "float2", "float4",
            "double2")
#: overloads that come with cuda_fp16.h / cuda_bf16.h
_HALF = ("__half", "half", "__half2", "half2", "__nv_bfloat16", "nv_bfloat16",
         "__nv_bfloat162", "nv_bfloat162")
HINT_TYPES = frozenset(_SCALARS + _VECTORS + _HALF)
_QUALS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct)\b")


def _clean_type(t: str) -> str:
    return re.sub(r"\s+", " ", _QUALS.sub(" ", t)).strip()


def _norm(t: str) -> str:
    return re.sub(r"\s+", "", t)


# ------------------------------------------------------------------ option domain
class ArrayHints(Domain):
    """``all``, or array names joined by ``+``, each optionally with its own hint:
    ``x+y`` (those arrays, with the ``load``/``store`` options), ``x:ldg+y:stcs``."""

    _ITEM = re.compile(r"[A-Za-z_]\w*(?::(?:%s))?" % "|".join(LOAD_HINTS + STORE_HINTS))

    def parse(self, text: str) -> str:
        return self.check(text)

    def contains(self, value) -> bool:
        return isinstance(value, str) and (value == "all" or all(
            self._ITEM.fullmatch(p) for p in value.split("+")))

    def describe(self) -> str:
        return ("all, or array names joined by + (x+y), each optionally NAME:HINT with HINT "
                "one of " + ", ".join(LOAD_HINTS + STORE_HINTS))

    def values(self) -> list:
        return ["all"]

    @staticmethod
    def table(value: str) -> dict | None:
        """name -> {"load": hint|None, "store": hint|None, "plain": bool}; None for all."""
        if value == "all":
            return None
        out: dict = {}
        for item in value.split("+"):
            name, _, hint = item.partition(":")
            e = out.setdefault(name, {"load": None, "store": None, "plain": False})
            if not hint:
                e["plain"] = True
            elif hint in LOAD_HINTS:
                e["load"] = hint
            else:
                e["store"] = hint
        return out


# -------------------------------------------------------------- expression helpers
def _args(unit, call) -> list:
    a = call.child_by_field_name("arguments")
    return [c for c in a.named_children if c.type != "comment"] if a is not None else []


def _op(unit, node) -> str:
    o = node.child_by_field_name("operator")
    return unit.text(o) if o is not None else ""


def _cast_target(unit, node) -> str | None:
    """For ``reinterpret_cast<T*>(e)`` / ``static_cast<T*>(e)`` / ``(T*)e``: ``T*``."""
    node = strip_parens(node)
    if node is None:
        return None
    if node.type == "cast_expression":
        ty = node.child_by_field_name("type")
        return unit.text(ty) if ty is not None else None
    if node.type == "call_expression":
        f = node.child_by_field_name("function")
        if f is not None and f.type == "template_function":
            name = f.child_by_field_name("name")
            if name is not None and unit.text(name) in ("reinterpret_cast", "static_cast",
                                                        "const_cast"):
                ta = f.child_by_field_name("arguments")
                if ta is not None and len(_args(unit, node)) == 1:
                    return unit.text(ta)[1:-1].strip()
    return None


def _cast_inner(unit, node):
    node = strip_parens(node)
    if node.type == "cast_expression":
        return node.child_by_field_name("value")
    return _args(unit, node)[0]


def _ident_type(unit, ident) -> tuple[str, int] | None:
    """(pointee or element type text, pointer depth) of a declared pointer variable."""
    b = resolve_name(unit, ident, unit.text(ident))
    if b.kind not in ("param", "local") or b.decl is None or b.ident is None:
        return None
    depth = 0
    p = b.ident.parent
    while p is not None and p.id != b.decl.id:
        if p.type in ("pointer_declarator",):
            depth += 1
        elif p.type == "array_declarator":
            return None  # an array (local, shared, or a parameter spelled x[]): not a pointer
        p = p.parent
    ty = b.decl.child_by_field_name("type")
    if ty is None or depth == 0:
        return None
    if unit.text(ty) == "auto":
        return None
    return unit.text(ty), depth


def pointer_info(unit, expr) -> tuple[str, str] | None:
    """For a pointer-valued expression: (element type, the array name it is based on).

    Accepts ``p`` (a pointer variable), ``reinterpret_cast<T*>(e)`` and ``(T*)e``, and
    ``P + i`` / ``P - i`` chains whose leftmost operand is one of those.
    """
    e = strip_parens(expr)
    if e is None:
        return None
    if e.type == "identifier":
        got = _ident_type(unit, e)
        if got is None or got[1] != 1:
            return None
        return got[0], unit.text(e)
    tgt = _cast_target(unit, e)
    if tgt is not None:
        if not tgt.rstrip().endswith("*") or tgt.count("*") != 1:
            return None
        inner = pointer_info(unit, _cast_inner(unit, e))
        return tgt.rstrip()[:-1].strip(), inner[1] if inner else "?"
    if e.type == "binary_expression" and _op(unit, e) in ("+", "-"):
        return pointer_info(unit, e.child_by_field_name("left"))
    return None


def _offset_form(unit, expr):
    """``P + I...`` with P a pointer: (P node, the offset text) for ``P[I...]``, else None."""
    e = strip_parens(expr)
    if e is None or e.type != "binary_expression":
        return None
    spine = e
    chain = []
    while spine.type == "binary_expression" and _op(unit, spine) in ("+", "-"):
        chain.append(spine)
        left = strip_parens(spine.child_by_field_name("left"))
        if left.type != "binary_expression" or _op(unit, left) not in ("+", "-"):
            break
        spine = left
    first = chain[-1]
    base = first.child_by_field_name("left")
    sb = strip_parens(base)
    if _op(unit, first) != "+" or pointer_info(unit, sb) is None:
        return None
    if sb.type not in ("identifier", "call_expression") or sb.id != base.id:
        return None  # only P or a C++ cast can be subscripted without parentheses
    right = first.child_by_field_name("right")
    if len(chain) == 1 and right.type == "parenthesized_expression":
        return base, unit.text(strip_parens(right))
    return base, unit.text((right.start_byte, e.end_byte))


#: operators that bind at least as tightly as a pointer ``+``: ``P + I`` needs no parentheses
_SAFE_OFFSET = ("identifier", "number_literal", "call_expression", "subscript_expression",
                "field_expression", "parenthesized_expression", "sizeof_expression")


def _offset_text(unit, idx) -> str:
    n = idx
    if n.type in _SAFE_OFFSET:
        return unit.text(n)
    if n.type == "binary_expression" and _op(unit, n) in ("+", "-", "*", "/", "%"):
        return unit.text(n)
    return f"({unit.text(n)})"


# -------------------------------------------------------------- the optimize side
@dataclass
class _Access:
    kind: str  # "load" | "store"
    node: object  # what is replaced
    lvalue: object  # P[I] or *E
    addr: str  # the address as the hint's argument
    elem: str  # element type
    array: str  # the array name (for the arrays option)
    base: object  # the pointer expression node (P or E)
    value: object = None  # the stored value (stores)


def _postfix_parent(node) -> bool:
    p = node.parent
    if p is None:
        return False
    if p.type == "field_expression" and p.child_by_field_name("argument").id == node.id:
        return True
    if p.type == "subscript_expression" and p.child_by_field_name("argument").id == node.id:
        return True
    return False


def access_of(unit, node, address: str = "ref") -> _Access | None:
    """The memory access ``node`` is (``P[I]`` or ``*E`` through a pointer), or None."""
    if node.type == "subscript_expression":
        base = node.child_by_field_name("argument")
        idxl = node.child_by_field_name("indices") or node.child_by_field_name("index")
        idx = [c for c in idxl.named_children if c.type != "comment"] if idxl else []
        sb = strip_parens(base)
        if len(idx) != 1 or sb is None or sb.id != base.id or \
                sb.type not in ("identifier", "call_expression"):
            return None
        info = pointer_info(unit, sb)
        if info is None:
            return None
        if address == "offset":
            addr = f"{unit.text(base)} + {_offset_text(unit, idx[0])}"
        else:
            addr = f"&{unit.text(node)}"
        lv, outer = node, node
    elif node.type == "pointer_expression" and _op(unit, node) == "*":
        arg = node.child_by_field_name("argument")
        info = pointer_info(unit, arg)
        if info is None:
            return None
        addr = unit.text(strip_parens(arg))
        lv, outer = node, node
        # (*p).x: the parentheses go with the dereference
        par = node.parent
        if par is not None and par.type == "parenthesized_expression" and _postfix_parent(par):
            outer = par
        base = strip_parens(arg)
    else:
        return None
    elem, array = info
    if elem.endswith("*"):
        return None  # a pointer to pointers: the element is an address, not data
    p = outer.parent
    if p is None:
        return None
    if p.type == "assignment_expression" and p.child_by_field_name("left").id == outer.id:
        st = p.parent
        if _op(unit, p) != "=" or st is None or st.type != "expression_statement":
            return None
        return _Access("store", p, lv, addr, _clean_type(elem), array, base,
                       p.child_by_field_name("right"))
    if p.type == "update_expression":
        return None
    if p.type == "pointer_expression" and _op(unit, p) == "&":
        return None
    if p.type in ("sizeof_expression", "alignof_expression", "decltype"):
        return None
    if node.type == "subscript_expression" and _postfix_parent(outer):
        return None  # x[i].f / x[i][j]: a part of the element, or a 2-D array
    return _Access("load", outer, lv, addr, _clean_type(elem), array, base)


def _hint_for(p: "StreamHints", acc: _Access) -> str | None:
    table = ArrayHints.table(p.arrays)
    default = p.load if acc.kind == "load" else p.store
    if table is None:
        return None if default == "none" else default
    e = table.get(acc.array)
    if e is None:
        return None
    if e[acc.kind] is not None:
        return e[acc.kind]
    return None if (not e["plain"] or default == "none") else default


def _site_access(site) -> _Access:
    return access_of(site.unit, site.node, site.pass_.address if site.pass_ else "ref")


def _fn_params(site) -> dict:
    return {p.name: p for p in site.function.params if p.name}


def _hint_type(site, ctx) -> Verdict:
    acc = _site_access(site)
    hint = _hint_for(site.pass_, acc)
    t = acc.elem
    if t in HINT_TYPES:
        return Verdict.yes(f"__{hint} has an overload for {t}")
    tparams = {tp.name for tp in site.function.template_params}
    bound = template_bindings(site.unit, site.function).get(t)
    if bound in HINT_TYPES:  # the instantiation the launch contract names
        return Verdict.yes(f"__{hint} has an overload for {bound}, the {t} of the launch")
    if t in tparams:
        return Verdict.unknown(f"{acc.array} points to the template parameter {t}: __{hint} "
                               "exists only for the built-in scalar and vector types, and the "
                               "instantiations are not known")
    return Verdict.no(f"{acc.array} points to {t}: __{hint} has no overload for it (built-in "
                      "scalars, their 2/4-vectors, __half and __nv_bfloat16 only)")


def _shared_based(unit, expr) -> bool:
    """Whether ``expr`` mentions a ``__shared__`` array or a local initialised from one."""
    shared = {d.name for d in unit.shared_decls()}
    for n in unit.walk(expr):
        if n.type == "identifier":
            nm = unit.text(n)
            b = resolve_name(unit, n, nm)
            if nm in shared or (b.kind == "local" and b.value is not None and any(
                    x.type == "identifier" and unit.text(x) in shared
                    for x in unit.walk(b.value))):
                return True
    return False


def _calls_of(unit, name: str) -> list:
    """(caller function, call node) of every call of the function ``name`` in the file."""
    out = []
    for f in unit.kernels() + unit.device_functions():
        for n in unit.walk(f.node):
            if n.type != "call_expression":
                continue
            fn = n.child_by_field_name("function")
            if fn is not None and fn.type == "template_function":
                fn = fn.child_by_field_name("name")
            if fn is not None and unit.text(fn) == name:
                out.append((f, n))
    return out


def kernel_bases(unit, fn, expr, depth: int = 0) -> tuple[set | None, str]:
    """The kernel pointer parameters a pointer expression of ``fn`` may point into.

    In a kernel: the parameters it is based on. In a device function: a parameter it is
    based on is followed to the argument of every call of the function in the file (the
    callers' bases, recursively); the answer is None, with the reason, when a call passes
    shared or local memory or something not derived from a kernel pointer parameter, or
    when the function is never called here.
    """
    params = [p.name for p in fn.params if p.name and p.pointer > 0]
    bases = Aliases(unit, fn.node, params).bases(expr)
    if _shared_based(unit, expr):
        return None, f"{unit.text(expr)} points into __shared__ memory"
    if not bases:
        return None, (f"cannot tell where {unit.text(expr)} points (not derived from a "
                      f"pointer parameter of {fn.name})")
    if fn.is_kernel:
        return bases, ""
    if depth > 4:
        return None, f"the calls of {fn.name} nest too deep to follow"
    index = {p.name: k for k, p in enumerate(fn.params)}
    calls = _calls_of(unit, fn.name)
    if not calls:
        return None, (f"{', '.join(sorted(bases))} is a parameter of the device function "
                      f"{fn.name}, which is not called in this file: its callers decide the "
                      "memory space")
    out: set = set()
    for caller, call in calls:
        if caller.name == fn.name:
            return None, f"{fn.name} calls itself"
        args = _args(unit, call)
        for b in sorted(bases):
            k = index.get(b)
            if k is None or k >= len(args):
                return None, f"a call of {fn.name} at line {unit.line_col(call.start_byte)[0]} " \
                             f"passes no argument for {b}"
            got, why = kernel_bases(unit, caller, args[k], depth + 1)
            if got is None:
                return None, (f"{b} of {fn.name} is `{unit.text(args[k])}` at line "
                              f"{unit.line_col(call.start_byte)[0]}: {why}")
            out |= got
    return out, ""


def _global_pointer(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    acc = _site_access(site)
    if _shared_based(unit, acc.base):
        return Verdict.no(f"{acc.array} points into __shared__ memory: the hints are "
                          "global-memory loads and stores")
    bases, why = kernel_bases(unit, fn, acc.base)
    if bases is None:
        return Verdict.unknown(why)
    if not fn.is_kernel:
        return Verdict.yes(f"{acc.array} of the device function {fn.name} is based on the "
                           f"kernel parameter(s) {', '.join(sorted(bases))} at every call: "
                           "global memory")
    return Verdict.yes(f"{acc.array} is based on the kernel parameter(s) "
                       f"{', '.join(sorted(bases))}: global memory")


def _read_only(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    acc = _site_access(site)
    hint = _hint_for(site.pass_, acc)
    if acc.kind == "store" or hint not in NEEDS_READ_ONLY:
        return Verdict.yes(f"__{hint} does not need read-only data")
    params = [p.name for p in fn.params if p.name and p.pointer > 0]
    bases = Aliases(unit, fn.node, params).bases(acc.base)
    pps = {pp.name: pp for pp in pointer_params(unit, fn)}
    for b in sorted(bases):
        pp = pps.get(b)
        if pp is None:
            continue
        if pp.written is True:
            return Verdict.no(f"{b} is {pp.reason}: __{hint} may read a stale copy of data "
                              "the kernel writes")
        if pp.written is None:
            return Verdict.unknown(f"{b} {pp.reason}: cannot tell that the kernel never "
                                   "writes it")
    for b in sorted(bases):
        for w in sorted(n for n, pp in pps.items() if pp.written is not False and n != b):
            v = may_alias(unit, fn, b, w)
            if v.fails:
                continue
            if ctx.assumed("no_alias", b, w):
                continue
            return Verdict.unknown(f"{b} may overlap {w}, which the kernel writes ({v.reason}): "
                                   f"pass --assume 'no_alias({b},{w})' or 'no_alias(*)' if the "
                                   "buffers never overlap")
    if not fn.is_kernel:
        kb, why = kernel_bases(unit, fn, acc.base)
        if kb is None:
            return Verdict.unknown(why)
        for k in unit.kernels():
            kps = {pp.name: pp for pp in pointer_params(unit, k)}
            for b in sorted(kb & set(kps)):
                if kps[b].written is not False:
                    return Verdict.no(f"{b} of the kernel {k.name} {kps[b].reason}: __{hint} in "
                                      f"{fn.name} may read a stale copy of data the kernel "
                                      "writes")
                for w in sorted(n for n, pp in kps.items() if pp.written is not False):
                    v = may_alias(unit, k, b, w)
                    if not v.fails and not ctx.assumed("no_alias", b, w):
                        return Verdict.unknown(f"{b} may overlap {w}, which the kernel {k.name} "
                                               f"writes ({v.reason}): pass --assume "
                                               f"'no_alias({b},{w})' or 'no_alias(*)'")
        return Verdict.yes(f"{', '.join(sorted(bases))} of {fn.name} is never written, and at "
                           f"every call it is based on kernel parameters ({', '.join(sorted(kb))}) "
                           "the kernel never writes, nor through a pointer that may overlap them")
    return Verdict.yes(f"{', '.join(sorted(bases))} is never written by the kernel, nor "
                       "through a pointer that may overlap it")


def _loop_nodes(node, fn_node):
    p = node.parent
    while p is not None and p.id != fn_node.id:
        if p.type in ("for_statement", "while_statement", "do_statement", "for_range_loop"):
            yield p
        p = p.parent


def _varies_in(unit, loop, name: str) -> bool:
    if assigned_in(unit, loop, name):
        return True
    for n in unit.walk(loop):
        if n.type in ("declaration", "for_range_loop"):
            for x in unit.walk(n.child_by_field_name("declarator") or n):
                if x.type == "identifier" and unit.text(x) == name:
                    return True
    return False


def _same_address_uses(unit, fn, acc: _Access) -> list:
    """Other accesses in ``fn`` whose address is spelled like ``acc``'s."""
    key = _norm(unit.text(acc.lvalue))
    out = []
    for n in unit.walk(fn.node):
        if n.type == acc.lvalue.type and n.id != acc.lvalue.id and _norm(unit.text(n)) == key:
            out.append(n)
    return out


def _invariant_loop(unit, fn, acc: _Access):
    names = {unit.text(x) for x in unit.walk(acc.lvalue) if x.type == "identifier"}
    for lp in _loop_nodes(acc.lvalue, fn.node):
        if not any(_varies_in(unit, lp, nm) for nm in names):
            return lp
    return None


def _read_once(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    acc = _site_access(site)
    hint = _hint_for(site.pass_, acc)
    if acc.kind != "load" or hint not in NEEDS_ONCE:
        return Verdict.yes("not a streaming load" if acc.kind == "load" else "a store")
    text = unit.text(acc.lvalue)
    lp = _invariant_loop(unit, fn, acc)
    if lp is not None:
        return Verdict.no(f"{text} is read on every iteration of the loop at line "
                          f"{unit.line_col(lp.start_byte)[0]} at the same address: __{hint} "
                          "would evict data the thread reads again")
    others = _same_address_uses(unit, fn, acc)
    if others:
        return Verdict.no(f"{text} is also accessed at line "
                          f"{unit.line_col(others[0].start_byte)[0]}: __{hint} would evict "
                          "data the thread reads again")
    return Verdict.yes(f"{text} is read once per thread")


def _write_once(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    acc = _site_access(site)
    hint = _hint_for(site.pass_, acc)
    if acc.kind != "store" or hint not in NEEDS_ONCE:
        return Verdict.yes("not a streaming store" if acc.kind == "store" else "a load")
    text = unit.text(acc.lvalue)
    lp = _invariant_loop(unit, fn, acc)
    if lp is not None:
        return Verdict.no(f"{text} is written on every iteration of the loop at line "
                          f"{unit.line_col(lp.start_byte)[0]} at the same address: a "
                          f"streaming store of a value that is overwritten")
    others = _same_address_uses(unit, fn, acc)
    if others:
        return Verdict.no(f"{text} is also accessed at line "
                          f"{unit.line_col(others[0].start_byte)[0]}: __{hint} would evict "
                          "a line the thread touches again")
    return Verdict.yes(f"{text} is written once per thread and not read back")


def _arch(site, ctx) -> Verdict:
    acc = _site_access(site)
    hint = _hint_for(site.pass_, acc)
    need = 35 if hint == "ldg" else 32
    a = arch_number(ctx.arch)
    if a is None:
        return Verdict.yes(f"no --arch: __{hint} needs sm_{need}+, and every architecture "
                           "CUDA 12 compiles for (sm_50 and newer) has it")
    if a >= need:
        return Verdict.yes(f"{ctx.arch} >= sm_{need}")
    return Verdict.no(f"{ctx.arch} is older than sm_{need}, the first with __{hint}")


ACCESS = Rule(any=(Rule(kind="subscript_expression"), Rule(pattern="*$P")))


@dataclass(frozen=True)
class StreamHints(Pass):
    """Give global loads and stores of data touched once a cache-streaming hint.

    Before::

        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + b;

    After ``stream-hints`` (with ``--assume 'no_alias(*)'``)::

        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) __stcs(&y[i], a * __ldcs(&x[i]) + b);

    A load ``P[I]`` or ``*E`` through a pointer becomes ``__ldcs(&P[I])`` / ``__ldcs(E)``
    (``load`` picks the intrinsic; ``address=offset`` writes ``P + I``); a statement
    ``P[I] = v;`` becomes ``__stcs(&P[I], v);``. Parts of elements (``x[i].f``), 2-D
    arrays, compound assignments and accesses to ``__shared__`` or local arrays are not
    sites. The value and the memory order do not change; only the cache policy does.

    Accesses in device functions are sites too when every call of the function in the
    file passes, for the accessed pointer, an argument based on a kernel pointer
    parameter (followed through device callers); a call that passes shared or local
    memory, or a function not called in the file, leaves its accesses alone. There,
    read-only also holds the kernel to never writing those parameters.

    Runtime facts. From the context: that a read-only array does not overlap a written
    one (``--assume 'no_alias(x,y)'`` or ``'no_alias(*)'``), unless ``__restrict__`` or
    different element sizes already rule it out; the architecture (``--arch``). Nothing
    is guarded at run time.

    Preconditions: hint-type (dtype: the element type has an overload of the hint:
    built-in scalars and their 2/4-vectors, ``__half``/``__nv_bfloat16``), global-pointer
    (layout: the pointer is based on a kernel pointer parameter, not shared or local
    memory; in a device function, at every call), read-only (storage: for ``ldg``/``ldcs``/``ldlu``, the array is never
    written by the kernel, directly or through a pointer that may overlap it), read-once
    (pipeline: for ``ldcs``/``ldlu``, the address is read once per thread: not re-read
    later in the kernel, nor on every iteration of a loop), write-once (pipeline: for
    ``stcs``, the address is written once and not accessed again), arch (hardware: sm_35+
    for ``ldg``, sm_32+ for the others; holds without ``--arch``, since every target of
    CUDA 12 has them).

    Options: ``load`` (``ldcs`` default, ``ldg``, ``ldlu``, ``ldcg``, ``ldca`` or ``none``:
    the hint for loads), ``store`` (``stcs`` default, ``stcg``, ``stwt``, ``stwb`` or
    ``none``), ``arrays`` (``all``, or the arrays to hint, ``x+y``, each optionally with
    its own hint, ``x:ldg+y:stcs``; ``drop-stream-hints`` uses it to restore each array's
    hint), ``address`` (``ref``: ``&x[i]``, or ``offset``: ``x + i``).
    """

    name = "stream-hints"
    kind = "optimize"
    inverse = "drop-stream-hints"
    scope = "device"
    anchor = ACCESS
    preconditions = (
        Precondition("hint-type", "dtype",
                     "the element type has an overload of the hint intrinsic", _hint_type),
        Precondition("global-pointer", "layout",
                     "the pointer is based on a kernel pointer parameter (global memory)",
                     _global_pointer),
        Precondition("read-only", "storage",
                     "ldg/ldcs/ldlu: the array is never written by the kernel, nor through "
                     "a pointer that may overlap it", _read_only),
        Precondition("read-once", "pipeline",
                     "ldcs/ldlu: the address is read once per thread (not re-read later or "
                     "in every iteration of a loop)", _read_once),
        Precondition("write-once", "pipeline",
                     "stcs: the address is written once per thread and not accessed again",
                     _write_once),
        Precondition("arch", "hardware", "sm_35+ for __ldg, sm_32+ for the other hints",
                     _arch),
    )

    load: str = option("ldcs", Choice(*LOAD_HINTS, "none"), "the hint for loads", tune=True)
    store: str = option("stcs", Choice(*STORE_HINTS, "none"), "the hint for stores", tune=True)
    arrays: str = option("all", ArrayHints(),
                         "the arrays to hint (all, x+y), each optionally NAME:HINT")
    address: str = option("ref", Choice("ref", "offset"),
                          "how the address is written: &x[i] (ref) or x + i (offset)")

    def sites(self, unit, ctx):
        out = []
        for s in super().sites(unit, ctx):
            acc = access_of(unit, s.node, self.address)
            if acc is None or _hint_for(self, acc) is None:
                continue
            out.append(s)
        return [type(s)(s.unit, s.match, s.function, k + 1, s.pass_) for k, s in enumerate(out)]

    def rewrite(self, site, ctx):
        acc = _site_access(site)
        hint = _hint_for(self, acc)
        if acc.kind == "store":
            # around the value, so loads inside it are rewritten as their own sites
            return [Edit(acc.node.start_byte, acc.value.start_byte, f"__{hint}({acc.addr}, "),
                    Edit.insert(acc.node.end_byte, ")")]
        # a load is replaced whole: the store around it edits only outside its value
        return [Edit(acc.node.start_byte, acc.node.end_byte, f"__{hint}({acc.addr})")]

    def inverse_for(self, site, ctx):
        only = "all"
        if self.load == "none":
            only = "stores"
        elif self.store == "none":
            only = "loads"
        return DropStreamHints(only=only)


# --------------------------------------------------------------- the simplify side
_DROP_NAMES = tuple("__" + h for h in LOAD_HINTS + STORE_HINTS)
HINT_CALL = Rule(kind="call_expression",
                 has=Rule(kind="identifier", regex=r"^__(ld(cs|g|lu|cg|ca)|st(cs|cg|wt|wb))$"))


def _call_name(unit, call) -> str:
    f = call.child_by_field_name("function")
    return unit.text(f) if f is not None and f.type == "identifier" else ""


@dataclass
class _Hint:
    name: str  # ldcs ...
    kind: str  # load | store
    ptr: object
    value: object = None


def hint_of(unit, call) -> _Hint | None:
    name = _call_name(unit, call)
    if name not in _DROP_NAMES:
        return None
    h = name[2:]
    args = _args(unit, call)
    kind = "load" if h in LOAD_HINTS else "store"
    return _Hint(h, kind, args[0] if args else None, args[1] if len(args) > 1 else None)


def _plain_lvalue(unit, ptr) -> tuple[str, str]:
    """(the lvalue ``*p`` is, spelling) for the hint's pointer argument."""
    p = strip_parens(ptr)
    if p.type == "pointer_expression" and _op(unit, p) == "&":
        inner = p.child_by_field_name("argument")
        if strip_parens(inner).type in ("subscript_expression", "identifier", "field_expression"):
            return unit.text(strip_parens(inner)), "ref"
    got = _offset_form(unit, p)
    if got is not None:
        base, off = got
        return f"{unit.text(base)}[{off}]", "offset"
    if p.type == "identifier":
        return f"*{unit.text(p)}", "deref"
    return f"*({unit.text(p)})", "deref"


def _intrinsic_call(site, ctx) -> Verdict:
    unit = site.unit
    name = _call_name(unit, site.node)
    h = hint_of(unit, site.node)
    n = len(_args(unit, site.node))
    want = 1 if h.kind == "load" else 2
    if n != want:
        return Verdict.no(f"{name} is called with {n} argument(s), not {want}: not the CUDA "
                          "intrinsic")
    own = [f for f in unit.kernels() + unit.device_functions() if f.name == name]
    if own:
        return Verdict.no(f"{name} is defined in this file (line {own[0].line}): a user "
                          "function, not the CUDA intrinsic")
    return Verdict.yes(f"{name}: the CUDA {h.kind} intrinsic")


def _drop_sites_all(unit, ctx, only: str = "all"):
    out = []
    for m in HINT_CALL.find_all(unit):
        h = hint_of(unit, m.node)
        if h is None or (only == "loads" and h.kind != "load") or \
                (only == "stores" and h.kind != "store"):
            continue
        out.append((m, h))
    return out


@dataclass(frozen=True)
class DropStreamHints(Pass):
    """Replace cache-hint intrinsics by plain loads and stores.

    Before::

        if (i < n) __stcs(&y[i], a * __ldcs(x + i) + b);
        acc += __ldg(reinterpret_cast<const float4*>(xr + c));

    After ``drop-stream-hints``::

        if (i < n) y[i] = a * x[i] + b;
        acc += *(reinterpret_cast<const float4*>(xr + c));

    ``__ldcs(p)``, ``__ldg(p)``, ``__ldlu(p)``, ``__ldcg(p)``, ``__ldca(p)`` become ``x[i]``
    when ``p`` is ``&x[i]`` or ``x + i`` (x a pointer), ``*p`` for a pointer variable and
    ``*(p)`` otherwise (parenthesized where a member or index follows);
    ``__stcs(p, v)``, ``__stcg``, ``__stwt``, ``__stwb`` become ``x[i] = v`` / ``*(p) = v``.
    A plain access is at least as coherent as a hinted one, so the result computes the
    same values. ``__ldcv`` (volatile re-fetch) is left alone. Applies in kernels and
    device functions.

    Round trip: ``inverse_for`` reads every hint in the file and returns ``stream-hints``
    with ``arrays`` listing each hinted array with its own hint (``x:ldg+y:stcs``, the
    most common load and store hints as ``load``/``store``) and the address spelling
    used (``ref`` or ``offset``). That restores each site exactly when an array uses one
    load hint and one store hint, all its accesses of that kind were hinted, and the file
    uses one address spelling.

    Preconditions: intrinsic-call (dtype: one argument for a load, two for a store, and
    no function of that name is defined in the file).

    Options: ``only`` (``all`` default, ``loads`` or ``stores``: which hints to drop).
    """

    name = "drop-stream-hints"
    kind = "simplify"
    inverse = "stream-hints"
    scope = "device"
    anchor = HINT_CALL
    preconditions = (
        Precondition("intrinsic-call", "dtype",
                     "the call is the CUDA intrinsic: one argument (load) or two (store), no "
                     "user function of that name", _intrinsic_call),
    )

    only: str = option("all", Choice("all", "loads", "stores"), "which hints to drop")

    def sites(self, unit, ctx):
        out = []
        for s in super().sites(unit, ctx):
            h = hint_of(unit, s.node)
            if h is None or (self.only == "loads" and h.kind != "load") or \
                    (self.only == "stores" and h.kind != "store"):
                continue
            out.append(s)
        return [type(s)(s.unit, s.match, s.function, k + 1, s.pass_) for k, s in enumerate(out)]

    def rewrite(self, site, ctx):
        unit = site.unit
        h = hint_of(unit, site.node)
        lv, spelling = _plain_lvalue(unit, h.ptr)
        call = site.node
        if h.kind == "store":
            wrap = call.parent is None or call.parent.type != "expression_statement"
            return [Edit(call.start_byte, h.value.start_byte, f"({lv} = " if wrap else f"{lv} = "),
                    Edit(h.value.end_byte, call.end_byte, ")" if wrap else "")]
        text = lv
        if spelling == "deref" and _postfix_parent(call):
            text = f"({text})"
        return [Edit(call.start_byte, call.end_byte, text)]

    def inverse_for(self, site, ctx):
        unit = site.unit
        loads: Counter = Counter()
        stores: Counter = Counter()
        spell: Counter = Counter()
        per: dict = {}
        for m, h in _drop_sites_all(unit, ctx, self.only):
            if not m.node.named_children:
                continue
            info = pointer_info(unit, h.ptr) if h.ptr is not None else None
            if info is None and h.ptr is not None:
                p = strip_parens(h.ptr)
                if p.type == "pointer_expression" and _op(unit, p) == "&":
                    a = strip_parens(p.child_by_field_name("argument"))
                    if a.type == "subscript_expression":
                        info = pointer_info(unit, a.child_by_field_name("argument"))
            array = info[1] if info else "?"
            (loads if h.kind == "load" else stores)[h.name] += 1
            per.setdefault(array, {}).setdefault(h.kind, Counter())[h.name] += 1
            if h.ptr is not None:
                s = _plain_lvalue(unit, h.ptr)[1]
                if s != "deref":
                    spell[s] += 1
        load = loads.most_common(1)[0][0] if loads else "none"
        store = stores.most_common(1)[0][0] if stores else "none"
        items = []
        for array in sorted(per):
            if not re.fullmatch(r"[A-Za-z_]\w*", array):
                continue
            e = per[array]
            lh = e["load"].most_common(1)[0][0] if "load" in e else None
            sh = e["store"].most_common(1)[0][0] if "store" in e else None
            if (lh or "none") == load and (sh or "none") == store:
                items.append(array)
                continue
            if lh is not None:
                items.append(f"{array}:{lh}")
            if sh is not None:
                items.append(f"{array}:{sh}")
        address = spell.most_common(1)[0][0] if spell else "ref"
        return StreamHints(load=load, store=store, arrays="+".join(items) or "all",
                           address=address)


__all__ = ["ArrayHints", "DropStreamHints", "StreamHints", "access_of", "hint_of",
           "pointer_info"]
