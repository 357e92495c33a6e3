"""Shared-memory tree loops (kltrans.model.trees): the addressing order of a block's tree
read in any spelling; the loops that are not one round of guarded folds, refused."""

from __future__ import annotations

import os

import pytest

from kltrans.model.trees import tree_loop
from kltrans.syntax import parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WILD = os.path.join(ROOT, "corpus", "wild")


def _trees(src: str, path: str = "k.cu"):
    u = parse(src, path)
    return [tree_loop(u, n) for n in u.walk(u.root) if n.type == "for_statement"]


def _kernel(loop: str, decls: str = "unsigned int tid = threadIdx.x;") -> str:
    return ("// kltrans: launch k grid=ceil_div(n, 128) block=128\n"
            "__global__ void k(const float* x, float* out, int n) {\n"
            "    __shared__ float sd[128];\n    " + decls + "\n"
            "    sd[threadIdx.x] = x[blockIdx.x * 128 + threadIdx.x];\n    __syncthreads();\n"
            + loop + "\n    if (threadIdx.x == 0) atomicAdd(out, sd[0]);\n}\n")


@pytest.mark.parametrize("version,order", [("v1_interleaved", "interleaved"),
                                           ("v2_strided_index", "strided-index"),
                                           ("v3_sequential", "sequential")])
def test_harris_reductions_read_in_their_order(version, order):
    path = os.path.join(WILD, "reduce-classic", version + ".cu")
    [(t, why)] = [x for x in _trees(open(path).read(), path) if x[0] is not None]
    assert t.order == order and t.array == "sdata" and t.var == "s", why
    assert t.slots == "blockDim.x" and t.thread == "tid" and t.op == "sum"


def test_cooperative_groups_spelling_and_a_constant_start():
    path = os.path.join(WILD, "reduce-cg", "v1_block_tree.cu")
    [(t, _)] = [x for x in _trees(open(path).read(), path) if x[0] is not None]
    assert (t.order, t.thread, t.slots, t.var_type) == ("sequential", "rank", "block.size()",
                                                        "unsigned int")
    [(t, _)] = _trees(_kernel("""    for (int h = 64; h > 0; h /= 2) {
        if (threadIdx.x < h) sd[threadIdx.x] = fmaxf(sd[threadIdx.x], sd[threadIdx.x + h]);
        __syncthreads();
    }"""))
    assert (t.order, t.slots, t.thread, t.op) == ("sequential", "128", "threadIdx.x", "max")
    # the fold reads its own slot twice (fmaxf(a, b) with a the written slot): both are W
    assert [w for _, w in t.indices] == ["W", "W", "R"]


@pytest.mark.parametrize("loop,why", [
    # ok: the fold keeps the thread's slot in a register too
    ("""    float v = sd[tid];
    for (unsigned int s = 64; s > 0; s >>= 1) {
        if (tid < s) sd[tid] = v = v + sd[tid + s];
        __syncthreads();
    }""", "the fold also writes v"),
    # ok: no barrier ends the round (a warp's lockstep is assumed)
    ("""    for (unsigned int s = 64; s > 0; s >>= 1) {
        if (tid < s) sd[tid] += sd[tid + s];
    }""", "a round does not end with a block barrier"),
    # ok: the loop variable lives on after the loop
    ("""    unsigned int s;
    for (s = 64; s > 0; s >>= 1) {
        if (tid < s) sd[tid] += sd[tid + s];
        __syncthreads();
    }""", "s is declared outside the loop"),
    # ok: two folds in a round
    ("""    for (unsigned int s = 64; s > 0; s >>= 1) {
        if (tid < s) { sd[tid] += sd[tid + s]; sd[tid] *= 1.0f; }
        __syncthreads();
    }""", "the guard holds more than one statement"),
])
def test_refused_loops_say_why(loop, why):
    got = [x for x in _trees(_kernel(loop)) if x[1] != "not a counted loop"]
    assert got and got[0][0] is None and why in got[0][1], got
