"""The compile stage of the gate: NVRTC through cuda-python, with no GPU needed.

:func:`compile_unit` takes a parsed :class:`~kltrans.syntax.unit.Unit` and returns a
:class:`CompileResult`: the cubin for an explicit ``sm_XX`` architecture, the raw NVRTC
log, the log's messages as kltrans diagnostics pointing at the *original* file, the
per-kernel resources that ``ptxas -v`` reports (registers, spills, static shared memory,
stack, constant banks) and the lowered (mangled) names of template instantiations asked
for with name expressions.

What is sent to NVRTC (:func:`prepare`):

* **Host code is blanked out.** NVRTC rejects host functions, host declarations and
  host variables ("not allowed in JIT mode"). Using the syntax tree, these are replaced
  by spaces, byte for byte, keeping every line break, so NVRTC's line numbers are the
  original ones: namespace-scope function definitions that are neither ``__global__``
  nor ``__device__`` (``main``, launchers with their ``<<<...>>>`` launches and
  lambdas, ``__host__``-only and templated ones), unannotated prototypes, unannotated
  non-const namespace variables, explicit instantiations of removed host templates, and
  unannotated member functions and member/friend declarations of classes (nvcc forbids
  device code to call them, so valid device code never did). ``constexpr`` host
  functions are kept and get ``__host__ __device__`` inserted in front (nvcc lets device
  code use them in constant expressions); the insertion and the include rewrites below
  are the only edits that change a line's length, and :class:`OffsetMap` maps columns
  back through them. ``__host__ __device__`` functions, ``= default``/``= delete``
  members, and anything whose head holds a parse error or a macro that expands to
  ``__device__``/``__global__`` are kept as written.
* **Includes.** ``<...>`` headers found in the search path (the kernel's folder, the
  caller's ``include_dirs``, the CUDA runtime and CCCL headers of the
  ``nvidia-cuda-runtime`` / ``nvidia-cuda-cccl`` wheels) are kept; standard headers with
  a libcu++ twin (``<cstdint>``, ``<type_traits>``, ``<limits>``, ``<cfloat>``, ...) are
  rewritten to ``<cuda/std/...>``; any other system header (``<cstdio>``, ``<vector>``,
  ``<iostream>``, ...) is host-only and blanked. Local headers (``"helpers.cuh"``, or
  ``<...>`` found in the kernel's folder or ``include_dirs``) are read, stripped the
  same way and handed to NVRTC in memory, so their content is part of the cache key.
* **A prelude** (pre-included, in memory) supplies what nvcc's implicit
  ``cuda_runtime.h`` would: ``INFINITY``/``NAN``/``HUGE_VALF``/``HUGE_VAL`` when the code
  uses them without a math header, and ``namespace std { using namespace cuda::std; }``
  when a standard header was mapped to libcu++ and the code names ``std::``.

Options: ``-arch=<arch>``, ``--std=c++17`` unless the caller gives a standard,
``--ptxas-options=-v``, ``-I`` for the caller's dirs, the kernel's folder, the runtime
and CCCL headers, then the caller's options. nvcc-only options NVRTC does not know
(``--extended-lambda``) are dropped and reported in :attr:`Prepared.changes`.

Results are cached on disk (:mod:`kltrans.gate.cache`) under a sha256 key of the exact
program (prepared source, in-memory headers, prelude, program name), the options with
the wheel include dirs replaced by the wheels' versions, the arch, the name
expressions, the NVRTC version and the kltrans version. Failed compiles are cached too.
Diagnostics and resources are re-derived from the cached log on every hit, against the
unit in hand. ``cuda.*`` is imported lazily: this module imports without cuda-python.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from kltrans.gate import cache as _cache
from kltrans.syntax.diagnostics import Diagnostic, Location
from kltrans.syntax.edits import Edit, splice
from kltrans.syntax.unit import parse
from kltrans.syntax.cuda import (
    at_namespace_scope,
    cuda_qualifier_macros,
    declarator_is_function,
    head_words,
    include_target,
)

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.unit import Unit

DEFAULT_STD = "--std=c++17"
PTXAS_VERBOSE = "--ptxas-options=-v"
PRELUDE_NAME = "__kltrans_prelude.h"
_KEY_SCHEME = 1  # bump when what goes into the key changes meaning

# nvcc options with no NVRTC equivalent that are safe to drop: NVRTC has no extended
# lambdas at all, and the host code that holds them is stripped anyway.
_DROPPED_OPTIONS = {"--extended-lambda", "-extended-lambda", "--expt-extended-lambda",
                    "-expt-extended-lambda"}
_ARCH_OPTION = re.compile(r"^(?:-arch|--gpu-architecture|-gencode|--generate-code|--gpu-code"
                          r"|-code)(?:[= ]|$)")
_STD_OPTION = re.compile(r"^(?:-std|--std)(?:=|$)")


# ------------------------------------------------------------------------------ errors
class CompileError(RuntimeError):
    """NVRTC could not be called at all (missing cuda-python, a broken toolchain).

    A kernel that does not compile is *not* an exception: it is a
    :class:`CompileResult` with ``ok=False`` and diagnostics.
    """


class UnsupportedArchError(ValueError):
    """The requested architecture is not one NVRTC can generate a cubin for."""

    def __init__(self, arch: str, supported: list[str], reason: str = "not supported"):
        self.arch = arch
        self.supported = list(supported)
        super().__init__(f"architecture {arch!r} is {reason} by NVRTC "
                         f"{'.'.join(map(str, nvrtc_version_or_none() or ('?',)))}; "
                         f"supported: {', '.join(self.supported)}")


# ------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class KernelResources:
    """What ``ptxas -v`` reports for one kernel (entry function)."""

    name: str  # the symbol as ptxas reports it: mangled (``_Z5saxpyifPKfPf``) or C name
    short: str  # the plain kernel name (``saxpy``)
    registers: int
    spill_stores: int  # bytes
    spill_loads: int  # bytes
    smem_static: int  # bytes of static shared memory
    stack: int  # bytes of this function's stack frame
    cmem: dict | None  # constant bank -> bytes, e.g. {0: 364}; None when ptxas lists none
    qualified: str = ""  # with namespaces (``kl::row_sum``)
    name_expression: str | None = None  # the name expression that lowered to ``name``
    barriers: int = 0
    stack_cumulative: int = 0  # stack including callees, when ptxas reports it

    def to_json(self) -> dict:
        return {"name": self.name, "short": self.short, "qualified": self.qualified,
                "name_expression": self.name_expression, "registers": self.registers,
                "spill_stores": self.spill_stores, "spill_loads": self.spill_loads,
                "smem_static": self.smem_static, "stack": self.stack,
                "stack_cumulative": self.stack_cumulative, "barriers": self.barriers,
                "cmem": {str(k): v for k, v in self.cmem.items()} if self.cmem else None}


@dataclass(frozen=True)
class Change:
    """One thing :func:`prepare` changed before NVRTC saw the source."""

    kind: str  # host-function | host-member | host-declaration | host-variable |
    #            host-instantiation | constexpr-host-device | include-mapped |
    #            include-dropped | option-dropped
    name: str
    path: str
    line: int = 0
    detail: str = ""

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}: " if self.line else ""
        return f"{where}{self.kind} {self.name}{' -> ' + self.detail if self.detail else ''}"


@dataclass(frozen=True)
class Header:
    """A local header handed to NVRTC in memory (stripped like the main file)."""

    name: str  # as written in the #include
    path: str  # the file it came from
    original: bytes
    source: bytes  # what NVRTC sees
    offsets: "OffsetMap" = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Prepared:
    """The program as sent to NVRTC."""

    source: bytes
    program_name: str
    headers: tuple[Header, ...] = ()
    prelude: str = ""
    changes: tuple[Change, ...] = ()
    kernel_dir: str | None = None
    offsets: "OffsetMap" = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class CompileResult:
    ok: bool
    arch: str
    cubin: bytes | None = field(repr=False)
    ptx: str | None = field(repr=False)
    log: str = field(repr=False)
    diagnostics: tuple = ()
    resources: dict = field(default_factory=dict)  # key (see resource()) -> KernelResources
    lowered_names: dict = field(default_factory=dict)  # name expression -> mangled name
    seconds: float = 0.0
    cached: bool = False
    key: str = ""
    options: tuple = field(default=(), repr=False)  # the options NVRTC was given
    prepared: Prepared | None = field(default=None, repr=False, compare=False)
    compile_seconds: float = 0.0  # NVRTC time of the compile that produced this (cached or not)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def resource(self, name: str) -> KernelResources | None:
        """Resources by key, plain name, qualified name, name expression or symbol."""
        if name in self.resources:
            return self.resources[name]
        for r in self.resources.values():
            if name in (r.short, r.qualified, r.name, r.name_expression):
                return r
        return None

    def symbol(self, name: str) -> str | None:
        """The cubin symbol for a kernel: a name expression, or a kernel's plain name.

        From the lowered names, else the ptxas report, else the cubin's own symbol table
        (a C++-linkage kernel whose plain name is the one function of that name in it):
        the cubin is the one source that cannot disagree with what is loaded."""
        if name in self.lowered_names:
            return self.lowered_names[name]
        r = self.resource(name)
        if r is not None:
            return r.name
        if self.cubin:
            found = [f for f in cubin_functions(self.cubin)
                     if f == name or _demangle(f)[-1] == name]
            if len(found) == 1:
                return found[0]
        return None

    def render(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)


# ------------------------------------------------------------------------------ toolchain
def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise CompileError("cuda-python is not installed (pip install cuda-python "
                           "nvidia-cuda-nvrtc): " + str(e)) from None
    return nvrtc


def _check(res, what: str):
    nvrtc = _nvrtc()
    err = res[0]
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise CompileError(f"{what} failed: {_err_name(err)}")
    if len(res) == 1:
        return None
    return res[1] if len(res) == 2 else res[1:]


def _err_name(err) -> str:
    try:
        return _nvrtc().nvrtcGetErrorString(err)[1].decode()
    except Exception:  # pragma: no cover
        return str(err)


@functools.lru_cache(maxsize=1)
def nvrtc_version() -> tuple[int, int]:
    """(major, minor) of the NVRTC library cuda-python loads."""
    try:
        major, minor = _check(_nvrtc().nvrtcVersion(), "nvrtcVersion")
    except CompileError:
        raise
    except Exception as e:  # pragma: no cover - library not loadable
        raise CompileError(f"cannot load NVRTC: {e}") from None
    return int(major), int(minor)


def nvrtc_version_or_none() -> tuple[int, int] | None:
    try:
        return nvrtc_version()
    except Exception:
        return None


@functools.lru_cache(maxsize=1)
def _supported_numbers() -> tuple[int, ...]:
    return tuple(int(a) for a in _check(_nvrtc().nvrtcGetSupportedArchs(),
                                        "nvrtcGetSupportedArchs"))


@functools.lru_cache(maxsize=1)
def _supported() -> tuple[str, ...]:
    out = []
    for n in _supported_numbers():
        out.append(f"sm_{n}")
        if n >= 90:
            out.append(f"sm_{n}a")
        if n >= 100:
            out.append(f"sm_{n}f")
    return tuple(out)


def supported_archs() -> list[str]:
    """Every ``sm_XX`` NVRTC can build a cubin for (from ``nvrtcGetSupportedArchs``),
    plus the architecture-specific ``sm_XXa`` (9.0 and later) and family-specific
    ``sm_XXf`` (10.0 and later) variants, which NVRTC 13 accepts for those numbers."""
    return list(_supported())


_ARCH_RE = re.compile(r"^sm_?(\d{2,3})([af]?)$")


def check_arch(arch) -> str:
    """Normalize ``arch`` (``"sm_90"``, ``"SM_90a"``, ``90``) or raise UnsupportedArchError."""
    text = f"sm_{arch}" if isinstance(arch, int) else str(arch).strip().lower()
    m = _ARCH_RE.match(text)
    if m is None:
        reason = ("a virtual architecture; the gate needs a cubin, so give a real one"
                  if text.startswith("compute_") else "not an sm_XX architecture name")
        raise UnsupportedArchError(str(arch), supported_archs(), reason)
    norm = f"sm_{m.group(1)}{m.group(2)}"
    if norm not in _supported():
        raise UnsupportedArchError(str(arch), supported_archs())
    return norm


def _find_include_dir(libname: str, probe: str) -> str | None:
    try:
        import cuda.pathfinder as pf
    except ImportError:  # pragma: no cover
        pf = None
    if pf is not None:
        for fn_name in ("locate_nvidia_header_directory", "find_nvidia_header_directory"):
            fn = getattr(pf, fn_name, None)
            if fn is None:
                continue
            try:
                found = fn(libname)
            except Exception:
                continue
            path = getattr(found, "abs_path", found)
            if path and os.path.isfile(os.path.join(path, probe)):
                return str(path)
    # fallback: the wheels' layout under site-packages/nvidia
    try:
        import nvidia
    except ImportError:  # pragma: no cover
        return None
    sub = {"cudart": ("cu13/include", "cuda_runtime/include", "cu12/include"),
           "cccl": ("cu13/include/cccl", "cuda_cccl/include", "cu12/include/cccl")}[libname]
    for base in list(getattr(nvidia, "__path__", [])):
        for s in sub:
            p = os.path.join(base, s)
            if os.path.isfile(os.path.join(p, probe)):
                return p
    return None


@functools.lru_cache(maxsize=1)
def _header_dirs() -> tuple[tuple[str, str], ...]:
    out = []
    for lib, probe in (("cudart", "cuda_runtime.h"), ("cccl", "cuda/std/version")):
        p = _find_include_dir(lib, probe)
        if p is not None:
            out.append((lib, os.path.abspath(p)))
    return tuple(out)


def header_dirs() -> dict[str, str]:
    """Include dirs of the CUDA runtime (``cudart``) and CCCL (``cccl``) headers: found
    with ``cuda.pathfinder.locate_nvidia_header_directory`` (the ``nvidia-cuda-runtime``
    and ``nvidia-cuda-cccl`` wheels first), else under the installed ``nvidia`` package."""
    return dict(_header_dirs())


@functools.lru_cache(maxsize=1)
def toolchain_versions() -> dict:
    """Versions that change what a compile produces; part of the cache key."""
    from importlib import metadata

    import kltrans

    out = {"kltrans": kltrans.__version__, "nvrtc": list(nvrtc_version())}
    for dist in ("nvidia-cuda-runtime", "nvidia-cuda-cccl", "nvidia-cuda-nvrtc",
                 "cuda-bindings"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


# --------------------------------------------------------------------- host-code stripping
_SPACE = re.compile(rb"[^\r\n]")


def _blank(b: bytes) -> bytes:
    return _SPACE.sub(b" ", b)


# standard headers with a libcu++ twin under <cuda/std/...>
_STD_MAP = {name: f"cuda/std/{name}" for name in (
    "array", "atomic", "bit", "bitset", "cassert", "cfloat", "climits", "cmath", "complex",
    "concepts", "cstddef", "cstdint", "cstdlib", "cstring", "functional", "initializer_list",
    "limits", "numbers", "optional", "ratio", "span", "tuple", "type_traits", "utility",
    "variant", "version")}
_STD_MAP.update({"stdint.h": "cuda/std/cstdint", "stddef.h": "cuda/std/cstddef",
                 "float.h": "cuda/std/cfloat", "limits.h": "cuda/std/climits",
                 "math.h": "cuda/std/cmath", "assert.h": "cuda/std/cassert",
                 "stdlib.h": "cuda/std/cstdlib", "string.h": "cuda/std/cstring"})
_MATH_HEADERS = {"cmath", "math.h", "cuda/std/cmath"}
_MATH_MACROS = {"INFINITY", "NAN", "HUGE_VALF", "HUGE_VAL"}
_CUDA_WORDS = {"__device__", "__global__"}
_MEMSPACE = {"__device__", "__constant__", "__shared__", "__managed__", "__global__"}
_WORD = re.compile(r"[A-Za-z_]\w*")
_STD_QUALIFIED = re.compile(r"(?<![\w:])std\s*::")


_namespace_scope = at_namespace_scope


_CLASS_TYPES = ("struct_specifier", "class_specifier", "union_specifier")


def _class_scope(node: "Node") -> bool:
    """Directly in the body of a class that sits at namespace scope (or in such a class);
    a local class inside a function body does not count."""
    p = node.parent
    if p is None or p.type != "field_declaration_list":
        return False
    cls = p.parent
    if cls is None or cls.type not in _CLASS_TYPES:
        return False
    prev, holder = cls, cls.parent
    while holder is not None and holder.type in ("declaration", "template_declaration",
                                                 "field_declaration", "type_definition"):
        prev, holder = holder, holder.parent
    if holder is None:
        return False
    if holder.type == "field_declaration_list":
        return _class_scope(prev)
    return _namespace_scope(prev)


class OffsetMap:
    """Maps byte offsets in the text NVRTC saw back to the original text.

    Built from the sorted edits as ``(start, end, new_length)`` in original offsets.
    Length-preserving edits (the blanking) map 1:1; an offset inside a longer or
    shorter replacement maps into the replaced range, clamped to its end.
    """

    def __init__(self, edits: Iterable[tuple[int, int, int]] = ()):
        self.edits = tuple(edits)

    def to_original(self, offset: int) -> int:
        delta = 0
        for start, end, new_len in self.edits:
            s_start = start + delta
            if offset < s_start:
                break
            if offset < s_start + new_len:
                return start + min(offset - s_start, max(end - start - 1, 0))
            delta += new_len - (end - start)
        return offset - delta


def _head_has_error(node: "Node", declarator: "Node | None") -> bool:
    for c in node.children:
        if declarator is not None and c.start_byte >= declarator.start_byte:
            break
        if c.type == "ERROR" or c.is_missing:
            return True
    return False


def _declared_name(unit: "Unit", d: "Node") -> str:
    while d is not None and d.type not in ("identifier", "field_identifier", "qualified_identifier",
                                           "template_function", "destructor_name",
                                           "operator_name"):
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            named = [c for c in d.named_children if c.type != "type_qualifier"]
            nxt = named[0] if named else None
        d = nxt
    if d is None:
        return "?"
    if d.type == "template_function":
        name = d.child_by_field_name("name")
        d = name if name is not None else d
    return unit.text(d).split("::")[-1].strip()


def _outer_of(node: "Node") -> "Node":
    """A declaration with its template<> and a one-declaration extern "C" wrapper."""
    outer = node
    if outer.parent is not None and outer.parent.type == "template_declaration":
        outer = outer.parent
    if outer.parent is not None and outer.parent.type == "linkage_specification":
        outer = outer.parent
    return outer


def _strip(unit: "Unit", path_for_changes: str, resolve_include) -> tuple[bytes, list, dict]:
    """Blank host code and rewrite includes; returns (bytes, changes, flags).

    ``resolve_include(name, system) -> "keep" | "map" | "drop" | "local"`` decides each
    include (the caller registers local headers itself).
    """
    from kltrans.syntax.cuda import find_functions

    src = unit.source
    edits: list[Edit] = []
    spans: list[tuple[int, int]] = []
    changes: list[Change] = []
    macros = cuda_qualifier_macros(unit)
    removed_names: set[str] = set()
    device_names: set[str] = set()

    def remove(node: "Node", kind: str, name: str) -> None:
        s, e = node.start_byte, node.end_byte
        if any(a <= s and e <= b for a, b in spans):
            return
        spans.append((s, e))
        edits.append(Edit(s, e, _blank(src[s:e])))
        changes.append(Change(kind, name, path_for_changes, unit.line_col(s)[0]))

    for f in find_functions(unit):
        if f.is_kernel or f.is_device:
            device_names.add(f.name)
            continue
        decl = f.node.child_by_field_name("declarator")
        in_ns = _namespace_scope(f.outer)
        in_class = not in_ns and _class_scope(f.outer)
        if not (in_ns or in_class) or _head_has_error(f.node, decl):
            continue
        head = head_words(unit, f.node, decl)
        if head & macros:
            device_names.add(f.name)
            continue
        if any(c.type in ("default_method_clause", "delete_method_clause")
               for c in f.node.children):
            continue  # = default / = delete: implicitly __host__ __device__
        if "constexpr" in head or "constexpr" in f.attributes:
            # nvcc lets device code use constexpr host functions in constant expressions
            # (and anywhere with --expt-relaxed-constexpr, which NVRTC lacks): make them
            # __host__ __device__ instead of removing them.
            at = f.node.start_byte
            edits.append(Edit(at, at, b"__host__ __device__ "))
            changes.append(Change("constexpr-host-device", f.name, path_for_changes,
                                  unit.line_col(at)[0]))
            device_names.add(f.name)
            continue
        removed_names.add(f.name)
        # a class member: device code cannot have called it (nvcc rejects calls to
        # __host__ functions from device code), so removing it changes nothing there
        remove(_outer_of(f.node) if in_ns else f.outer,
               "host-function" if in_ns else "host-member", f.name)

    for n in unit.walk():
        t = n.type
        if t == "declaration":
            outer = _outer_of(n)
            if not _namespace_scope(outer):
                continue
            words = {unit.text(c) for c in n.children if c.type != "ERROR"}
            if words & _MEMSPACE or any(c.type == "ERROR" for c in n.children):
                continue
            decls = n.children_by_field_name("declarator")
            if not decls:
                continue
            first = decls[0]
            if head_words(unit, n, first) & macros:
                continue
            funcs = [declarator_is_function(d) for d in decls]
            names = ", ".join(_declared_name(unit, d) for d in decls)
            if all(funcs) and "constexpr" in words:
                edits.append(Edit(n.start_byte, n.start_byte, b"__host__ __device__ "))
                changes.append(Change("constexpr-host-device", names, path_for_changes,
                                      unit.line_col(n.start_byte)[0]))
            elif all(funcs):
                for d in decls:
                    removed_names.add(_declared_name(unit, d))
                remove(outer, "host-declaration", names)
            elif not any(funcs):
                if words & {"const", "constexpr"}:
                    continue
                ty = n.child_by_field_name("type")
                if ty is not None and ty.type in ("struct_specifier", "class_specifier",
                                                  "union_specifier", "enum_specifier") \
                        and ty.child_by_field_name("body") is not None:
                    continue  # a type definition with a variable: keep the type
                remove(outer, "host-variable", names)
        elif t in ("field_declaration", "friend_declaration"):
            target = n
            if t == "friend_declaration":
                inner = [c for c in n.named_children if c.type == "declaration"]
                if not inner:
                    continue
                target = inner[0]
            outer = n.parent if n.parent is not None and n.parent.type == "template_declaration" \
                else n
            if not _class_scope(outer):
                continue
            words = {unit.text(c) for c in target.children if c.type != "ERROR"}
            if words & _MEMSPACE or words & {"constexpr"} or \
                    any(c.type == "ERROR" for c in target.children):
                continue
            decls = target.children_by_field_name("declarator")
            if not decls or not all(declarator_is_function(d) for d in decls):
                continue
            if head_words(unit, target, decls[0]) & macros:
                continue
            names = ", ".join(_declared_name(unit, d) for d in decls)
            remove(outer, "host-member" if t == "field_declaration" else "host-declaration",
                   names)
    for n in unit.walk():
        if n.type != "template_instantiation" or not _namespace_scope(n):
            continue
        words = {unit.text(c) for c in n.children}
        if words & _CUDA_WORDS:
            continue
        d = n.child_by_field_name("declarator")
        name = _declared_name(unit, d) if d is not None else "?"
        if name in removed_names and name not in device_names:
            remove(_outer_of(n), "host-instantiation", name)

    def inside_removed(node: "Node") -> bool:
        return any(a <= node.start_byte < b for a, b in spans)

    flags = {"mapped_std": False, "names_std": False, "uses_math_macros": False,
             "has_math_header": False, "locals": []}
    for n in unit.walk():
        t = n.type
        if t == "preproc_include":
            if inside_removed(n):
                continue
            p = n.child_by_field_name("path")
            target = include_target(unit, n)
            if target is None:
                continue  # #include MACRO
            name, system = target
            if name in _MATH_HEADERS:
                flags["has_math_header"] = True
            action = resolve_include(name, system)
            line = unit.line_col(n.start_byte)[0]
            if action == "map":
                new = _STD_MAP[name]
                edits.append(Edit(p.start_byte, p.end_byte, f"<{new}>".encode()))
                spans.append((p.start_byte, p.end_byte))
                changes.append(Change("include-mapped", f"<{name}>", path_for_changes, line,
                                      f"<{new}>"))
                flags["mapped_std"] = True
            elif action == "drop":
                s, e = n.start_byte, n.end_byte
                edits.append(Edit(s, e, _blank(src[s:e])))
                spans.append((s, e))
                changes.append(Change("include-dropped", f"<{name}>" if system else f'"{name}"',
                                      path_for_changes, line, "host-only, not available to NVRTC"))
            elif action == "local":
                flags["locals"].append(name)
        elif t == "namespace_identifier" and unit.text(n) == "std" and not inside_removed(n):
            flags["names_std"] = True
        elif t == "identifier" and unit.text(n) in _MATH_MACROS and not inside_removed(n):
            flags["uses_math_macros"] = True
        elif t in ("preproc_def", "preproc_function_def") and not inside_removed(n):
            value = n.child_by_field_name("value")
            if value is not None:
                body = unit.text(value)
                if set(_WORD.findall(body)) & _MATH_MACROS:
                    flags["uses_math_macros"] = True
                if _STD_QUALIFIED.search(body):
                    flags["names_std"] = True
    edits.sort(key=lambda e: (e.start, e.end))
    flags["edits"] = tuple((e.start, e.end, len(e.replacement)) for e in edits)
    return splice(src, edits), changes, flags


_PROGRAM_NAME_OK = re.compile(r"^[\w.+-]+$")


def _program_name(unit: "Unit") -> str:
    base = os.path.basename(unit.path)
    if not base.endswith((".cu", ".cuh")) or not _PROGRAM_NAME_OK.match(base):
        base = "kernel.cu"
    if base == PRELUDE_NAME:
        base = "kernel.cu"
    return base


def _kernel_dir(unit: "Unit") -> str | None:
    p = unit.origin.path if unit.origin is not None else unit.path
    if p and os.path.isfile(p):
        return os.path.dirname(os.path.abspath(p))
    return None


_PRELUDE_MATH = """\
// kltrans: what nvcc's implicit cuda_runtime.h (math.h) provides
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef HUGE_VALF
#define HUGE_VALF __int_as_float(0x7f800000)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
"""
_PRELUDE_STD = """\
// kltrans: <std headers> were mapped to <cuda/std/...>; let std:: names find them
namespace cuda { namespace std {} }
namespace std { using namespace ::cuda::std; }
"""


def prepare(unit: "Unit", include_dirs: Iterable[str] = ()) -> Prepared:
    """Strip host code and resolve includes; see the module docstring."""
    hdirs = header_dirs()
    wheel_dirs = [d for d in (hdirs.get("cudart"), hdirs.get("cccl")) if d]
    user_dirs = [os.path.abspath(d) for d in include_dirs]
    kdir = _kernel_dir(unit)
    local_dirs = user_dirs + ([kdir] if kdir else [])
    headers: dict[str, Header] = {}
    all_changes: list[Change] = []
    agg = {"mapped_std": False, "names_std": False, "uses_math_macros": False,
           "has_math_header": False}

    def exists(d: str, name: str) -> bool:
        return os.path.isfile(os.path.join(d, name))

    def process(u: "Unit", own_dir: str | None, label: str) -> tuple[bytes, OffsetMap]:
        found_local: dict[str, str] = {}

        def resolve(name: str, system: bool) -> str:
            first = [] if system or own_dir is None else [own_dir]
            for d in first + local_dirs:
                if exists(d, name):
                    found_local[name] = os.path.join(d, name)
                    return "local"
            for d in wheel_dirs:
                if exists(d, name):
                    return "keep"
            if system:
                return "map" if name in _STD_MAP else "drop"
            return "keep"  # NVRTC will report the missing file at the right line

        out, changes, flags = _strip(u, label, resolve)
        all_changes.extend(changes)
        for k in agg:
            agg[k] = agg[k] or flags[k]
        for name in flags["locals"]:
            path = os.path.abspath(found_local[name])
            if name in headers or name == PRELUDE_NAME:
                continue  # first one wins; NVRTC resolves a second from disk
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            headers[name] = Header(name, path, data, data)  # placeholder against cycles
            hu = parse(data, path)
            stripped, omap = process(hu, os.path.dirname(path), path)
            headers[name] = Header(name, path, data, stripped, omap)
        return out, OffsetMap(flags["edits"])

    source, offsets = process(unit, kdir, unit.path)
    prelude = ""
    if agg["uses_math_macros"] and not agg["has_math_header"]:
        prelude += _PRELUDE_MATH
    if agg["mapped_std"] and agg["names_std"]:
        prelude += _PRELUDE_STD
    order = {unit.path: 0}
    for k, h in enumerate(headers.values()):
        order.setdefault(h.path, k + 1)
    all_changes.sort(key=lambda c: (order.get(c.path, 0), c.line))
    return Prepared(source=source, program_name=_program_name(unit),
                    headers=tuple(headers.values()), prelude=prelude,
                    changes=tuple(all_changes), kernel_dir=kdir, offsets=offsets)


# ------------------------------------------------------------------------------ the log
_DIAG_HEAD = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<sev>catastrophic error|error|"
                        r"warning|remark|note)(?: #(?P<num>[\w-]+))?: (?P<msg>.*)$")
_CARET = re.compile(r"^\s*\^\s*$")
_INST = re.compile(r'instantiation of "(?P<what>.*)"(?: at line (?P<line>\d+)'
                   r'(?: of "?(?P<file>[^"]+)"?)?)?')
_TOOL_LINE = re.compile(r"^\s*(?P<tool>nvrtc|ptxas)\s*(?P<sev>error|warning|fatal|info)?\s*:\s*"
                        r"(?:(?P<sev2>error|warning)\s*:\s*)?(?P<msg>.*)$")
_SKIP_LINE = re.compile(r"^(?:\d+ (?:catastrophic )?errors? detected|Remark: The warnings can be"
                        r"|Compilation terminated)")
_SEV = {"catastrophic error": "error", "error": "error", "fatal": "error",
        "warning": "warning", "remark": "note", "note": "note"}


class _Mapper:
    """Maps (file in the log, line, 0-based char column) to a kltrans Location."""

    def __init__(self, unit: "Unit", prepared: Prepared):
        self.unit = unit
        self.prepared = prepared
        self.headers = {h.name: h for h in prepared.headers}

    @staticmethod
    def _sent_offset(sent: bytes, line: int, col0: int | None) -> int | None:
        """Byte offset in ``sent`` of (1-based line, 0-based char column)."""
        start = 0
        for _ in range(line - 1):
            nl = sent.find(b"\n", start)
            if nl < 0:
                return None
            start = nl + 1
        end = sent.find(b"\n", start)
        text = sent[start:end if end >= 0 else len(sent)].decode("utf-8", errors="replace")
        return start + len(text[:col0 or 0].encode("utf-8"))

    def location(self, file: str, line: int, col0: int | None) -> Location:
        p = self.prepared
        if file == p.program_name:
            off = self._sent_offset(p.source, line, col0)
            if off is None:
                return Location(self.unit.path, line, (col0 or 0) + 1)
            if p.offsets is not None:
                off = p.offsets.to_original(off)
            return self.unit.location(min(off, len(self.unit.source)))
        h = self.headers.get(file)
        if h is not None:
            off = self._sent_offset(h.source, line, col0)
            if off is None:
                return Location(h.path, line, (col0 or 0) + 1)
            if h.offsets is not None:
                off = h.offsets.to_original(off)
            return _bytes_location(h.path, h.original, off)
        if file == PRELUDE_NAME:
            return Location("<kltrans prelude>", line, (col0 or 0) + 1)
        src_line = None
        try:
            if os.path.isfile(file):
                with open(file, "rb") as fh:
                    lines = fh.read().split(b"\n")
                if 0 < line <= len(lines):
                    src_line = lines[line - 1].decode("utf-8", errors="replace").rstrip("\r")
        except OSError:
            pass
        return Location(file, line, (col0 or 0) + 1, src_line)


def _bytes_location(path: str, data: bytes, offset: int) -> Location:
    offset = max(0, min(offset, len(data)))
    start = data.rfind(b"\n", 0, offset) + 1
    end = data.find(b"\n", offset)
    line = data.count(b"\n", 0, offset) + 1
    col = len(data[start:offset].decode("utf-8", errors="replace")) + 1
    text = data[start:end if end >= 0 else len(data)].decode("utf-8", errors="replace")
    return Location(path, line, col, text.rstrip("\r"))


def _kernel_location(unit: "Unit", message: str) -> Location:
    """For a ptxas message naming an entry function, the kernel's definition."""
    for sym in re.findall(r"'([^']+)'", message):
        short = _demangle(sym)[-1]
        for k in unit.kernels():
            if k.name == short:
                return unit.location(k.outer.start_byte)
    return Location(unit.path)


def parse_log(log: str, unit: "Unit", prepared: Prepared) -> tuple[Diagnostic, ...]:
    """NVRTC/ptxas messages as diagnostics, located in the original files."""
    mapper = _Mapper(unit, prepared)
    lines = log.replace("\r\n", "\n").split("\n")
    out: list[Diagnostic] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        m = _DIAG_HEAD.match(line)
        if m is None:
            tm = _TOOL_LINE.match(line)
            if tm is not None and (tm.group("sev") or tm.group("sev2")) not in (None, "info"):
                sev = _SEV[tm.group("sev2") or tm.group("sev")]
                msg = tm.group("msg").strip()
                tool = tm.group("tool")
                loc = _kernel_location(unit, msg) if tool == "ptxas" else Location(unit.path)
                out.append(Diagnostic(sev, f"{tool}: {msg}", loc, code=tool))
            i += 1
            continue
        # a located message: continuation lines, the echoed source, the caret, then notes
        block = []
        j = i + 1
        while j < n and lines[j].strip() != "" and not _DIAG_HEAD.match(lines[j]):
            block.append(lines[j])
            j += 1
        caret = next((k for k, b in enumerate(block) if _CARET.match(b)), None)
        col0 = None
        extra: list[str] = []
        after: list[str] = block
        if caret is not None and caret >= 1:
            col0 = max(block[caret].index("^") - 2, 0)
            extra = [b.strip() for b in block[:caret - 1]]
            after = block[caret + 1:]
        file, lineno = m.group("file"), int(m.group("line"))
        msg = m.group("msg").strip()
        if extra:
            msg = msg + " (" + "; ".join(extra) + ")"
        notes = []
        for b in after:
            im = _INST.search(b)
            if im is None:
                continue
            nfile = im.group("file") or file
            if im.group("line"):
                nloc = mapper.location(nfile, int(im.group("line")), None)
            else:
                nloc = Location(mapper.location(file, lineno, None).path)
            notes.append(Diagnostic("note", f"during instantiation of {im.group('what')}", nloc))
        if file == "__nv_name_map":
            msg = f"name expression: {msg}"
            loc = Location(unit.path)
        else:
            loc = mapper.location(file, lineno, col0)
        num = m.group("num")
        out.append(Diagnostic(_SEV[m.group("sev")], msg, loc, code=num or "nvrtc",
                              notes=tuple(notes)))
        i = j
    return tuple(out)


# -------------------------------------------------------------------- ptxas resources
_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '(?P<arch>[^']+)'")
_PROPS = re.compile(r"Function properties for (?P<name>\S+)")
_FRAME = re.compile(r"(?P<stack>\d+) bytes stack frame, (?P<ss>\d+) bytes spill stores, "
                    r"(?P<sl>\d+) bytes spill loads")
_USED = re.compile(r"Used (?P<regs>\d+) registers(?P<rest>.*)$")
_BARRIERS = re.compile(r"used (\d+) barriers")
_CUMSTACK = re.compile(r"(\d+) bytes cumulative stack size")
_SMEM = re.compile(r"(\d+) bytes smem")
_CMEM = re.compile(r"(\d+) bytes cmem\[(\d+)\]")


def _demangle(symbol: str) -> list[str]:
    """The scope components of a symbol: ``_ZN2kl7row_sumIfLi4EEEvPKT_Pfii`` ->
    ``["kl", "row_sum"]``; a C name is returned as is. Enough to key kernels by their
    plain name (kernels are never class members, so the name precedes any template
    arguments)."""
    if not symbol.startswith("_Z"):
        return [symbol]
    s = symbol[2:]
    i = 0
    nested = False
    if s[i:i + 1] == "N":
        nested = True
        i += 1
        while i < len(s) and s[i] in "rVKRO":
            i += 1
    parts = []
    while i < len(s):
        if s.startswith("St", i):
            parts.append("std")
            i += 2
            continue
        if not s[i].isdigit():
            break
        j = i
        while j < len(s) and s[j].isdigit():
            j += 1
        length = int(s[i:j])
        ident = s[j:j + length]
        parts.append("(anonymous namespace)" if ident.startswith("_GLOBAL__N") else ident)
        i = j + length
        if not nested:
            break
    return parts or [symbol]


def cubin_functions(cubin: bytes) -> list[str]:
    """The names of the function symbols of a cubin (an ELF64 image), in table order;
    empty for anything that is not one. Read with ``struct``: the layout is the ELF
    standard's, and no ELF library is a dependency here."""
    import struct

    if len(cubin) < 64 or cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        return []
    try:
        shoff, = struct.unpack_from("<Q", cubin, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", cubin, 0x3A)
        heads = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize)
                 for i in range(shnum)]
        out = []
        for _name, typ, _fl, _ad, off, size, link, _info, _al, ent in heads:
            if typ != 2 or not ent:  # SHT_SYMTAB
                continue
            stroff, strsize = heads[link][4], heads[link][5]
            strtab = cubin[stroff:stroff + strsize]
            for k in range(size // ent):
                st_name, st_info = struct.unpack_from("<IB", cubin, off + k * ent)
                if st_info & 0xF == 2 and st_name:  # STT_FUNC
                    end = strtab.index(b"\0", st_name)
                    out.append(strtab[st_name:end].decode("utf-8", "replace"))
        return out
    except (struct.error, IndexError, ValueError):
        return []


def cubin_sections(cubin: bytes) -> dict[str, str]:
    """Section name -> a hash of its contents (``nobits:SIZE`` for a section with no
    contents) of a cubin; empty for anything that is not an ELF64 image."""
    import hashlib
    import struct

    if len(cubin) < 64 or cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        return {}
    try:
        shoff, = struct.unpack_from("<Q", cubin, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
        heads = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize)
                 for i in range(shnum)]
        names = heads[shstrndx][4]
        out = {}
        for name, typ, _fl, _ad, off, size, *_ in heads:
            key = cubin[names + name:cubin.index(b"\0", names + name)].decode("utf-8", "replace")
            out[key] = f"nobits:{size}" if typ == 8 else \
                hashlib.sha256(cubin[off:off + size]).hexdigest()
        return out
    except (struct.error, IndexError, ValueError):
        return {}


_CODE = (".text.", ".rel.text.", ".rela.text.", ".nv.constant0.", ".nv.shared.", ".nv.local.")
_DATA = (".nv.constant", ".nv.global", ".data", ".bss")


def same_kernel_code(a: bytes, b: bytes) -> bool:
    """Whether two cubins hold the same kernels: the same code, relocations, parameter
    banks, shared and local memory of every function, and the same contents of every data
    section both have. A data section only one side has (a file-scope ``constexpr`` or an
    unused global) counts only when some code has relocations (could address it): with
    none, identical code cannot reach it. Metadata (symbol and string tables, ``.nv.info``,
    debug frames) is not compared."""
    sa, sb = cubin_sections(a), cubin_sections(b)
    if not sa or not sb:
        return False
    code_a = {k: v for k, v in sa.items() if k.startswith(_CODE)}
    code_b = {k: v for k, v in sb.items() if k.startswith(_CODE)}
    if code_a != code_b or not any(k.startswith(".text.") for k in code_a):
        return False
    relocated = any(k.startswith((".rel.text.", ".rela.text.")) for k in code_a)
    for k in set(sa) | set(sb):
        if not k.startswith(_DATA) or k.startswith(_CODE):
            continue
        if k in sa and k in sb:
            if sa[k] != sb[k]:
                return False
        elif relocated:
            return False
    return True


def parse_resources(log: str, lowered_names: dict | None = None) -> dict[str, KernelResources]:
    """Per-kernel resources from a ``ptxas -v`` log, keyed as :class:`CompileResult` says:
    by the name expression that lowered to the kernel, else by its plain name when that is
    unique, else by the symbol."""
    entries: list[str] = []
    used: dict[str, str] = {}
    frames: dict[str, tuple[int, int, int]] = {}
    current = None
    props = None
    for line in log.splitlines():
        m = _ENTRY.search(line)
        if m:
            current = m.group("name")
            if current not in entries:
                entries.append(current)
            continue
        m = _PROPS.search(line)
        if m:
            props = m.group("name")
            continue
        m = _FRAME.search(line)
        if m and props is not None:
            frames[props] = (int(m.group("stack")), int(m.group("ss")), int(m.group("sl")))
            continue
        m = _USED.search(line)
        if m and current is not None:
            used[current] = line
    by_symbol = {v: k for k, v in (lowered_names or {}).items()}
    shorts = [_demangle(e)[-1] for e in entries]
    out: dict[str, KernelResources] = {}
    for sym, short in zip(entries, shorts):
        line = used.get(sym, "")
        um = _USED.search(line)
        regs = int(um.group("regs")) if um else 0
        rest = um.group("rest") if um else ""
        cmem = {int(b): int(v) for v, b in _CMEM.findall(rest)} or None
        smem = sum(int(x) for x in _SMEM.findall(rest))
        bar = _BARRIERS.search(rest)
        cum = _CUMSTACK.search(rest)
        stack, ss, sl = frames.get(sym, (0, 0, 0))
        parts = _demangle(sym)
        expr = by_symbol.get(sym)
        r = KernelResources(name=sym, short=short, registers=regs, spill_stores=ss,
                            spill_loads=sl, smem_static=smem, stack=stack, cmem=cmem,
                            qualified="::".join(parts), name_expression=expr,
                            barriers=int(bar.group(1)) if bar else 0,
                            stack_cumulative=int(cum.group(1)) if cum else stack)
        if expr is not None:
            key = expr
        elif shorts.count(short) == 1 and short not in out:
            key = short
        else:
            key = sym
        out[key] = r
    return out


# ----------------------------------------------------------------------------- compile
def _build_options(arch: str, options: tuple[str, ...], prepared: Prepared,
                   include_dirs: Iterable[str]) -> tuple[list[str], list[str], list[Change]]:
    """(options for NVRTC, the same with machine paths of the wheels abstracted, drops)."""
    hdirs = header_dirs()
    dropped = []
    user = []
    for o in options:
        if not isinstance(o, str):
            raise TypeError(f"compile options must be strings, got {o!r}")
        if _ARCH_OPTION.match(o):
            raise ValueError(f"pass the architecture as arch=..., not in options ({o!r})")
        if o in _DROPPED_OPTIONS:
            dropped.append(Change("option-dropped", o, "<options>", 0,
                                  "NVRTC has no extended lambdas; host code holding them "
                                  "is stripped"))
            continue
        user.append(o)
    opts = [f"-arch={arch}"]
    if not any(_STD_OPTION.match(o) for o in user):
        opts.append(DEFAULT_STD)
    opts.append(PTXAS_VERBOSE)
    key_opts = list(opts)
    for d in include_dirs:
        opts.append("-I" + os.path.abspath(d))
        key_opts.append("-I" + os.path.abspath(d))
    if prepared.kernel_dir:
        opts.append("-I" + prepared.kernel_dir)
        key_opts.append("-I" + prepared.kernel_dir)
    for lib in ("cudart", "cccl"):
        if lib in hdirs:
            opts.append("-I" + hdirs[lib])
            key_opts.append(f"-I<{lib}>")
    if prepared.prelude:
        opts.append(f"--pre-include={PRELUDE_NAME}")
        key_opts.append(f"--pre-include={PRELUDE_NAME}")
    opts.extend(user)
    key_opts.extend(user)
    return opts, key_opts, dropped


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def cache_key(prepared: Prepared, arch: str, key_options: list[str],
              name_expressions: tuple[str, ...]) -> str:
    material = {
        "scheme": _KEY_SCHEME,
        "versions": toolchain_versions(),
        "arch": arch,
        "options": key_options,
        "name_expressions": list(name_expressions),
        "program": prepared.program_name,
        "source": _sha(prepared.source),
        "headers": [[h.name, _sha(h.source)] for h in prepared.headers],
        "prelude": _sha(prepared.prelude.encode()),
    }
    return _sha(json.dumps(material, sort_keys=True).encode())


def _out_buffer(fn, prog, size: int, what: str) -> bytearray:
    """A new writable buffer of ``size`` bytes that ``fn(prog, buf)`` fills in."""
    buf = bytearray(size)
    _check(fn(prog, buf), what)
    return buf


def _run_nvrtc(prepared: Prepared, options: list[str], name_expressions: tuple[str, ...]):
    """Compile; returns (ok, log, cubin, ptx, lowered_names, seconds)."""
    nvrtc = _nvrtc()
    names = [h.name.encode() for h in prepared.headers]
    bodies = [h.source for h in prepared.headers]
    if prepared.prelude:
        names.append(PRELUDE_NAME.encode())
        bodies.append(prepared.prelude.encode())
    t0 = time.perf_counter()
    prog = _check(nvrtc.nvrtcCreateProgram(prepared.source, prepared.program_name.encode(),
                                           len(bodies), bodies, names), "nvrtcCreateProgram")
    try:
        for expr in name_expressions:
            _check(nvrtc.nvrtcAddNameExpression(prog, expr.encode()), "nvrtcAddNameExpression")
        raw = [o.encode() for o in options]
        (res,) = nvrtc.nvrtcCompileProgram(prog, len(raw), raw)
        size = _check(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
        # NVRTC writes into the buffer: it must be a fresh, mutable one. ``b" " * 1`` is
        # CPython's shared one-byte ``b" "`` itself, and an empty log (size 1, its NUL)
        # turned every ``b" "`` of the process into ``b"\x00"`` (the normalizer's blanks
        # with it: every later #pragma unroll was refused as parse-breaking)
        buf = bytes(_out_buffer(nvrtc.nvrtcGetProgramLog, prog, size, "nvrtcGetProgramLog"))
        # ptxas messages can follow a NUL inside the buffer: keep them, as a new line
        log = buf.rstrip(b"\x00").replace(b"\x00", b"\n").decode("utf-8", errors="replace")
        log = log.rstrip()
        ok = res == nvrtc.nvrtcResult.NVRTC_SUCCESS
        if not ok and res not in (nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION,
                                  nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_OPTION):
            log = (log + "\n" if log else "") + f"nvrtc: error: {_err_name(res)}"
        cubin = ptx = None
        lowered = {}
        if ok:
            size = _check(nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
            cubin = bytes(_out_buffer(nvrtc.nvrtcGetCUBIN, prog, size, "nvrtcGetCUBIN"))
            res_ptx = nvrtc.nvrtcGetPTXSize(prog)
            if res_ptx[0] == nvrtc.nvrtcResult.NVRTC_SUCCESS and res_ptx[1] > 0:
                pbuf = bytearray(res_ptx[1])
                if nvrtc.nvrtcGetPTX(prog, pbuf)[0] == nvrtc.nvrtcResult.NVRTC_SUCCESS:
                    ptx = pbuf.rstrip(b"\x00").decode("utf-8", errors="replace")
            for expr in name_expressions:
                r = nvrtc.nvrtcGetLoweredName(prog, expr.encode())
                if r[0] == nvrtc.nvrtcResult.NVRTC_SUCCESS and r[1] is not None:
                    lowered[expr] = r[1].decode() if isinstance(r[1], bytes) else str(r[1])
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return ok, log, cubin, ptx, lowered, time.perf_counter() - t0


_INFLIGHT: dict[str, threading.Lock] = {}
_INFLIGHT_GUARD = threading.Lock()


def compile_unit(unit: "Unit", arch: str = "sm_90", options: Iterable[str] = (),
                 name_expressions: Iterable[str] = (), include_dirs: Iterable[str] = (),
                 want_ptx: bool = False, cache: bool = True) -> CompileResult:
    """Compile ``unit`` for ``arch`` with NVRTC; see the module docstring.

    Raises :class:`UnsupportedArchError` (a ValueError) for an architecture NVRTC cannot
    target, ValueError for ``-arch`` given in ``options``, and :class:`CompileError` when
    NVRTC itself cannot be used. A kernel that fails to compile returns ``ok=False``.
    """
    arch = check_arch(arch)
    options = tuple(options)
    if isinstance(name_expressions, str):
        name_expressions = (name_expressions,)
    name_expressions = tuple(dict.fromkeys(name_expressions))
    include_dirs = tuple(include_dirs)
    prepared = prepare(unit, include_dirs)
    opts, key_opts, dropped = _build_options(arch, options, prepared, include_dirs)
    if dropped:
        prepared = dataclasses.replace(prepared, changes=prepared.changes + tuple(dropped))
    key = cache_key(prepared, arch, key_opts, name_expressions)

    def finish(ok, log, cubin, ptx, lowered, seconds, cached, compile_seconds):
        return CompileResult(
            ok=ok, arch=arch, cubin=cubin, ptx=ptx if want_ptx else None, log=log,
            diagnostics=parse_log(log, unit, prepared),
            resources=parse_resources(log, lowered), lowered_names=dict(lowered),
            seconds=seconds, cached=cached, key=key, options=tuple(opts), prepared=prepared,
            compile_seconds=compile_seconds)

    def from_cache():
        t0 = time.perf_counter()
        hit = _cache.load(key)
        if hit is None:
            return None
        rec, cubin = hit
        if rec.get("ok") and cubin is None:
            return None
        if want_ptx and rec.get("ok") and rec.get("ptx") is None:
            return None
        return finish(bool(rec.get("ok")), rec.get("log", ""), cubin, rec.get("ptx"),
                      rec.get("lowered_names") or {}, time.perf_counter() - t0, True,
                      float(rec.get("compile_seconds", 0.0)))

    if cache:
        hit = from_cache()
        if hit is not None:
            return hit
        # one compile per key at a time in this process; other threads then read the cache
        with _INFLIGHT_GUARD:
            lock = _INFLIGHT.setdefault(key, threading.Lock())
        try:
            with lock:
                hit = from_cache()
                if hit is not None:
                    return hit
                ok, log, cubin, ptx, lowered, seconds = _run_nvrtc(prepared, opts,
                                                                   name_expressions)
                _cache.store(key, {"ok": ok, "arch": arch, "log": log, "ptx": ptx,
                                   "lowered_names": lowered, "compile_seconds": seconds,
                                   "program": prepared.program_name, "options": key_opts,
                                   "name_expressions": list(name_expressions)}, cubin)
        finally:
            with _INFLIGHT_GUARD:
                _INFLIGHT.pop(key, None)
    else:
        ok, log, cubin, ptx, lowered, seconds = _run_nvrtc(prepared, opts, name_expressions)
    return finish(ok, log, cubin, ptx, lowered, seconds, False, seconds)


def compile_source(source: str | bytes, path: str = "<kernel>.cu", **kw) -> CompileResult:
    """Parse ``source`` as a CUDA unit named ``path`` and :func:`compile_unit` it."""
    return compile_unit(parse(source, path), **kw)


def compile_file(path: str, **kw) -> CompileResult:
    """Read and compile a ``.cu``/``.cuh`` file."""
    from kltrans.syntax.unit import load

    units = load(path)
    if len(units) != 1:
        raise ValueError(f"{path}: expected one CUDA unit, found {len(units)}")
    return compile_unit(units[0], **kw)
