"""The gate: compile (NVRTC), and later execute, compare and profile.

Only the compile stage exists so far: :func:`compile_unit` / :func:`compile_source`
build a cubin for an explicit architecture with NVRTC (no GPU needed), with host code
stripped, diagnostics mapped to the original lines, ``ptxas -v`` resources per kernel
and an on-disk cache (:mod:`kltrans.gate.cache`). ``cuda.*`` is imported lazily, so
``import kltrans.gate`` works without cuda-python.
"""

from kltrans.gate.compile import (
    CompileError,
    CompileResult,
    KernelResources,
    Prepared,
    UnsupportedArchError,
    check_arch,
    compile_file,
    compile_source,
    compile_unit,
    header_dirs,
    nvrtc_version,
    prepare,
    supported_archs,
)

__all__ = [
    "CompileError",
    "CompileResult",
    "KernelResources",
    "Prepared",
    "UnsupportedArchError",
    "check_arch",
    "compile_file",
    "compile_source",
    "compile_unit",
    "header_dirs",
    "nvrtc_version",
    "prepare",
    "supported_archs",
]
