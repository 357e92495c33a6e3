import hashlib
import os
import shutil

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
ROOT = os.path.dirname(HERE)

# every gate run draws extra test sizes and the emulator's barrier order from a fresh
# secret (kltrans.gate.correct.draw_seed); the suite fixes it so that a run can be
# repeated (tests/test_sandbox.py draws fresh ones on purpose)
os.environ.setdefault("KLTRANS_GATE_SEED", "20261206")


def _has_gpu() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        from cuda.bindings import driver

        (err,) = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return False
        err, n = driver.cuDeviceGetCount()
        return err == driver.CUresult.CUDA_SUCCESS and n > 0
    except Exception:
        return False


def _sample(config, items):
    """Items marked ``sampled(n)``: a stable one in n (by a hash of the test id), unless
    KLTRANS_FULL_SWEEPS=1; ``sampled(0)``: only then. The rest are deselected (pytest
    counts them)."""
    if os.environ.get("KLTRANS_FULL_SWEEPS") == "1":
        return
    keep, drop = [], []
    for item in items:
        m = item.get_closest_marker("sampled")
        h = int(hashlib.sha256(item.nodeid.encode()).hexdigest(), 16)
        out = m is not None and (m.args[0] == 0 or h % m.args[0])
        (drop if out else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collection_modifyitems(config, items):
    _sample(config, items)
    if any("gpu" in item.keywords for item in items) and not _has_gpu():
        skip = pytest.mark.skip(reason="gpu: no NVIDIA GPU on this machine (the test's "
                                       "docstring says where its GPU run is saved)")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture
def data_dir():
    return DATA


@pytest.fixture
def llm_server(monkeypatch):
    """A scripted OpenAI-compatible server on loopback (tests/llm_server.py), with
    OPENAI_API_KEY set and OPENAI_BASE_URL unset; stopped after the test."""
    import importlib.util
    import sys

    name = "kltrans_tests_llm_server"
    mod = sys.modules.get(name)
    if mod is None:
        spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "llm_server.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    server = mod.LLMServer().start()
    try:
        yield server
    finally:
        server.stop()
