"""CUDA features on the CPU emulator: atomics, cooperative groups, half/bf16, vector
types, templates, dynamic shared memory, headers, structs, constant memory, crashes."""

import os
import shutil

import numpy as np
import pytest

from kltrans.syntax import load, parse

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS = os.path.join(ROOT, "tests", "data", "kernels")


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    root = tmp_path_factory.getbasetemp() / "kltrans-cpu-cache"
    mp.setenv("KLTRANS_CACHE_DIR", str(root))
    yield root
    mp.undo()


def build(src, kernel, name_expression=None, path="k.cu", **kw):
    from kltrans.gate.cpu import build as _build

    return _build(parse(src, path), kernel, name_expression, **kw)


def build_file(name, kernel, name_expression=None):
    from kltrans.gate.cpu import build as _build

    return _build(load(os.path.join(KERNELS, name))[0], kernel, name_expression)


def cdiv(a, b):
    return (a + b - 1) // b


# ------------------------------------------------------------------------- atomics
ATOMICS = r"""
__global__ void atomics(int* i32, unsigned* u32, unsigned long long* u64, float* f32,
                        double* f64, unsigned* wrap, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(&i32[0], 1);
    atomicSub(&i32[1], 2);
    atomicMax(&i32[2], i);
    atomicMin(&i32[3], -i);
    atomicOr(&u32[0], 1u << (i % 32));
    atomicXor(&u32[1], (unsigned)i);
    atomicAnd(&u32[2], ~(1u << (i % 17)));
    atomicAdd(&u64[0], (unsigned long long)i * 1000003ull);
    int old = atomicCAS(&i32[4], i32[4], 0);   // a CAS whose result is unused but legal
    (void)old;
    // a CAS loop: integer multiply-accumulate modulo 2^32
    unsigned prev = u32[3], seen;
    do { seen = prev; prev = atomicCAS(&u32[3], seen, seen * 3u + 1u); } while (prev != seen);
    atomicInc(&wrap[0], 9u);
    atomicAdd(&f32[0], 0.5f);
    atomicAdd(&f64[0], 0.25);
    atomicExch(&i32[5], 7);
}
"""


@pytest.mark.parametrize("threads", [1, 4])
def test_atomics_exact_across_os_threads(threads):
    m = build(ATOMICS, "atomics")
    n = 97 * 128 - 3
    i32 = np.array([0, 0, -1, 1, 0, 0], np.int32)
    u32 = np.array([0, 0, 0xFFFFFFFF, 1], np.uint32)
    u64 = np.zeros(1, np.uint64)
    f32 = np.zeros(1, np.float32)
    f64 = np.zeros(1, np.float64)
    wrap = np.zeros(1, np.uint32)
    stats = m.launch(97, 128, 0, [i32, u32, u64, f32, f64, wrap, n], threads=threads, seed=4)
    assert stats["threads"] == threads
    assert i32[0] == n and i32[1] == -2 * n and i32[2] == n - 1 and i32[3] == -(n - 1)
    assert i32[5] == 7
    assert u32[0] == 0xFFFFFFFF
    assert u32[1] == np.bitwise_xor.reduce(np.arange(n, dtype=np.uint32))
    expect_and = 0xFFFFFFFF
    for k in range(min(n, 17)):
        expect_and &= ~(1 << k) & 0xFFFFFFFF
    assert u32[2] == expect_and
    acc = 1
    for _ in range(n):
        acc = (acc * 3 + 1) & 0xFFFFFFFF
    assert u32[3] == acc
    assert int(u64[0]) == sum(range(n)) * 1000003
    assert wrap[0] == n % 10
    assert f32[0] == pytest.approx(0.5 * n, rel=1e-6)
    assert f64[0] == 0.25 * n


# ------------------------------------------------------------ cooperative groups
def test_cooperative_groups_reduce_and_tiles():
    from kltrans.gate.cpu import build as _build

    unit = load(os.path.join(KERNELS, "cg_reduce.cu"))[0]
    dot = _build(unit, "dot_cg")
    rng = np.random.default_rng(21)
    n = 5000
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    res = np.zeros(1, np.float32)
    dot.launch(8, 256, 0, [a, b, res, n])  # grid-stride loop covers the rest
    assert res[0] == pytest.approx(float(a.astype(np.float64) @ b), rel=1e-4, abs=1e-3)

    count = _build(unit, "count_above")
    x = rng.standard_normal(n).astype(np.float32)
    c = np.zeros(1, np.uint64)
    count.launch(cdiv(n, 512), 512, 0, [x, 0.3, c, n])
    assert int(c[0]) == int((x > np.float32(0.3)).sum())


def test_cooperative_groups_api():
    src = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

__global__ void cg_api(const int* in, int* out)
{
    cg::thread_block block = cg::this_thread_block();
    auto t16 = cg::tiled_partition<16>(block);
    auto t32 = cg::tiled_partition<32>(block);
    const int r = block.thread_rank();
    const int v = in[r];
    int* o = out + r * 8;
    o[0] = cg::reduce(t16, v, cg::plus<int>());
    o[1] = cg::reduce(t32, v, cg::greater<int>());
    o[2] = cg::reduce(t32, v, cg::less<int>());
    o[3] = t16.shfl_down(v, 1);
    o[4] = t16.thread_rank() + 100 * t16.meta_group_rank();
    o[5] = cg::inclusive_scan(t32, v);
    o[6] = (int)t16.ballot(v > 10);
    block.sync();
    o[7] = (int)block.size() + t32.any(v == 3);
}
"""
    m = build(src, "cg_api")
    rng = np.random.default_rng(22)
    v = rng.integers(0, 20, 64).astype(np.int32)
    out = np.zeros((64, 8), np.int32)
    m.launch(1, 64, 0, [v, out])
    for r in range(64):
        s16 = v[r - r % 16: r - r % 16 + 16]
        s32 = v[r - r % 32: r - r % 32 + 32]
        assert out[r, 0] == s16.sum()
        assert out[r, 1] == s32.max() and out[r, 2] == s32.min()
        assert out[r, 3] == (v[r + 1] if r % 16 < 15 else v[r])
        assert out[r, 4] == r % 16 + 100 * (r // 16)
        assert out[r, 5] == s32[:r % 32 + 1].sum()
        assert out[r, 6] == sum(1 << k for k in range(16) if s16[k] > 10)
        assert out[r, 7] == 64 + int((s32 == 3).any())


# ------------------------------------------------------------------ half / bf16
CONVERT = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void convert(const float* x, const double* d, unsigned short* h, unsigned short* b,
                        float* back, unsigned short* hd, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half hv = __float2half(x[i]);
    __nv_bfloat16 bv = __float2bfloat16(x[i]);
    h[i] = __half_as_ushort(hv);
    b[i] = __bfloat16_as_ushort(bv);
    back[2 * i] = __half2float(hv);
    back[2 * i + 1] = __bfloat162float(bv);
    hd[i] = __half_as_ushort(__double2half(d[i]));
}
"""


def _bf16_ref(x):
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FFF), r)


def test_half_and_bf16_conversions_are_bit_exact():
    m = build(CONVERT, "convert")
    rng = np.random.default_rng(23)
    # every half value and the midpoints between neighbours (ties), subnormals, overflow
    hv = np.arange(0, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float32)
    mids = (hv[:-1].astype(np.float64) + hv[1:]) / 2
    special = np.array([0.0, -0.0, 65504.0, 65519.99, 65520.0, 1e6, -1e6, 2.0**-24, 2.0**-25,
                        2.0**-25 * 1.0001, 2.0**-26, 1e-10, np.inf, -np.inf, 1.0 + 2.0**-11,
                        1.0 + 3 * 2.0**-11], np.float64)
    pool = np.concatenate([hv, mids.astype(np.float32), -mids.astype(np.float32)[::7],
                           special.astype(np.float32),
                           (rng.standard_normal(20000) * 10.0 ** rng.integers(-8, 8, 20000))
                           .astype(np.float32),
                           rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
                           .view(np.float32)])
    pool = pool[~np.isnan(pool)]
    x = np.concatenate([pool, np.array([np.nan], np.float32)])
    n = x.size
    d = np.concatenate([mids, special, rng.standard_normal(1000) * 1e3])
    d = np.resize(d, n)
    # double midpoints rounded through float would double-round: the direct path must not
    h = np.zeros(n, np.uint16)
    b = np.zeros(n, np.uint16)
    back = np.zeros(2 * n, np.float32)
    hd = np.zeros(n, np.uint16)
    m.launch(cdiv(n, 256), 256, 0, [x, d, h, b, back, hd, n], threads=2)
    with np.errstate(over="ignore"):
        ref_h = x.astype(np.float16).view(np.uint16)
        ref_back = x.astype(np.float16).astype(np.float32)
        ref_hd = d.astype(np.float16).view(np.uint16)
    finite = ~np.isnan(x)
    np.testing.assert_array_equal(h[finite], ref_h[finite])
    assert h[-1] == 0x7FFF  # CUDA's canonical NaN
    np.testing.assert_array_equal(b, _bf16_ref(x))
    np.testing.assert_array_equal(back[0::2][finite], ref_back[finite])
    np.testing.assert_array_equal(back[1::2], (_bf16_ref(x).astype(np.uint32) << 16).view(np.float32))
    np.testing.assert_array_equal(hd, ref_hd)


def test_half_arithmetic_and_rounding_modes():
    src = r"""
#include <cuda_fp16.h>
__global__ void harith(const __half* a, const __half* b, __half* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[4 * i] = __hadd(a[i], b[i]);
    out[4 * i + 1] = a[i] * b[i];
    out[4 * i + 2] = __hsub(a[i], b[i]);
    __half2 p = __halves2half2(a[i], b[i]);
    __half2 q = __hmul2(p, p);
    out[4 * i + 3] = __high2half(q);
}
__global__ void modes(const float* x, unsigned short* out)
{
    const int i = threadIdx.x;
    out[4 * i] = __half_as_ushort(__float2half_rn(x[i]));
    out[4 * i + 1] = __half_as_ushort(__float2half_rz(x[i]));
    out[4 * i + 2] = __half_as_ushort(__float2half_rd(x[i]));
    out[4 * i + 3] = __half_as_ushort(__float2half_ru(x[i]));
}
"""
    m = build(src, "harith")
    rng = np.random.default_rng(24)
    n = 4000
    a = (rng.standard_normal(n) * 100).astype(np.float16)
    b = (rng.standard_normal(n) * 0.01).astype(np.float16)
    out = np.zeros(4 * n, np.float16)
    m.launch(cdiv(n, 128), 128, 0, [a, b, out, n])
    np.testing.assert_array_equal(out[0::4].view(np.uint16), (a + b).view(np.uint16))
    np.testing.assert_array_equal(out[1::4].view(np.uint16), (a * b).view(np.uint16))
    np.testing.assert_array_equal(out[2::4].view(np.uint16), (a - b).view(np.uint16))
    np.testing.assert_array_equal(out[3::4].view(np.uint16), (b * b).view(np.uint16))

    mm = build(src, "modes")
    one_ulp = 2.0 ** -10
    x = np.array([1.0 + one_ulp / 3, -(1.0 + one_ulp / 3), 1.0 + one_ulp / 2, 70000.0, -70000.0,
                  2.0 ** -26, -(2.0 ** -26), 0.0], np.float32)
    res = np.zeros(4 * x.size, np.uint16)
    mm.launch(1, x.size, 0, [x, res])
    res = res.reshape(-1, 4)
    assert list(res[0]) == [0x3C00, 0x3C00, 0x3C00, 0x3C01]
    assert list(res[1]) == [0xBC00, 0xBC00, 0xBC01, 0xBC00]
    assert list(res[2]) == [0x3C00, 0x3C00, 0x3C00, 0x3C01]  # a tie rounds to even
    assert list(res[3]) == [0x7C00, 0x7BFF, 0x7BFF, 0x7C00]
    assert list(res[4]) == [0xFC00, 0xFBFF, 0xFC00, 0xFBFF]
    assert list(res[5]) == [0x0000, 0x0000, 0x0000, 0x0001]
    assert list(res[6]) == [0x8000, 0x8000, 0x8001, 0x8000]


# ------------------------------------------------------------------ vector types
def test_vector_types_float4_loads():
    from kltrans.gate.cpu import build as _build

    unit = load(os.path.join(KERNELS, "mixed_precision.cu"))[0]
    m = _build(unit, "f32_to_f16_vec4")
    rng = np.random.default_rng(25)
    n4 = 301
    x = rng.standard_normal(4 * n4).astype(np.float32)
    out = np.zeros(4 * n4, np.float16)
    m.launch(cdiv(n4, 64), 64, 0, [x, out, n4])
    np.testing.assert_array_equal(out.view(np.uint16), x.astype(np.float16).view(np.uint16))

    m2 = _build(unit, "bf16x4_to_f32x4")
    bits = rng.integers(0, 2**16, 4 * n4).astype(np.uint16)
    bits[(bits & 0x7F80) == 0x7F80] = 0x3F80  # no inf/nan
    out2 = np.zeros(4 * n4, np.float32)
    m2.launch(cdiv(n4, 64), 64, 0, [bits, out2, n4])
    np.testing.assert_array_equal(out2, (bits.astype(np.uint32) << 16).view(np.float32))

    src = r"""
__global__ void vec(const float4* in, int4* out, double2* d)
{
    static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4");
    static_assert(sizeof(float2) == 8 && alignof(float2) == 8, "float2");
    static_assert(sizeof(float3) == 12 && alignof(float3) == 4, "float3");
    static_assert(alignof(double2) == 16 && alignof(int2) == 8 && alignof(uint4) == 16, "align");
    static_assert(sizeof(char4) == 4 && alignof(char4) == 4 && alignof(short2) == 4, "small");
    static_assert(alignof(longlong2) == 16 && sizeof(uchar4) == 4, "more");
    const int i = threadIdx.x;
    float4 v = in[i];
    out[i] = make_int4((int)v.w, (int)v.z, (int)v.y, (int)v.x);
    d[i] = make_double2(v.x + v.y, v.z * v.w);
    dim3 g = gridDim;
    uint3 t = threadIdx;
    if (g.y != 1 || t.x != (unsigned)i) out[i].x = -1;
}
"""
    mv = build(src, "vec")
    v = np.arange(32 * 4, dtype=np.float32).reshape(32, 4)
    o = np.zeros((32, 4), np.int32)
    dd = np.zeros((32, 2), np.float64)
    mv.launch(1, 32, 0, [v, o, dd])
    np.testing.assert_array_equal(o, v[:, ::-1].astype(np.int32))
    np.testing.assert_array_equal(dd[:, 0], v[:, 0] + v[:, 1])


# ---------------------------------------------------------------- templates, smem
@pytest.mark.parametrize("expr,dtype,block,items", [
    ("block_reduce_sum<float, 256, 4>", np.float32, 256, 4),
    ("block_reduce_sum<double, 256, 4>", np.float64, 256, 4),
    ("block_reduce_sum<float, 128>", np.float32, 128, 4),
])
def test_templates_by_name_expression(expr, dtype, block, items):
    m = build_file("block_reduce.cu", "block_reduce_sum", expr)
    assert m.name_expression == expr
    rng = np.random.default_rng(26)
    n = 9000
    x = rng.random(n).astype(dtype)
    grid = cdiv(n, block * items)
    partial = np.full(grid, np.nan, dtype)
    m.launch(grid, block, 0, [x, partial, n])
    ref = np.pad(x.astype(np.float64), (0, grid * block * items - n)).reshape(grid, -1).sum(1)
    np.testing.assert_allclose(partial, ref, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_template_without_name_expression_is_an_error():
    from kltrans.gate.cpu import EmulationError

    with pytest.raises(EmulationError) as ei:
        build_file("block_reduce.cu", "block_reduce_sum")
    assert ei.value.kind == "compile" and "name expression" in ei.value.message


def test_dynamic_shared_memory_sized_by_the_launch():
    m = build_file("softmax_rows.cu", "softmax_rows")
    rng = np.random.default_rng(27)
    rows, cols = 5, 777
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    y = np.zeros_like(x)
    m.launch(rows, 256, cols * 4, [x, y, cols])
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-8)

    src = r"""
__global__ void dyn(float* out, int n)
{
    extern __shared__ float buf[];
    extern __shared__ __align__(16) unsigned char raw[];
    for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = (float)(i + blockIdx.x);
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int i = 0; i < n; ++i) s += buf[i];
        out[blockIdx.x * 3] = s;
        out[blockIdx.x * 3 + 1] = (float)(((const float*)raw) == buf);
        out[blockIdx.x * 3 + 2] = buf[n];   // never written: poisoned (NaN)
    }
}
"""
    md = build(src, "dyn")
    n = 1000
    out = np.zeros(3 * 4, np.float32)
    md.launch(4, 64, (n + 1) * 4, [out, n])
    for bidx in range(4):
        assert out[3 * bidx] == sum(range(n)) + n * bidx
        assert out[3 * bidx + 1] == 1.0
        assert np.isnan(out[3 * bidx + 2])


def test_transpose_tiled_shared_2d():
    m = build_file("transpose_tiled.cu", "transpose_tiled")
    rows, cols = 37, 53
    x = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    out = np.zeros((cols, rows), np.float32)
    m.launch((cdiv(cols, 32), cdiv(rows, 32)), (32, 8), 0, [out, x, rows, cols])
    np.testing.assert_array_equal(out, x.T)


def test_local_header_kernel_and_struct_by_value():
    from kltrans.gate.cpu import build as _build

    unit = parse('#include "helpers.cuh"\n', "uses_helpers.cu")
    m = _build(unit, "kl::row_sum<float, 4>", include_dirs=[KERNELS])
    rows, cols = 9, 70
    x = np.random.default_rng(28).random((rows, cols)).astype(np.float32)
    out = np.zeros(rows, np.float32)
    m.launch(cdiv(rows, 4), 128, 0, [x, out, rows, cols])
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-5)

    g = build_file("gather_scatter.cu", "gather_rows")
    params = np.array([(3, 40, 2.0, 50)], dtype=[("rows", "<i4"), ("cols", "<i4"),
                                                ("scale", "<f4"), ("src_stride", "<i4")])
    src = np.random.default_rng(29).random((6, 50)).astype(np.float32)
    idx = np.array([5, -2, 9], np.int32)
    dst = np.zeros((3, 40), np.float32)
    clamped = np.zeros(1, np.int32)
    g.launch((1, 3), 128, 0, [params, idx, src, dst, 6, clamped])
    np.testing.assert_array_equal(dst, 2.0 * src[[5, 0, 5], :40])
    assert clamped[0] == 2


def test_constant_memory_symbol():
    src = r"""
__constant__ float coeff[4];
__device__ int calls;
__global__ void poly(const float* x, float* y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = ((coeff[3] * x[i] + coeff[2]) * x[i] + coeff[1]) * x[i] + coeff[0];
        atomicAdd(&calls, 1);
    }
}
"""
    m = build(src, "poly")
    assert set(m.symbols) == {"coeff", "calls"}
    m.set_symbol("coeff", np.array([1, 2, 3, 4], np.float32))
    m.set_symbol("calls", np.zeros(1, np.int32))
    x = np.linspace(-1, 1, 100).astype(np.float32)
    y = np.zeros_like(x)
    m.launch(1, 128, 0, [x, y, 100])
    np.testing.assert_allclose(y, ((4 * x + 3) * x + 2) * x + 1, rtol=1e-6)
    assert np.frombuffer(m.symbol("calls"), np.int32)[0] == 100


# ------------------------------------------------------------------- failures
def test_crash_is_reported_and_the_process_survives():
    from kltrans.gate.cpu import EmulationError

    src = r"""
__global__ void bad(int* p, int depth)
{
    int* q = (int*)0x10;
    if (threadIdx.x == 3) q[0] = 1;   // null-ish write
    p[threadIdx.x] = depth;
}
__device__ int recurse(int d) { volatile char pad[512]; pad[0] = (char)d; return d ? recurse(d - 1) + pad[0] : 0; }
__global__ void deep(int* p, int depth) { p[threadIdx.x] = recurse(depth); }
"""
    m = build(src, "bad", path="crash.cu")
    with pytest.raises(EmulationError) as ei:
        m.launch(2, 32, 0, [np.zeros(32, np.int32), 1])
    assert ei.value.kind == "crash" and "SIGSEGV" in ei.value.message
    assert ei.value.line == 5 and ei.value.path == "crash.cu"
    d = build(src, "deep", path="crash.cu")
    with pytest.raises(EmulationError) as ei:
        d.launch(1, 32, 0, [np.zeros(32, np.int32), 1_000_000])
    assert ei.value.kind == "crash" and "stack overflow" in ei.value.message
    out = np.zeros(32, np.int32)
    d.launch(1, 32, 0, [out, 10])  # still usable
    assert (out == 55).all()


def test_assert_and_trap():
    from kltrans.gate.cpu import EmulationError

    src = r"""
#include <cassert>
__global__ void checks(const int* x)
{
    assert(x[threadIdx.x] >= 0);
}
"""
    m = build(src, "checks", path="assert.cu")
    m.launch(1, 8, 0, [np.arange(8, dtype=np.int32)])
    with pytest.raises(EmulationError) as ei:
        m.launch(1, 8, 0, [np.arange(8, dtype=np.int32) - 3])
    assert ei.value.kind == "crash" and "assert" in ei.value.message and ei.value.line == 5


def test_bad_arguments_are_rejected():
    from kltrans.gate.cpu import EmulationError

    m = build("__global__ void k(float* x, int n, unsigned char c) { }", "k")
    assert m.params == ["p", "i4", "u1"]
    with pytest.raises(EmulationError, match="takes 3 arguments"):
        m.launch(1, 1, 0, [np.zeros(1, np.float32), 1])
    with pytest.raises(EmulationError, match="does not fit"):
        m.launch(1, 1, 0, [np.zeros(1, np.float32), 1, 300])
    with pytest.raises(EmulationError) as ei:
        m.launch(1, 2048, 0, [np.zeros(1, np.float32), 1, 3])
    assert ei.value.kind == "invalid"
