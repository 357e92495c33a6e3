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
    assert ("every accepted (or outranked) candidate faster in every paired trial, every "
            "rejected-as-slower one not: yes") in text


def test_the_gpu_check_reads_each_verdict():
    """What the GPU test checks of a trajectory, on a made-up one (no GPU needed)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from optimize_gpu import check

    def c(verdict, trials, stage="profile", reason=""):
        return {"spec": verdict, "verdict": verdict, "stage": stage, "reason": reason,
                "effect": {"ok": True, "speedup_trials": trials}}

    good = [c("accepted", [1.2, 1.1]), c("outranked", [1.05, 1.01]),
            c("rejected", [1.2, 0.99]), c("rejected", [1.004, 1.002], reason="below --min-gain")]
    assert check({"candidates": good}) == []
    bad = [c("accepted", [1.2, 0.99]), c("outranked", [0.9]), c("kept", [1.1]),
           c("rejected", [1.1, 1.2])]
    assert [p.split(":")[0] for p in check({"candidates": bad})] == [
        "accepted without being faster in every trial",
        "outranked without being faster in every trial", "left kept when the search ended",
        "rejected as not faster although faster in every trial"]
