"""The gate on a real GPU: planted offenders rejected with the right reason, a hang and a
fault cost only their worker, and the paired bench tells scalar from float4 copies.

Skipped where there is no GPU; the real run is saved in bench/results/gate_gpu.txt (made by
`python3 bench/gate_gpu.py --out DIR` on an H200, see tools/gpu-run.sh)."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.gpu
def test_gate_on_gpu(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import gate_gpu

    assert gate_gpu.main(["--out", str(tmp_path)]) == 0
    text = (tmp_path / "gate_gpu.txt").read_text()
    assert "float4 faster in every trial: True" in text
