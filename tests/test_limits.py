"""Device limits at the compile stage (kltrans.gate.limits), on every backend: a launch a
GPU would refuse is refused before the correct stage, with the limit named. Each file of
tests/data/workloads/scale/limits says what the reason must contain (``// expect:
compile: ...``, as the hostile kernels say it)."""

import glob
import os
import re

import pytest

from kltrans.gate.limits import maxntid
from kltrans.gate.run import gate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCALE = os.path.join(ROOT, "tests", "data", "workloads", "scale")
CASES = sorted(glob.glob(os.path.join(SCALE, "limits", "*.cu")))


@pytest.mark.parametrize("path", CASES, ids=os.path.basename)
def test_a_launch_over_a_device_limit_is_refused(path):
    want = re.search(r"^// expect: compile: (.+)$", open(path).read(), re.M).group(1)
    rep = gate(path, SCALE, backend="cpu", stages=("compile", "correct"))
    [compile_stage] = rep.stages
    assert compile_stage.status == "fail" and want in compile_stage.reason, compile_stage.reason
    assert compile_stage.data["kind"] == "limits"


def test_a_kernel_within_the_limits_passes():
    """ok: the reference kernel (256 threads, 12 registers, no shared memory)."""
    rep = gate(os.path.join(SCALE, "scale.cu"), SCALE, backend="cpu",
               stages=("compile", "correct"))
    assert [s.status for s in rep.stages] == ["pass", "pass"]


def test_maxntid_is_read_per_entry():
    ptx = (".visible .entry a(\n .param .u64 p\n)\n.maxntid 128, 2, 1\n{\n ret;\n}\n"
           ".visible .entry b(\n .param .u64 p\n)\n{\n ret;\n}\n")
    assert maxntid(ptx, "a") == 256
    assert maxntid(ptx, "b") is None  # no bounds: no limit
