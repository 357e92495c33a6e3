"""The corpus workloads: every spec loads, every kernel compiles (NVRTC, sm_80 and sm_90)
and has a launch contract that evaluates at every test size and the bench size, and every
reference runs on small random inputs and returns each output with its shape.

The correct stage itself needs a GPU or the CPU emulator and is not run here.
"""

import os

import numpy as np
import pytest

from kltrans.gate.compile import compile_unit
from kltrans.gate.correct import generate, natural
from kltrans.syntax import load
from kltrans.syntax.contract import contracts
from kltrans.workload import load_workload

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "corpus")
WORKLOADS = ["reduce-sum", "softmax", "layernorm", "transpose", "sgemm", "histogram", "scan"]
EXPERTS = ["reduce-sum", "softmax", "layernorm", "transpose", "sgemm", "histogram", "scan"]


def _attribute_names(expr):
    import ast

    return {n.attr for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Attribute)}


def _kernels():
    out = []
    for w in WORKLOADS:
        wl = load_workload(os.path.join(CORPUS, w))
        for variant in wl.kernels:
            out.append((w, variant))
    return out


@pytest.mark.parametrize("name", WORKLOADS)
def test_spec_loads(name):
    wl = load_workload(os.path.join(CORPUS, name))
    assert wl.name == name
    assert "naive" in wl.kernels
    if name in EXPERTS:
        assert "expert" in wl.kernels
    assert wl.vendor, "every workload names a vendor expression"
    code = compile(wl.vendor, "<vendor>", "eval")
    known = {a.name for a in wl.arguments} | set(wl.sizes) | {"torch"}
    assert set(code.co_names) <= known | _attribute_names(wl.vendor), code.co_names
    assert list(wl.seeds) == [0, 1, 2]
    bench = dict(wl.bench_size)
    assert wl.bytes_moved(bench) > 0
    for sizes in wl.test_sizes:
        assert wl.bytes_moved(dict(sizes)) > 0
        # the CPU emulator runs these: keep every buffer modest
        for a in wl.buffers():
            assert int(np.prod(wl.shape(a, dict(sizes)))) <= 2_100_000, (a.name, sizes)


def test_expert_files_present():
    for w in EXPERTS:
        assert os.path.isfile(os.path.join(CORPUS, w, "expert.cu")), w


@pytest.mark.parametrize("name, variant", _kernels())
def test_kernel_compiles_with_a_contract(name, variant):
    wl = load_workload(os.path.join(CORPUS, name))
    k = wl.kernels[variant]
    (unit,) = load(wl.kernel_path(variant))
    assert not unit.has_errors, [unit.text(n) for n in unit.error_nodes()][:3]
    exprs = [k["name_expression"]] if k.get("name_expression") else []
    for arch in ("sm_80", "sm_90"):
        r = compile_unit(unit, arch=arch, name_expressions=exprs)
        assert r.ok, r.log
        res = r.resource(k["name_expression"] or k["kernel"])
        assert res is not None, (k, list(r.resources))
        assert res.spill_stores == 0 and res.spill_loads == 0, res
        assert res.stack == 0, res
        assert res.smem_static <= 48 * 1024, res
    c = contracts(unit)
    assert k["kernel"] in c, f"no launch contract for {k['kernel']}"
    for sizes in list(wl.test_sizes) + [wl.bench_size]:
        grid, block, smem = c[k["kernel"]].evaluate(wl.env(dict(sizes)))
        assert block[0] * block[1] * block[2] <= 1024
        assert grid[0] < 2 ** 31 and grid[1] < 65536 and grid[2] < 65536, (sizes, grid)
        assert smem <= 48 * 1024


@pytest.mark.parametrize("name", WORKLOADS)
def test_reference_runs(name):
    wl = load_workload(os.path.join(CORPUS, name))
    ref = wl.reference()
    rng = np.random.default_rng(0)
    for sizes in wl.test_sizes[:3]:
        sizes = dict(sizes)
        inputs = {}
        for a in wl.arguments:
            if a.role == "scalar":
                inputs[a.name] = wl.scalar_value(a, sizes)
            elif a.role in ("in", "inout"):
                inputs[a.name] = natural(a.dtype, generate(wl, a, wl.shape(a, sizes), rng))
        out = ref(sizes, **inputs)
        for a in wl.arguments:
            if a.role not in ("out", "inout"):
                continue
            assert a.name in out, a.name
            got = np.asarray(out[a.name])
            assert got.size == int(np.prod(wl.shape(a, sizes))), (a.name, got.shape)
            assert np.all(np.isfinite(got.astype(np.float64))), a.name


def test_references_agree_with_definitions():
    rng = np.random.default_rng(1)
    # reduce-sum
    wl = load_workload(os.path.join(CORPUS, "reduce-sum"))
    x = rng.uniform(-1, 1, 1000).astype(np.float32)
    assert np.isclose(wl.reference()({"n": 1000}, x=x, n=1000)["out"][0], x.astype(np.float64).sum())
    # softmax rows sum to one
    wl = load_workload(os.path.join(CORPUS, "softmax"))
    x = rng.uniform(-4, 4, (3, 50)).astype(np.float32)
    y = wl.reference()({"rows": 3, "cols": 50}, x=x, rows=3, cols=50)["y"]
    assert np.allclose(y.sum(axis=1), 1.0)
    # transpose
    wl = load_workload(os.path.join(CORPUS, "transpose"))
    x = rng.uniform(-1, 1, (3, 5)).astype(np.float32)
    assert np.array_equal(wl.reference()({"rows": 3, "cols": 5}, x=x, rows=3, cols=5)["y"], x.T)
    # scan wraps like int32
    wl = load_workload(os.path.join(CORPUS, "scan"))
    x = np.array([2**31 - 1, 1, 5, -7], dtype=np.int32)
    out = wl.reference()({"n": 4}, x=x, n=4)["out"]
    assert out.dtype == np.int32 and list(out) == [2**31 - 1, -2**31, -2**31 + 5, -2**31 - 2 + 2**32]
    # histogram
    wl = load_workload(os.path.join(CORPUS, "histogram"))
    d = np.array([0, 255, 3, 3], dtype=np.uint8)
    b = wl.reference()({"n": 4}, data=d, n=4)["bins"]
    assert b.shape == (256,) and b[3] == 2 and b[0] == 1 and b[255] == 1 and b.sum() == 4
    # layernorm: normalised rows have mean ~0 and variance ~1 before the affine part
    wl = load_workload(os.path.join(CORPUS, "layernorm"))
    x = rng.normal(0.5, 1, (2, 768)).astype(np.float32)
    w = np.ones(768, np.float32)
    bias = np.zeros(768, np.float32)
    out = wl.reference()({"rows": 2, "cols": 768}, x=x, weight=w, bias=bias, rows=2, cols=768,
                         eps=1e-5)
    assert np.allclose(out["y"].mean(axis=1), 0, atol=1e-6)
    assert np.allclose(out["y"].var(axis=1), 1, atol=1e-3)
    assert np.allclose(out["mean"], x.mean(axis=1), atol=1e-5)


def test_a_name_expression_must_be_the_instantiation_the_header_names(tmp_path):
    import shutil

    from kltrans.workload.spec import SpecError

    src = os.path.join(CORPUS, "wild", "rmsnorm-tmpl")
    dst = tmp_path / "rms"
    shutil.copytree(src, dst)
    assert load_workload(str(dst)).kernels["v2_unrolled_shfl"]["name_expression"] == \
        "rmsNorm<float, 256>"
    spec = (dst / "workload.yaml").read_text()
    (dst / "workload.yaml").write_text(spec.replace(
        'v2_unrolled_shfl.cu, kernel: rmsNorm, name_expression: "rmsNorm<float, 256>"',
        'v2_unrolled_shfl.cu, kernel: rmsNorm, name_expression: "rmsNorm<float, 128>"'))
    with pytest.raises(SpecError, match=r"v2_unrolled_shfl.name_expression.*rmsNorm<float, 256>"):
        load_workload(str(dst))
