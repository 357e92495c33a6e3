"""Which instantiation a rewritten state of a template kernel is gated as: the one its
launch header names, since a step may add a template parameter (template-block-size) or
drop one (runtime-block-size). The walk gated rmsNorm<float> as the expert's
``rmsNorm<float, 256>`` and NVRTC refused the name."""

from __future__ import annotations

import os

from kltrans.gate.run import state_instantiation
from kltrans.gate.tasks import gate_task

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KERNEL = """// kltrans: launch scale{ARGS} grid=ceil_div(n, 128) block=128
{HEAD}__global__ void scale(const T* x, T* y, int n)
{
    int i = blockIdx.x * {BLOCK} + threadIdx.x;
    if (i < n)
        y[i] = x[i] * 2.0f;
}
"""


def _src(args: str, head: str, block: str) -> bytes:
    return KERNEL.replace("{ARGS}", args).replace("{HEAD}", head) \
        .replace("{BLOCK}", block).encode()


def test_the_launch_header_names_the_instantiation_of_each_state():
    two = _src("<float, 128>", "template <class T, int B>\n", "B")
    one = _src("<float>", "template <class T>\n", "blockDim.x")
    plain = _src("", "typedef float T;\n", "blockDim.x")
    assert state_instantiation(two, "scale", "scale<float>") == "scale<float, 128>"
    assert state_instantiation(one, "scale", "scale<float, 128>") == "scale<float>"
    assert state_instantiation(plain, "scale", "scale<float, 128>") is None
    # a header without template arguments: the variant's instantiation stays
    bare = _src("", "template <class T>\n", "blockDim.x")
    assert state_instantiation(bare, "scale", "scale<float>") == "scale<float>"


def test_a_state_that_dropped_a_template_parameter_passes_the_gate_as_itself():
    one = _src("<float>", "template <class T>\n", "blockDim.x").decode()
    r = gate_task({"source": one, "name": "scale.cu", "kernel": "scale",
                   "workload": os.path.join(ROOT, "tests", "data", "workloads", "scale"),
                   "name_expression": "scale<float, 128>", "backend": "cpu",
                   "stages": ["compile"]})
    assert r["fail"] is not None   # the stale name: NVRTC cannot instantiate it
    from kltrans.lineage.walk import WalkOptions, _gate_item
    from kltrans.workload.spec import load_workload

    wl = load_workload(os.path.join(ROOT, "tests", "data", "workloads", "scale"))
    item = _gate_item(one.encode(), "scale.cu", WalkOptions(workload=wl.path), wl, "scale",
                      "scale<float, 128>", None, "cpu")
    assert item["name_expression"] == "scale<float>"
    item["stages"] = ["compile"]
    assert gate_task(item)["fail"] is None
