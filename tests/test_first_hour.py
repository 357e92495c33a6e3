"""Wrong code that exited 0, found by a new user's first hour: each case failed before
its fix (restrict-pointers glued ``__restrict__`` to the name; one-per-thread uncapped a
grid sized for 256 elements per thread into ``ceil_div(n, 65536)``; a rewrite left a
``#pragma unroll`` before a declaration, which NVRTC warns about and ignores: the pass
manager now drops the pragma of a loop a rewrite removes)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kltrans.gate.compile import compile_unit
from kltrans.syntax.contract import contracts
from kltrans.syntax.unit import parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _opt(tmp_path, src: str, *argv) -> subprocess.CompletedProcess:
    f = tmp_path / "k.cu"
    f.write_text(src)
    return subprocess.run([sys.executable, "-m", "kltrans", "opt", *argv, str(f)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


@pytest.mark.parametrize("params", ["float *A, float *B", "float*A, float*B",
                                    "float const *A, float *B"])
def test_restrict_pointers_keeps_the_names(tmp_path, params):
    src = (f"__global__ void vadd({params}, int n)\n{{\n    int i = blockIdx.x * blockDim.x "
           f"+ threadIdx.x;\n    if (i < n) B[i] += A[i];\n}}\n")
    r = _opt(tmp_path, src, "-p", "restrict-pointers", "--assume", "no_alias(*)")
    assert r.returncode == 0, r.stderr
    assert "__restrict__A" not in r.stdout and "__restrict__B" not in r.stdout
    assert "__restrict__ A" in r.stdout and "__restrict__ B" in r.stdout
    c = compile_unit(parse(r.stdout.encode(), "k.cu"))
    assert c.ok, c.log


@pytest.mark.parametrize("block, bound_decl, expect", [
    # ruleid: a block given by a macro: the grid goes back to one thread per element
    ("BLOCK", "", "ceil_div(n, BLOCK)"),
    # ok: the bound is a copy of the parameter: no grid is known to cover; refused
    ("256", "    int m = n;\n", None),
])
def test_one_per_thread_never_keeps_a_coarsened_grid(tmp_path, block, bound_decl, expect):
    bound = "m" if bound_decl else "n"
    src = (f"// kltrans: launch scale grid=min(ceil_div(n, 65536), 1024) block={block}\n"
           f"#define BLOCK 256\n__global__ void scale(const float* x, float* y, int n)\n{{\n"
           f"{bound_decl}    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < {bound}; "
           f"i += blockDim.x * gridDim.x) {{\n        y[i] = 3.0f * x[i];\n    }}\n}}\n")
    r = _opt(tmp_path, src, "-p", "one-per-thread", "-v")
    assert r.returncode == 0, r.stderr
    [c] = contracts(parse(r.stdout.encode(), "k.cu")).values()
    if expect is None:
        assert c.grid == ("min(ceil_div(n, 65536), 1024)",) and "covering-grid" in r.stderr
    else:
        assert c.grid == (expect,)
        (grid, _, _) = c.evaluate({"n": 1 << 20})
        assert grid[0] * 256 >= 1 << 20  # every element has a thread


def test_no_rewrite_leaves_a_pragma_before_a_non_loop(tmp_path):
    src = ("// kltrans: launch scale grid=min(ceil_div(n, 256), 1024) block=256\n"
           "__global__ void scale(const float* x, float* y, int n)\n{\n    #pragma unroll 4\n"
           "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; "
           "i += blockDim.x * gridDim.x) {\n        y[i] = 3.0f * x[i];\n    }\n}\n")
    r = _opt(tmp_path, src, "-p", "one-per-thread")
    assert r.returncode == 0
    assert "dropped '#pragma unroll 4' (line 4): the rewrite removed its loop" in r.stderr
    assert "#pragma" not in r.stdout and "blockIdx.x * blockDim.x + threadIdx.x" in r.stdout
    u = parse(r.stdout.encode(), "k.cu")
    assert all(p.loop is not None for p in u.pragmas if p.name == "unroll")
    c = compile_unit(u)
    assert c.ok and "607" not in c.log, c.log


SCALE_NO_STDINT = ("// kltrans: launch scale grid=ceil_div(n, 256) block=256\n"
                   "__global__ void scale(const float* x, float* y, int n)\n{\n"
                   "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "    if (i < n) {\n        y[i] = 3.0f * x[i];\n    }\n}\n")


def test_opt_verifies_its_output_and_names_the_pass(tmp_path):
    """Like -verify-each: l2-prefetch forced past its precondition (the file includes no
    <stdint.h> for uintptr_t) makes code NVRTC refuses; opt says which pass, exits 1 and
    writes nothing; --no-verify writes it anyway."""
    out = tmp_path / "out.cu"
    r = _opt(tmp_path, SCALE_NO_STDINT, "-p", "restrict-pointers,l2-prefetch", "--force",
             "--assume", "no_alias(*)", "-o", str(out))
    assert r.returncode == 1, r.stderr
    assert "after pass l2-prefetch" in r.stderr and "no longer compiles" in r.stderr
    assert "uintptr_t" in r.stderr and not out.exists()
    r = _opt(tmp_path, SCALE_NO_STDINT, "-p", "restrict-pointers,l2-prefetch", "--force",
             "--assume", "no_alias(*)", "-o", str(out), "--no-verify")
    assert r.returncode == 0 and "uintptr_t" in out.read_text()
    # ok: a pipeline whose every step compiles is written as before
    r = _opt(tmp_path, SCALE_NO_STDINT, "-p", "restrict-pointers", "--assume", "no_alias(*)")
    assert r.returncode == 0 and "__restrict__" in r.stdout


def test_opt_does_not_blame_a_pass_for_an_input_that_does_not_compile(tmp_path):
    src = SCALE_NO_STDINT.replace("3.0f * x[i]", "3.0f * x[i] + undefined_name")
    r = _opt(tmp_path, src, "-p", "restrict-pointers", "--assume", "no_alias(*)")
    assert r.returncode == 0 and "the input does not compile" in r.stderr


def test_the_gate_reports_nvrtc_warnings(tmp_path):
    k = tmp_path / "k.cu"
    k.write_text(SCALE_NO_STDINT.replace("    if (i < n)", "    #pragma unroll 4\n"
                                         "    int unused = 0;\n    if (i < n)"))
    workload = os.path.join(ROOT, "tests", "data", "generality", "mini", "scale")
    r = subprocess.run([sys.executable, "-m", "kltrans", "gate", str(k), "--workload", workload,
                        "--stages", "compile", "--backend", "cpu"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "warning: NVRTC: this pragma must immediately precede a statement" in r.stdout
    assert 'variable "unused" was declared but never referenced' in r.stdout


# item 7: outputs, binary input, a reference that raises
def test_opt_o_into_a_missing_directory_is_an_error_and_makes_none(tmp_path):
    out = tmp_path / "no" / "such" / "out.cu"
    r = _opt(tmp_path, SCALE_NO_STDINT, "-p", "restrict-pointers", "-o", str(out))
    assert r.returncode == 2 and f"-o no such directory {out.parent}" in r.stderr, r.stderr
    assert not (tmp_path / "no").exists()


@pytest.mark.skipif(not os.path.exists("/proc/version"), reason="needs /proc")
def test_opt_o_where_no_file_can_be_written_names_that_file(tmp_path):
    r = _opt(tmp_path, SCALE_NO_STDINT, "-p", "restrict-pointers", "-o", "/proc/version")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    # /proc/version is read-only (mode 0444): refused before a temporary file is tried
    assert "kltrans: error: /proc/version: is read-only" in r.stderr, r.stderr
    assert ".kltrans-" not in r.stderr  # not the temporary file's name


def test_binary_input_is_named_and_never_echoed(tmp_path):
    f = tmp_path / "k.cu"
    f.write_bytes(b"\x7fELF\x02\x01\x01\x00\x1b[2J\x00\x00garbage\n")
    r = subprocess.run([sys.executable, "-m", "kltrans", "opt", "-p", "unroll", str(f)],
                       capture_output=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2 and r.stdout == b""
    assert b"a binary file, not source text (a NUL byte at offset 7)" in r.stderr
    assert b"\x1b" not in r.stderr and b"ELF" not in r.stderr


def test_a_reference_that_raises_is_the_workloads_error_with_its_line(tmp_path):
    import shutil

    wl = tmp_path / "scale"
    shutil.copytree(os.path.join(ROOT, "tests", "data", "generality", "mini", "scale"), wl)
    ref = wl / "reference.py"
    lines = ref.read_text().splitlines()
    at = next(i for i, t in enumerate(lines) if t.lstrip().startswith("def reference"))
    lines.insert(at + 1, "    raise KeyError('no such input')")
    ref.write_text("\n".join(lines) + "\n")
    kernel = next(p for p in wl.iterdir() if p.suffix == ".cu")
    r = subprocess.run([sys.executable, "-m", "kltrans", "gate", str(kernel), "--workload",
                        str(wl), "--backend", "cpu", "--stages", "compile,correct"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{ref}:{at + 2}:1: error: the reference raised KeyError: 'no such input'" in r.stderr
    assert "the kernel was not judged" in r.stderr and "FAIL" not in r.stdout
