"""Barriers: detection, what lies between two statements, divergent barriers."""

import os

from kltrans.analysis.barriers import (
    barrier_calls,
    barrier_free_between,
    barriers,
    enclosing_conditions,
    statements_between,
    under_divergent_condition,
)
from kltrans.syntax import parse

KERNELS = os.path.join(os.path.dirname(__file__), "..", "data", "kernels")


def load(name):
    path = os.path.join(KERNELS, name)
    with open(path) as f:
        return parse(f.read(), path)


def fn_named(unit, name):
    return next(f for f in unit.kernels() + unit.device_functions() if f.name == name)


def stmt(unit, text):
    """The statement whose text starts with ``text``."""
    for n in unit.walk():
        if n.type.endswith("statement") or n.type == "declaration":
            if unit.text(n).startswith(text):
                return n
    raise AssertionError(f"no statement {text!r}")


def test_kinds_and_scopes():
    u = parse(
        "namespace cg = cooperative_groups;\n"
        "__global__ void k(int* out) {\n"
        "  cg::thread_block block = cg::this_thread_block();\n"
        "  auto tile = cg::tiled_partition<32>(block);\n"
        "  auto grid = cg::this_grid();\n"
        "  __syncthreads();\n"
        "  int c = __syncthreads_count(out[threadIdx.x] > 0);\n"
        "  __syncwarp();\n"
        "  block.sync();\n"
        "  tile.sync();\n"
        "  grid.sync();\n"
        "  cg::sync(block);\n"
        "  asm volatile(\"bar.sync 0;\");\n"
        "  __syncthreads_or(c);\n"
        "}\n")
    got = [(b.kind, b.scope, b.line) for b in barriers(u, u.kernels()[0])]
    assert got == [
        ("__syncthreads", "block", 6), ("__syncthreads_count", "block", 7),
        ("__syncwarp", "warp", 8), ("cg.sync", "block", 9), ("cg.sync", "warp", 10),
        ("cg.sync", "grid", 11), ("cg.sync", "block", 12), ("asm.bar", "block", 13),
        ("__syncthreads_or", "block", 14)]


def test_barriers_in_fixtures():
    u = load("histogram256.cu")
    bs = barriers(u, fn_named(u, "histogram256"))
    assert [(b.kind, b.line) for b in bs] == [("__syncthreads", 15), ("__syncthreads", 35)]
    assert bs[0].statement.type == "expression_statement"
    u = load("cg_reduce.cu")
    assert [(b.kind, b.scope) for b in barriers(u, fn_named(u, "count_above"))] == [
        ("cg.sync", "block"), ("cg.sync", "block")]
    assert barriers(u, fn_named(u, "dot_cg")) == []


def test_calls_to_synchronizing_device_functions():
    u = load("softmax_rows.cu")
    fn = fn_named(u, "softmax_rows")
    assert barriers(u, fn) == []  # none directly in the kernel ...
    calls = barrier_calls(u, fn)  # ... but block_allreduce synchronizes
    assert [why for _, why in calls] == ["block_allreduce() holds __syncthreads() at line 34"] * 2


def test_statements_between():
    u = load("histogram256.cu")
    fn = fn_named(u, "histogram256")
    first, second = barriers(u, fn)
    between = statements_between(u, first, second)
    assert [u.text(s).split("\n")[0] for s in between] == [
        "const uint32_t* words = reinterpret_cast<const uint32_t*>(data);",
        "const size_t n_words = n / 4;",
        "for (size_t w = blockIdx.x * (size_t)blockDim.x + threadIdx.x; w < n_words;",
        "if (blockIdx.x == 0) {"]
    assert [s.type for s in statements_between(u, None, first)] == ["declaration", "for_statement"]
    assert [s.type for s in statements_between(u, second, None)] == ["for_statement"]
    assert statements_between(u, None, None) == []


def test_barrier_free_between_straight_line():
    u = load("transpose_tiled.cu")
    a = stmt(u, "int x = blockIdx.x")
    b = stmt(u, "int y = blockIdx.y")
    v = barrier_free_between(u, a, b)
    assert v.holds and v.reason == "no barrier between lines 13 and 14"
    store = stmt(u, "tile[threadIdx.y + j][threadIdx.x] = in")
    load_ = stmt(u, "out[(size_t)(y + j) * rows + x] = tile")
    v = barrier_free_between(u, store, load_)
    assert v.fails and v.reason == "__syncthreads() at line 22 lies between lines 19 and 30"
    # the order of the arguments does not matter
    assert barrier_free_between(u, load_, store).fails


def test_barrier_free_between_sees_into_device_functions_and_loops():
    u = load("softmax_rows.cu")
    a = stmt(u, "smem[c] = v;")
    b = stmt(u, "float e = __expf")
    v = barrier_free_between(u, a, b)
    assert v.fails and "block_allreduce() at line 57 synchronizes" in v.reason
    u = parse("__global__ void k(float* y) {\n"
              "  y[0] = 1;\n"
              "  for (int i = 0; i < 4; ++i) { y[i] += 1; __syncthreads(); y[i + 1] = 2; }\n"
              "}\n")
    v = barrier_free_between(u, stmt(u, "y[i + 1] = 2"), stmt(u, "y[0] = 1"))
    assert v.fails  # the loop around one of them goes round again through the barrier


def test_barrier_free_between_unknown_call():
    u = parse("__device__ void helper(float*);\n"
              "template <typename F> __global__ void k(float* y, F f) {\n"
              "  y[0] = 1;\n  f(y);\n  y[1] = expf(y[0]);\n  y[2] = 3;\n}\n")
    v = barrier_free_between(u, stmt(u, "y[0] = 1"), stmt(u, "y[2] = 3"))
    assert v.status == "unknown" and v.reason == "the call `f(y)` at line 4 may synchronize"
    assert barrier_free_between(u, stmt(u, "y[1] ="), stmt(u, "y[2] = 3")).holds


def test_divergent_barriers():
    u = parse(
        "__global__ void k(float* y, int n) {\n"
        "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (blockIdx.x > 0) { __syncthreads(); }\n"
        "  if (threadIdx.x < 32) { __syncthreads(); }\n"
        "  for (int c = threadIdx.x; c < n; c += blockDim.x) { __syncthreads(); }\n"
        "  if (y[i] > 0.0f) __syncthreads();\n"
        "  if (i >= n) return;\n"
        "  __syncthreads();\n"
        "}\n")
    bs = barriers(u, u.kernels()[0])
    verdicts = [under_divergent_condition(u, b) for b in bs]
    assert [v.status for v in verdicts] == ["fails", "holds", "holds", "holds", "holds"]
    assert verdicts[0].reason == "every condition around __syncthreads() is uniform across the block"
    assert verdicts[1].reason == ("__syncthreads() is under `threadIdx.x < 32` (line 4), which "
                                  "depends on threadIdx.x: threads that skip it never arrive")
    assert "the loop condition `c < n`" in verdicts[2].reason
    assert "`y[i] > 0.0f`" in verdicts[3].reason
    assert "the guard of an earlier exit `i >= n` (line 7)" in verdicts[4].reason


def test_divergence_in_fixtures():
    u = load("launch_bounds3.cu")
    fn = fn_named(u, "row_max")
    v = [under_divergent_condition(u, b) for b in barriers(u, fn)]
    assert v[0].fails and v[0].reason == "__syncthreads() is not under any condition"
    # inside the halving loop: `s > 0` is uniform, and the `if (tid < s)` does not enclose it
    assert v[1].fails and "uniform across the block" in v[1].reason
    u = load("cg_reduce.cu")
    assert all(under_divergent_condition(u, b).fails
               for b in barriers(u, fn_named(u, "count_above")))


def test_divergence_in_device_function_depends_on_caller():
    u = parse("__device__ void f(float* s, int k) {\n"
              "  if (k > 0) __syncthreads();\n"
              "  if (threadIdx.x == 0) __syncwarp();\n"
              "}\n")
    bs = barriers(u, u.device_functions()[0])
    v = under_divergent_condition(u, bs[0])
    assert v.status == "unknown" and "decided by the caller" in v.reason
    v = under_divergent_condition(u, bs[1])  # a warp barrier: warp uniformity decides
    assert v.holds and "not warp-uniform" in v.reason


def test_enclosing_conditions():
    u = load("pragma_unbraced_for.cu")
    fn = fn_named(u, "masked_row_dot8")
    node = stmt(u, "acc += w[r * 8 + k] * x[k];")
    conds = enclosing_conditions(u, node)
    assert [(u.text(c), how) for c, how in conds] == [
        ("(r >= rows)", "exit"), ("(mask[r])", "if"), ("k < 8", "loop")]
