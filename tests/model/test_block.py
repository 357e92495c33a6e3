"""The block machine (kltrans.model.block): whole blocks run with barriers and warp
collectives, block folds read in any spelling, refused where the fold is not whole."""

import pytest

from kltrans.model.block import leader_fold, normal, same_effects
from kltrans.model.effects import Term, Unsupported, draws
from kltrans.model.values import binop
from kltrans.model.grid import grid_run
from kltrans.model.ops import operations
from kltrans.syntax import parse

HEAD = "// kltrans: launch k grid=ceil_div(n, 64) block=64\n"


def _fold(body: str, decls: str = ""):
    src = HEAD + decls + 'extern "C" __global__ void k(const float* x, float* out, int n)\n{\n' + \
        body + "\n}\n"
    u = parse(src, "k.cu")
    fn = u.kernels()[0]
    call = [o for o in operations(u) if o.name.startswith("atomic")][-1].node
    return leader_fold(u, fn, call, draws(fn, 64, 0, 2), 64)


TREE = """
    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, s[0]);"""

SHUFFLE = """
    __shared__ float part[2];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(out, part[0] + part[1]);"""


def test_a_shared_memory_tree_folds_the_stored_value():
    got = _fold(TREE)
    assert not isinstance(got, str), got
    assert (got.kind, got.value, got.op) == ("stored", "i < n ? x[i] : 0.0f", "+")


def test_warp_shuffles_and_partials_fold_a_local():
    got = _fold(SHUFFLE)
    assert not isinstance(got, str), got
    assert (got.kind, got.value, got.op) == ("local", "v", "+")


def test_refused_a_tree_without_barriers_between_rounds():
    # a race: thread 0 reads slots before their owners add into them
    got = _fold(TREE.replace("        __syncthreads();\n    }", "    }"))
    assert isinstance(got, str) and "race on shared s" in got


def test_refused_a_fold_of_half_the_warps():
    got = _fold(SHUFFLE.replace("part[0] + part[1]", "part[0]"))
    assert isinstance(got, str) and "not the +-fold" in got


def test_refused_a_shuffle_from_a_lane_that_is_not_there():
    body = SHUFFLE.replace("for (int o = 16;", "if (threadIdx.x % 32 < 16) for (int o = 16;")
    got = _fold(body)
    assert isinstance(got, str) and "not there" in got


def test_normal_form_reassociates_sums_and_drops_identities():
    a, b, c = (Term("sym", s) for s in "abc")
    left = binop("+", binop("+", a, b), c)
    right = binop("+", c, binop("+", binop("+", b, 0), a))
    assert normal(left) == normal(right)
    assert normal(left) != normal(binop("+", a, b))


def test_same_effects_compares_kernels_by_what_a_block_does():
    def unit(body):
        return parse(HEAD + 'extern "C" __global__ void k(const float* x, float* out, int n)\n{\n'
                     + body + "\n}\n", "k.cu")
    tree, shuffle = unit(TREE), unit(SHUFFLE)
    fn = tree.kernels()[0]
    ok, why = same_effects(tree, tree, "k", draws(fn, 64, 0, 1), 64)
    assert ok, why
    ok, why = same_effects(tree, shuffle, "k", draws(fn, 64, 0, 1), 64)
    assert not ok  # a shared-memory tree and warp shuffles are different collectives


def test_a_shared_scalar_is_one_element_every_thread_sees():
    # thread 0 stores the block's value; every thread reads it back after the barrier
    src = ("// kltrans: launch k grid=1 block=64\n"
           "__global__ void k(const float* x, float* y, int n) {\n"
           "    __shared__ float s;\n"
           "    if (threadIdx.x == 0) s = x[0];\n"
           "    __syncthreads();\n"
           "    y[threadIdx.x] = s * x[threadIdx.x];\n}\n")
    u = parse(src, "k.cu")
    fx = grid_run(u, u.kernels()[0], {"n": 64})
    assert normal(fx.stores[("y", 5)]) == normal(binop("*", Term("load", "x", 0),
                                                      Term("load", "x", 5)))


def test_the_launch_header_binds_template_parameters():
    # T is float and B is 64 by the header: the float4 view of a T* and the loop over B
    # both run; without the header's instantiation the view's size is unknown
    body = ("template <class T, int B>\n__global__ void k(const T* x, T* y, int n) {\n"
            "    const float4* x4 = reinterpret_cast<const float4*>(x);\n"
            "    float4 v = x4[threadIdx.x];\n"
            "    if (B >= 64) y[threadIdx.x] = v.x + v.w;\n}\n")
    bound = parse("// kltrans: launch k<float, 64> grid=1 block=64\n" + body, "k.cu")
    fx = grid_run(bound, bound.kernels()[0], {"n": 256})
    assert normal(fx.stores[("y", 1)]) == normal(binop("+", Term("load", "x", 4),
                                                      Term("load", "x", 7)))
    unbound = parse("// kltrans: launch k grid=1 block=64\n" + body, "k.cu")
    with pytest.raises(Unsupported, match="a view of x"):
        grid_run(unbound, unbound.kernels()[0], {"n": 256})


def test_a_value_of_shared_sums_too_large_to_write_out_is_not_compared():
    """``x = x + x`` thirty times is a small DAG whose flattened sum has 2**30 operands:
    normal stops at its bound with Unsupported (a check built on it says it cannot
    compare) instead of running for hours, as a lineage walk's round trip once did."""
    import time

    from kltrans.model.block import normal
    from kltrans.model.values import Term, Unsupported, binop

    x = Term("load", "in", 0)
    for _ in range(30):
        x = binop("+", x, x)
    t0 = time.perf_counter()
    with pytest.raises(Unsupported, match="too large to compare"):
        normal(x)
    assert time.perf_counter() - t0 < 60
    y = Term("load", "in", 1)
    for _ in range(8):  # ok: 256 operands are written out
        y = binop("+", y, y)
    assert normal(y).op == "ac" and len(normal(y).args) == 257


# ------------------------------------------------------------------ races on shared memory
def _grid(body: str, n: int = 64):
    src = HEAD + 'extern "C" __global__ void k(const float* x, float* out, int n)\n{\n' + \
        body + "\n}\n"
    u = parse(src, "k.cu")
    return grid_run(u, u.kernels()[0], {"n": n})


def test_a_shared_scalar_every_thread_writes_and_reads_back_is_a_race():
    # run one thread after another, each reads back its own value: on the device the
    # threads of a warp all write, then all read the last writer's
    with pytest.raises(Unsupported, match="race on shared sh"):
        _grid("""
    __shared__ float sh;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    sh = x[i] * 2.0f;
    out[i] = sh;""")


def test_a_broadcast_behind_a_barrier_is_not_a_race():
    fx = _grid("""
    __shared__ float sh;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) sh = x[blockIdx.x];
    __syncthreads();
    out[i] = sh;""")
    assert len([k for k in fx.stores if k[0] == "out"]) == 64


def test_warp_rounds_split_by_syncwarp_are_not_a_race_and_unsplit_ones_are():
    safe = """
    __shared__ float m[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    m[threadIdx.x] = x[i];
    __syncthreads();
    if (threadIdx.x < 32) {
        for (int o = 16; o > 0; o >>= 1) {
            float v = m[threadIdx.x] + m[threadIdx.x + o];
            __syncwarp();
            m[threadIdx.x] = v;
            __syncwarp();
        }
    }
    __syncthreads();
    out[i] = m[0];"""
    fx = _grid(safe)
    assert len([k for k in fx.stores if k[0] == "out"]) == 64
    with pytest.raises(Unsupported, match="race on shared m"):
        _grid(safe.replace("            __syncwarp();\n            m[threadIdx.x] = v;",
                           "            m[threadIdx.x] = v;"))


def test_atomics_on_one_shared_element_do_not_race_but_a_plain_read_of_it_does():
    body = """
    __shared__ float total;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) total = 0.0f;
    __syncthreads();
    atomicAdd(&total, x[i]);
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = total;"""
    fx = _grid(body)
    assert ("out", 0) in fx.stores
    with pytest.raises(Unsupported, match="race on shared total"):
        _grid(body.replace("    __syncthreads();\n    if (threadIdx.x == 0) out",
                           "    if (threadIdx.x == 5) out"))
