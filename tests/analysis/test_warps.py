"""Warp uniformity of conditions, and warp primitives with their conditions."""

import os

import pytest

from kltrans.analysis.warps import warp_primitives, warp_uniform
from kltrans.syntax import parse

KERNELS = os.path.join(os.path.dirname(__file__), "..", "data", "kernels")

PRELUDE = """
#define WARP 32
__global__ void k(float* y, int n, int m) {
  const int tid = threadIdx.x;
  const int lane = threadIdx.x & 31;
  const int lane2 = tid % warpSize;
  const int warp = threadIdx.x >> 5;
  const int wid = tid / WARP;
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
"""


def load(name):
    path = os.path.join(KERNELS, name)
    with open(path) as f:
        return parse(f.read(), path)


def fn_named(unit, name):
    return next(f for f in unit.kernels() + unit.device_functions() if f.name == name)


def verdict(cond, extra="", env=None):
    u = parse(PRELUDE + extra + f"  if ({cond}) y[0] = 1;\n}}\n")
    node = [n for n in u.walk() if n.type == "if_statement"][-1].child_by_field_name("condition")
    return warp_uniform(u, node, env=env)


@pytest.mark.parametrize("cond", [
    "n > 0", "blockIdx.x == 3", "threadIdx.x < 64", "tid <= 31", "tid >= 32 * m", "warp == 0",
    "wid < m", "tid / warpSize == 1 && n > 3", "(threadIdx.x & ~31) == 64", "lane2 < 32",
    "threadIdx.x % 64 < 32", "!(warp > 2)",
])
def test_uniform_conditions(cond):
    v = verdict(cond)
    assert v.holds, v


@pytest.mark.parametrize("cond, why", [
    ("threadIdx.x < 16", "`threadIdx.x < 16` splits a warp: 16 is not a multiple of 32"),
    ("threadIdx.x % 32 == 0", "`threadIdx.x % 32 == 0` depends on the lane (lane 0 and lane 1 differ)"),
    ("lane == 0", "`lane == 0` depends on the lane (lane 0 and lane 1 differ)"),
    ("tid == 0", "`tid == 0` singles out individual threads of a warp"),
    ("lane < 16 && n > 0", "`lane < 16` depends on the lane (lane 0 and lane 16 differ)"),
    ("(tid & 15) == 3", "`(tid & 15) == 3` depends on the lane (lane 0 and lane 3 differ)"),
])
def test_lane_dependent_conditions_fail(cond, why):
    v = verdict(cond)
    assert v.fails and v.reason == why


def test_size_dependent_conditions_are_unknown():
    v = verdict("gid < n")
    assert v.status == "unknown"
    assert v.reason == ("`gid < n` is uniform per warp only when -blockDim.x*blockIdx.x + n is "
                        "a multiple of 32")
    v = verdict("tid < n")
    assert v.status == "unknown" and v.reason.endswith("only when n is a multiple of 32")
    v = verdict("y[gid] > 0.0f")
    assert v.status == "unknown" and "per-thread values" in v.reason
    v = verdict("threadIdx.y == 0")
    assert v.status == "unknown" and "blockDim.x is a multiple of 32" in v.reason
    assert verdict("threadIdx.y == 0", env={"blockDim.x": 64}).holds


def test_env_makes_sizes_known():
    v = verdict("gid < n", env={"blockDim.x": 256, "n": 4096})
    assert v.holds
    v = verdict("gid < n", env={"blockDim.x": 256, "n": 1000})
    assert v.fails and "not a multiple of 32" in v.reason


def test_loop_counters_are_enumerated():
    v = verdict("tid < s", extra="  for (int s = 128; s > 0; s >>= 1)\n")
    assert v.fails and v.reason == "`tid < s` splits a warp when s = 16"
    v = verdict("tid < s", extra="  for (int s = 256; s >= 32; s /= 2)\n")
    assert v.holds and "(256, 128, 64, 32)" in v.reason


def test_device_function_parameters_are_up_to_the_caller():
    u = parse("__device__ void f(float* y, int k) { if (k > 2) y[0] = 1; }\n")
    cond = next(n for n in u.walk() if n.type == "condition_clause")
    v = warp_uniform(u, cond)
    assert v.status == "unknown" and "caller" in v.reason


def test_primitives_in_fixtures():
    u = load("block_reduce.cu")
    [p] = warp_primitives(u, fn_named(u, "warp_reduce_sum"))
    assert (p.name, p.mask, p.line) == ("__shfl_down_sync", "0xffffffffu", 9)
    assert [u.text(c) for c in p.conditions] == ["offset > 0"]
    assert p.uniform.holds
    u = load("softmax_rows.cu")
    assert [(p.name, p.uniform.status) for p in warp_primitives(u, fn_named(u, "warp_max"))] == [
        ("__shfl_xor_sync", "holds")]
    u = load("cg_reduce.cu")
    [p] = warp_primitives(u, fn_named(u, "tile_sum"))
    assert (p.name, p.mask, p.uniform.status) == ("tile.shfl_down", None, "holds")
    [p] = warp_primitives(u, fn_named(u, "count_above"))
    assert p.name == "cg::reduce" and p.conditions == ()
    assert p.uniform.reason == "not under any condition in count_above"
    u = load("helpers.cuh")
    [p] = warp_primitives(u, fn_named(u, "warp_sum"))  # o = KL_WARP_SIZE / 2 ...
    assert p.uniform.holds


def test_primitives_under_divergent_conditions():
    u = parse(
        "__global__ void k(float* y, int n) {\n"
        "  float v = y[threadIdx.x];\n"
        "  unsigned b = __ballot_sync(0xffffffff, v > 0);\n"
        "  if (threadIdx.x < 16) v += __shfl_down_sync(0xffffffff, v, 1);\n"
        "  if (threadIdx.x >= 64) { __syncwarp(); v = __shfl(v, 0); }\n"
        "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i >= n) return;\n"
        "  v += __shfl_xor_sync(0xffffffff, v, 1);\n"
        "}\n")
    got = [(p.name, p.mask, p.line, p.uniform.status) for p in warp_primitives(u, u.kernels()[0])]
    assert got == [
        ("__ballot_sync", "0xffffffff", 3, "holds"),
        ("__shfl_down_sync", "0xffffffff", 4, "fails"),
        ("__syncwarp", None, 5, "holds"),
        ("__shfl", None, 5, "holds"),
        ("__shfl_xor_sync", "0xffffffff", 8, "unknown"),
    ]
    prims = warp_primitives(u, u.kernels()[0])
    assert prims[1].uniform.reason == ("under a divergent condition at line 4: `threadIdx.x < 16` "
                                       "splits a warp: 16 is not a multiple of 32")
    assert prims[4].uniform.reason.startswith("condition at line 7: `i >= n` is uniform per warp "
                                              "only when")
