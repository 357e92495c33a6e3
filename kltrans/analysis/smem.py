"""Shared memory: the static footprint of a kernel, and sizes of CUDA types.

:func:`shared_footprint` adds up the ``__shared__`` declarations a kernel uses: those in
its body, those in device functions it calls (transitively), and file-scope ones it names.
Array dimensions are read with :func:`~kltrans.analysis.affine.affine_of`, so macros,
``constexpr`` constants, enumerators and ``CEIL_DIV``-style macros fold; template and size
parameters are bound through ``consts``. ``extern __shared__`` arrays are sized at launch:
they make the footprint ``dynamic`` and add nothing to ``static_bytes``.

:func:`type_size` knows the CUDA scalar and vector types, pointers, typedefs and ``using``
aliases, and structs defined in the unit (with C layout: padding and ``__align__``).
``__align__``/``alignas`` on a shared *declaration* does not change its size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from kltrans.analysis.affine import _cache, _norm, _unit_info, affine_of

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

# size, alignment
_TYPES: dict[str, tuple[int, int]] = {}


def _add(names: str, size: int, align: int | None = None) -> None:
    for n in names.split():
        _TYPES[n.replace("_", " ") if n.startswith("unsigned_") or n.startswith("signed_")
               or n.startswith("long_") or n.startswith("short_") else n] = (size, align or size)


_add("char signed_char unsigned_char int8_t uint8_t bool std::byte __nv_fp8_e4m3 __nv_fp8_e5m2 "
     "__nv_fp8_storage_t char1 uchar1 uchar", 1)
_add("short short_int signed_short unsigned_short unsigned_short_int int16_t uint16_t __half half "
     "__nv_bfloat16 nv_bfloat16 char2 uchar2 short1 ushort1 ushort __nv_fp8x2_e4m3 "
     "__nv_fp8x2_e5m2", 2)
_add("char3 uchar3", 3, 1)
_add("int signed signed_int unsigned unsigned_int int32_t uint32_t float __half2 half2 "
     "__nv_bfloat162 nv_bfloat162 char4 uchar4 short2 ushort2 int1 uint1 float1 wchar_t uint "
     "__nv_fp8x4_e4m3 __nv_fp8x4_e5m2 char32_t", 4)
_add("short3 ushort3", 6, 2)
_add("long long_int unsigned_long unsigned_long_int long_long long_long_int unsigned_long_long "
     "unsigned_long_long_int signed_long signed_long_long int64_t uint64_t size_t ssize_t "
     "ptrdiff_t intptr_t uintptr_t double float2 int2 uint2 long1 ulong1 longlong1 ulonglong1 "
     "double1 short4 ushort4 ulong ulonglong", 8)
_add("float3 int3 uint3", 12, 4)
_add("float4 int4 uint4 double2 long2 ulong2 longlong2 ulonglong2 __nv_bfloat16x8 int4_16a", 16)
_add("double3 long3 ulong3 longlong3 ulonglong3", 24, 8)
_add("double4 long4 ulong4 longlong4 ulonglong4 double4_32a longlong4_32a ulonglong4_32a "
     "double4_16a longlong4_16a", 32, 16)
_TYPES["double4_32a"] = (32, 32)
_TYPES["longlong4_32a"] = (32, 32)
_TYPES["ulonglong4_32a"] = (32, 32)

_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct|class|union|"
                         r"typename|__shared__|static|extern|constexpr|__device__|__constant__|"
                         r"__managed__)\b")
_ALIGN = re.compile(r"\b(__align__|alignas)\s*\([^)]*\)")


def _clean_type(t: str) -> str:
    t = _ALIGN.sub(" ", t)
    t = _QUALIFIERS.sub(" ", t)
    t = _norm(t)
    if t != "std::byte":
        t = re.sub(r"^(::)?(cuda::)?(std::)?", "", t)
    return t


def type_layout(unit: "Unit | None", type_text: str, _depth: int = 0) -> tuple[int, int] | None:
    """(size, alignment) in bytes of a type, or None when unknown."""
    t = _clean_type(type_text)
    if _depth > 20 or not t:
        return None
    if t.endswith("*") or t.endswith("&"):
        return 8, 8
    if t in _TYPES:
        return _TYPES[t]
    if unit is None:
        return None
    info = _unit_info(unit)
    if t in info.typedefs:
        return type_layout(unit, info.typedefs[t], _depth + 1)
    short = t.split("::")[-1]
    if short in info.structs:
        return _struct_layout(unit, info.structs[short], _depth + 1)
    return None


@dataclass(frozen=True)
class Field:
    """One member of a struct or union of the unit: ``count`` elements of ``type``
    (``dims``: its array dimensions, outermost first; ``()`` for one value)."""

    name: str
    type: str
    dims: tuple[int, ...]
    pointer: bool

    @property
    def count(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n


def record_fields(unit: "Unit", type_text: str) -> tuple[bool, tuple[Field, ...]] | None:
    """(is a union, its members in order) when ``type_text`` names a struct, class or union
    defined in the unit (through typedefs); None otherwise or when a member's array size
    is not a constant."""
    t = _clean_type(type_text)
    info = _unit_info(unit)
    for _ in range(20):
        if t not in info.typedefs:
            break
        t = _clean_type(info.typedefs[t])
    node = info.structs.get(t.split("::")[-1])
    body = node.child_by_field_name("body") if node is not None else None
    if body is None:
        return None
    out = []
    for f in body.named_children:
        if f.type != "field_declaration" or f.child_by_field_name("type") is None:
            continue
        ty = unit.text(f.child_by_field_name("type"))
        for d in f.children_by_field_name("declarator"):
            dims: list[int] = []
            ptr = False
            while d is not None and d.type != "field_identifier":
                if d.type == "array_declarator":
                    v = affine_of(unit, d.child_by_field_name("size")) \
                        if d.child_by_field_name("size") is not None else None
                    if v is None or v.value() is None:
                        return None
                    dims.insert(0, v.value())
                ptr = ptr or d.type == "pointer_declarator"
                d = d.child_by_field_name("declarator")
            if d is not None:
                out.append(Field(unit.text(d), ty, tuple(dims), ptr))
    return node.type == "union_specifier", tuple(out)


def type_size(unit: "Unit | None", type_text: str) -> int | None:
    """``sizeof(type)`` in bytes for CUDA scalar/vector types, pointers, typedefs and structs
    of the unit; None when unknown (a template parameter, a library type)."""
    got = type_layout(unit, type_text)
    return got[0] if got is not None else None


def _struct_layout(unit: "Unit", node: "Node", depth: int) -> tuple[int, int] | None:
    c = _cache(unit).setdefault("struct_layout", {})
    if node.id in c:
        return c[node.id]
    c[node.id] = None  # cycle guard
    align = 1
    for ch in node.children:
        if ch.type in ("alignas_qualifier", "attribute_specifier"):
            nums = [x for x in ch.named_children if x.type == "number_literal"]
            if nums:
                v = affine_of(unit, nums[0])
                if v is not None and v.value():
                    align = max(align, v.value())
    body = node.child_by_field_name("body")
    if body is None:
        return None
    is_union = node.type == "union_specifier"
    offset = 0
    size_max = 0
    for f in body.named_children:
        if f.type != "field_declaration":
            continue
        ty = f.child_by_field_name("type")
        if ty is None:
            return None
        lay = type_layout(unit, unit.text(ty), depth + 1) if ty.type != "struct_specifier" or \
            ty.child_by_field_name("body") is None else _struct_layout(unit, ty, depth + 1)
        if lay is None:
            return None
        fsize, falign = lay
        for d in f.children_by_field_name("declarator"):
            count = 1
            node_ = d
            ptr = False
            while node_ is not None and node_.type != "field_identifier":
                if node_.type == "array_declarator":
                    sz = node_.child_by_field_name("size")
                    v = affine_of(unit, sz) if sz is not None else None
                    if v is None or v.value() is None:
                        return None
                    count *= v.value()
                elif node_.type == "pointer_declarator":
                    ptr = True
                node_ = node_.child_by_field_name("declarator")
            s, a = (8, 8) if ptr else (fsize, falign)
            align = max(align, a)
            if is_union:
                size_max = max(size_max, s * count)
            else:
                offset = -(-offset // a) * a + s * count
    total = size_max if is_union else offset
    total = -(-total // align) * align if total else 0
    c[node.id] = (total, align)
    return total, align


# --------------------------------------------------------------------- footprint
@dataclass(frozen=True)
class SmemDecl:
    """One ``__shared__`` declaration: ``bytes`` is None when it cannot be computed
    (``reason`` says why) and for ``extern`` (dynamic) arrays."""

    name: str
    type: str
    bytes: int | None
    extern: bool
    reason: str | None
    function: str | None = None
    dims: tuple[str, ...] = ()
    node: "Node | None" = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class SmemFootprint:
    """The shared memory a kernel declares: ``static_bytes`` (None when some size is not
    known; ``reason`` says which), ``dynamic`` when an ``extern __shared__`` array is used."""

    static_bytes: int | None
    dynamic: bool
    decls: tuple[SmemDecl, ...]
    reason: str | None

    def fits(self, limit: int) -> bool | None:
        """Whether the static part fits in ``limit`` bytes (None when unknown)."""
        return None if self.static_bytes is None else self.static_bytes <= limit


def _decl_size(unit: "Unit", d, env: Mapping, types: Mapping[str, str]) -> SmemDecl:
    if d.extern:
        return SmemDecl(d.name, d.type, None, True, "extern: sized at launch", d.function, d.dims,
                        d.node)
    ty = d.type
    base = _clean_type(ty)
    if base in types:
        ty = types[base]
    size = type_size(unit, ty)
    if size is None and f"sizeof({base})" in env:
        size = env[f"sizeof({base})"].value()
    if size is None:
        return SmemDecl(d.name, d.type, None, False,
                        f"unknown size of type {base}" + (
                            " (a template parameter: pass types= or consts={'sizeof(T)': n})"
                            if re.fullmatch(r"[A-Z]\w*", base) else ""), d.function, d.dims, d.node)
    total = size
    for i, dim in enumerate(d.dims):
        if dim == "":
            return SmemDecl(d.name, d.type, None, False, "array without a size", d.function,
                            d.dims, d.node)
        dn = _dim_nodes(unit, d.node, d.name)
        v = affine_of(unit, dn[i], env=env) if dn is not None and i < len(dn) else None
        if v is None or v.value() is None:
            syms = sorted(x for x in v.free_symbols()
                          if re.fullmatch(r"[A-Za-z_][\w.]*", x)) if v is not None else []
            why = f"dimension `{dim}` is not a constant"
            if syms:
                why += f" ({', '.join(syms)} unknown; pass consts)"
            return SmemDecl(d.name, d.type, None, False, why, d.function, d.dims, d.node)
        total *= v.value()
    return SmemDecl(d.name, d.type, total, False, None, d.function, d.dims, d.node)


def _dim_nodes(unit: "Unit", decl: "Node", name: str) -> list["Node"] | None:
    for d in decl.children_by_field_name("declarator"):
        node = d
        dims: list = []
        while node is not None and node.type not in ("identifier", "field_identifier"):
            if node.type == "array_declarator":
                dims.insert(0, node.child_by_field_name("size"))
            node = node.child_by_field_name("declarator")
        if node is not None and unit.text(node) == name:
            return dims
    return None


def _used_functions(unit: "Unit", fn: "Function") -> list["Function"]:
    """``fn`` and the device functions of the unit it calls, transitively."""
    info = _unit_info(unit)
    seen = {fn.node.id}
    order = [fn]
    i = 0
    while i < len(order):
        f = order[i]
        i += 1
        for n in unit.walk(f.node):
            if n.type != "call_expression":
                continue
            callee = n.child_by_field_name("function")
            if callee is None:
                continue
            if callee.type == "template_function":
                callee = callee.child_by_field_name("name")
            if callee is None:
                continue
            name = _norm(unit.text(callee)).split("::")[-1]
            for g in info.functions.get(name, ()):
                if g.node.id not in seen and not g.is_kernel:
                    seen.add(g.node.id)
                    order.append(g)
    return order


def shared_footprint(unit: "Unit", fn: "Function", consts: Mapping[str, int] | None = None,
                     types: Mapping[str, str] | None = None) -> SmemFootprint:
    """The static shared memory ``fn`` declares, and whether it uses dynamic shared memory.

    ``consts`` binds template and size parameters (``{"BLOCK": 256}``) and may give
    ``"sizeof(T)"``; ``types`` binds type template parameters (``{"T": "float"}``).
    """
    env = dict(consts or {})
    from kltrans.analysis.affine import Affine

    envA = {k: Affine.of(v) for k, v in env.items()}
    types = dict(types or {})
    fns = _used_functions(unit, fn)
    ranges = [(f.node.start_byte, f.node.end_byte) for f in fns]
    names_used: set[str] = set()
    for f in fns:
        names_used |= {unit.text(n) for n in unit.walk(f.node) if n.type == "identifier"}
    decls = []
    for d in unit.shared_decls():
        s = d.node.start_byte
        inside = any(a <= s < b for a, b in ranges)
        if inside or (d.function is None and d.name in names_used and not _in_any_function(d.node)):
            decls.append(_decl_size(unit, d, envA, types))
    dynamic = any(d.extern for d in decls)
    unknown = [d for d in decls if not d.extern and d.bytes is None]
    if unknown:
        reason = "; ".join(f"{d.name}: {d.reason}" for d in unknown)
        return SmemFootprint(None, dynamic, tuple(decls), reason)
    total = sum(d.bytes for d in decls if not d.extern)
    reason = "plus dynamic shared memory sized at launch" if dynamic else None
    return SmemFootprint(total, dynamic, tuple(decls), reason)


def _in_any_function(node: "Node") -> bool:
    p = node.parent
    while p is not None:
        if p.type == "function_definition":
            return True
        p = p.parent
    return False
