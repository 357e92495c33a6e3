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
    files = sorted(os.listdir(tmp_path / "inputs"))
    assert len(files) == 2 and files[1] == files[0] + ".sample"  # the array, its sample hash
    b = bench_input(wl, x, (4099,), 0, 0)
    assert isinstance(b, np.memmap) and np.array_equal(a, b)
    # another seed or shape is another input
    assert not np.array_equal(a, bench_input(wl, x, (4099,), 1, 0))
    assert bench_input(wl, x, (77,), 0, 0).shape == (77,)
    assert len(os.listdir(tmp_path / "inputs")) == 6
    # a truncated file is not trusted: drawn again, and the same values come back
    path = tmp_path / "inputs" / files[0]
    path.write_bytes(path.read_bytes()[:100])
    c = bench_input(wl, x, (4099,), 0, 0)
    assert np.array_equal(a, c)
    assert np.array_equal(np.load(path), a)
    # a header of null bytes (numpy's header parser raises SyntaxError on Python 3.12)
    raw = bytearray(path.read_bytes())
    raw[:64] = bytes(64)
    path.write_bytes(bytes(raw))
    assert np.array_equal(bench_input(wl, x, (4099,), 0, 0), a)
    # the right header over data that came back as zeros: the sample hash catches it
    raw = bytearray(path.read_bytes())
    raw[128:] = bytes(len(raw) - 128)
    path.write_bytes(bytes(raw))
    assert np.load(path).shape == a.shape and not np.array_equal(np.load(path), a)
    assert np.array_equal(bench_input(wl, x, (4099,), 0, 0), a)
    assert np.array_equal(np.load(path), a)
