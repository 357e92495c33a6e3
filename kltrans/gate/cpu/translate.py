"""Translate a CUDA unit into C++ for the CPU emulator (issue 6).

Everything is done with syntax-layer edits (byte ranges found in the tree-sitter tree),
never with regular expressions over the file, and every edit keeps the number of lines
of the text it replaces, so one ``#line 1 "<path>"`` at the top maps each line of the
C++ file to the same line of the CUDA file (g++ messages and ``__builtin_LINE()`` in the
runtime's barriers then name CUDA lines).

What changes:

* **Host code is removed**: namespace-scope functions that are neither ``__global__`` nor
  ``__device__`` (``main``, launchers with their ``<<<...>>>`` launches and lambdas,
  ``__host__``-only functions), unannotated prototypes, and explicit instantiations of
  removed host templates are blanked (line breaks kept). ``constexpr`` helpers, class
  members and functions made device by a macro (``#define HD __host__ __device__``) stay.
* **Qualifiers** are macros of the runtime header (``__global__``, ``__device__``,
  ``__forceinline__``, ``__launch_bounds__(...)``, ``__align__(n)``, ``__constant__`` ...),
  except ``__noinline__``, rewritten here to ``__attribute__((noinline))`` (a macro
  would break libstdc++).
* **__shared__**: each declaration becomes a local struct holding its declarators
  (so any declarator syntax, alignment or ``volatile`` carries over), allocated once per
  block in the block's shared arena through a per-declaration key (a function-local
  ``static char``, distinct per template instantiation); every declarator becomes a
  reference into it. ``extern __shared__`` arrays point at the launch's dynamic area.
  Namespace-scope ``__shared__`` variables become an accessor function and each use of
  the name is rewritten to call it.
* **Includes**: CUDA headers (``cuda_runtime.h``, ``cuda_fp16.h``, ``cuda_bf16.h``,
  ``cooperative_groups.h``, ``cooperative_groups/reduce.h`` ...) are provided by the
  runtime header; ``<cuda/std/X>`` becomes ``<X>``; ``<cassert>`` is replaced by the
  runtime's ``assert`` (a failed assert is a "crash" error with its line); local
  headers (``"helpers.cuh"``) are translated the same way and included under a new
  name; headers of unsupported libraries (cub, thrust, mma.h, cuda/pipeline ...) are an
  "unsupported" error.
* **Unsupported code**: inline PTX (``asm``), dynamic parallelism (a launch in device
  code), textures/surfaces, async copies and wmma raise ``EmulationError("unsupported")``
  with the line - unless they sit in a preprocessor conditional (``#if __CUDA_ARCH__ >=
  800``), where ``asm`` becomes a call that fails at run time only if reached.
* **Entry points** appended at the end: ``kl_launch(which, ...)`` (runs the grid through
  the runtime, each fiber unpacking ``void** args`` by the kernel's parameter types, taken
  from the function type of the instantiated kernel ``&name_expression``),
  ``kl_param_desc(which)`` (the parameter types as codes for emulator.py) and
  ``kl_symbol`` (addresses of ``__constant__``/``__device__`` variables). ``which``
  selects the kernel: the one asked for, and every other non-template kernel of the
  file, so one compiled module serves all of them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kltrans.syntax.cuda import enclosing_function, find_functions
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

    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit


class EmulationError(Exception):
    """A kernel the CPU emulator cannot build or run correctly.

    ``kind`` is one of ``deadlock``, ``divergent-warp``, ``timeout``, ``crash``,
    ``compile``, ``unsupported`` (and ``invalid`` for a bad launch configuration or
    arguments); ``line``/``path`` point into the CUDA source when known.
    """

    KINDS = ("deadlock", "divergent-warp", "timeout", "crash", "compile", "unsupported",
             "invalid")

    def __init__(self, kind: str, message: str, line: int | None = None,
                 path: str | None = None, log: str | None = None, stats: dict | None = None):
        self.kind = kind
        self.message = message
        self.line = line
        self.path = path
        self.log = log
        self.stats = stats
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.path and self.line:
            where = f"{self.path}:{self.line}: "
        elif self.line:
            where = f"line {self.line}: "
        elif self.path:
            where = f"{self.path}: "
        return f"{where}{self.kind}: {self.message}"

    def __reduce__(self):
        return (EmulationError, (self.kind, self.message, self.line, self.path, self.log,
                                 self.stats))


# ------------------------------------------------------------------------- tables
CUDA_HEADERS = frozenset({
    "cuda_runtime.h", "cuda_runtime_api.h", "cuda.h", "device_launch_parameters.h",
    "device_functions.h", "cuda_fp16.h", "cuda_fp16.hpp", "cuda_bf16.h", "cuda_bf16.hpp",
    "cooperative_groups.h", "cooperative_groups/reduce.h", "cooperative_groups/scan.h",
    "math_constants.h", "vector_types.h", "vector_functions.h", "vector_functions.hpp",
    "device_atomic_functions.h", "sm_20_atomic_functions.h", "sm_20_intrinsics.h",
    "sm_30_intrinsics.h", "sm_32_intrinsics.h", "sm_32_atomic_functions.h",
    "sm_35_intrinsics.h", "sm_60_atomic_functions.h", "sm_61_intrinsics.h",
    "math_functions.h", "builtin_types.h", "host_defines.h", "driver_types.h",
    "cuda_device_runtime_api.h", "crt/host_defines.h", "device_types.h", "channel_descriptor.h",
    "cuda/std/cassert",
})
ASSERT_HEADERS = frozenset({"cassert", "assert.h"})
UNSUPPORTED_HEADERS = ("mma.h", "cuda/pipeline", "cuda/barrier", "cuda/annotated_ptr",
                       "cuda/atomic", "cuda/ptx", "cuda_pipeline", "cuda_awbarrier",
                       "cooperative_groups/memcpy_async.h", "cub/", "thrust/", "curand",
                       "cublas", "cudnn", "cutlass/", "cute/", "cuda_fp8", "cuda_fp6",
                       "cuda_fp4", "nvshmem", "cuda/experimental", "texture_fetch_functions.h",
                       "surface_functions.h")
UNSUPPORTED_NAMES = {
    "tex1Dfetch": "texture fetches", "tex1D": "texture fetches", "tex2D": "texture fetches",
    "tex3D": "texture fetches", "tex1DLayered": "texture fetches",
    "tex2DLayered": "texture fetches", "texCubemap": "texture fetches",
    "tex2Dgather": "texture fetches", "surf1Dread": "surfaces", "surf1Dwrite": "surfaces",
    "surf2Dread": "surfaces", "surf2Dwrite": "surfaces", "surf3Dread": "surfaces",
    "surf3Dwrite": "surfaces", "__cvta_generic_to_shared": "shared-space address conversion",
    "__pipeline_memcpy_async": "asynchronous copies (cp.async)",
    "__pipeline_commit": "asynchronous copies (cp.async)",
    "__pipeline_wait_prior": "asynchronous copies (cp.async)",
    "memcpy_async": "asynchronous copies", "wmma": "warp matrix operations (wmma)",
    "nvcuda": "warp matrix operations (wmma)", "this_cluster": "thread block clusters",
    "cluster_group": "thread block clusters",
    "cudaGridDependencySynchronize": "programmatic dependent launch",
    "cudaTriggerProgrammaticLaunchCompletion": "programmatic dependent launch",
}
_CONDITIONALS = {"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
                 "preproc_elifdef"}
_CUDA_WORDS = {"__device__", "__global__"}
_MEMSPACE = {"__device__", "__constant__", "__managed__"}
_FUNCTION_SCOPES = {"function_definition", "lambda_expression"}


def _blank(b: bytes) -> bytes:
    return bytes(c if c in (10, 13) else 32 for c in b)


def _one_line(text: str, lines: int) -> str:
    """``text`` on one line, followed by the newlines that keep the line count."""
    return text.replace("\r", " ").replace("\n", " ") + "\n" * lines


def _c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class Symbol:
    name: str  # as the user knows it (qualified with namespaces)
    expr: str  # a C++ expression naming it from the global scope


@dataclass
class Translation:
    """The C++ program the emulator compiles for one kernel."""

    source: str
    headers: dict = field(default_factory=dict)  # include name -> translated text
    kernel: str = ""
    name_expression: str = ""
    entry_expression: str = ""
    kernel_function: "Function | None" = None
    kernel_path: str = ""
    symbols: list = field(default_factory=list)
    removed: list = field(default_factory=list)  # (path, line, what)
    paths: list = field(default_factory=list)  # user files that went into the program
    entries: list = field(default_factory=list)  # every kernel the module can launch
    entry_index: int = 0  # the one asked for


class _State:
    """Counters and results shared by the main unit and its local headers."""

    def __init__(self):
        self.shared_counter = 0
        self.headers: dict[str, str] = {}
        self.header_units: list["Unit"] = []
        self.header_names: dict[str, str] = {}  # absolute path -> include name
        self.symbols: list[Symbol] = []
        self.removed: list[tuple] = []
        self.paths: list[str] = []
        self.depth = 0


# ------------------------------------------------------------------------ helpers
_namespace_scope = at_namespace_scope


def _namespaces(unit: "Unit", node: "Node") -> list[str]:
    out = []
    p = node.parent
    while p is not None:
        if p.type == "namespace_definition":
            n = p.child_by_field_name("name")
            if n is not None:
                out.append(unit.text(n))
        p = p.parent
    return list(reversed(out))


def _is_include_guard(unit: "Unit", node: "Node") -> bool:
    if node.type != "preproc_ifdef":
        return False
    first = node.children[0] if node.children else None
    if first is None or unit.text(first).replace(" ", "") not in ("#ifndef",):
        return False
    name = node.child_by_field_name("name")
    if name is None:
        return False
    for c in node.named_children:
        if c.type == "preproc_def":
            n = c.child_by_field_name("name")
            return n is not None and unit.text(n) == unit.text(name)
        if c.type not in ("identifier", "comment"):
            return False
    return False


def _conditional(unit: "Unit", node: "Node") -> bool:
    """Inside a preprocessor conditional (other than an include guard)?"""
    p = node.parent
    while p is not None:
        if p.type in _CONDITIONALS:
            top = p
            while top.type in ("preproc_else", "preproc_elif", "preproc_elifdef") and top.parent:
                top = top.parent
            if not _is_include_guard(unit, top):
                return True
        p = p.parent
    return False


def _in_function(node: "Node") -> bool:
    p = node.parent
    while p is not None:
        if p.type in _FUNCTION_SCOPES:
            return True
        p = p.parent
    return False


def _outer_of(node: "Node") -> "Node":
    outer = node
    if outer.parent is not None and outer.parent.type == "template_declaration":
        outer = outer.parent
    if outer.parent is not None and outer.parent.type == "linkage_specification":
        body = outer.parent.child_by_field_name("body")
        if body is None or body.id == outer.id:
            outer = outer.parent
    return outer


def _declared_identifier(d: "Node | None") -> "Node | None":
    """The identifier a declarator declares (through init/array/pointer declarators)."""
    while d is not None and d.type not in ("identifier", "field_identifier",
                                           "qualified_identifier", "template_function",
                                           "destructor_name", "operator_name"):
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            named = [c for c in d.named_children if c.type not in ("type_qualifier",)]
            nxt = named[0] if named else None
        d = nxt
    if d is not None and d.type == "template_function":
        d = d.child_by_field_name("name")
    return d


def _outermost_is_array(d: "Node") -> bool:
    while d is not None and d.type in ("init_declarator", "parenthesized_declarator"):
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            named = list(d.named_children)
            nxt = named[0] if named else None
        d = nxt
    return d is not None and d.type == "array_declarator"


# ------------------------------------------------------------------ the translator
class _UnitTranslator:
    def __init__(self, unit: "Unit", state: _State, include_dirs: tuple[str, ...]):
        self.unit = unit
        self.state = state
        self.include_dirs = include_dirs
        self.src = unit.source
        self.edits: list[Edit] = []
        self.spans: list[tuple[int, int]] = []  # removed or rewritten ranges

    # -------------------------------------------------------------- bookkeeping
    def covered(self, start: int, end: int) -> bool:
        return any(a <= start and end <= b for a, b in self.spans)

    def add(self, start: int, end: int, text: str | bytes, *, reserve: bool = True) -> None:
        if isinstance(text, str):
            text = text.encode("utf-8")
        self.edits.append(Edit(start, end, text))
        if reserve:
            self.spans.append((start, end))

    def line(self, node_or_offset) -> int:
        off = node_or_offset if isinstance(node_or_offset, int) else node_or_offset.start_byte
        return self.unit.line_col(off)[0]

    def error(self, kind: str, message: str, node) -> EmulationError:
        return EmulationError(kind, message, line=self.line(node), path=self.unit.path)

    def lines_in(self, start: int, end: int) -> int:
        return self.src.count(b"\n", start, end)

    # ------------------------------------------------------------------ passes
    def run(self) -> bytes:
        self.remove_host_code()
        self.check_unsupported()
        self.rewrite_includes()
        self.rewrite_shared()
        self.rewrite_noinline()
        self.collect_symbols()
        ordered = sorted(self.edits, key=lambda e: (e.start, e.end))
        # drop edits nested inside a removed range (a removed host function's body)
        kept: list[Edit] = []
        for e in ordered:
            if kept and e.start >= kept[-1].start and e.end <= kept[-1].end and \
                    (e.start, e.end) != (kept[-1].start, kept[-1].end):
                continue
            kept.append(e)
        return splice(self.src, kept)

    def remove_host_code(self) -> None:
        unit = self.unit
        macros = cuda_qualifier_macros(unit)
        removed_names: set[str] = set()
        device_names: set[str] = set()
        for f in find_functions(unit):
            if f.is_kernel or f.is_device:
                device_names.add(f.name)
                continue
            decl = f.node.child_by_field_name("declarator")
            if not _namespace_scope(f.outer):
                continue
            if any(c.type == "ERROR" for c in f.node.children if decl is None
                   or c.start_byte < decl.start_byte):
                continue
            words = head_words(unit, f.node, decl)
            if words & macros:
                device_names.add(f.name)
                continue
            if "constexpr" in words:
                continue  # usable from device code with --expt-relaxed-constexpr
            outer = _outer_of(f.node)
            if self.covered(outer.start_byte, outer.end_byte):
                continue
            removed_names.add(f.name)
            self.remove(outer, f"host function {f.name}")
        for n in unit.nodes_of_type("declaration"):
            outer = _outer_of(n)
            if not _namespace_scope(outer) or self.covered(outer.start_byte, outer.end_byte):
                continue
            decls = n.children_by_field_name("declarator")
            if not decls or not all(declarator_is_function(d) for d in decls):
                continue
            words = {unit.text(c) for c in n.children if c.type != "ERROR"}
            if words & (_CUDA_WORDS | {"__host__"} | _MEMSPACE) or \
                    head_words(unit, n, decls[0]) & macros:
                continue
            if "__host__" in head_words(unit, n, decls[0]):
                continue
            names = [unit.text(i) for i in (_declared_identifier(d) for d in decls) if i]
            if any(nm in device_names for nm in names):
                continue
            removed_names.update(names)
            self.remove(outer, "host declaration " + ", ".join(names))
        for n in unit.nodes_of_type("template_instantiation"):
            if not _namespace_scope(n):
                continue
            words = {unit.text(c) for c in n.children}
            if words & _CUDA_WORDS:
                continue
            ident = _declared_identifier(n.child_by_field_name("declarator"))
            name = unit.text(ident).split("::")[-1] if ident is not None else "?"
            if name in removed_names and name not in device_names:
                self.remove(_outer_of(n), f"instantiation of host template {name}")

    def remove(self, node: "Node", what: str) -> None:
        s, e = node.start_byte, node.end_byte
        self.add(s, e, _blank(self.src[s:e]))
        self.state.removed.append((self.unit.path, self.line(s), what))

    def check_unsupported(self) -> None:
        unit = self.unit
        for n in unit.nodes_of_type("gnu_asm_expression"):
            if self.covered(n.start_byte, n.end_byte):
                continue
            if _conditional(unit, n):
                text = _one_line("(::kl::detail::unsupported(\"inline PTX (asm)\", __LINE__, __FILE__))",
                                 self.lines_in(n.start_byte, n.end_byte))
                self.add(n.start_byte, n.end_byte, text)
                continue
            raise self.error("unsupported", "inline assembly (asm) cannot run on the CPU "
                             "emulator", n)
        for n in unit.nodes_of_type("kernel_call_syntax"):
            if self.covered(n.start_byte, n.end_byte) or _conditional(unit, n):
                continue
            fn = enclosing_function(unit, n)
            if fn is None or fn.is_kernel or fn.is_device:
                raise self.error("unsupported", "a kernel launch in device code (dynamic "
                                 "parallelism) is not emulated", n)
            call = n.parent  # host code that stays (a class member): drop the launch
            if call is not None and call.type == "call_expression":
                self.add(call.start_byte, call.end_byte,
                         _one_line("((void)0)", self.lines_in(call.start_byte, call.end_byte)))
        for t in ("identifier", "namespace_identifier", "type_identifier", "field_identifier"):
            for n in unit.nodes_of_type(t):
                name = unit.text(n)
                what = UNSUPPORTED_NAMES.get(name)
                if what is None or self.covered(n.start_byte, n.end_byte) or \
                        _conditional(unit, n):
                    continue
                raise self.error("unsupported", f"{what} ({name}) are not emulated", n)

    def rewrite_includes(self) -> None:
        unit = self.unit
        for n in unit.nodes_of_type("preproc_include"):
            if self.covered(n.start_byte, n.end_byte):
                continue
            p = n.child_by_field_name("path")
            target = include_target(unit, n)
            if target is None:
                continue  # #include MACRO
            name, system = target
            if any(name == u or name.startswith(u) for u in UNSUPPORTED_HEADERS):
                if _conditional(unit, n):
                    continue
                raise self.error("unsupported", f"<{name}> is not available on the CPU "
                                 "emulator", n)
            if name in CUDA_HEADERS or name in ASSERT_HEADERS:
                self.add(p.start_byte, p.end_byte, '"kl_empty.h"')
                continue
            if name.startswith("cuda/std/"):
                self.add(p.start_byte, p.end_byte, f"<{name[len('cuda/std/'):]}>")
                continue
            local = self.find_local(name, system)
            if local is not None:
                inc = self.translate_header(local)
                self.add(p.start_byte, p.end_byte, f'"{inc}"')

    def find_local(self, name: str, system: bool) -> str | None:
        dirs = []
        base = self.unit.origin.path if self.unit.origin is not None else self.unit.path
        if base and os.path.isfile(base) and not system:
            dirs.append(os.path.dirname(os.path.abspath(base)))
        dirs.extend(self.include_dirs)
        for d in dirs:
            cand = os.path.join(d, name)
            if os.path.isfile(cand):
                return os.path.abspath(cand)
        return None

    def translate_header(self, path: str) -> str:
        st = self.state
        if path in st.header_names:
            return st.header_names[path]
        inc = f"kl_inc_{len(st.header_names)}_{os.path.basename(path)}"
        st.header_names[path] = inc
        if st.depth > 32:
            raise EmulationError("compile", f"#include nesting too deep at {path}", path=path)
        with open(path, "rb") as f:
            data = f.read()
        hu = parse(data, path)
        st.depth += 1
        try:
            out = _UnitTranslator(hu, st, self.include_dirs).run()
        finally:
            st.depth -= 1
        st.header_units.append(hu)
        st.paths.append(path)
        st.headers[inc] = f"#line 1 {_c_string(path)}\n" + out.decode("utf-8", "replace")
        return inc

    def rewrite_shared(self) -> None:
        unit = self.unit
        by_node: dict[int, tuple["Node", list]] = {}
        for sd in unit.shared_decls():
            if sd.node.type != "declaration":
                continue
            by_node.setdefault(sd.node.id, (sd.node, []))[1].append(sd)
        for node, decls in sorted(by_node.values(), key=lambda t: t[0].start_byte):
            if self.covered(node.start_byte, node.end_byte):
                continue
            self.rewrite_one_shared(node, decls)

    def rewrite_one_shared(self, node: "Node", decls: list) -> None:
        unit = self.unit
        src = self.src
        st = self.state
        k = st.shared_counter
        st.shared_counter += 1
        extern = any(c.type == "storage_class_specifier" and unit.text(c) == "extern"
                     for c in node.children)
        blanks: list[tuple[int, int]] = []
        for c in node.children:
            t = unit.text(c)
            if c.type == "type_qualifier" and t == "__shared__":
                blanks.append((c.start_byte, c.end_byte))
            elif c.type == "storage_class_specifier" and t in ("extern", "static"):
                blanks.append((c.start_byte, c.end_byte))
        for c in unit.walk(node):
            if c.type == "comment":
                blanks.append((c.start_byte, c.end_byte))
        inserts: list[tuple[int, str]] = []
        declarators = node.children_by_field_name("declarator")
        names: list[tuple[str, bool]] = []
        for d in declarators:
            ident = _declared_identifier(d)
            if ident is None:
                continue
            names.append((unit.text(ident), _outermost_is_array(d)))
            if extern:
                for a in unit.walk(d):
                    if a.type == "array_declarator" and a.child_by_field_name("size") is None:
                        close = [c for c in a.children if c.type == "]"]
                        if close:
                            inserts.append((close[-1].start_byte, "1"))
        # the member declaration: the original text minus __shared__/extern/static
        pieces = []
        pos = node.start_byte
        marks = sorted([(s, e, "") for s, e in blanks] + [(p, p, t) for p, t in inserts])
        for s, e, t in marks:
            if s < pos:
                continue
            pieces.append(src[pos:s].decode("utf-8", "replace"))
            pieces.append(" " * len(src[s:e].decode("utf-8", "replace")) if e > s else t)
            pos = e
        pieces.append(src[pos:node.end_byte].decode("utf-8", "replace"))
        member = "".join(pieces).replace("\r", " ").replace("\n", " ").strip()
        tname = f"kl_sh{k}_t"
        obj = f"kl_sh{k}"
        head = f"struct {tname} {{ {member} }}; "
        nlines = self.lines_in(node.start_byte, node.end_byte)
        if _in_function(node):
            if extern:
                body = head + f"{tname}* {obj} = reinterpret_cast<{tname}*>(" \
                              "::kl::detail::dyn_shared()); "
                for name, is_array in names:
                    body += (f"auto {name} = {obj}->{name}; " if is_array
                             else f"auto& {name} = {obj}->{name}; ")
            else:
                body = head + f"static char {obj}_k; auto& {obj} = " \
                              f"::kl::detail::shared_static<{tname}>(&{obj}_k); "
                for name, _ in names:
                    body += f"auto& {name} = {obj}.{name}; "
            self.add(node.start_byte, node.end_byte, _one_line(body.rstrip(), nlines))
            return
        # namespace scope: an accessor, and every use of the names rewritten
        if extern:
            body = head + f"static inline {tname}* {obj}() {{ return reinterpret_cast<{tname}*>(" \
                          "::kl::detail::dyn_shared()); }"
            access = {name: f"({obj}()->{name})" for name, _ in names}
        else:
            body = head + f"static char {obj}_k; static inline {tname}& {obj}() {{ return " \
                          f"::kl::detail::shared_static<{tname}>(&{obj}_k); }}"
            access = {name: f"({obj}().{name})" for name, _ in names}
        self.add(node.start_byte, node.end_byte, _one_line(body, nlines))
        for n in unit.nodes_of_type("identifier"):
            if node.start_byte <= n.start_byte < node.end_byte:
                continue
            rep = access.get(unit.text(n))
            if rep is None or self.covered(n.start_byte, n.end_byte):
                continue
            if n.parent is not None and n.parent.type in ("preproc_def", "preproc_function_def",
                                                          "preproc_params"):
                continue
            self.add(n.start_byte, n.end_byte, rep, reserve=False)

    def rewrite_noinline(self) -> None:
        for n in self.unit.walk():
            if n.child_count == 0 and n.end_byte - n.start_byte == 12 and \
                    self.unit.text(n) == "__noinline__" and \
                    not self.covered(n.start_byte, n.end_byte):
                self.add(n.start_byte, n.end_byte, "__attribute__((noinline))", reserve=False)

    def collect_symbols(self) -> None:
        unit = self.unit
        for n in unit.nodes_of_type("declaration"):
            if not _namespace_scope(n) or self.covered(n.start_byte, n.end_byte):
                continue
            words = {unit.text(c) for c in n.children}
            if not words & _MEMSPACE:
                continue
            for d in n.children_by_field_name("declarator"):
                if declarator_is_function(d):
                    continue
                ident = _declared_identifier(d)
                if ident is None:
                    continue
                ns = [x for x in _namespaces(unit, n) if x]
                name = unit.text(ident)
                qual = "::".join(ns + [name])
                self.state.symbols.append(Symbol(qual, "::" + qual))


# ------------------------------------------------------------------------ entry
def _find_kernel(units: list["Unit"], kernel: str) -> "tuple[Function, Unit] | None":
    base = kernel.split("<", 1)[0].strip()
    short = base.split("::")[-1]
    found = []
    for u in units:
        for f in u.kernels():
            if f.qualified_name == base.lstrip(":") or f.name == base or \
                    (f.name == short and f.qualified_name.endswith(base.lstrip(":"))):
                found.append((f, u))
    return found[0] if found else None


@dataclass
class Entry:
    """One kernel the module can launch: a C++ expression naming the instantiation."""

    name: str  # as the caller names it (the name expression, or the qualified name)
    expr: str  # from the global scope, e.g. ::kl::row_sum<float, 4>
    line: int
    path: str


def _qualify(fn: "Function", expr: str) -> str:
    expr = expr.strip()
    if "::" not in expr.split("<", 1)[0]:
        ns = fn.qualified_name.rsplit("::", 1)[0] if "::" in fn.qualified_name else ""
        expr = f"{ns}::{expr}" if ns else expr
    return "::" + expr.lstrip(":")


def _other_entries(unit: "Unit", chosen: Entry) -> list[Entry]:
    """Every other non-template kernel of the main unit whose name is unambiguous and
    that is not inside a preprocessor conditional: one module serves them all (a second
    kernel of the same file is a cache hit)."""
    fns = find_functions(unit)
    out = []
    seen = {chosen.expr}
    for f in fns:
        if not f.is_kernel or f.template_params or _conditional(unit, f.outer):
            continue
        if sum(1 for g in fns if g.qualified_name == f.qualified_name and
               (g.is_kernel or g.is_device)) != 1:
            continue
        expr = _qualify(f, f.name)
        if expr in seen:
            continue
        seen.add(expr)
        out.append(Entry(f.qualified_name, expr, f.line or 1, unit.path))
    return out


def _entry_code(entries: list[Entry], symbols: list[Symbol]) -> str:
    ex = 'extern "C" __attribute__((visibility("default")))'
    lines = [""]
    for i, e in enumerate(entries):
        lines += [
            f"#line {e.line} {_c_string(e.path)}",
            f"namespace kl_entry {{ static void thread_main_{i}(void* a) "
            f"{{ ::kl::detail::invoke(&{e.expr}, static_cast<void**>(a)); }} }}",
        ]
    lines.append(f"{ex} int kl_launch(int which, const ::kl::detail::LaunchCfg* c, void** a, "
                 "::kl::detail::LaunchResult* r) {")
    lines.append("  switch (which) {")
    for i in range(len(entries)):
        lines.append(f"    case {i}: return kl_rt_run_grid(c, &kl_entry::thread_main_{i}, a, r);")
    lines.append("  }\n  return -1;\n}")
    lines.append(f"{ex} const char* kl_param_desc(int which) {{")
    lines.append("  switch (which) {")
    for i, e in enumerate(entries):
        lines.append(f"    case {i}: return ::kl::detail::param_desc(&{e.expr});")
    lines.append("  }\n  return 0;\n}")
    names = "\\n".join(e.name.replace('"', "") for e in entries)
    lines.append(f'{ex} const char* kl_entry_names() {{ return "{names}"; }}')
    lines.append(f"{ex} int kl_module_abi() {{ return KL_RUNTIME_ABI; }}")
    names = "\\n".join(s.name for s in symbols)
    lines.append(f'{ex} const char* kl_symbol_names() {{ return "{names}"; }}')
    lines.append(f"{ex} void* kl_symbol(const char* n, unsigned long long* size) {{")
    for s in symbols:
        lines.append(f"  if (!__builtin_strcmp(n, {_c_string(s.name)})) {{ *size = sizeof({s.expr}); "
                     f"return (void*)&({s.expr}); }}")
    lines.append("  *size = 0; return 0; }")
    return "\n".join(lines) + "\n"


def translate(unit: "Unit", kernel: str, name_expression: str | None = None,
              include_dirs=(), all_kernels: bool = True) -> Translation:
    """Translate ``unit`` into a C++ program running ``kernel`` (see the module docstring).

    ``name_expression`` names the instantiation of a templated kernel
    (``"block_reduce<float, 256>"``); ``kernel`` may also be given as one. With
    ``all_kernels`` the program also has entries for the unit's other (non-template)
    kernels, so that building another kernel of the same file is a cache hit.
    Raises :class:`EmulationError` (``unsupported``, or ``compile`` when the kernel is not
    found or a template has no name expression).
    """
    if "<" in kernel and name_expression is None:
        name_expression = kernel
    st = _State()
    st.paths.append(unit.path)
    tr = _UnitTranslator(unit, st, tuple(os.path.abspath(d) for d in include_dirs))
    body = tr.run()
    found = _find_kernel([unit] + st.header_units, kernel)
    if found is None:
        names = sorted({f.qualified_name for u in [unit] + st.header_units for f in u.kernels()})
        raise EmulationError("compile", f"no __global__ function named {kernel!r} "
                             f"(kernels: {', '.join(names) or 'none'})", path=unit.path)
    fn, kunit = found
    if fn.template_params and not name_expression:
        raise EmulationError("compile", f"kernel {fn.name} is a template: give a name expression "
                             f"such as {fn.name}<...>", line=fn.line, path=kunit.path)
    expr = _qualify(fn, name_expression or fn.name)
    chosen = Entry(name_expression or fn.qualified_name, expr, fn.line or 1, kunit.path)
    entries = [chosen] + (_other_entries(unit, chosen) if all_kernels else [])
    entries.sort(key=lambda e: (e.path != unit.path, e.line, e.name))
    t = Translation(source="", headers=st.headers, kernel=fn.name,
                    name_expression=name_expression or fn.name, entry_expression=expr,
                    kernel_function=fn, kernel_path=kunit.path, symbols=st.symbols,
                    removed=st.removed, paths=st.paths, entries=entries,
                    entry_index=entries.index(chosen))
    prelude = f'#include "kl_cuda_runtime.h"\n#line 1 {_c_string(unit.path)}\n'
    text = body.decode("utf-8", "replace")
    if not text.endswith("\n"):
        text += "\n"
    t.source = prelude + text + _entry_code(entries, st.symbols)
    return t
