"""The gate's compile stage: NVRTC through cuda-python (no GPU needed)."""

from __future__ import annotations

import glob
import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from kltrans.gate import (  # noqa: E402
    UnsupportedArchError,
    compile_file,
    compile_source,
    compile_unit,
    nvrtc_version,
    supported_archs,
)
from kltrans.gate import cache as gate_cache  # noqa: E402
from kltrans.gate.compile import _demangle, parse_resources  # noqa: E402
from kltrans.syntax import load, parse  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KERNELS = os.path.join(ROOT, "tests", "data", "kernels")
CORPUS = sorted(glob.glob(os.path.join(ROOT, "corpus", "*", "naive.cu")))
ELF = b"\x7fELF"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "kltrans-cache"
    monkeypatch.setenv("KLTRANS_CACHE_DIR", str(d))
    return d


def kpath(name: str) -> str:
    return os.path.join(KERNELS, name)


def cache_files(root) -> list[str]:
    return sorted(p for p in glob.glob(os.path.join(str(root), "nvrtc", "*", "*"))
                  if not os.path.basename(p).startswith("."))


# ------------------------------------------------------------------------- toolchain
def test_an_empty_log_leaves_the_process_intact():
    """NVRTC writes its log (and cubin, PTX) into the buffer it is given. A clean compile's
    log is one byte, its NUL; written into ``b" " * 1``, which is CPython's shared
    ``b" "`` itself, it made every ``b" "`` of the process ``b"\\x00"``. The normalizer
    then blanked each #pragma with NULs and every later pragma unroll was refused as
    parse-breaking (seen on the H200). The gate asks ptxas for its resource report, so
    its logs are not empty; this compiles without it. In a fresh interpreter."""
    code = textwrap.dedent("""
        from kltrans.gate.compile import PTXAS_VERBOSE, _build_options, _run_nvrtc, prepare
        from kltrans.syntax import parse
        u = parse('extern "C" __global__ void k(float* x) { x[0] = 1.0f; }', "k.cu")
        prepared = prepare(u, ())
        opts = [o for o in _build_options("sm_90", (), prepared, ())[0] if o != PTXAS_VERBOSE]
        for _ in range(2):
            ok, log, cubin, ptx, _names, _s = _run_nvrtc(prepared, opts, ())
            assert ok and log == "" and cubin[:4] == b"\\x7fELF", (ok, log)
        assert bytes([32]) == b" ", repr(b" ")
        u = parse("__global__ void k(float* x) {\\n#pragma unroll\\n"
                  "for (int i = 0; i < 4; ++i) x[i] = 0;\\n}\\n")
        assert not u.error_nodes() and b"\\x00" not in u.normalized, u.normalized
        print("intact")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "intact", out.stderr[-2000:]


def test_package_imports_without_cuda_python():
    code = ("import sys; sys.modules['cuda'] = None\n"
            "import kltrans.gate, kltrans.gate.compile, kltrans.gate.cache\n"
            "assert not any(m.startswith('cuda.') for m in sys.modules), 'cuda imported'\n"
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_nvrtc_version_and_archs():
    major, minor = nvrtc_version()
    assert major >= 12
    archs = supported_archs()
    for a in ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_120"):
        assert a in archs
    assert "sm_80a" not in archs  # arch-specific variants start with 9.0


@pytest.mark.parametrize("arch", ["sm_95", "sm_52", "compute_90", "ampere", "sm_80a"])
def test_unsupported_arch_lists_supported(arch):
    with pytest.raises(UnsupportedArchError) as ei:
        compile_source("__global__ void k() {}\n", arch=arch)
    assert isinstance(ei.value, ValueError)
    msg = str(ei.value)
    assert arch in msg and "sm_90" in msg and "sm_80" in msg
    assert "sm_90" in ei.value.supported


def test_arch_in_options_is_rejected():
    with pytest.raises(ValueError, match="arch="):
        compile_source("__global__ void k() {}\n", options=["-arch=sm_80"])


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100", "sm_120", "SM_86"])
def test_other_archs(arch):
    r = compile_file(os.path.join(ROOT, "corpus", "reduce-sum", "naive.cu"), arch=arch)
    assert r.ok, r.log
    assert r.arch == arch.lower()
    assert r.cubin.startswith(ELF)


# ----------------------------------------------------------------------------- corpus
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("path", CORPUS,
                         ids=[os.path.basename(os.path.dirname(p)) for p in CORPUS])
def test_corpus_naive_compiles(path, arch):
    r = compile_file(path, arch=arch)
    assert r.ok, r.render() or r.log
    assert r.cubin and r.cubin.startswith(ELF)
    assert not r.errors
    unit = load(path)[0]
    names = {k.name for k in unit.kernels()}
    assert names and names == set(r.resources)  # extern "C": keyed by the C name
    for name in names:
        res = r.resources[name]
        assert res.name == name and res.short == name
        assert res.registers > 0
        assert res.spill_stores == 0 and res.spill_loads == 0
    assert f"for '{arch}'" in r.log  # ptxas -v is on


def test_softmax_naive_gets_the_math_prelude():
    # corpus/softmax uses INFINITY with no include (nvcc's implicit cuda_runtime.h
    # brings math.h); the prelude supplies it, and only when needed.
    r = compile_file(os.path.join(ROOT, "corpus", "softmax", "naive.cu"))
    assert r.ok
    assert "INFINITY" in r.prepared.prelude
    r2 = compile_file(os.path.join(ROOT, "corpus", "sgemm", "naive.cu"))
    assert r2.prepared.prelude == ""
    r3 = compile_source("#include <cmath>\n__global__ void k(float* y) { y[0] = -INFINITY; }\n")
    assert r3.ok, r3.render()
    assert r3.prepared.prelude == ""  # <cmath> -> <cuda/std/cmath> defines it


def test_histogram_naive_maps_stdint():
    r = compile_file(os.path.join(ROOT, "corpus", "histogram", "naive.cu"))
    assert r.ok
    kinds = [(c.kind, c.name, c.detail) for c in r.prepared.changes]
    assert ("include-mapped", "<stdint.h>", "<cuda/std/cstdint>") in kinds
    assert b"#include <cuda/std/cstdint>" in r.prepared.source


# ------------------------------------------------------------------------ test kernels
PLAIN_KERNELS = ["saxpy.cu", "vector_ops.cu", "grid_stride.cu", "histogram256.cu",
                 "softmax_rows.cu", "transpose_tiled.cu", "gather_scatter.cu",
                 "align_struct.cu", "launch_bounds3.cu", "pragma_unbraced_for.cu",
                 "trouble_all.cu", "mixed_precision.cu", "cg_reduce.cu"]


@pytest.mark.parametrize("name", PLAIN_KERNELS)
def test_test_kernels_compile_with_host_code_stripped(name):
    path = kpath(name)
    unit = load(path)[0]
    r = compile_unit(unit)
    assert r.ok, r.render() or r.log
    assert r.cubin.startswith(ELF)
    expected = {k.name for k in unit.kernels() if not k.template_params}
    assert expected <= set(r.resources), (expected, set(r.resources))
    for k in expected:
        assert r.resources[k].registers > 0
    # every launcher was a host function and went away, lines intact
    src, sent = unit.source, r.prepared.source
    mapped = {c.line for c in r.prepared.changes if c.kind == "include-mapped"}
    s_lines, o_lines = sent.split(b"\n"), src.split(b"\n")
    assert len(s_lines) == len(o_lines)
    for no, (s_line, o_line) in enumerate(zip(s_lines, o_lines), 1):
        assert len(s_line) == len(o_line) or no in mapped
    assert b"<<<" not in sent
    host = {c.name for c in r.prepared.changes if c.kind == "host-function"}
    assert host == {launch.function for launch in unit.launches()}


def test_saxpy_stripping_details():
    r = compile_file(kpath("saxpy.cu"))
    changes = {(c.kind, c.name, c.line) for c in r.prepared.changes}
    assert ("host-function", "launch_saxpy", 24) in changes
    assert ("include-dropped", "<cstdio>", 6) in changes
    assert b"#include <cuda_runtime.h>" in r.prepared.source  # NVRTC compiles it: kept
    assert b"cudaGetLastError" not in r.prepared.source
    # the commented-out kernels stay comments, the kernel is untouched
    src = open(kpath("saxpy.cu"), "rb").read()
    start = src.index(b"__global__ void saxpy")
    end = src.index(b"// Host-side launcher")
    assert r.prepared.source[start:end] == src[start:end]
    assert set(r.resources) == {"saxpy"}
    assert r.resources["saxpy"].name.startswith("_Z5saxpy")
    assert r.symbol("saxpy") == r.resources["saxpy"].name


def test_specific_resources():
    t = compile_file(kpath("transpose_tiled.cu"))
    assert t.resources["transpose_tiled"].smem_static == 32 * 33 * 4
    assert t.resources["transpose_ref"].smem_static == 0
    h = compile_file(kpath("histogram256.cu"))
    assert h.resources["histogram256"].smem_static == 256 * 4
    assert h.resources["histogram256"].barriers >= 1


def test_templated_kernel_with_name_expressions():
    exprs = ["block_reduce_sum<float, 256, 4>", "block_reduce_sum<float, 128, 8>"]
    r = compile_file(kpath("block_reduce.cu"), name_expressions=exprs)
    assert r.ok, r.render()
    assert set(r.lowered_names) == set(exprs)
    for e in exprs:
        sym = r.lowered_names[e]
        assert sym.startswith("_Z16block_reduce_sum")
        res = r.resources[e]
        assert res.name == sym and res.short == "block_reduce_sum"
        assert res.name_expression == e
        assert res.registers > 0
    # BLOCK / 32 warp sums of 4 bytes
    assert r.resources["block_reduce_sum<float, 256, 4>"].smem_static == 8 * 4
    assert r.resources["block_reduce_sum<float, 128, 8>"].smem_static == 4 * 4
    # the explicit double instantiation in the file is there too, keyed by its symbol
    dbl = [k for k, v in r.resources.items() if v.name_expression is None]
    assert dbl == ["_Z16block_reduce_sumIdLi256ELi4EEvPKT_PS0_i"]
    assert r.resource("_Z16block_reduce_sumIdLi256ELi4EEvPKT_PS0_i").smem_static == 8 * 8
    # the host template and its explicit instantiation were stripped
    kinds = {(c.kind, c.name) for c in r.prepared.changes}
    assert ("host-function", "reduce_sum") in kinds
    assert ("host-instantiation", "reduce_sum") in kinds


def test_templated_kernel_without_name_expressions_emits_only_instantiations():
    r = compile_file(kpath("block_reduce.cu"))
    assert r.ok
    assert r.lowered_names == {}
    # only the explicit instantiation; its plain name is now unique
    assert list(r.resources) == ["block_reduce_sum"]


def test_bad_name_expression():
    r = compile_file(kpath("block_reduce.cu"),
                     name_expressions=["block_reduce_sum<float, 3, 2, 1>"])
    assert not r.ok
    assert r.cubin is None
    assert any(d.message.startswith("name expression:") for d in r.errors)


def test_device_lambda():
    # NVRTC has no extended lambdas ("__host__ or __device__ annotation on lambda is
    # not allowed in JIT mode") and no --extended-lambda option. The lambdas live in the
    # host function, which is stripped; the generic kernels remain uninstantiated.
    r = compile_file(kpath("device_lambda.cu"), options=["--extended-lambda"])
    assert r.ok, r.render()
    assert r.resources == {}
    kinds = {(c.kind, c.name) for c in r.prepared.changes}
    assert ("host-function", "run") in kinds
    assert ("option-dropped", "--extended-lambda") in kinds
    assert "--extended-lambda" not in r.options
    # a device lambda inside device code is rejected by NVRTC, with the right line
    src = ("template <typename F> __global__ void each(int n, F f) { f(n); }\n"
           "__global__ void k(float* y)\n"
           "{\n"
           "    auto f = [=] __device__ (int i) { y[i] = 1.0f; };\n"
           "    f(0);\n"
           "}\n")
    bad = compile_source(src, path="lam.cu")
    assert not bad.ok
    assert any(d.location.line == 4 and "lambda" in d.message for d in bad.errors)


def test_mixed_precision_headers():
    r = compile_file(kpath("mixed_precision.cu"))
    assert r.ok
    assert set(r.resources) == {"f32_to_f16_vec4", "bf16_to_f32", "half_axpby", "bf16x4_to_f32x4"}
    # ceil_div is __host__ __device__: kept
    assert {c.name for c in r.prepared.changes} == {"convert_all"}


def test_cooperative_groups():
    r = compile_file(kpath("cg_reduce.cu"))
    assert r.ok, r.render()
    assert set(r.resources) == {"dot_cg", "count_above"}
    assert r.resources["count_above"].smem_static >= 4


@pytest.mark.parametrize("header", ["cuda_fp16.h", "cuda_bf16.h", "cooperative_groups.h",
                                    "cooperative_groups/reduce.h", "cuda/pipeline",
                                    "cuda_runtime.h", "cuda/std/cstdint"])
def test_wheel_headers(header):
    r = compile_source(f"#include <{header}>\n__global__ void k(int* y) {{ y[0] = 1; }}\n")
    assert r.ok, r.render()
    assert not any(c.kind.startswith("include") for c in r.prepared.changes)


def test_std_headers_mapped_and_std_names_work():
    src = textwrap.dedent("""\
        #include <cstdint>
        #include <type_traits>
        #include <limits>
        #include <iostream>
        #include <vector>

        template <typename T>
        __global__ void fill_max(T* y, std::uint32_t n)
        {
            static_assert(std::is_floating_point<T>::value, "float only");
            const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = std::numeric_limits<T>::max();
        }
        template __global__ void fill_max<float>(float*, std::uint32_t);

        int main() { std::vector<int> v(3); std::cout << v.size() << std::endl; return 0; }
        """)
    r = compile_source(src, path="stdmap.cu")
    assert r.ok, r.render()
    kinds = [(c.kind, c.name) for c in r.prepared.changes]
    assert ("include-mapped", "<cstdint>") in kinds
    assert ("include-mapped", "<type_traits>") in kinds
    assert ("include-dropped", "<iostream>") in kinds
    assert ("include-dropped", "<vector>") in kinds
    assert ("host-function", "main") in kinds
    assert "using namespace ::cuda::std" in r.prepared.prelude
    assert list(r.resources) == ["fill_max"]


def test_host_declarations_variables_and_macros():
    src = textwrap.dedent("""\
        #define HD __host__ __device__
        #define DEVFN __device__ __forceinline__
        int host_counter = 0;
        static float host_table[4];
        constexpr int kBlock = 128;
        void launch(float* y, int n);
        extern "C" void c_launch(float* y);
        template <typename T> void generic_launch(T* y);
        __host__ int host_only(int x) { return x; }
        __host__ __device__ int both(int x) { return x + 1; }
        HD int via_macro(int x) { return 2 * x; }
        DEVFN float twice(float v) { return 2.0f * v; }
        __device__ int dev_counter;
        __constant__ float coef[4];
        __global__ void k(float* y, int n)
        {
            int i = blockIdx.x * kBlock + threadIdx.x;
            if (i < n) y[i] = twice(coef[i & 3]) + both(via_macro(i)) + dev_counter;
        }
        void launch(float* y, int n) { k<<<(n + kBlock - 1) / kBlock, kBlock>>>(y, n); }
        """)
    r = compile_source(src, path="decls.cu")
    assert r.ok, r.render()
    got = {(c.kind, c.name) for c in r.prepared.changes}
    assert got == {("host-variable", "host_counter"), ("host-variable", "host_table"),
                   ("host-declaration", "launch"), ("host-declaration", "c_launch"),
                   ("host-declaration", "generic_launch"), ("host-function", "host_only"),
                   ("host-function", "launch")}
    assert r.resources["k"].cmem is None or isinstance(r.resources["k"].cmem, dict)


# ------------------------------------------------------------------------ diagnostics
BROKEN = """\
// a host launcher first, so the error line sits below stripped code
#include <cstdio>
void launch(float* x) { printf("go\\n"); }

__global__ void broken(float* x, int n)
{
    int i = threadIdx.x;
    if (i < n) x[i] = undefined_thing + 1.0f;
}
"""


def test_error_maps_to_original_line_and_column():
    r = compile_source(BROKEN, path="kernels/broken.cu")
    assert not r.ok and r.cubin is None and r.resources == {}
    [d] = r.errors
    assert d.severity == "error"
    assert 'identifier "undefined_thing" is undefined' in d.message
    assert d.location.path == "kernels/broken.cu"
    assert d.location.line == 8
    assert d.location.column == BROKEN.splitlines()[7].index("undefined_thing") + 1
    assert d.location.source_line == BROKEN.splitlines()[7]
    assert "kernels/broken.cu:8:" in d.render()


def test_missing_semicolon():
    src = ("__global__ void k(float* x, int n)\n"
           "{\n"
           "\tint i = threadIdx.x  // no semicolon\n"
           "    if (i < n) x[i] = 1.0f;\n"
           "}\n")
    r = compile_source(src, path="semi.cu")
    assert not r.ok
    errs = r.errors
    assert errs and errs[0].message == 'expected a ";"'
    # EDG reports the token after the missing ';': the first column of the next line's code
    assert (errs[0].location.line, errs[0].location.column) == (4, 5)
    # a tab counts as one column in the warning on line 3
    warn = [d for d in r.warnings if d.location.line == 3]
    assert warn and warn[0].location.column == 6 and warn[0].code == "177-D"


def test_template_error_has_instantiation_notes():
    src = ("template <typename T>\n"
           "__device__ T f(T x) { return x.foo; }\n"
           "template <typename T>\n"
           "__global__ void k(T* p) { p[0] = f(p[0]); }\n")
    r = compile_source(src, path="tpl.cu", name_expressions=["k<float>"])
    assert not r.ok
    [d] = r.errors
    assert d.location.line == 2
    assert d.notes and d.notes[0].location.line == 4


def test_ptxas_error_points_at_kernel():
    src = ("// too much static shared memory\n"
           "__global__ void greedy(int* s)\n"
           "{\n"
           "    __shared__ float big[20000];\n"
           "    big[threadIdx.x] = 1; s[0] = big[s[1]];\n"
           "}\n")
    r = compile_source(src, path="greedy.cu")
    assert not r.ok
    [d] = r.errors
    assert d.code == "ptxas" and "too much shared data" in d.message
    assert d.location.line == 2
    assert r.resources["greedy"].smem_static == 80000


def test_unknown_option_fails_cleanly():
    r = compile_source("__global__ void k() {}\n", options=["--no-such-option"])
    assert not r.ok
    assert any("no-such-option" in d.message for d in r.errors)


def test_embedded_python_unit_maps_to_python_file(tmp_path):
    src = open(os.path.join(ROOT, "tests", "data", "python", "cuda_core_program.py")).read()
    src = src.replace("C[i] = A[i] + B[i];", "C[i] = A[i] + Bq[i];")
    p = tmp_path / "emb.py"
    p.write_text(src)
    unit = load(str(p))[0]
    r = compile_unit(unit, name_expressions=["vector_add<float>"])
    assert not r.ok
    [d] = r.errors
    lines = src.splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "Bq[i]" in t)
    assert d.location.path == str(p) and d.location.line == line
    assert d.location.column == lines[line - 1].index("Bq") + 1
    orig = os.path.join(ROOT, "tests", "data", "python", "cuda_core_program.py")
    ok = compile_unit(load(orig)[0], name_expressions=["vector_add<float>"])
    assert ok.ok and ok.lowered_names["vector_add<float>"].startswith("_Z10vector_add")


def test_local_header_is_stripped_and_in_memory(tmp_path):
    shutil.copy(kpath("helpers.cuh"), tmp_path / "helpers.cuh")
    (tmp_path / "use.cu").write_text(textwrap.dedent("""\
        #include "helpers.cuh"
        __global__ void k2(float* out, int n) { out[0] = kl::round_up(n, 4); }
        int main() { kl::launch_row_sum<float>(nullptr, nullptr, 1, 1); return 0; }
        """))
    r = compile_file(str(tmp_path / "use.cu"), name_expressions=["kl::row_sum<float, 4>"])
    assert r.ok, r.render()
    assert [h.name for h in r.prepared.headers] == ["helpers.cuh"]
    assert r.prepared.headers[0].path == str(tmp_path / "helpers.cuh")
    got = {(c.kind, c.name, os.path.basename(c.path)) for c in r.prepared.changes}
    assert ("host-function", "launch_row_sum", "helpers.cuh") in got
    assert ("host-function", "main", "use.cu") in got
    res = r.resources["kl::row_sum<float, 4>"]
    assert res.qualified == "kl::row_sum" and res.short == "row_sum"
    assert "k2" in r.resources
    # an error inside the header points at the header
    bad = open(kpath("helpers.cuh")).read().replace("return ((x + m - 1) / m) * m;",
                                                     "return ((x + m - 1) / m) * mm;")
    (tmp_path / "helpers.cuh").write_text(bad)
    r2 = compile_file(str(tmp_path / "use.cu"))
    assert not r2.ok
    [d] = r2.errors
    assert d.location.path == str(tmp_path / "helpers.cuh")
    assert d.location.line == next(i for i, t in enumerate(bad.splitlines(), 1) if "* mm;" in t)
    assert r2.key != r.key  # the header's content is in the key


def test_missing_local_header_is_reported_at_its_line():
    r = compile_source('// x\n#include "nowhere.cuh"\n__global__ void k() {}\n', path="m.cu")
    assert not r.ok
    assert r.errors[0].location.line == 2 and "nowhere.cuh" in r.errors[0].message


# ---------------------------------------------------------------------------- resources
PRESSURE = """\
__global__ void pressure(const float* __restrict__ x, float* __restrict__ y, int n)
{
    float acc[32];
    #pragma unroll
    for (int k = 0; k < 32; ++k) acc[k] = x[k * n + threadIdx.x];
    for (int it = 0; it < n; ++it) {
        #pragma unroll
        for (int k = 0; k < 32; ++k) acc[k] = acc[k] * acc[(k + 1) & 31] + x[it];
    }
    float s = 0.0f;
    #pragma unroll
    for (int k = 0; k < 32; ++k) s += acc[k] * (k + 1);
    y[threadIdx.x] = s;
}

__global__ void local_array(const int* idx, float* y)
{
    float buf[256];   // dynamically indexed: lives in local memory
    for (int k = 0; k < 256; ++k) buf[k] = k * 0.5f;
    y[threadIdx.x] = buf[idx[threadIdx.x] & 255];
}
"""


def test_stack_and_spills():
    r = compile_source(PRESSURE, path="pressure.cu")
    assert r.ok
    p, la = r.resources["pressure"], r.resources["local_array"]
    assert p.spill_stores == 0 and p.spill_loads == 0 and p.registers > 24
    assert la.stack >= 1024 and la.spill_stores == 0
    tight = compile_source(PRESSURE, path="pressure.cu", options=["-maxrregcount=24"])
    assert tight.ok
    tp = tight.resources["pressure"]
    assert tp.registers <= 24
    assert tp.spill_stores > 0 and tp.spill_loads > 0 and tp.stack > 0
    # sm_90 cannot go below 24 registers: ptxas raises 16 to 24 and says so
    low = compile_source(PRESSURE, path="pressure.cu", options=["-maxrregcount=16"])
    assert low.ok
    assert low.resources["pressure"].registers == 24
    assert any(d.severity == "warning" and "lower bound of 24" in d.message
               for d in low.diagnostics)


def test_cmem_on_sm80():
    r = compile_file(os.path.join(ROOT, "corpus", "sgemm", "naive.cu"), arch="sm_80")
    res = r.resources["sgemm_naive"]
    assert res.cmem and res.cmem.get(0, 0) > 0  # the kernel parameters live in bank 0


def test_parse_resources_and_demangle():
    log = textwrap.dedent("""\
        ptxas info    : 0 bytes gmem, 256 bytes cmem[3]
        ptxas info    : Compiling entry function '_ZN2kl7row_sumIfLi4EEEvPKT_Pfii' for 'sm_80'
        ptxas info    : Function properties for _ZN2kl7row_sumIfLi4EEEvPKT_Pfii
        ptxas         .     16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
        ptxas info    : Used 40 registers, used 1 barriers, 24 bytes cumulative stack size, 1024 bytes smem, 364 bytes cmem[0], 8 bytes cmem[2]
        ptxas info    : Function properties for _Z6helperPfi
        ptxas         .     96 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
        ptxas info    : Compiling entry function 'plain_c' for 'sm_80'
        ptxas info    : Function properties for plain_c
        ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
        ptxas info    : Used 8 registers, used 0 barriers
        """)
    res = parse_resources(log, {"kl::row_sum<float, 4>": "_ZN2kl7row_sumIfLi4EEEvPKT_Pfii"})
    assert set(res) == {"kl::row_sum<float, 4>", "plain_c"}
    r = res["kl::row_sum<float, 4>"]
    assert (r.registers, r.spill_stores, r.spill_loads, r.stack, r.stack_cumulative,
            r.smem_static, r.barriers) == (40, 8, 4, 16, 24, 1024, 1)
    assert r.cmem == {0: 364, 2: 8}
    assert res["plain_c"].cmem is None and res["plain_c"].registers == 8
    assert _demangle("_Z5saxpyifPKfPf") == ["saxpy"]
    assert _demangle("_ZN12_GLOBAL__N_16kernelEv") == ["(anonymous namespace)", "kernel"]
    assert _demangle("_ZNSt3foo3barEv") == ["std", "foo", "bar"]
    assert _demangle("scan_naive") == ["scan_naive"]


# -------------------------------------------------------------------------------- cache
def test_cache_hit_returns_same_result(cache_dir):
    path = kpath("transpose_tiled.cu")
    a = compile_file(path)
    assert a.ok and not a.cached
    b = compile_file(path)
    assert b.cached and b.ok
    assert b.key == a.key and len(a.key) == 64
    assert b.cubin == a.cubin
    assert b.resources == a.resources
    assert b.diagnostics == a.diagnostics
    assert b.compile_seconds == pytest.approx(a.seconds)
    files = cache_files(cache_dir)
    assert [os.path.basename(f) for f in files] == [a.key + ".cubin", a.key + ".json"]
    assert os.path.basename(os.path.dirname(files[0])) == a.key[:2]
    rec = json.load(open(files[1]))
    assert rec["cubin_sha256"] == hashlib.sha256(a.cubin).hexdigest()


def test_cache_misses_on_options_arch_source_and_name_expressions():
    path = kpath("saxpy.cu")
    base = compile_file(path)
    keys = {base.key}
    for kw in ({"arch": "sm_80"}, {"options": ["-lineinfo"]}, {"options": ["--use_fast_math"]},
               {"name_expressions": ["saxpy"]}):
        r = compile_file(path, **kw)
        assert r.ok and not r.cached, kw
        keys.add(r.key)
    assert len(keys) == 5
    changed = compile_source(open(path).read().replace("a * x[i]", "a * x[i] * 1.0f"),
                             path=path)
    assert not changed.cached and changed.key not in keys
    assert compile_file(path, arch="sm_80").cached


def test_comments_in_stripped_host_code_do_not_change_the_key():
    # the key is over the source NVRTC sees, so editing stripped host code is a hit
    src = open(kpath("saxpy.cu")).read()
    a = compile_source(src, path="s.cu")
    b = compile_source(src.replace("round up", "ROUND UP"), path="s.cu")  # same length
    assert b.cached and b.key == a.key


def test_cache_false_bypasses(cache_dir):
    r = compile_file(kpath("saxpy.cu"), cache=False)
    assert r.ok and not r.cached
    assert cache_files(cache_dir) == []
    compile_file(kpath("saxpy.cu"))
    assert not compile_file(kpath("saxpy.cu"), cache=False).cached


def test_failed_compiles_are_cached():
    a = compile_source(BROKEN, path="b.cu")
    b = compile_source(BROKEN, path="b.cu")
    assert not a.ok and not b.ok
    assert b.cached and not a.cached
    assert b.log == a.log and b.diagnostics == a.diagnostics


@pytest.mark.parametrize("damage", ["json-garbage", "json-truncated", "cubin-truncated",
                                    "cubin-missing", "wrong-format"])
def test_corrupt_entry_is_ignored_and_rewritten(cache_dir, damage):
    path = kpath("vector_ops.cu")
    a = compile_file(path)
    jpath, cpath = gate_cache.entry_paths(a.key)
    if damage == "json-garbage":
        open(jpath, "wb").write(b"\x00not json{")
    elif damage == "json-truncated":
        data = open(jpath, "rb").read()
        open(jpath, "wb").write(data[: len(data) // 2])
    elif damage == "cubin-truncated":
        data = open(cpath, "rb").read()
        open(cpath, "wb").write(data[:100])
    elif damage == "cubin-missing":
        os.unlink(cpath)
    else:
        rec = json.load(open(jpath))
        rec["format"] = -1
        json.dump(rec, open(jpath, "w"))
    b = compile_file(path)
    assert b.ok and not b.cached and b.cubin == a.cubin
    c = compile_file(path)
    assert c.cached and c.cubin == a.cubin


def test_want_ptx():
    a = compile_file(kpath("saxpy.cu"))
    assert a.ptx is None
    b = compile_file(kpath("saxpy.cu"), want_ptx=True)
    assert b.cached  # PTX is stored with every entry
    assert ".entry" in b.ptx and "_Z5saxpy" in b.ptx


def test_cache_root_from_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("KLTRANS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert gate_cache.cache_root() == str(tmp_path / "xdg" / "kltrans")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert gate_cache.cache_root() == str(tmp_path / "home" / ".cache" / "kltrans")


_CHILD = """
import hashlib
from kltrans.gate import compile_file
barrier.wait(timeout=60)
r = compile_file(path)
queue.put((r.ok, r.cached, hashlib.sha256(r.cubin or b"").hexdigest(), r.key))
"""


def test_two_processes_compile_the_same_key(cache_dir):
    # spawn, not fork: NVRTC is already loaded in this process. The child runs
    # builtins.exec (picklable by reference; this module is imported with
    # --import-mode=importlib, so a child could not import a function from it).
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    queue = ctx.Queue()
    path = kpath("cg_reduce.cu")  # about a second: the two compiles overlap
    procs = [ctx.Process(target=exec, args=(_CHILD, {"barrier": barrier, "queue": queue,
                                                     "path": path}))
             for _ in range(2)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert all(ok for ok, _cached, _sha, _key in results)
    assert len({sha for _ok, _c, sha, _k in results}) == 1
    assert len({key for _ok, _c, _s, key in results}) == 1
    r = compile_file(path)
    assert r.cached and hashlib.sha256(r.cubin).hexdigest() == results[0][2]
    assert not [f for f in glob.glob(os.path.join(str(cache_dir), "nvrtc", "*", ".*"))]


def test_threads_compile_in_parallel():
    paths = [kpath(n) for n in ("saxpy.cu", "vector_ops.cu", "grid_stride.cu",
                                "histogram256.cu", "saxpy.cu", "saxpy.cu")]
    with ThreadPoolExecutor(4) as ex:
        results = list(ex.map(lambda p: compile_file(p), paths))
    assert all(r.ok for r in results)
    saxpy = [r for p, r in zip(paths, results) if p.endswith("saxpy.cu")]
    assert len({r.cubin for r in saxpy}) == 1
    assert sum(not r.cached for r in saxpy) == 1  # one compile per key per process


def test_compile_unit_and_compile_source_agree():
    src = open(kpath("saxpy.cu")).read()
    a = compile_unit(parse(src, "saxpy.cu"))
    b = compile_source(src, path="saxpy.cu")
    assert b.cached and a.key == b.key and a.cubin == b.cubin


CLASSES = """\
#include <vector>
constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
struct Params {
    int n;
    float scale;
    Params() = default;
    Params(int n_, float s) : n(n_), scale(s) {}
    int blocks(int b) const { return cdiv(n, b); }
    void check();
    constexpr int twice() const { return 2 * n; }
    __host__ __device__ float get() const { return scale; }
    friend bool operator==(const Params& a, const Params& b);
};
void Params::check() { std::vector<int> v(n); }
__global__ void k(Params p, float* y)
{
    __shared__ float s[cdiv(100, 32)];
    s[threadIdx.x & 3] = p.get() + p.twice();
    y[threadIdx.x] = s[0] * p.n;
}
"""


def test_host_members_stripped_and_constexpr_made_host_device():
    r = compile_source(CLASSES, path="cls.cu")
    assert r.ok, r.render()
    got = [(c.kind, c.name, c.line) for c in r.prepared.changes]
    assert got == [("include-dropped", "<vector>", 1), ("constexpr-host-device", "cdiv", 2),
                   ("host-member", "Params", 7), ("host-member", "blocks", 8),
                   ("host-member", "check", 9), ("constexpr-host-device", "twice", 10),
                   ("host-declaration", "operator==", 12), ("host-function", "check", 14)]
    assert r.resources["k"].smem_static == 4 * 4
    # the inserted `__host__ __device__ ` does not shift columns on its line
    bad = compile_source(CLASSES.replace("return (a + b - 1) / b;", "return (a + b - 1) / bb;"),
                         path="cls.cu")
    assert not bad.ok
    d = next(d for d in bad.errors if "bb" in d.message)
    line2 = CLASSES.splitlines()[1].replace("/ b;", "/ bb;")
    assert (d.location.line, d.location.column) == (2, line2.index("bb") + 1)
    assert d.location.source_line == line2


def test_offset_map():
    from kltrans.gate.compile import OffsetMap

    # an insertion of 20 bytes at 5, a same-length blank of [10, 20), a replacement of
    # [30, 40) by 50 bytes
    m = OffsetMap([(5, 5, 20), (10, 20, 10), (30, 40, 50)])
    assert [m.to_original(o) for o in (0, 4)] == [0, 4]
    assert [m.to_original(o) for o in (5, 24)] == [5, 5]  # inside the insertion
    assert [m.to_original(o) for o in (25, 29, 30, 35, 39)] == [5, 9, 10, 15, 19]
    assert m.to_original(49) == 29
    assert [m.to_original(o) for o in (50, 55, 99)] == [30, 35, 39]  # clamped to the range
    assert [m.to_original(o) for o in (100, 110)] == [40, 50]


def test_three_argument_launch_bounds_needs_sm90():
    # the third __launch_bounds__ argument (max blocks per cluster) exists from sm_90 on
    assert compile_file(kpath("launch_bounds3.cu"), arch="sm_90").ok
    r = compile_file(kpath("launch_bounds3.cu"), arch="sm_80")
    assert not r.ok
    assert [(d.location.line, d.location.column) for d in r.errors] == [(8, 17), (16, 17)]
    assert all("max blocks per cluster" in d.message for d in r.errors)


def test_a_cxx_kernel_symbol_comes_from_the_cubin_when_the_log_says_nothing():
    """The cubin's symbol table names a C++-linkage kernel (mangled) even where the
    ptxas report and the lowered names are missing (a record cached without them)."""
    import dataclasses

    from kltrans.gate.compile import compile_source, cubin_functions

    src = ("__global__ void vadd(const float* a, float* b, int n)\n"
           "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] += a[i]; }\n"
           "template <int K> __global__ void scale(float* b) { b[threadIdx.x] *= K; }\n")
    r = compile_source(src, "k.cu", name_expressions=["scale<3>"])
    assert r.ok, r.log
    funcs = cubin_functions(r.cubin)
    assert "_Z4vaddPKfPfi" in funcs and any(f.startswith("_Z5scaleILi3EEvPf") for f in funcs)
    bare = dataclasses.replace(r, resources={}, lowered_names={})
    assert bare.symbol("vadd") == "_Z4vaddPKfPfi"
    assert bare.symbol("nothing") is None
    assert cubin_functions(b"not an elf") == [] and cubin_functions(b"\x7fELF" + b"\0" * 10) == []
