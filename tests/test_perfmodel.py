"""The performance model optimize decides with when no GPU can time a candidate: the
share of the device a launch fills at the bench size, and register spills."""

from __future__ import annotations

import os

import pytest

from kltrans.gate.compile import compile_unit
from kltrans.optimize.perfmodel import DEVICES, Fill, fill, judge, resident_blocks
from kltrans.syntax.unit import parse
from kltrans.workload.spec import load_workload

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCALE = load_workload(os.path.join(ROOT, "tests", "data", "workloads", "scale"))
H200 = DEVICES["sm_90"]


@pytest.mark.parametrize("threads, regs, smem, blocks", [
    (256, 32, 0, 8),        # threads bound: 2048 / 256
    (256, 128, 0, 2),       # registers bound: 65536 / (128 x 256)
    (128, 0, 100 * 1024, 2),  # shared memory bound: 228 KiB / (100 KiB + 1 KiB)
    (32, 16, 0, 32),        # the block limit
    (2048, 16, 0, 0),       # ok: no block of more than 1024 threads runs at all
])
def test_resident_blocks_follow_the_occupancy_rules(threads, regs, smem, blocks):
    assert resident_blocks(H200, threads, regs, smem) == blocks


def _scale(grid: str, loop: bool) -> str:
    body = ("  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; "
            "i += blockDim.x * gridDim.x) y[i] = a * x[i] + b;\n" if loop else
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = a * x[i] + b;\n")
    return (f"// kltrans: launch scale grid={grid} block=256\n"
            'extern "C" __global__ void scale(const float* x, float* y, float a, float b, '
            f"int n) {{\n{body}}}\n")


def _fill(src: str) -> Fill:
    u = parse(src, "k.cu")
    res = compile_unit(u, arch="sm_90").resource("scale")
    got, why = fill(u, "scale", SCALE, {"registers": res.registers,
                                         "spill_stores": res.spill_stores,
                                         "smem_static": res.smem_static}, "sm_90")
    assert got is not None, why
    return got


def test_a_grid_capped_below_one_wave_is_refused_a_full_one_kept():
    naive = _fill(_scale("ceil_div(n, 256)", loop=False))
    assert naive.fraction == 1.0 and naive.blocks == 262144  # n = 2^26 at the bench size
    # ruleid: one block per SM, 256 of its 2048 thread slots
    ok, why = judge(naive, _fill(_scale("min(ceil_div(n, 256), 132)", loop=True)))
    assert not ok and "emptier" in why and "12.5%" in why
    # ok: two waves' worth of blocks still fill every slot
    ok, why = judge(naive, _fill(_scale("min(ceil_div(n, 256), 2048)", loop=True)))
    assert ok, why


def test_spills_are_refused_and_a_launch_without_a_contract_is_not_modelled():
    a = Fill(100, 256, 8, 1.0, 0, "x")
    ok, why = judge(a, Fill(100, 256, 8, 1.0, 64, "x"))
    assert not ok and "spills" in why
    got, why = fill(parse(b"__global__ void k() {}\n", "k.cu"), "k", SCALE, {"registers": 8})
    assert got is None and "no launch contract" in why
