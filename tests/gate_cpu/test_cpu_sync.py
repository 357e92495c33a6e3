"""Barriers, warp primitives, races, deadlock, divergence and timeouts on the CPU emulator."""

import pickle
import shutil
import time

import numpy as np
import pytest

from kltrans.syntax import parse

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    root = tmp_path_factory.getbasetemp() / "kltrans-cpu-cache"
    mp.setenv("KLTRANS_CACHE_DIR", str(root))
    yield root
    mp.undo()


def build(src, kernel, name_expression=None, path="k.cu"):
    from kltrans.gate.cpu import build as _build

    return _build(parse(src, path), kernel, name_expression)


def line_of(src, needle):
    lines = [i + 1 for i, text in enumerate(src.splitlines()) if needle in text]
    assert len(lines) == 1, (needle, lines)
    return lines[0]


BLOCK_SUM = r"""
#define BLOCK 256
__global__ void block_sum(const float* __restrict__ x, float* out, int n)
{
    __shared__ float s[BLOCK];
    const int tid = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();   // after-load
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();   // in-loop
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
"""


def _sum_input(blocks=64, n_missing=5):
    rng = np.random.default_rng(11)
    n = blocks * 256 - n_missing
    x = rng.random(n).astype(np.float32)
    ref = np.pad(x.astype(np.float64), (0, n_missing)).reshape(blocks, 256).sum(1)
    return x, n, ref


def test_shared_memory_block_reduction():
    m = build(BLOCK_SUM, "block_sum")
    x, n, ref = _sum_input()
    for seed in (0, 1, 2):
        out = np.full(64, np.nan, np.float32)
        stats = m.launch(64, 256, 0, [x, out, n], seed=seed, threads=2)
        np.testing.assert_allclose(out, ref, rtol=1e-5)
        assert stats["blocks"] == 64 and stats["fibers"] == 64 * 256
        assert stats["barriers"] == 64 * 256 * 9  # one after the load, eight in the loop
        assert stats["switches"] > 0 and stats["seconds"] > 0


@pytest.mark.parametrize("deleted", ["after-load", "in-loop"])
def test_missing_syncthreads_is_exposed(deleted):
    src = "\n".join(line for line in BLOCK_SUM.splitlines() if f"// {deleted}" not in line)
    assert src.count("__syncthreads") == 1
    m = build(src, "block_sum")
    x, n, ref = _sum_input()
    wrong = []
    results = set()
    for seed in range(4):
        out = np.zeros(64, np.float32)
        m.launch(64, 256, 0, [x, out, n], seed=seed)
        bad = not np.allclose(out, ref, rtol=1e-5)
        wrong.append(bad)
        results.add(out.tobytes())
    # the race shows: some seed gives a wrong sum (after-load: reads of unwritten, poisoned
    # shared memory; in-loop: partial sums read before they are complete)
    assert any(wrong), "a reduction with a barrier deleted passed for every seed"
    if deleted == "in-loop":
        assert len(results) > 1, "different fiber orders should give different results"


def test_race_between_barriers_is_order_dependent():
    src = r"""
__global__ void neighbour(const int* in, int* out)
{
    __shared__ int s[64];
    s[threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = s[(threadIdx.x + 1) % 64];   // no barrier: a race
}
"""
    m = build(src, "neighbour")
    x = np.arange(64, dtype=np.int32) + 1
    seen = set()
    for seed in range(6):
        out = np.zeros(64, np.int32)
        stats = m.launch(1, 64, 0, [x, out], seed=seed)
        assert stats["seed"] == seed
        seen.add(out.tobytes())
    assert len(seen) > 1
    # a seed fixes the interleaving: the same seed reproduces the same result
    again = []
    for _ in range(2):
        out = np.zeros(64, np.int32)
        m.launch(1, 64, 0, [x, out], seed=1234)
        again.append(out.tobytes())
    assert again[0] == again[1]


WARP_SUM = r"""
__device__ __forceinline__ float warp_sum(float v)
{
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
__global__ void warp_reduce(const float* x, float* out, int n)
{
    __shared__ float partial[32];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    v = warp_sum(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? partial[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) out[blockIdx.x] = v;
    }
}
"""


def test_warp_shuffle_reduction():
    m = build(WARP_SUM, "warp_reduce")
    x, n, ref = _sum_input()
    out = np.full(64, np.nan, np.float32)
    stats = m.launch(64, 256, 0, [x, out, n], seed=3)
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    assert stats["warp_ops"] == 64 * (256 * 5 + 32 * 5)


DEADLOCK = r"""
__global__ void half_barrier(float* x)
{
    x[threadIdx.x] = 1.0f;
    if (threadIdx.x < 16) __syncthreads();   // only half the block
    x[threadIdx.x] = 2.0f;
}
"""


def test_deadlock_is_reported_with_its_line():
    from kltrans.gate.cpu import EmulationError

    m = build(DEADLOCK, "half_barrier", path="deadlock.cu")
    for seed in range(3):
        with pytest.raises(EmulationError) as ei:
            m.launch(2, 32, 0, [np.zeros(32, np.float32)], seed=seed)
        e = ei.value
        assert e.kind == "deadlock"
        assert e.line == line_of(DEADLOCK, "only half the block")
        assert e.path == "deadlock.cu"
        assert "__syncthreads" in e.message
    # errors cross process boundaries (the gate runs launches in a worker process)
    back = pickle.loads(pickle.dumps(e))
    assert (back.kind, back.line, back.path, back.message) == (e.kind, e.line, e.path, e.message)


def test_threads_at_different_barriers_deadlock():
    from kltrans.gate.cpu import EmulationError

    src = r"""
__global__ void two_barriers(int* x)
{
    if (threadIdx.x % 2) {
        x[threadIdx.x] = 1;
        __syncthreads();   // odd
    } else {
        __syncthreads();   // even
        x[threadIdx.x] = 2;
    }
}
"""
    m = build(src, "two_barriers")
    with pytest.raises(EmulationError) as ei:
        m.launch(1, 64, 0, [np.zeros(64, np.int32)])
    assert ei.value.kind == "deadlock"
    assert ei.value.line in (line_of(src, "// odd"), line_of(src, "// even"))


DIVERGENT = r"""
__global__ void odd_shuffle(float* x)
{
    float v = x[threadIdx.x];
    if (threadIdx.x % 2) v = __shfl_down_sync(0xffffffff, v, 1);
    x[threadIdx.x] = v;
}
"""


def test_divergent_shuffle_is_reported_with_its_line():
    from kltrans.gate.cpu import EmulationError

    m = build(DIVERGENT, "odd_shuffle", path="divergent.cu")
    for seed in range(3):
        with pytest.raises(EmulationError) as ei:
            m.launch(1, 64, 0, [np.zeros(64, np.float32)], seed=seed)
        e = ei.value
        assert e.kind == "divergent-warp"
        assert e.line == line_of(DIVERGENT, "__shfl_down_sync")
        assert e.path == "divergent.cu"


def test_divergent_shuffle_against_a_barrier():
    from kltrans.gate.cpu import EmulationError

    src = r"""
__global__ void shuffle_vs_barrier(float* x)
{
    float v = x[threadIdx.x];
    if (threadIdx.x < 8) v = __shfl_xor_sync(0xffffffffu, v, 1);   // shuffle
    __syncthreads();
    x[threadIdx.x] = v;
}
"""
    m = build(src, "shuffle_vs_barrier")
    with pytest.raises(EmulationError) as ei:
        m.launch(1, 32, 0, [np.zeros(32, np.float32)])
    assert ei.value.kind == "divergent-warp"
    assert ei.value.line == line_of(src, "// shuffle")


def test_infinite_loop_times_out_within_the_limit():
    from kltrans.gate.cpu import EmulationError

    src = r"""
__global__ void spin(int* flag, int* out)
{
    int i = 0;
    while (flag[0] == 0) {   // never set
        i++;
    }
    out[threadIdx.x] = i;
}
"""
    m = build(src, "spin", path="spin.cu")
    flag = np.zeros(1, np.int32)
    out = np.zeros(32, np.int32)
    t0 = time.monotonic()
    with pytest.raises(EmulationError) as ei:
        m.launch(4, 32, 0, [flag, out], timeout_s=0.5, threads=2)
    elapsed = time.monotonic() - t0
    assert ei.value.kind == "timeout"
    assert 0.45 <= elapsed < 3.0
    assert ei.value.line == line_of(src, "never set")
    # the process is still usable afterwards
    flag[0] = 1
    m.launch(4, 32, 0, [flag, out], timeout_s=5)
    assert (out == 0).all()


WARP_OPS = r"""
__global__ void warp_ops(const int* in, int* out)
{
    const int t = threadIdx.x;
    const int lane = t & 31;
    int v = in[t];
    int* o = out + t * 16;
    o[0] = __shfl_sync(0xffffffffu, v, 3);                 // lane 3 of the warp
    o[1] = __shfl_sync(0xffffffffu, v, lane ^ 5, 16);      // within 16-lane segments
    o[2] = __shfl_up_sync(0xffffffffu, v, 2, 8);
    o[3] = __shfl_down_sync(0xffffffffu, v, 3, 8);
    o[4] = __shfl_xor_sync(0xffffffffu, v, 1);
    o[5] = (int)__ballot_sync(0xffffffffu, v % 3 == 0);
    o[6] = __any_sync(0xffffffffu, v == 7);
    o[7] = __all_sync(0xffffffffu, v >= 0);
    o[8] = __reduce_add_sync(0xffffffffu, v);
    o[9] = __reduce_max_sync(0xffffffffu, v);
    o[10] = (int)__reduce_or_sync(0xffffffffu, (unsigned)v);
    o[11] = (int)__match_any_sync(0xffffffffu, v % 4);
    __syncwarp();
    o[12] = __syncthreads_count(v % 2);
    o[13] = __syncthreads_and(v >= 0);
    o[14] = __syncthreads_or(v == 1000000);
    if (lane < 10) {
        unsigned m = __activemask();
        o[15] = (int)m;
        v = __shfl_down_sync(m, v, 1);
    } else {
        o[15] = -1;
    }
}
"""


def test_warp_primitives_values():
    m = build(WARP_OPS, "warp_ops")
    nt = 48  # one full warp and a partial one (16 lanes)
    rng = np.random.default_rng(9)
    v = rng.integers(0, 50, nt).astype(np.int32)
    out = np.zeros((nt, 16), np.int32)
    m.launch(1, nt, 0, [v, out], seed=5)
    for t in range(nt):
        w0 = t - t % 32
        wl = min(32, nt - w0)  # lanes in this warp
        lane = t % 32
        warp = v[w0:w0 + wl]

        def src(s, lane=lane, warp=warp, wl=wl):
            return warp[s] if s < wl else warp[lane]
        assert out[t, 0] == src(3)
        seg = lane & ~15
        assert out[t, 1] == src(seg | ((lane ^ 5) & 15))
        assert out[t, 2] == (src(lane - 2) if lane % 8 >= 2 else warp[lane])
        assert out[t, 3] == (src(lane + 3) if lane % 8 + 3 < 8 else warp[lane])
        assert out[t, 4] == src(lane ^ 1)
        ballot = sum(1 << k for k in range(wl) if warp[k] % 3 == 0)
        assert out[t, 5] == np.int32(np.uint32(ballot).view(np.int32) if ballot >= 2**31 else ballot)
        assert out[t, 6] == int((warp == 7).any())
        assert out[t, 7] == 1
        assert out[t, 8] == warp.sum()
        assert out[t, 9] == warp.max()
        assert out[t, 10] == np.bitwise_or.reduce(warp)
        match = sum(1 << k for k in range(wl) if warp[k] % 4 == warp[lane] % 4)
        assert np.uint32(out[t, 11]) == match
        assert out[t, 12] == (v % 2).sum()
        assert out[t, 13] == 1 and out[t, 14] == 0
        assert out[t, 15] == (0x3FF if lane < 10 else -1)


def test_partial_warp_and_3d_blocks():
    src = r"""
__global__ void ids(int* out)
{
    const int lin = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const int blk = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const int nthr = blockDim.x * blockDim.y * blockDim.z;
    int lane_sum = __reduce_add_sync(0xffffffffu, 1);   // lanes that exist in this warp
    out[(blk * nthr + lin) * 2] = threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z
                                  + 1000 * (blockIdx.x + 10 * blockIdx.y + 100 * blockIdx.z);
    out[(blk * nthr + lin) * 2 + 1] = lane_sum;
}
"""
    m = build(src, "ids")
    grid, block = (2, 3, 2), (5, 3, 3)  # 45 threads: warps of 32 and 13 lanes
    nthr = 45
    out = np.full((12 * nthr, 2), -1, np.int32)
    m.launch(grid, block, 0, [out], threads=3)
    k = 0
    for bz in range(2):
        for by in range(3):
            for bx in range(2):
                for tz in range(3):
                    for ty in range(3):
                        for tx in range(5):
                            lin = tx + 5 * (ty + 3 * tz)
                            assert out[k, 0] == tx + 10 * ty + 100 * tz + 1000 * (bx + 10 * by + 100 * bz)
                            assert out[k, 1] == (32 if lin < 32 else 13)
                            k += 1
