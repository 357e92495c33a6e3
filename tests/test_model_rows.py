"""The row model (kltrans.model.rows): which group shares a row and how it folds, in
several spellings; the thread-per-row reading; and the grid and block machines it is
checked with (every block's stores kept, a returning thread done)."""

from __future__ import annotations

import os

from kltrans.model.grid import grid_run
from kltrans.model.rows import shared_rows, thread_rows
from kltrans.syntax import parse

HERE = os.path.dirname(os.path.abspath(__file__))
WILD = os.path.join(HERE, os.pardir, "corpus", "wild")

WARP_CG = """// kltrans: launch k grid=ceil_div(rows, 4) block=128
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void k(const float* x, float* y, int rows, int cols) {
    auto t = cg::tiled_partition<32>(cg::this_thread_block());
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (r >= rows) return;
    float s = 0.0f;
    for (int c = t.thread_rank(); c < cols; c += 32) s += x[r * cols + c];
    s = cg::reduce(t, s, cg::plus<float>());
    if (t.thread_rank() == 0) y[r] = s;
}
"""

BLOCK_SLOTS = """// kltrans: launch k grid=rows block=128
__global__ void k(const float* x, float* y, int rows, int cols) {
    __shared__ float part[4];
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += x[blockIdx.x * cols + c];
    for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = s;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < 4; ++w) total += part[w];
    y[blockIdx.x] = total;
}
"""


def _kernel(src):
    unit = parse(src, "k.cu")
    return unit, unit.kernels()[0]


def test_a_tile_per_row_folded_by_cg_reduce():
    unit, fn = _kernel(WARP_CG)
    r = shared_rows(unit, fn)
    assert r.scope == "warp" and r.item == "r" and r.guard is not None
    assert [unit.text(f.value) for f in r.folds] == ["s"]
    assert [unit.text(t) for _, t in r.leaders] == ["t.thread_rank() == 0"]


def test_a_block_per_row_with_warp_slots_summed_by_every_thread():
    unit, fn = _kernel(BLOCK_SLOTS)
    r = shared_rows(unit, fn)
    assert r.scope == "block" and r.item is None  # blockIdx.x read directly
    (x,) = [x for x in r.exchanges if x.values]
    assert [(a, unit.text(v)) for a, v in x.values] == [("part", "s")]
    assert x.outputs == (("total", "float", "part"),)  # declared in the exchange


def test_refused_readings_say_why():
    # ok: a thread per row shares nothing
    unit, fn = _kernel(WARP_CG.replace("(blockIdx.x * blockDim.x + threadIdx.x) / 32",
                                       "blockIdx.x * blockDim.x + threadIdx.x")
                       .replace("c = t.thread_rank(); c < cols; c += 32", "c = 0; c < cols; ++c")
                       .replace("s = cg::reduce(t, s, cg::plus<float>());", ""))
    assert "no loop strides" in shared_rows(unit, fn)
    # ok: the row is staged in shared memory inside the strided loop (another mechanism)
    unit, fn = _kernel(BLOCK_SLOTS.replace("s += x[blockIdx.x * cols + c];",
                                           "{ part[c % 4] = x[c]; s += part[c % 4]; }"))
    assert "shared memory" in shared_rows(unit, fn)


def test_a_thread_per_row_and_its_folds():
    unit, fn = _kernel("""// kltrans: launch k grid=ceil_div(rows, 128) block=128
__global__ void k(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float m = -INFINITY, s = 0.0f;
    for (int c = 0; c < cols; ++c) { float v = x[r * cols + c]; m = fmaxf(m, v); s += v; }
    y[r] = s / m;
}
""")
    got = thread_rows(unit, fn)
    assert [f for _, f in got.loops] == [(("m", "max", "float"), ("s", "sum", "float"))]
    # ok: a value carried from one column to the next is no fold
    unit, fn = _kernel("""// kltrans: launch k grid=ceil_div(rows, 128) block=128
__global__ void k(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    float p = 0.0f;
    for (int c = 0; c < cols; ++c) { y[r * cols + c] = x[r * cols + c] - p; p = x[c]; }
}
""")
    assert "is not a fold" in thread_rows(unit, fn)


def test_a_fold_seeded_with_the_first_element_and_kept_by_an_if():
    unit, fn = _kernel("""// kltrans: launch k grid=ceil_div(rows, 128) block=128
__global__ void k(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float m = x[r * cols];
        for (int c = 1; c < cols; ++c) { if (x[r * cols + c] > m) { m = x[r * cols + c]; } }
        float lo = x[r * cols];
        for (int c = 1; c < cols; c++) lo = (x[r * cols + c] < lo) ? x[r * cols + c] : lo;
        y[r] = m - lo;
    }
}
""")
    got = thread_rows(unit, fn)
    assert [f for _, f in got.loops] == [(("m", "max", "float"),), (("lo", "min", "float"),)]
    assert [[unit.text(v) for v in s] for s in got.seeds] == [["x[r * cols]"], ["x[r * cols]"]]
    # ok: a seed set again between its declaration and the loop is not the first element
    unit, fn = _kernel("""// kltrans: launch k grid=ceil_div(rows, 128) block=128
__global__ void k(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float m = x[r * cols];
    m = 0.0f;
    for (int c = 1; c < cols; ++c) m = fmaxf(m, x[r * cols + c]);
    y[r] = m;
}
""")
    assert "m is set again before it" in thread_rows(unit, fn)
    # ok: an if with an else is no fold
    unit, fn = _kernel("""// kltrans: launch k grid=ceil_div(rows, 128) block=128
__global__ void k(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float m = 0.0f;
    for (int c = 0; c < cols; ++c) { if (x[r * cols + c] > m) m = x[r * cols + c]; else m = 0.0f; }
    y[r] = m;
}
""")
    assert "is not a fold" in thread_rows(unit, fn)


def test_the_grid_machine_keeps_every_blocks_stores_and_lets_a_thread_return():
    """Each of 3 blocks stores its row's sum after a barrier; threads past the 40 that
    have work return before it. Before the fix only the last block's store was kept, and
    a returning thread was an error."""
    unit, fn = _kernel("""// kltrans: launch k grid=rows block=64
__global__ void k(const float* x, float* y, int rows, int cols) {
    __shared__ float s[64];
    if (threadIdx.x >= 40) return;
    s[threadIdx.x] = x[blockIdx.x * cols + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) y[blockIdx.x] = s[0] + s[39];
}
""")
    fx = grid_run(unit, fn, {"rows": 3, "cols": 40})
    assert sorted(k for k in fx.stores if k[0] == "y") == [("y", 0), ("y", 1), ("y", 2)]


def test_the_walk_binds_kernel_parameters_to_the_sizes_they_carry():
    from kltrans.lineage.walk import binding_facts
    from kltrans.workload.spec import load_workload

    wl = load_workload(os.path.join(WILD, "softmax-cg"))
    unit = parse(open(os.path.join(WILD, "softmax-cg", "v1_warp_tile.cu")).read(), "v1.cu")
    assert binding_facts(wl, unit.kernels()[0]) == ["binds(numRows,rows)",
                                                    "binds(numCols,cols)"]
    # ok: a parameter named like its size needs no fact
    wl = load_workload(os.path.join(WILD, "softmax-raw"))
    unit = parse(open(os.path.join(WILD, "softmax-raw", "v1_block_smem.cu")).read(), "v1.cu")
    assert binding_facts(wl, unit.kernels()[0]) == []
