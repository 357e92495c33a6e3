"""Shared memory footprint and type sizes."""

import os

import pytest

from kltrans.analysis.smem import shared_footprint, type_size
from kltrans.syntax import parse

KERNELS = os.path.join(os.path.dirname(__file__), "..", "data", "kernels")


def load(name):
    path = os.path.join(KERNELS, name)
    with open(path) as f:
        return parse(f.read(), path)


def fn_named(unit, name):
    return next(f for f in unit.kernels() + unit.device_functions() if f.name == name)


@pytest.mark.parametrize("ty, size", [
    ("char", 1), ("uint8_t", 1), ("unsigned char", 1), ("short", 2), ("__half", 2),
    ("__nv_bfloat16", 2), ("int", 4), ("unsigned int", 4), ("unsigned", 4), ("float", 4),
    ("half2", 4), ("__nv_bfloat162", 4), ("double", 8), ("long long", 8), ("size_t", 8),
    ("float2", 8), ("float3", 12), ("float4", 16), ("int4", 16), ("double2", 16),
    ("const float", 4), ("float*", 8), ("const __half* __restrict__", 8), ("T", None),
    ("std::size_t", 8), ("cuda::std::int64_t", 8),
])
def test_type_sizes(ty, size):
    assert type_size(None, ty) == size


def test_struct_typedef_and_alias_sizes():
    u = parse("struct __align__(16) Pair { float a, b, c, d; };\n"
              "struct Padded { char c; double d; };\n"
              "struct __align__(8) Range { float lo, hi; };\n"
              "struct Arr { float v[3]; short s; };\n"
              "typedef Pair pair_t;\nusing real = double;\n")
    assert type_size(u, "Pair") == 16
    assert type_size(u, "Padded") == 16  # padding before the double
    assert type_size(u, "Range") == 8
    assert type_size(u, "Arr") == 16  # 12 + 2, rounded up to the 4-byte alignment
    assert type_size(u, "pair_t") == 16 and type_size(u, "real") == 8
    assert type_size(u, "Unknown") is None


def test_fixture_footprints():
    u = load("transpose_tiled.cu")
    fp = shared_footprint(u, fn_named(u, "transpose_tiled"))
    assert fp.static_bytes == 32 * 33 * 4 and not fp.dynamic and fp.reason is None
    assert [(d.name, d.type, d.bytes, d.dims) for d in fp.decls] == [
        ("tile", "float", 4224, ("TILE_DIM", "TILE_DIM + 1"))]
    assert shared_footprint(u, fn_named(u, "transpose_ref")).static_bytes == 0
    u = load("histogram256.cu")  # local_bins[NUM_BINS] with #define NUM_BINS 256
    assert shared_footprint(u, fn_named(u, "histogram256")).static_bytes == 1024
    u = load("launch_bounds3.cu")  # partial[kThreads] with constexpr int kThreads = 128
    assert shared_footprint(u, fn_named(u, "row_max")).static_bytes == 512
    u = load("align_struct.cu")  # __shared__ Pair stage[128], Pair is __align__(16)
    assert shared_footprint(u, fn_named(u, "pair_reverse_block")).static_bytes == 2048
    u = load("cg_reduce.cu")
    assert shared_footprint(u, fn_named(u, "count_above")).static_bytes == 4
    assert shared_footprint(u, fn_named(u, "dot_cg")).decls == ()


def test_dynamic_shared_memory():
    u = load("softmax_rows.cu")
    fp = shared_footprint(u, fn_named(u, "softmax_rows"))
    assert fp.dynamic and fp.static_bytes == 128  # red[32] floats; smem[] is extern
    assert fp.reason == "plus dynamic shared memory sized at launch"
    smem = fp.decls[0]
    assert (smem.name, smem.extern, smem.bytes, smem.reason) == (
        "smem", True, None, "extern: sized at launch")


def test_template_parameters_need_consts():
    u = load("block_reduce.cu")  # __shared__ T warp_sums[BLOCK / 32];
    fn = fn_named(u, "block_reduce_sum")
    fp = shared_footprint(u, fn)
    assert fp.static_bytes is None
    assert fp.reason.startswith("warp_sums: unknown size of type T")
    fp = shared_footprint(u, fn, consts={"BLOCK": 256}, types={"T": "double"})
    assert fp.static_bytes == 8 * 8
    fp = shared_footprint(u, fn, consts={"sizeof(T)": 4}, types=None)
    assert fp.static_bytes is None
    assert fp.decls[0].reason == "dimension `BLOCK / 32` is not a constant (BLOCK unknown; pass consts)"
    assert shared_footprint(u, fn, consts={"sizeof(T)": 4, "BLOCK": 128}).static_bytes == 16


def test_alignment_macros_device_functions_and_file_scope():
    u = parse(
        "#define TILE 16\n"
        "#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))\n"
        "__shared__ int g_flags[4];\n"
        "__device__ void helper() { __shared__ double scratch[TILE]; scratch[0] = 0; }\n"
        "template <int N>\n"
        "__global__ void k(float* y) {\n"
        "  __shared__ __align__(16) float a[TILE][TILE + 1];\n"
        "  __shared__ alignas(16) __half b[CEIL_DIV(N, 8) * 8];\n"
        "  extern __shared__ float4 dyn[];\n"
        "  helper();\n"
        "  g_flags[0] = 1;\n"
        "}\n")
    fn = u.kernels()[0]
    fp = shared_footprint(u, fn, consts={"N": 100})
    got = {d.name: d.bytes for d in fp.decls}
    assert got == {"g_flags": 16, "scratch": 128, "a": 16 * 17 * 4, "b": 104 * 2, "dyn": None}
    assert fp.static_bytes == 16 + 128 + 1088 + 208 and fp.dynamic
    assert next(d.function for d in fp.decls if d.name == "scratch") == "helper"
    assert fp.fits(48 * 1024) is True
    assert shared_footprint(u, fn).fits(1024) is None  # N unknown
