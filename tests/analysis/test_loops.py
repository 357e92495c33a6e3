"""Loops: induction variable, bound, step, trip count, pragmas, depth."""

import os

import pytest

from kltrans.analysis.affine import Affine
from kltrans.analysis.loops import assigned_in, loop_of, loops
from kltrans.syntax import parse

KERNELS = os.path.join(os.path.dirname(__file__), "..", "data", "kernels")


def load(name):
    path = os.path.join(KERNELS, name)
    with open(path) as f:
        return parse(f.read(), path)


def fn_named(unit, name):
    return next(f for f in unit.kernels() + unit.device_functions() if f.name == name)


def only_loop(body, prelude="", template=""):
    u = parse(f"{prelude}\n{template}__global__ void k(float* y, int n) {{\n{body}\n}}\n")
    found = loops(u)
    assert len(found) == 1, [u.text(lp.node) for lp in found]
    return u, found[0]


@pytest.mark.parametrize("header, trips, step", [
    ("for (int i = 0; i < 8; ++i)", 8, 1),
    ("for (int i = 0; i < 8; i++)", 8, 1),
    ("for (int i = 2; i <= 10; i += 3)", 3, 3),      # 2, 5, 8
    ("for (int i = 10; i >= 0; --i)", 11, -1),
    ("for (int i = 10; i > 0; i -= 4)", 3, -4),      # 10, 6, 2
    ("for (int i = 0; i != 10; i += 2)", 5, 2),
    ("for (int i = 0; 8 > i; i = i + 2)", 4, 2),     # bound on the left, i = i + k
    ("for (int i = 5; i < 5; ++i)", 0, 1),
    ("for (unsigned i = 0u; i < 0x10u; i += 4u)", 4, 4),
])
def test_counted_for_loops(header, trips, step):
    u, lp = only_loop(header + " { y[i] = 0; }")
    assert lp.kind == "for" and lp.var == "i"
    assert lp.trip_count == trips
    assert lp.step == Affine.const(step)
    assert lp.init.is_const() and lp.bound.is_const()
    assert lp.counted and lp.reason is None


@pytest.mark.parametrize("header, trips, text", [
    ("for (int o = 16; o > 0; o >>= 1)", 5, ">>=1"),
    ("for (int o = 16; o > 0; o /= 2)", 5, "/=2"),
    ("for (int s = 1; s < 100; s *= 2)", 7, "*=2"),
    ("for (int s = 1; s < 64; s <<= 1)", 6, "<<=1"),
    ("for (int o = 16; o >= 1; o = o / 2)", 5, "/=2"),
])
def test_multiplicative_loops_have_no_step_but_a_trip_count(header, trips, text):
    u, lp = only_loop(header + " { y[0] += 1.0f; }")
    assert lp.step is None and lp.step_text == text
    assert lp.trip_count == trips
    assert not lp.counted


def test_loop_that_never_ends_or_steps_over_its_bound():
    u, lp = only_loop("for (int i = 0; i != 9; i += 2) { y[i] = 0; }")
    assert lp.trip_count is None and lp.reason == "the induction variable steps over the bound"
    u, lp = only_loop("for (int i = 0; i < 9; i -= 1) { y[i] = 0; }")
    assert lp.trip_count is None and lp.reason == "the loop never ends"


def test_while_and_do_loops():
    u, lp = only_loop("int i = threadIdx.x;\nwhile (i < n) { y[i] = 0; i += 4; }")
    assert lp.kind == "while" and lp.var == "i" and lp.cond_op == "<"
    assert lp.init == Affine.sym("threadIdx.x") and lp.bound == Affine.sym("n")
    assert lp.step == Affine.const(4) and lp.trip_count is None
    assert lp.trip_count_known_with({"n": 10, "threadIdx.x": 0}) == 3
    u, lp = only_loop("int k = 0;\ndo { y[k] = 1; k++; } while (k < 5);")
    assert lp.kind == "do" and lp.var == "k" and lp.trip_count == 5
    u, lp = only_loop("int k = 7;\ndo { y[0] = 1; ++k; } while (k < 5);")
    assert lp.trip_count == 1  # a do loop runs once before testing


def test_a_step_in_the_body_of_a_for_loop_and_a_bare_condition():
    u, lp = only_loop("for (int i = 0; i < 12;) { y[i] = 0; i += 4; }")
    assert lp.var == "i" and lp.step == Affine.const(4) and lp.trip_count == 3
    u, lp = only_loop("for (int i = 0; i < 12;) { i += 4; if (y[i] > 0) i++; }")
    assert lp.step is None and lp.reason == "the body also assigns i"
    u, lp = only_loop("for (int s = 16; s; s /= 2) { y[s] = 0; }")
    assert lp.cond_op == "!=" and lp.bound == Affine.const(0) and lp.trip_count == 5
    u, lp = only_loop("int s = 8;\nwhile (s) { y[s] = 0; s >>= 1; }")
    assert lp.var == "s" and lp.step_text == ">>=1" and lp.trip_count == 4


def test_loops_without_a_counted_shape():
    u, lp = only_loop("for (;;) { if (y[0] > 1) break; }")
    assert lp.var is None and lp.reason == "no induction variable"
    u, lp = only_loop("for (int i = 0; i < n; ++i) { if (y[i] > 0) i += 2; }")
    assert lp.var == "i" and lp.step is None and lp.reason == "the body also assigns i"
    u, lp = only_loop("for (int i = 0; i < n && y[i] > 0; ++i) { y[i] = 0; }")
    assert lp.cond_op is None and lp.trip_count is None
    assert lp.reason == "the condition does not compare i with a bound"


def test_macro_and_template_bounds():
    u, lp = only_loop("for (int i = 0; i < CEIL_DIV(100, TILE); ++i) { y[i] = 0; }",
                      prelude="#define TILE 32\n#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))")
    assert lp.trip_count == 4
    u, lp = only_loop("for (int i = 0; i < CEIL_DIV(n, TILE); ++i) { y[i] = 0; }",
                      prelude="#define TILE 32\n#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))")
    assert lp.trip_count is None and str(lp.bound) == "CEIL_DIV(n, TILE)"
    assert lp.trip_count_known_with({"n": 65}) == 3
    u = load("block_reduce.cu")
    lp = [x for x in loops(u, fn_named(u, "block_reduce_sum"))][0]
    assert lp.var == "k" and lp.bound == Affine.sym("ITEMS") and lp.trip_count is None
    assert lp.reason == "the bound ITEMS is not constant"
    assert lp.trip_count_known_with({"ITEMS": 4}) == 4
    assert [p.text for p in lp.pragmas] == ["#pragma unroll"]


def test_halving_loops_in_the_fixtures():
    u = load("block_reduce.cu")
    lp = loops(u, fn_named(u, "warp_reduce_sum"))[0]
    assert (lp.var, lp.init, lp.cond_op, lp.bound) == ("offset", 16, ">", 0)
    assert lp.step is None and lp.step_text == ">>=1" and lp.trip_count == 5
    u = load("launch_bounds3.cu")
    [grid, halving] = loops(u, fn_named(u, "row_max"))
    assert halving.init == Affine.const(64)  # kThreads / 2 with constexpr kThreads = 128
    assert halving.trip_count == 7
    assert grid.init == Affine.sym("threadIdx.x") and grid.step == Affine.sym("blockDim.x")
    u = load("cg_reduce.cu")
    lp = loops(u, fn_named(u, "tile_sum"))[0]
    assert lp.step_text == "/=2" and lp.trip_count == 5


def test_grid_stride_loops():
    u = load("cg_reduce.cu")
    lp = loops(u, fn_named(u, "dot_cg"))[0]
    assert str(lp.init) == "blockDim.x*blockIdx.x + threadIdx.x"
    assert str(lp.step) == "blockDim.x*gridDim.x"
    assert lp.bound == Affine.sym("n") and lp.trip_count is None
    u = load("grid_stride.cu")
    lp = loops(u, fn_named(u, "fill"))[0]  # for (; i < n; i += stride)
    assert lp.var == "i" and str(lp.init) == "blockDim.x*blockIdx.x + threadIdx.x"
    assert str(lp.step) == "blockDim.x*gridDim.x"  # the const local `stride`, substituted
    assert [p.text for p in lp.pragmas] == ["#pragma unroll 4"]


def test_constexpr_step_and_pragmas_in_transpose():
    u = load("transpose_tiled.cu")
    found = loops(u, fn_named(u, "transpose_tiled"))
    assert [(lp.var, lp.trip_count, lp.step) for lp in found] == [("j", 4, 8), ("j", 4, 8)]
    assert all(lp.step_text == "+=BLOCK_ROWS" for lp in found)
    assert [[p.text for p in lp.pragmas] for lp in found] == [["#pragma unroll"]] * 2


def test_nesting_depth_and_pre_order_with_unbraced_pragmas():
    u = load("pragma_unbraced_for.cu")
    found = loops(u, fn_named(u, "box_sum_4x2"))
    assert [(lp.var, lp.depth, lp.trip_count) for lp in found] == [
        ("rep", 0, 2), ("i", 1, 4), ("j", 2, 2)]
    assert [[p.text for p in lp.pragmas] for lp in found] == [
        [], ["#pragma unroll"], ["#pragma unroll 2"]]
    outer = loops(u, fn_named(u, "group_sum4"))[0]
    assert outer.trip_count is None and outer.init == Affine.sym("threadIdx.x")
    assert loop_of(u, found[1].node) is found[1]  # cached
    assert loop_of(u, fn_named(u, "box_sum_4x2").node) is None
    assert len(loops(u)) == 7  # every loop of the unit


def test_assigned_in():
    u = parse("__device__ void bump(int& v) { v++; }\n"
              "__global__ void k(float* y, int n) {\n"
              "  int a = 0, b = 0, c = 0, d = 0, e = 0;\n"
              "  { a += 1; y[b] = 2; bump(c); atomicAdd(&d, 1); y[e]++; }\n"
              "}\n")
    block = [n for n in u.walk() if n.type == "compound_statement"][2]
    assert assigned_in(u, block, "a")
    assert not assigned_in(u, block, "b")  # only read as an index
    assert assigned_in(u, block, "c")  # passed to a non-const reference
    assert assigned_in(u, block, "d")  # address taken
    assert not assigned_in(u, block, "e")  # y[e] is written, not e
    u = load("pragma_unbraced_for.cu")
    lp = loops(u, fn_named(u, "group_sum4"))[1]
    assert not assigned_in(u, lp.body, "j") and assigned_in(u, lp.node, "j")
