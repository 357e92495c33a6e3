"""The corpus kernels (every naive root, and the expert kernels present) run on the CPU
emulator at small sizes and match numpy references computed here.

Arguments are passed by the kernel's parameter names, so a kernel that gains a parameter
the test knows (``scratch`` in scan) keeps working.
"""

import os
import shutil

import numpy as np
import pytest

from kltrans.syntax import load

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "corpus")


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    root = tmp_path_factory.getbasetemp() / "kltrans-cpu-cache"
    mp.setenv("KLTRANS_CACHE_DIR", str(root))
    yield root
    mp.undo()


def cdiv(a, b):
    return (a + b - 1) // b


def module(workload, variant, kernel):
    from kltrans.gate.cpu import build

    path = os.path.join(CORPUS, workload, f"{variant}.cu")
    if not os.path.isfile(path):
        pytest.skip(f"{workload}/{variant}.cu is not in the corpus")
    unit = load(path)[0]
    if kernel not in {k.name for k in unit.kernels()}:
        pytest.skip(f"{workload}/{variant}.cu has no kernel {kernel}")
    return build(unit, kernel)


def contract_launch(workload, variant, kernel, env):
    """(grid, block) from the kernel file's own launch contract."""
    from kltrans.syntax.contract import contracts

    unit = load(os.path.join(CORPUS, workload, f"{variant}.cu"))[0]
    grid, block, _ = contracts(unit)[kernel].evaluate(env)
    return grid, block


def launch(m, grid, block, named, **kw):
    missing = [p for p in m.param_names if p not in named]
    assert not missing, f"{m.kernel}: no test value for parameters {missing}"
    return m.launch(grid, block, 0, [named[p] for p in m.param_names], **kw)


def bf16_bits(x):
    x = np.ascontiguousarray(x, dtype=np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FFF), r)


def bf16_to_f32(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


NAIVE = "naive"
EXPERT = "expert"


@pytest.mark.parametrize("variant,kernel", [(NAIVE, "reduce_sum_naive"), (EXPERT, "reduce_sum")])
def test_reduce_sum(variant, kernel):
    m = module("reduce-sum", variant, kernel)
    rng = np.random.default_rng(1)
    for n in (31, 3001, 20011):
        x = rng.uniform(-1, 1, n + 1).astype(np.float32)[1:]  # not 16-byte aligned
        out = np.zeros(1, np.float32)
        grid = cdiv(n, 256) if variant == NAIVE else min(cdiv(n, 8192), 1056)
        stats = launch(m, grid, 256, {"x": x, "out": out, "n": n}, threads=2)
        assert stats["blocks"] == grid and stats["fibers"] == grid * 256
        assert out[0] == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5, abs=1e-3)


@pytest.mark.parametrize("variant,kernel", [(NAIVE, "softmax_naive"), (EXPERT, "softmax")])
def test_softmax(variant, kernel):
    m = module("softmax", variant, kernel)
    rng = np.random.default_rng(2)
    for rows, cols in ((37, 53), (3, 1025), (2, 9000)):
        x = rng.uniform(-4, 4, (rows, cols)).astype(np.float32)
        y = np.full((rows, cols), np.nan, np.float32)
        grid = cdiv(rows, 256) if variant == NAIVE else \
            cdiv(rows, max(1, 8 // cdiv(cols, 1024)))
        launch(m, grid, 256, {"x": x, "y": y, "rows": rows, "cols": cols})
        e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=2e-5, atol=1e-9)


@pytest.mark.parametrize("variant,kernel", [(NAIVE, "layernorm_naive"), (EXPERT, "layernorm")])
def test_layernorm_bf16(variant, kernel):
    m = module("layernorm", variant, kernel)
    rng = np.random.default_rng(3)
    eps = 1e-5
    for rows, cols in ((19, 67), (3, 1500)):
        xb = bf16_bits(rng.standard_normal((rows, cols)).astype(np.float32) * 2 + 0.5)
        wb = bf16_bits(rng.standard_normal(cols).astype(np.float32))
        bb = bf16_bits(rng.standard_normal(cols).astype(np.float32))
        y = np.full((rows, cols), 0xFFFF, np.uint16)
        mean = np.full(rows, np.nan, np.float32)
        rstd = np.full(rows, np.nan, np.float32)
        grid, block = contract_launch("layernorm", variant, kernel, {"rows": rows, "cols": cols})
        launch(m, grid, block, {"x": xb, "weight": wb, "bias": bb, "y": y, "mean": mean,
                              "rstd": rstd, "rows": rows, "cols": cols, "eps": eps})
        x = bf16_to_f32(xb).astype(np.float64)
        mu = x.mean(1)
        var = ((x - mu[:, None]) ** 2).mean(1)
        rs = 1.0 / np.sqrt(var + eps)
        ref = (x - mu[:, None]) * rs[:, None] * bf16_to_f32(wb) + bf16_to_f32(bb)
        np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(rstd, rs, rtol=1e-5)
        # the output is bf16: within one bf16 rounding of the exact result
        np.testing.assert_allclose(bf16_to_f32(y), ref, rtol=2 ** -7, atol=1e-5)


@pytest.mark.parametrize("variant,kernel", [(NAIVE, "transpose_naive"), (EXPERT, "transpose")])
def test_transpose_37x53(variant, kernel):
    m = module("transpose", variant, kernel)
    rows, cols = 37, 53
    x = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    out = np.full((cols, rows), np.nan, np.float32)
    if variant == NAIVE:
        grid, block = (cdiv(rows, 16), cdiv(cols, 16)), (16, 16)
    else:
        grid, block = (cdiv(cols, 64), cdiv(rows, 64)), (32, 8)
    launch(m, grid, block, {"in": x, "x": x, "out": out, "y": out, "rows": rows, "cols": cols})
    np.testing.assert_array_equal(out, x.T)


@pytest.mark.parametrize("variant,kernel", [(NAIVE, "sgemm_naive"), (EXPERT, "sgemm_expert")])
def test_sgemm_33x45x29(variant, kernel):
    m = module("sgemm", variant, kernel)
    rng = np.random.default_rng(5)
    M, N, K = 33, 45, 29
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = rng.standard_normal((M, N)).astype(np.float32)
    ref = 1.5 * (a.astype(np.float64) @ b) - 0.5 * c
    if variant == NAIVE:
        grid, block = (cdiv(N, 16), cdiv(M, 16)), (16, 16)
    else:
        grid, block = (cdiv(N, 128), cdiv(M, 128)), 256
    launch(m, grid, block, {"M": M, "N": N, "K": K, "alpha": 1.5, "A": a, "B": b,
                            "beta": -0.5, "C": c})
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)


def test_histogram():
    m = module("histogram", NAIVE, "histogram_naive")
    rng = np.random.default_rng(6)
    n = 10007
    data = rng.integers(0, 256, n, dtype=np.uint8)
    bins = np.zeros(256, np.uint32)
    launch(m, cdiv(n, 256), 256, {"data": data, "bins": bins, "n": n}, threads=4)
    np.testing.assert_array_equal(bins, np.bincount(data, minlength=256))


def test_scan():
    m = module("scan", NAIVE, "scan_naive")
    rng = np.random.default_rng(7)
    n = 777
    x = rng.integers(-2**31, 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    out = np.zeros(n, np.int32)
    scratch = np.zeros(cdiv(n, 4096) + 1, np.uint64)
    launch(m, cdiv(n, 256), 256, {"in": x, "x": x, "out": out, "n": n, "scratch": scratch})
    ref = (np.cumsum(x.astype(np.int64)) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    np.testing.assert_array_equal(out, ref)
