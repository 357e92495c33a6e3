"""kltrans gate / bench from the command line (compile stage: no GPU needed)."""

import json
import os
import subprocess
import sys

import pytest

from kltrans.gate.purity import check_purity
from kltrans.syntax import parse

HERE = os.path.dirname(os.path.abspath(__file__))
SCALE = os.path.join(HERE, "data", "workloads", "scale")


def run(*args, env=None):
    p = subprocess.run([sys.executable, "-m", "kltrans", *args], capture_output=True, text=True,
                       timeout=300, env={**os.environ, **(env or {})})
    assert "Traceback" not in p.stderr, p.stderr
    return p


def test_gate_compile_reports_resources_and_caches(tmp_path):
    env = {"KLTRANS_CACHE_DIR": str(tmp_path)}
    k = os.path.join(SCALE, "scale.cu")
    p1 = run("gate", k, "--workload", SCALE, "--stages", "compile", "--json", env=env)
    p2 = run("gate", k, "--workload", SCALE, "--stages", "compile", "--json", env=env)
    assert p1.returncode == 0 and p2.returncode == 0
    s1 = json.loads(p1.stdout)["stages"][0]
    s2 = json.loads(p2.stdout)["stages"][0]
    assert s1["status"] == "pass" and s1["resources"]["registers"] > 0
    assert s1["resources"]["spill_stores"] == 0
    assert s1["cached"] is False and s2["cached"] is True
    p = run("gate", k, "--workload", SCALE, "--stages", "compile", "--arch", "sm_80", env=env)
    assert p.returncode == 0 and "registers" in p.stdout and "sm_80" in p.stdout


def test_gate_compile_error_is_a_failed_stage(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text("// kltrans: launch scale grid=1 block=1\n"
                   "extern \"C\" __global__ void scale(const float* x, float* y, float a, float b, int n) {\n"
                   "  y[0] = undefined_thing;\n}\n")
    p = run("gate", str(bad), "--workload", SCALE, "--stages", "compile")
    assert p.returncode == 1 and "compile  FAIL" in p.stdout and "undefined_thing" in p.stdout


def test_gate_usage_errors(tmp_path):
    k = os.path.join(SCALE, "scale.cu")
    assert run("gate", k, "--workload", SCALE, "--stages", "compile,lint").returncode == 2
    p = run("gate", k, "--workload", str(tmp_path))
    assert p.returncode == 2 and "no workload.yaml" in p.stderr
    p = run("gate", str(tmp_path / "none.cu"), "--workload", SCALE)
    assert p.returncode == 2 and "no such file" in p.stderr
    p = run("gate", k, "--workload", SCALE, "--arch", "sm_9000", "--stages", "compile")
    assert p.returncode == 2 and "sm_90" in p.stderr
    p = run("gate", k, "--workload", SCALE, "--sizes", "m=3", "--stages", "compile")
    assert p.returncode == 2 and "not a size of scale" in p.stderr


def test_bench_without_gpu_says_so():
    from kltrans.gate.backends import gpu_available

    if gpu_available():
        pytest.skip("this machine has a GPU: the error path does not apply")
    k = os.path.join(SCALE, "scale.cu")
    p = run("bench", k, k, "--workload", SCALE)
    assert p.returncode == 2 and "needs a GPU" in p.stderr


@pytest.mark.parametrize("src, why", [
    ("#include <cublas_v2.h>\n__global__ void k() {}\n", "library may not do the work"),
    ("#include <Eigen/Dense>\n__global__ void k() {}\n", "not one of CUDA's own headers"),
    ("#include \"../../secret.cuh\"\n__global__ void k() {}\n", "'..' in an include path"),
    ("#include \"sub/../../x.cuh\"\n__global__ void k() {}\n", "'..' in an include path"),
    ("#include <cuda/std/../../../../etc/passwd>\n__global__ void k() {}\n",
     "'..' in an include path"),
    ("#include \"unistd.h\"\n__global__ void k() {}\n", "not a file of the kernel's folder"),
    ("#define H <unistd.h>\n#include H\n__global__ void k() {}\n", "through a macro"),
    ("#ifdef __CUDACC_RTC__\n#endif\n__global__ void k() {}\n", "different programs"),
    ("#if defined(__x86_64__)\n#endif\n__global__ void k() {}\n", "on __x86_64__"),
    ("#if __GNUC__ > 4 || \\\n  defined(__linux__)\n#endif\n", "on __GNUC__"),
    ("#if __has_include(<unistd.h>)\n#endif\n", "on __has_include"),
    ("__global__ void k(float* y) { cublasSgemm(0); }\n", "delegating to a library"),
    ("__global__ void k() { cute::Tensor t; }\n", "delegating to a library"),
])
def test_purity_rejects_delegation(tmp_path, src, why):
    f = tmp_path / "k.cu"
    f.write_text(src)
    reasons = check_purity(parse(src, str(f)), str(tmp_path))
    assert reasons and why in reasons[0]


def test_purity_accepts_cuda_headers(tmp_path):
    """ok: CUDA's headers, a header of the kernel's folder, conditions on __CUDA_ARCH__,
    on the file's own macros and on __KLTRANS_CPU_EMULATION__ (reported, not refused)."""
    (tmp_path / "helpers.cuh").write_text("#pragma once\n")
    src = ("#define TILE 4\n#if __CUDA_ARCH__ >= 900 && TILE > 2 && "
           "!defined(__KLTRANS_CPU_EMULATION__)\n#endif\n"
           "// #if __x86_64__ in a comment is not a condition\n" + "#include <cuda_fp16.h>\n#include <cooperative_groups.h>\n#include <cub/block/block_reduce.cuh>\n"
           "#include <cuda/pipeline>\n#include \"helpers.cuh\"\n__global__ void k() {}\n")
    assert check_purity(parse(src, str(tmp_path / "k.cu")), str(tmp_path)) == []


def test_gate_rejects_an_impure_kernel(tmp_path):
    f = tmp_path / "impure.cu"
    f.write_text("#include <cublas_v2.h>\n// kltrans: launch scale grid=1 block=1\n"
                 "extern \"C\" __global__ void scale(const float* x, float* y, float a, float b, int n) {}\n")
    p = run("gate", str(f), "--workload", SCALE, "--stages", "compile")
    assert p.returncode == 1 and "library may not do the work" in p.stdout
