"""The fork server of CPU gate workers (kltrans.gate.forkserver): a job forked from it
gives what a fresh worker gives, gets the caller's environment, is killed at its timeout
without ending the server, and a server that died is replaced; jobs from several threads
share one server."""

import os
import threading

import pytest

from kltrans.gate import forkserver
from kltrans.gate.worker import run_job

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GELU = os.path.join(ROOT, "corpus", "heldout", "gelu")


def _job(wl=GELU, sizes=({"n": 15},), **kw):
    from kltrans.gate.run import pick_kernel
    from kltrans.syntax.unit import load
    from kltrans.workload.spec import load_workload

    path = os.path.join(wl, "naive.cu")
    [u] = load(path)
    name, ne = pick_kernel(load_workload(wl), path, u, None)
    return {"kind": "gate", "source": open(path).read(), "path": path, "kernel": name,
            "name_expression": ne, "workload": wl, "backend": "cpu", "stages": ["correct"],
            "sizes": list(sizes) if sizes else None, **kw}


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("KLTRANS_GATE_FORKSERVER", "1")
    c = forkserver.client()
    assert c is not None and c.proc.poll() is None
    return c


def _checks(out):
    """The correct stage's checks: how many, and each one's error measures."""
    c = out["correct"]
    return c["checks"], [(e["size"], e["seed"], e["run"], e["max_abs"]) for e in c["errors"]]


def test_a_forked_job_gives_what_a_fresh_worker_gives(server, monkeypatch):
    before = server.next_id
    forked = run_job(_job(sizes=None), 300)
    assert server.next_id == before + 1  # it went through the server
    monkeypatch.setenv("KLTRANS_GATE_FORKSERVER", "0")
    fresh = run_job(_job(sizes=None), 300)
    assert forked["ok"] and fresh["ok"], (forked, fresh)
    assert _checks(forked) == _checks(fresh) and _checks(fresh)[0] >= 9
    assert set(forked["phases"]) == set(fresh["phases"])


def test_the_callers_environment_reaches_the_forked_job(server, tmp_path):
    """The server started with another environment: each job gets the one of its call
    (here a compiler that fails, and an empty build cache so that it is called)."""
    env = {"KLTRANS_CXX": "false", "KLTRANS_CACHE_DIR": str(tmp_path)}
    out = run_job(_job(), 300, env=env)
    assert not out["ok"] and out["verdict"] == "error", out
    assert run_job(_job(), 300, env={"KLTRANS_CACHE_DIR": str(tmp_path)})["ok"]


def test_a_job_past_its_timeout_is_killed_and_the_server_goes_on(server):
    """A kernel that never ends: past a 2 s timeout its child is killed (verdict
    timeout); the server serves the next job."""
    import psutil

    job = _job()
    body = job["source"].index("{", job["source"].index(job["kernel"])) + 1
    job["source"] = (job["source"][:body] + " volatile int spin = 1; while (spin) { } " +
                     job["source"][body:])
    kids = set()
    seen = threading.Event()

    def watch():  # the forked child, while it runs
        while not seen.is_set():
            kids.update(p.pid for p in psutil.Process(server.proc.pid).children())
            seen.wait(0.1)

    w = threading.Thread(target=watch)
    w.start()
    try:
        out = run_job(job, 2.0)
    finally:
        seen.set()
        w.join()
    assert out["verdict"] == "timeout" and "within 2 s" in out["reason"], out
    assert kids and not any(psutil.pid_exists(k) and psutil.Process(k).status() !=
                            psutil.STATUS_ZOMBIE for k in kids)
    assert server.proc.poll() is None and not server.jobs
    assert run_job(_job(), 300)["ok"]


def test_a_server_that_died_is_replaced(server):
    server.proc.kill()
    server.proc.wait()
    out = run_job(_job(), 300)
    assert out["ok"], out
    again = forkserver.client()
    assert again is not server and again.proc.poll() is None


def test_jobs_from_threads_share_one_server(server):
    before = server.next_id
    outs = [None] * 3

    def one(i):
        outs[i] = run_job(_job(), 300)

    ts = [threading.Thread(target=one, args=(i,)) for i in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(300)
    assert all(o and o["ok"] for o in outs), outs
    assert forkserver.client() is server and server.next_id == before + 3


def test_the_server_ends_with_its_client(server):
    """Its stdin closed (its client's process ended): it exits, and kills what it runs."""
    c = forkserver.Client()
    c.close()
    assert c.proc.returncode is not None


def test_a_job_from_a_directory_that_was_removed(server, tmp_path, monkeypatch):
    """The caller's working directory is gone (a test's temporary one): the job still
    runs (its paths are absolute), as a fresh worker's would."""
    d = tmp_path / "gone"
    d.mkdir()
    monkeypatch.chdir(d)
    d.rmdir()
    assert run_job(_job(), 300)["ok"]
