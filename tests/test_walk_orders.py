"""Every order of the simplify steps from a state (kltrans.lineage.orders): a GPU walk
takes them in an order its timings choose, so none may strand the walk short of naive."""

import os

import pytest

from kltrans.lineage.orders import context_for, explore

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LN = os.path.join(ROOT, "corpus", "layernorm")


def _read(*p):
    return open(os.path.join(ROOT, *p), "rb").read()


def test_the_orders_from_late_in_layernorms_lineage_all_end_at_its_naive_end():
    import json

    doc = json.load(open(os.path.join(LN, "lineage", "lineage.json")))
    got = explore(_read("corpus", "layernorm", "lineage", "states", "38-direct-group-sum.cu"),
                  context_for(LN))
    assert got.complete and not got.stuck
    # direct-group-sum twice more and ungroup-rows commute partly: several orders, one end
    assert got.states > 4
    assert [e.hash for e in got.naive] == [doc["states"][-1]["hash"]]


def test_a_state_no_pass_simplifies_is_a_stuck_end():
    src = b"""// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, int n)
{
    __shared__ float t[256];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    t[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) {
        y[i] = 2.0f * t[255 - threadIdx.x];
    }
}
"""
    got = explore(src, context_for(LN, "scale"))
    assert got.complete and got.states == 1 and not got.naive
    [end] = got.stuck
    assert end.path == [] and any(m == "shared memory" for m, _ in end.residual)


@pytest.mark.slow
@pytest.mark.sampled(0)  # every order explored: KLTRANS_FULL_SWEEPS=1 (full_sweeps.txt)
def test_every_order_from_layernorms_stuck_rewalk_ends_naive():
    """The H200 re-walk of layernorm took direct-group-sum on ln_row_scalar while its
    register twin was still dispatched, and the twin's last reload while the streamed
    path still called the unpack helper; both orders ended stuck (3 stuck ends of 232
    states from its state 34). With the no-twin and helper-goes preconditions, and
    scalarize-bf16's whole range at one thread per row, every order from there ends
    naive: at the naive end of the lineage the re-walk then reached on the H200 from that
    state (installed as corpus/layernorm/lineage; its states 0-34 are the re-walk's)."""
    import json

    doc = json.load(open(os.path.join(LN, "lineage", "lineage.json")))
    got = explore(_read("corpus", "layernorm", "lineage", "states", "34-reload-bf16-row.cu"),
                  context_for(LN))
    assert got.complete and not got.stuck, [(e.hash, e.path) for e in got.stuck]
    assert [e.hash for e in got.naive] == [doc["states"][-1]["hash"]]


@pytest.mark.slow
@pytest.mark.sampled(0)  # every order explored: KLTRANS_FULL_SWEEPS=1 (full_sweeps.txt)
@pytest.mark.parametrize("workload", ["histogram"])
def test_every_order_from_the_expert_ends_naive(workload):
    """Re-rolling the middle byte atomics of histogram's word helper before
    scalarize-bytes removed the byte split left a split no pass removes: every one of 6
    random orders ended stuck. With reroll's not-generated precondition, all 174 states
    from the expert lead to the committed naive end."""
    import json

    d = os.path.join(ROOT, "corpus", workload)
    got = explore(_read("corpus", workload, "expert.cu"), context_for(d))
    doc = json.load(open(os.path.join(d, "lineage", "lineage.json")))
    assert got.complete and not got.stuck, [(e.hash, e.path) for e in got.stuck]
    assert [e.hash for e in got.naive] == [doc["states"][-1]["hash"]]
