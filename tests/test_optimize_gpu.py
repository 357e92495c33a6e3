"""kltrans optimize on a real GPU: acceptance by paired timing (faster in every trial).

Skipped where there is no GPU; the real run is saved in bench/results/optimize_gpu.txt
(made by `python3 bench/optimize_gpu.py --out DIR` on an H200, see tools/gpu-run.sh)."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.gpu
def test_optimize_on_gpu_accepts_only_what_is_faster(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import optimize_gpu

    assert optimize_gpu.main(["--targets", "gelu", "--budget", "3", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "optimize_gpu.txt").read_text()
    assert "every accepted candidate faster in every paired trial, every rejected-as-slower one not: yes" in text
