"""The load phase of a block reduction (kltrans.model.staging): what a thread stages in its
shared slot, read in any spelling; stores that are not a fold of guarded loads, refused."""

from __future__ import annotations

import os

import pytest

from kltrans.model.staging import staged_load
from kltrans.syntax import parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WILD = os.path.join(ROOT, "corpus", "wild", "reduce-classic")
TREE = """    __syncthreads();
    for (unsigned int s = 64; s > 0; s >>= 1) {
        if (threadIdx.x < s) sd[threadIdx.x] += sd[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, sd[0]);
}
"""


def _read(src: str, slot: str = "sd["):
    u = parse(src, "k.cu")
    st = [n for n in u.walk(u.root) if n.type == "expression_statement"
          and u.text(n).startswith(slot) and "+=" not in u.text(n)]
    got = [staged_load(u, n) for n in st]
    return next((g for g in got if g[0] is not None), got[0])


def _kernel(load: str, block: str = "128", header_block: str = "128") -> str:
    return (f"#define BLOCK {block}\n"
            f"// kltrans: launch k grid=ceil_div(n, {header_block}) block={header_block}\n"
            "__global__ void k(const float* x, float* out, int n) {\n"
            "    __shared__ float sd[128];\n" + load + "\n" + TREE)


@pytest.mark.parametrize("version,factor,form", [("v3_sequential", 1, "expression"),
                                                 ("v4_first_add", 2, "local"),
                                                 ("v6_complete_unroll", 2, "local")])
def test_the_classic_reductions_stage_their_loads(version, factor, form):
    src = open(os.path.join(WILD, version + ".cu"), encoding="utf-8").read()
    ld, why = _read(src, "sdata[tid] = ")
    assert ld is not None, why
    assert (ld.factor, ld.form, ld.src, ld.bound, ld.index, ld.op) == \
        (factor, form, "g_idata", "n", "i", "sum")
    assert ld.block == ("blockSize" if version == "v6_complete_unroll" else "blockDim.x")


@pytest.mark.parametrize("load,factor,block", [
    # a #define'd block, the product in the other order, the loads spelled b + i
    ("    int g = threadIdx.x + (BLOCK * 2) * blockIdx.x;\n"
     "    sd[threadIdx.x] = (g < n ? x[g] : 0.0f) + (BLOCK + g < n ? x[BLOCK + g] : 0.0f);",
     2, "BLOCK"),
    # a local accumulated with `a = a + ...` under braces
    ("    unsigned i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;\n"
     "    float a = (i < n) ? x[i] : 0.0f;\n"
     "    if (i + blockDim.x < n) { a = a + x[i + blockDim.x]; }\n    sd[threadIdx.x] = a;",
     2, "blockDim.x"),
])
def test_spellings_of_one_staged_fold(load, factor, block):
    ld, why = _read(_kernel(load))
    assert ld is not None, why
    assert (ld.factor, ld.block) == (factor, block)


def test_cooperative_groups_spell_the_thread_and_the_block():
    src = ("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
           "// kltrans: launch k grid=ceil_div(n, 128) block=128\n"
           "__global__ void k(const float* x, float* out, int n) {\n"
           "    cg::thread_block b = cg::this_thread_block();\n    __shared__ float sd[128];\n"
           "    int g = b.group_index().x * b.group_dim().x + b.thread_index().x;\n"
           "    sd[b.thread_rank()] = g < n ? x[g] : 0.0f;\n" + TREE)
    ld, why = _read(src)
    assert ld is not None and ld.factor == 1 and ld.block == "b.group_dim().x", why


@pytest.mark.parametrize("load,reason", [
    # ok: the index is also used to write y: the rest of the kernel sees more than the slot
    ("    int i = blockIdx.x * 128 + threadIdx.x;\n    sd[threadIdx.x] = i < n ? x[i] : 0.0f;\n"
     "    if (i < n) out[1 + i] = 0.0f;", "outside the load"),
    # ok: the second load is 64 further while a block covers 256: not one stride apart
    ("    int i = blockIdx.x * 256 + threadIdx.x;\n"
     "    sd[threadIdx.x] = (i < n ? x[i] : 0.0f) + (i + 64 < n ? x[i + 64] : 0.0f);",
     "not the 2 loads"),
    # ok: the guard is on another bound than the load's index
    ("    int i = blockIdx.x * 128 + threadIdx.x;\n    sd[threadIdx.x] = i < 7 ? x[i + 1] : 0.0f;",
     "not a fold of guarded loads"),
    # ok: the slot is not the thread's own
    ("    int i = blockIdx.x * 128 + threadIdx.x;\n"
     "    sd[127 - threadIdx.x] = i < n ? x[i] : 0.0f;", "not the thread's index"),
    # ok: two inputs folded
    ("    int i = blockIdx.x * 256 + threadIdx.x;\n"
     "    sd[threadIdx.x] = (i < n ? x[i] : 0.0f) + (i + 128 < n ? out[i + 128] : 0.0f);",
     "other inputs"),
])
def test_refused_loads(load, reason):
    ld, why = _read(_kernel(load), "sd[")
    assert ld is None and reason in why, why
