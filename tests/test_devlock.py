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


SH_PROBE = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
try:
    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    print("free")
except BlockingIOError:
    print("held")
"""


def _probe_shared(key: str) -> str:
    p = subprocess.run([sys.executable, "-c", SH_PROBE, lock_path(key)], capture_output=True,
                       text=True, timeout=60)
    return p.stdout.strip()


def test_correct_stages_share_the_lock_and_timings_do_not(tmp_path):
    key = f"0000:{os.getpid():08x}:shared.0"
    with gpu_lock(key, shared=True):
        assert _probe_shared(key) == "free"  # another correct stage gets in
        assert _probe(key) == "held"  # a timing does not
        with gpu_lock(key, shared=True):  # nor does a second reader block
            assert _probe(key) == "held"
    assert _probe(key) == "free"
    with gpu_lock(key):
        assert _probe_shared(key) == "held"  # a correct stage waits for a timing
    assert _probe_shared(key) == "free"


def test_a_waiting_timing_goes_before_later_correct_stages():
    """A timing that waits for the correct stages holding the GPU is not overtaken by a
    correct stage that arrives after it: the turnstile keeps that one out."""
    import threading

    key = f"0000:{os.getpid():08x}:order.0"
    order = []
    first_reader_in, release_first = threading.Event(), threading.Event()

    def reader1():
        with gpu_lock(key, shared=True):
            first_reader_in.set()
            release_first.wait(60)

    def writer():
        with gpu_lock(key):
            order.append("timing")

    def reader2():
        with gpu_lock(key, shared=True):
            order.append("correct")

    t1 = threading.Thread(target=reader1)
    t1.start()
    assert first_reader_in.wait(60)
    tw = threading.Thread(target=writer)
    tw.start()
    turnstile = lock_path(key)[: -len(".lock")] + ".turnstile"
    for _ in range(600):  # until the timing holds the turnstile (and waits for the GPU)
        p = subprocess.run([sys.executable, "-c", PROBE, turnstile], capture_output=True,
                           text=True, timeout=60)
        if p.stdout.strip() == "held":
            break
    else:
        raise AssertionError("the timing never reached the turnstile")
    t2 = threading.Thread(target=reader2)
    t2.start()
    t2.join(0.5)
    assert order == []  # the late correct stage waits, although only a reader holds the GPU
    release_first.set()
    for t in (t1, tw, t2):
        t.join(60)
    assert order == ["timing", "correct"]


def test_a_correct_stage_past_its_run_limit_ends_its_worker_with_timeout():
    """The watchdog (gate.worker._watchdog): a correct stage still running past
    ``run_timeout_s`` ends its worker (SIGALRM, which needs no GIL: a hung kernel's
    driver call may hold it) with the verdict ``timeout`` -- long before the job's own
    timeout -- and releases everything it held."""
    wl = os.path.join(ROOT, "corpus", "histogram")
    from kltrans.gate.run import pick_kernel
    from kltrans.syntax.unit import load
    from kltrans.workload.spec import load_workload

    path = os.path.join(wl, "naive.cu")
    [u] = load(path)
    name, ne = pick_kernel(load_workload(wl), path, u, None)
    job = {"kind": "gate", "source": open(path).read(), "path": path, "kernel": name,
           "name_expression": ne, "workload": wl, "backend": "cpu", "stages": ["correct"],
           "run_timeout_s": 0.5}  # every test size: seconds on the emulator
    out = run_job(job, 300)
    assert out["verdict"] == "timeout" and "past 0.5 s" in out["reason"], out
    assert out["seconds"] < 60
    job.pop("run_timeout_s")
    job["sizes"] = [{"n": 15}]
    assert run_job(job, 300)["ok"]  # without the limit, the same job passes
