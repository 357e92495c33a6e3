"""Purity: a candidate computes its result itself, with CUDA's own headers only, and is
one program for every backend.

Rejected, with a reason: including a header outside CUDA's own (the runtime, the math and
fp16/bf16 headers, cooperative groups, ``mma.h``, CCCL's ``cuda/``, ``cub/``, ``thrust/``)
and the files of the kernel's own folder (a quoted include must name one: NVRTC would
drop a host header that the CPU build finds), an include through a macro or with a
``..`` in its path; calling cuBLAS, cuDNN, cuFFT, cuSPARSE, cuRAND, CUTLASS or CuTe; and
a preprocessor condition that tells the compilers apart (``__CUDACC_RTC__``, the host's
architecture, operating system or compiler, ``__has_include``): NVRTC and the CPU
backend's g++ would each compile another program, and the CPU's verdict would be about
code the GPU never runs. ``__CUDA_ARCH__`` is the same on both (the target's) and
``__KLTRANS_CPU_EMULATION__`` (the emulator's portable path for inline PTX) is allowed;
:func:`cpu_only_lines` names the lines a CPU run does not check.
"""

from __future__ import annotations

import os
import re

ALLOWED_SYSTEM = re.compile(
    r"^(cuda[\w/.]*|cuda/.*|cub/.*|thrust/.*|nv/.*|cooperative_groups(/.*)?\.h|"
    r"cooperative_groups|mma\.h|crt/.*|sm_\d+_.*\.h|vector_types\.h|device_functions\.h|"
    r"math_constants\.h|math_functions\.h|stdint\.h|cstdint|cmath|math\.h|cfloat|float\.h|"
    r"climits|limits\.h|limits|type_traits|utility|cstddef|stddef\.h|cassert|assert\.h|"
    r"cstdio|stdio\.h|algorithm|array|tuple|functional)$")
# macros that one compiler defines and the other does not: the host's architecture,
# operating system and compiler, NVRTC itself, and __has_include (the header sets differ)
HOST_MACROS = re.compile(
    r"^(__CUDACC_RTC__|__NVCC__|__CUDACC_VER_\w+|__CUDACC_DEBUG__|__has_include(_next)?|"
    r"__(x86_64|amd64|i386|i686|aarch64|arm|ARM_\w+|powerpc\w*|PPC\w*|riscv\w*|s390\w*)__?|"
    r"__(linux|gnu_linux|unix|APPLE|MACH|FreeBSD|OpenBSD|NetBSD|MINGW\w*|CYGWIN|ELF|"
    r"GNUC|GNUG|GNUC_MINOR|GNUC_PATCHLEVEL|clang\w*|llvm|INTEL_COMPILER|"
    r"SSE\w*|AVX\w*|FMA|OPTIMIZE|OPTIMIZE_SIZE|PIC|pic|PIE|pie|STDC_HOSTED|"
    r"GLIBC\w*|GLIBCXX\w*|VERSION)__?|_WIN\w+|_MSC_\w+|linux|unix|__linux)$")
CPU_BRANCH = "__KLTRANS_CPU_EMULATION__"
LIBRARIES = re.compile(r"\b(cublas\w*|cudnn\w*|cufft\w*|cusparse\w*|curand\w*|cusolver\w*|"
                       r"cutlass|cute)\b", re.IGNORECASE)


def check_purity(unit, folder: str | None = None) -> list[str]:
    """Reasons the unit is not pure (empty when it is)."""
    reasons = []
    base = folder or os.path.dirname(os.path.abspath(unit.origin.path))
    for n in unit.nodes_of_type("preproc_include"):
        p = n.child_by_field_name("path")
        if p is None:
            continue
        text = unit.text(p)
        line = unit.line_col(n.start_byte)[0]
        name = text.strip("<>\"")
        if p.type not in ("string_literal", "system_lib_string"):
            reasons.append(f"line {line}: includes through a macro ({text}): the header "
                           "must be named")
        elif ".." in re.split(r"[\\/]", name):
            reasons.append(f"line {line}: includes {text}: '..' in an include path")
        elif LIBRARIES.search(name):
            reasons.append(f"line {line}: includes {text}: a library may not do the work")
        elif text.startswith("<"):
            if not ALLOWED_SYSTEM.match(name):
                reasons.append(f"line {line}: includes {text}, which is not one of CUDA's own headers")
        else:
            target = os.path.realpath(os.path.join(base, name))
            if not target.startswith(os.path.realpath(base) + os.sep):
                reasons.append(f"line {line}: includes {text} from outside the kernel's folder")
            elif not os.path.isfile(target):
                reasons.append(f"line {line}: includes {text}, which is not a file of the "
                               "kernel's folder (a host header?)")
    reasons.extend(_host_variables(unit))
    for name, line in _condition_macros(unit):
        if HOST_MACROS.match(name):
            reasons.append(f"line {line}: a preprocessor condition on {name}: NVRTC and the "
                           "CPU backend would compile different programs")
    for n in unit.nodes_of_type("call_expression"):
        fn = n.child_by_field_name("function")
        if fn is not None and LIBRARIES.search(unit.text(fn)):
            line = unit.line_col(n.start_byte)[0]
            reasons.append(f"line {line}: calls {unit.text(fn)}: delegating to a library")
    for n in unit.nodes_of_type("qualified_identifier"):
        if re.match(r"^(cutlass|cute|cublas)\b", unit.text(n)):
            line = unit.line_col(n.start_byte)[0]
            reasons.append(f"line {line}: uses {unit.text(n)}: delegating to a library")
            break
    return reasons


_DEVICE_WORDS = {"__device__", "__constant__", "__shared__", "__managed__", "constexpr"}


def _host_variables(unit) -> list[str]:
    """Namespace-scope host variables: state that is not device memory and not a
    constant. Their initializers (constructors, calls) would run on the host when the
    file is loaded -- in the CPU backend's process, never on a GPU -- so a kernel file may
    hold only device variables and constants with call-free initializers."""
    from kltrans.syntax.cuda import (at_namespace_scope, cuda_qualifier_macros,
                                     declarator_is_function, head_words)

    macros = cuda_qualifier_macros(unit)
    out = []
    for n in unit.nodes_of_type("declaration"):
        decls = n.children_by_field_name("declarator")
        if not decls or not at_namespace_scope(n) or \
                all(declarator_is_function(d) for d in decls):
            continue
        words = head_words(unit, n, decls[0])
        if words & (_DEVICE_WORDS | macros):
            continue
        inits = [d for d in decls if d.type == "init_declarator"]
        if "extern" in words and not inits:
            continue  # a declaration of something defined elsewhere
        calls = any(c.type in ("call_expression", "new_expression")
                    for d in inits for c in unit.walk(d))
        if "const" in words and not calls:
            continue
        line = unit.line_col(n.start_byte)[0]
        name = unit.text(decls[0]).split("=")[0].strip()
        out.append(f"line {line}: host variable {name}: its initialization would run on the "
                   "host when the file is loaded; a kernel file may hold device code, "
                   "device variables and constants only")
    return out


_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef)\b"
                        rb"((?:[^\n]*\\\n)*[^\n]*)", re.M)
_COMMENT = re.compile(rb"/\*.*?\*/|//[^\n]*", re.S)


def _condition_macros(unit):
    """(identifier, line) of every name a preprocessor condition tests (read from the
    text: conditions like ``__has_include(<x.h>)`` do not parse as expressions)."""
    src = unit.source
    for m in _DIRECTIVE.finditer(src):
        line = src.count(b"\n", 0, m.start()) + 1
        cond = _COMMENT.sub(b" ", m.group(1))
        for ident in re.findall(rb"[A-Za-z_]\w*", cond):
            yield ident.decode(), line


def cpu_only_lines(unit) -> list[int]:
    """Lines of conditions on ``__KLTRANS_CPU_EMULATION__``: what is under them is not the
    same program on the CPU and on a GPU, so only a GPU run checks the GPU's side."""
    return sorted({line for name, line in _condition_macros(unit) if name == CPU_BRANCH})
