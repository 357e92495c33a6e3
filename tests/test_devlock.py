"""The per-GPU lock of gate workers (kltrans.gate.devlock) and the phase times workers
report. The lock is a plain fcntl lock on a file, so it is checked here without a GPU:
while one holder has it, another process cannot take it, and it is free again after."""

import json
import os
import subprocess
import sys

from kltrans.gate.devlock import gpu_lock, lock_path
from kltrans.gate.worker import run_job

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("free")
except BlockingIOError:
    print("held")
"""


def _probe(key: str) -> str:
    p = subprocess.run([sys.executable, "-c", PROBE, lock_path(key)], capture_output=True,
                       text=True, timeout=60)
    return p.stdout.strip()


def test_lock_excludes_other_processes_while_held(tmp_path):
    key = f"0000:{os.getpid():08x}:test.0"  # a PCI-bus-id-like name no GPU has
    waits: dict = {}
    assert _probe(key) == "free"
    with gpu_lock(key, waits):
        assert _probe(key) == "held"
        assert os.path.basename(lock_path(key)).endswith(".lock")
        assert ":" not in os.path.basename(lock_path(key))  # a safe file name
    assert _probe(key) == "free"
    assert waits["lock_wait"] >= 0.0


def test_lock_is_released_when_the_holder_dies(tmp_path):
    key = f"0000:{os.getpid():08x}:dies.0"
    code = ("import os, sys; sys.path.insert(0, %r)\n"
            "from kltrans.gate.devlock import gpu_lock\n"
            "with gpu_lock(%r):\n    os._exit(3)\n") % (ROOT, key)
    p = subprocess.run([sys.executable, "-c", code], timeout=60)
    assert p.returncode == 3
    assert _probe(key) == "free"


def test_worker_reports_where_its_time_went():
    wl = os.path.join(ROOT, "corpus", "reduce-sum")
    src = open(os.path.join(wl, "naive.cu")).read()
    from kltrans.syntax.unit import load
    from kltrans.gate.run import pick_kernel
    from kltrans.workload.spec import load_workload

    w = load_workload(wl)
    [u] = load(os.path.join(wl, "naive.cu"))
    name, ne = pick_kernel(w, os.path.join(wl, "naive.cu"), u, None)
    job = {"kind": "gate", "source": src, "path": os.path.join(wl, "naive.cu"),
           "kernel": name, "name_expression": ne, "workload": wl, "backend": "cpu",
           "stages": ["correct"], "sizes": [{"n": 1000}], "seeds": [0]}
    out = run_job(job, 300)
    assert out["ok"], json.dumps(out)[:2000]
    ph = out["phases"]
    assert {"setup", "compile", "correct", "total"} <= set(ph)
    assert ph["total"] >= ph["correct"] > 0.0
    assert "lock_wait" not in ph  # the CPU emulator takes no GPU lock
