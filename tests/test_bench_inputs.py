"""Timing inputs are drawn once and kept in the cache root; a bad file is drawn again."""

import os

import numpy as np

from kltrans.gate.profile import bench_input
from kltrans.workload.spec import load_workload

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_bench_inputs_are_cached_by_key_and_heal(tmp_path, monkeypatch):
    monkeypatch.setenv("KLTRANS_CACHE_DIR", str(tmp_path))
    wl = load_workload(os.path.join(ROOT, "tests", "data", "workloads", "scale"))
    x = wl.arguments[0]
    a = bench_input(wl, x, (4099,), 0, 0)
    files = os.listdir(tmp_path / "inputs")
    assert len(files) == 1
    b = bench_input(wl, x, (4099,), 0, 0)
    assert isinstance(b, np.memmap) and np.array_equal(a, b)
    # another seed or shape is another input
    assert not np.array_equal(a, bench_input(wl, x, (4099,), 1, 0))
    assert bench_input(wl, x, (77,), 0, 0).shape == (77,)
    assert len(os.listdir(tmp_path / "inputs")) == 3
    # a truncated file is not trusted: drawn again, and the same values come back
    path = tmp_path / "inputs" / files[0]
    path.write_bytes(path.read_bytes()[:100])
    c = bench_input(wl, x, (4099,), 0, 0)
    assert np.array_equal(a, c)
    assert np.array_equal(np.load(path), a)
