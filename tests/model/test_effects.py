"""kltrans.model.effects: one thread's stores as values over its loads, in any spelling."""

import pytest

from kltrans.model.values import binop
from kltrans.model.effects import (Machine, Term, Unsupported, before, draws,
                                   interference, run_with)
from kltrans.syntax import parse
from kltrans.syntax.cuda import find_functions

INTS = {"n": 1003, "threadIdx.x": 5, "blockIdx.x": 1, "blockDim.x": 256, "gridDim.x": 3}


def _kernel(src):
    unit = parse(src, "k.cu")
    fn = next(f for f in find_functions(unit) if f.is_kernel)
    return unit, fn


def _stmts(fn):
    return [c for c in fn.body.named_children if c.type != "comment"]


def _effects(src, binds=None, upto=None):
    """Run the kernel body (or its statements from ``upto``) once with INTS."""
    unit, fn = _kernel(src)
    m = Machine(unit, fn, INTS)
    stmts = _stmts(fn)
    if upto is None:
        return run_with(m, m.parameters(), binds or {}, stmts)
    env = before(m, stmts[upto])
    return run_with(m, env, binds or {}, stmts[upto:])


VIEW = """
__device__ float f(float v) { return v * 2.0f + 1.0f; }
__global__ void k(const float* x, float* y, int n) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    int i = 3;
    float4 v = __ldcs(x4 + i);
    v.x = f(v.x); v.y = f(v.y); v.z = f(v.z); v.w = f(v.w);
    __stcs(y4 + i, v);
}
"""

SCALAR = """
__global__ void k(const float* x, float* y, int n) {
    for (int c = 0; c < 4; ++c) {
        const float t = x[12 + c];
        y[4 * 3 + c] = 1.0f + t * 2.0f;
    }
}
"""


def test_a_float4_view_and_four_scalar_bodies_store_the_same_values():
    a, b = _effects(VIEW), _effects(SCALAR)
    assert sorted(a.stores) == [("y", 12), ("y", 13), ("y", 14), ("y", 15)]
    assert a.stores == b.stores  # helper inlined, commutative operands ordered
    assert a.loads == b.loads == {("x", 12), ("x", 13), ("x", 14), ("x", 15)}


def test_a_lambda_by_reference_updates_the_callers_variables():
    src = """
    __global__ void k(float* p, const float* g, float lr, int n) {
        auto step = [&](float& w, float d) { w = w - lr * d; };
        float w = p[7];
        step(w, g[7]);
        p[7] = w;
    }"""
    fx = _effects(src)
    assert fx.stores == {("p", 7): binop("-", Term("load", "p", 7),
                                         binop("*", Term("sym", "lr"), Term("load", "g", 7)))}


def test_a_store_then_a_load_of_the_same_element_reads_the_stored_value():
    fx = _effects("__global__ void k(float* y, int n) { y[2] = 1.0f; y[3] = y[2] + 1.0f; }")
    assert fx.stores[("y", 3)] == binop("+", Term("num", 1.0), Term("num", 1.0))
    assert fx.loads == set()


def test_integers_are_computed_as_c_computes_them():
    assert binop("/", -7, 2) == -3 and binop("%", -7, 2) == -1  # truncation, not floor
    assert binop(">>", -7, 1) == -4
    unit, fn = _kernel("__global__ void k(float* y, int n) { const int q = n >> 2; }")
    m = Machine(unit, fn, INTS)
    env = m.parameters()
    m.run(_stmts(fn), env)
    assert env["q"].value == 1003 >> 2


def test_the_environment_before_a_statement_has_the_thread_ids_and_sizes():
    unit, fn = _kernel("""
    __global__ void k(const float* x, float* y, int n) {
        const int tid = blockIdx.x * blockDim.x + threadIdx.x;
        const int stride = blockDim.x * gridDim.x;
        y[tid] = x[tid];
    }""")
    m = Machine(unit, fn, INTS)
    env = before(m, _stmts(fn)[2])
    assert env["tid"].value == 261 and env["stride"].value == 768


@pytest.mark.parametrize("body, why", [
    ("__syncthreads(); y[0] = 1.0f;", "involves other threads"),  # a barrier
    ("if (y[0] > 0.0f) y[1] = 1.0f;", "depends on a value"),  # branch on data
    ("for (int c = 0; c < 4; ++c) { if (c == 2) break; y[c] = 0.0f; }", "break"),
    ("atomicAdd(y, 1.0f);", "atomicAdd"),  # not a known function: a pointer argument
])
def test_what_the_machine_does_not_run_raises_with_the_reason(body, why):
    with pytest.raises(Unsupported, match=why):
        _effects("__global__ void k(float* y, int n) { " + body + " }")


def test_interference_names_an_element_that_reads_anothers_write():
    unit, fn = _kernel("__global__ void k(float* x, int n) { int i = 0; x[i] = x[i + 1]; }")
    m = Machine(unit, fn, INTS)
    env = before(m, _stmts(fn)[1])
    body = _stmts(fn)[1:]
    per = {e: run_with(m, env, {"i": e}, body) for e in (4, 5)}
    assert "element 5 writes x[5], which element 4 also reads" in interference(per)
    own = _kernel("__global__ void k(float* x, int n) { int i = 0; x[i] = 2.0f * x[i]; }")
    m = Machine(own[0], own[1], INTS)
    env = before(m, _stmts(own[1])[1])
    per = {e: run_with(m, env, {"i": e}, _stmts(own[1])[1:]) for e in (4, 5)}
    assert interference(per) is None


def test_draws_vary_the_size_modulo_the_chunk_widths_and_keep_the_thread_in_its_block():
    _, fn = _kernel("__global__ void k(float* y, int n) {}")
    got = draws(fn, 128, seed=1)
    assert len({d["n"] % 16 for d in got}) == 3
    assert all(0 <= d["threadIdx.x"] < 128 and d["blockDim.x"] == 128 for d in got)
    assert all(0 <= d["blockIdx.x"] < d["gridDim.x"] for d in got)


def test_a_value_built_from_itself_many_times_stays_small():
    """Each statement uses v three times: as a tree the value would have 3^40 leaves; the
    shared terms keep it one node per operation, and comparing it costs nothing."""
    body = " ".join("v = v * a + b * (v - 1.0f) / (1.0f + v * v);" for _ in range(40))
    fx = _effects("__global__ void k(const float* x, float* y, float a, float b, int n) { "
                  "float v = x[0]; " + body + " y[0] = v; }")
    again = _effects("__global__ void k(const float* x, float* y, float a, float b, int n) {"
                     " float v = x[0]; " + body + " y[0] = v; }")
    assert fx.stores == again.stores
    assert fx.stores[("y", 0)] != Term("load", "x", 0)
    assert len(repr(fx.stores[("y", 0)])) < 2000  # shown to a bounded depth


UNION = """
union Pair4 { float4 v; float s[4]; };
struct Acc { float lo; Pair4 p; int count; };
__global__ void k(const float* x, float* y, int n) {
    Acc a;
    a.p.v = reinterpret_cast<const float4*>(x)[2];
    a.lo = a.p.s[0];
    for (int c = 1; c < 4; ++c)
        a.p.s[c] = a.p.s[c] + a.lo;
    a.count = 4;
    y[0] = a.p.v.w;
    y[a.count] = a.p.s[1];
}
"""


def test_a_union_shares_its_lanes_between_members_and_a_struct_keeps_them_apart():
    fx = _effects(UNION)
    x8, x9, x11 = (Term("load", "x", k) for k in (8, 9, 11))
    assert fx.stores[("y", 0)] == binop("+", x11, x8)  # the float4's w is the array's [3]
    assert fx.stores[("y", 4)] == binop("+", x9, x8)   # count (an int member) indexes y
    assert fx.loads == {("x", 8), ("x", 9), ("x", 10), ("x", 11)}


def test_a_union_cut_into_lanes_of_different_widths_is_not_read():
    # which float a double's bits hold is not modelled: refused, never guessed
    src = """
union Mixed { float4 v; double d[2]; };
__global__ void k(const float* x, float* y, int n) {
    Mixed m;
    m.v = reinterpret_cast<const float4*>(x)[0];
    y[0] = m.v.x;
}
"""
    with pytest.raises(Unsupported, match="lanes of different widths"):
        _effects(src)


def test_a_member_function_of_a_struct_is_not_read_as_an_opaque_call():
    # the method reads the object's fields: a term naming only its arguments would be wrong
    src = """
struct MD { float m; float d; __device__ float scaled(float s) const; };
__global__ void k(const float* x, float* y, int n) {
    MD a;
    a.m = x[0];
    a.d = 1.0f;
    y[0] = a.scaled(2.0f);
}
"""
    with pytest.raises(Unsupported, match="member function"):
        _effects(src)


def test_a_struct_set_from_a_value_of_another_shape_is_not_read():
    src = """
struct Two { float a; float b; };
__global__ void k(const float* x, float* y, int n) {
    Two t = reinterpret_cast<const float4*>(x)[0];
    y[0] = t.a;
}
"""
    with pytest.raises(Unsupported, match="set from something else"):
        _effects(src)


def test_a_thread_answers_its_cooperative_groups_queries_from_its_own_indices():
    unit, fn = _kernel("""
    #include <cooperative_groups.h>
    namespace cg = cooperative_groups;
    __global__ void k(const float* x, float* y, int n) {
        cg::thread_block block = cg::this_thread_block();
        auto tile = cg::tiled_partition<32>(block);
        int g = block.group_index().x * block.size() + block.thread_rank();
        int w = tile.meta_group_rank() * 100 + tile.thread_rank();
        y[g] = x[w];
    }""")
    m = Machine(unit, fn, dict(INTS, **{"threadIdx.x": 37}))
    fx = run_with(m, m.parameters(), {}, _stmts(fn))
    # block 1 of 256 threads, thread 37: g = 256 + 37, lane 5 of warp 1
    assert list(fx.stores) == [("y", 293)]
    assert "x" in str(fx.stores[("y", 293)]) and "105" in str(fx.stores[("y", 293)])


def test_a_run_past_its_time_budget_stops_as_unsupported():
    """A caller with a time limit (diff --explain) bounds the model's runs too: past the
    deadline a run raises Unsupported (the check it served is left unknown)."""
    import time

    from kltrans.model.values import time_budget

    src = ("__global__ void k(float* y, int n) {\n  float s = 0.0f;\n"
           "  for (int i = 0; i < n; ++i) s += y[i];\n  y[0] = s;\n}\n")
    assert _effects(src).stores  # ok: no budget, the 1003 iterations run
    with time_budget(time.perf_counter() - 1.0):
        with pytest.raises(Unsupported, match="time budget"):
            _effects(src)
    with time_budget(time.perf_counter() + 600.0):  # ok: a budget not yet spent
        assert _effects(src).stores
