"""`kltrans lineage --measure`: the steps of a lineage walked on the CPU, timed on the GPU.

Where there is no GPU the command says so (exit 2) and changes nothing; on a GPU every
step gets a paired effect (its H200 run: `bash tools/measure-gpu.sh run`, which saves the
pytest log as bench/results/gpu_tests.txt; on 2026-12-01 it passed there, run again alone
after the test was pointed at the CPU walk, lineage-cpu)."""

import hashlib
import os
import shutil

import pytest

from kltrans.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _digest(d):
    return {f: hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest()
            for f in sorted(os.listdir(d)) if os.path.isfile(os.path.join(d, f))}


def _cpu_walk_untimed(lin):
    """The CPU walk of histogram (lineage-cpu) copied to ``lin``, its effects (timed by an
    earlier --measure) taken out, as a fresh CPU walk leaves them."""
    import json

    shutil.copytree(os.path.join(ROOT, "corpus", "histogram", "lineage-cpu"), lin)
    doc = json.load(open(lin / "lineage.json"))
    assert doc["config"]["backend"] == "cpu"
    doc.pop("effects_measured_on", None)
    for t in doc["transitions"]:
        t.pop("effect", None)
    (lin / "lineage.json").write_text(json.dumps(doc))


def test_measure_without_a_gpu_exits_2_and_writes_nothing(tmp_path, capsys):
    from kltrans.gate import backends

    if backends.resolve_backend("auto") == "cuda":
        pytest.skip("this machine has a GPU: the no-GPU path is not reachable here")
    lin = tmp_path / "lineage"
    _cpu_walk_untimed(lin)
    before = _digest(lin)
    assert main(["lineage", os.path.join(ROOT, "corpus", "histogram"), "--measure",
                 "--out", str(lin)]) == 2
    assert "needs a GPU" in capsys.readouterr().err
    assert _digest(lin) == before


def test_measure_of_a_lineage_with_every_step_timed_times_nothing(tmp_path, capsys):
    # the installed histogram lineage is the H200 walk: every step has its effect, so there
    # is nothing to time, with or without a GPU, and nothing is written
    lin = tmp_path / "lineage"
    shutil.copytree(os.path.join(ROOT, "corpus", "histogram", "lineage"), lin)
    before = _digest(lin)
    assert main(["lineage", os.path.join(ROOT, "corpus", "histogram"), "--measure",
                 "--out", str(lin), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "8 of 8 step(s) measured on NVIDIA H200; none had to be timed" in out
    assert _digest(lin) == before


def test_measure_names_a_missing_lineage(tmp_path, capsys):
    assert main(["lineage", os.path.join(ROOT, "corpus", "histogram"), "--measure",
                 "--out", str(tmp_path / "none")]) == 2
    assert "no lineage.json to measure" in capsys.readouterr().err


@pytest.mark.gpu
def test_measure_times_every_step_on_the_gpu(tmp_path):
    import json

    lin = tmp_path / "lineage"
    _cpu_walk_untimed(lin)
    assert main(["lineage", os.path.join(ROOT, "corpus", "histogram"), "--measure",
                 "--out", str(lin), "--quiet"]) == 0
    doc = json.load(open(lin / "lineage.json"))
    assert doc["effects_measured_on"]
    for t in doc["transitions"]:
        e = t["effect"]
        assert e["ok"] and e["measured_after_walk"] and len(e["slowdown_trials"]) == 5
        assert e["size"] == {"n": 67108864}  # the naive variant's own bench size
    # the choices stay the CPU walk's
    assert all(t["chosen_by"] == "walk-order" for t in doc["transitions"])
