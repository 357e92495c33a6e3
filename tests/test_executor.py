"""The executor behind every parallel gate run (issue 11): the local pool and Dask.

Everything here runs for real on the CPU backend: worker processes of the local pool,
a Dask ``LocalCluster`` (started by ``--cluster local:2``), worker processes killed with
SIGKILL while they hold a task, and lineage walks compared hash for hash.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from kltrans.gate.executor import ExecutorError, LocalExecutor, make_executor, parse_cluster
from kltrans.gate.tasks import placement_task, run_task
from kltrans.lineage import WalkOptions, walk
from kltrans.passes.facts import Context
from kltrans.passes.manager import run_pipeline
from kltrans.passes.pipeline import parse_pipeline
from kltrans.syntax import parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCALE = os.path.join(HERE, "data", "workloads", "scale")
FORWARD = "restrict-pointers,vectorize-access,add-launch-bounds"

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.xdist_group("dask")]


def _register_by_value():
    """The Dask workers are fresh processes that cannot import this test module by name:
    ship its functions by value."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])


# ------------------------------------------------- tasks used by the fault tests (Dask)
def raise_and_count(item):
    with open(item["log"], "a") as f:
        f.write(f"{os.getpid()}\n")
    raise RuntimeError("this task always fails")


def kill_own_worker(item):
    """Runs in a Dask worker process: record the attempt, then die as a GPU fault would."""
    with open(item["log"], "a") as f:
        f.write(f"{os.getpid()}\n")
    os.kill(os.getpid(), signal.SIGKILL)


def echo(item):
    return {"value": item["value"], "pid": os.getpid()}


# ------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def expert(tmp_path_factory):
    d = tmp_path_factory.mktemp("expert")
    naive = open(os.path.join(SCALE, "scale.cu"), "rb").read()
    ctx = Context.from_strings(("no_alias(*)", "aligned(*,16)"))
    res = run_pipeline(parse(naive, "scale.cu"), parse_pipeline(FORWARD), ctx)
    path = d / "scale_expert.cu"
    path.write_bytes(res.unit.source)
    return str(path)


def _opts(expert, out, **kw):
    return WalkOptions(SCALE, expert=expert, backend="cpu", out=str(out), size_limit=1000,
                       probes=2, progress=False, **kw)


@pytest.fixture(scope="module")
def local_walk(expert, tmp_path_factory):
    return walk(_opts(expert, tmp_path_factory.mktemp("local") / "lineage", jobs=2))


@pytest.fixture(scope="module")
def dask2():
    _register_by_value()
    with make_executor("local:2", "cpu") as ex:
        yield ex


def _shape(doc):
    """What must not depend on where the gate ran: states, steps, alternatives,
    rejections and probes (not timings or temporary paths)."""
    def cand(c):
        return (c["pass"], c["site"]["index"], c.get("after_hash"), c.get("stage"))

    return {"states": [s["hash"] for s in doc["states"]],
            "termination": doc["termination"]["kind"],
            "steps": [{"pass": t["pass"], "site": t["site"]["index"], "before": t["before"],
                       "after": t["after"], "chosen_by": t["chosen_by"],
                       "gate": [(g["stage"], g["status"]) for g in t["gate"]],
                       "alternatives": [cand(c) for c in t["alternatives"]],
                       "rejected": [cand(c) for c in t["rejected"]],
                       "probes": [(p["label"], p.get("after_hash"), p["outcome"], p.get("stage"))
                                  for p in t["probes"]]}
                      for t in doc["transitions"]]}


# ----------------------------------------------------------------- cluster strings
@pytest.mark.parametrize("spec", ["bogus", "local", "local:0", "local:-1", "local:two",
                                  "tcp://host", "http://h:8786", "tcp://h:99999", ""])
def test_bad_cluster_strings_are_usage_errors(spec, capsys, tmp_path):
    from kltrans.cli import main

    with pytest.raises(ExecutorError):
        parse_cluster(spec)
    assert main(["lineage", SCALE, "--backend", "cpu", "--cluster", spec,
                 "--out", str(tmp_path / "l")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kltrans: error: --cluster") and "Traceback" not in err
    assert not (tmp_path / "l").exists()
    assert main(["bench-corpus", os.path.join(HERE, "data", "workloads"), "--backend", "cpu",
                 "--cluster", spec]) == 2
    assert "kltrans: error: --cluster" in capsys.readouterr().err


def test_good_cluster_strings_parse():
    assert parse_cluster(None) == ("local", None)
    assert parse_cluster("local:3") == ("local-dask", 3)
    assert parse_cluster("tcp://10.0.0.5:8786") == ("address", "tcp://10.0.0.5:8786")
    assert parse_cluster("tls://sched.example.org:8786")[0] == "address"


def test_cluster_without_dask_is_a_usage_error(tmp_path):
    """dask missing (Python's own way of marking a module absent): exit 2, one line."""
    code = ("import sys; sys.modules['dask'] = None; sys.modules['distributed'] = None\n"
            "from kltrans.cli import main\n"
            f"sys.exit(main(['lineage', {SCALE!r}, '--backend', 'cpu', '--cluster', "
            f"'local:2', '--out', {str(tmp_path / 'l')!r}]))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == ("kltrans: error: --cluster needs dask "
                                "(pip install 'kltrans[scale]')")


# ---------------------------------------------------------------------- local pool
def test_local_results_come_back_in_input_order():
    items = [{"index": i, "sleep_s": 0.6 - 0.15 * i} for i in range(4)]  # later ones finish first
    seen = []
    with make_executor(None, "cpu", jobs=2) as ex:
        assert (ex.kind, ex.slots) == ("local", 2)
        out = ex.map(placement_task, items, on_result=lambda i, r: seen.append(i))
        assert len(set(ex.worker_pids())) == 2  # two worker processes, reused
    assert [r["index"] for r in out] == [0, 1, 2, 3]
    assert sorted(seen) == [0, 1, 2, 3] and seen != [0, 1, 2, 3]
    assert len({r["pid"] for r in out}) == 2 and os.getpid() not in {r["pid"] for r in out}


def test_local_slots_pin_one_gpu_each(monkeypatch):
    """On the cuda backend there is one slot per visible GPU; each slot's worker process,
    and the gate subprocesses it starts, see only their GPU."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    with make_executor(None, "cuda") as ex:
        assert ex.slots == 2 and ex.devices == ["3", "5"]
        out = ex.map(placement_task, [{"index": i, "sleep_s": 0.3} for i in range(6)], gpu=True)
    for r in out:
        assert r["cuda_visible_devices"] == r["subprocess_cuda_visible_devices"]
    assert {r["cuda_visible_devices"] for r in out} == {"3", "5"}
    by_pid = {}
    for r in out:
        by_pid.setdefault(r["pid"], set()).add(r["cuda_visible_devices"])
    assert all(len(v) == 1 for v in by_pid.values())  # a process keeps its GPU


def test_local_task_that_fails_twice_is_lost_and_others_are_kept():
    items = [{"task": "placement", "index": 0}, {"task": "no-such-task"},
             {"task": "placement", "index": 2}]
    with LocalExecutor([None, None]) as ex:
        out = ex.map(run_task, items)
    assert out[1]["verdict"] == "lost" and out[1]["ok"] is False
    assert out[1]["attempts"] == 2 and "unknown task 'no-such-task'" in out[1]["reason"]
    assert [out[0]["index"], out[2]["index"]] == [0, 2]


def test_local_worker_killed_mid_task_is_run_again():
    with LocalExecutor([None]) as ex:
        box = {}
        t = threading.Thread(target=lambda: box.setdefault(
            "out", ex.map(placement_task, [{"index": 7, "sleep_s": 2.0}])))
        t.start()
        deadline = time.time() + 60
        while not ex.worker_pids() and time.time() < deadline:
            time.sleep(0.05)
        [victim] = ex.worker_pids()
        time.sleep(0.5)  # the task is sleeping in it now
        os.kill(victim, signal.SIGKILL)
        t.join(120)
    [r] = box["out"]
    assert r["index"] == 7 and r["pid"] != victim



def test_a_worker_ends_with_the_process_that_started_it():
    """A caller killed by a signal (a terminal's kill, a CI timeout) cannot close its
    workers; each ends itself, and what it started, within seconds."""
    caller = subprocess.Popen([sys.executable, "-c", """
import sys, threading, time
from kltrans.gate.executor import LocalExecutor
from kltrans.gate.tasks import placement_task
ex = LocalExecutor([None])
threading.Thread(target=lambda: ex.map(placement_task, [{"index": 1, "sleep_s": 120.0}]),
                 daemon=True).start()
while not ex.worker_pids():
    time.sleep(0.05)
print(ex.worker_pids()[0], flush=True)
time.sleep(300)
"""], stdout=subprocess.PIPE, text=True)
    worker = int(caller.stdout.readline())
    os.kill(caller.pid, signal.SIGKILL)
    caller.wait()
    deadline = time.time() + 15
    while time.time() < deadline:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{worker}/stat") as f:  # a zombie no one reaps is gone too
            if f.read().split(")")[-1].split()[0] == "Z":
                break
        time.sleep(0.2)
    else:
        os.kill(worker, signal.SIGKILL)
        pytest.fail("the worker outlived its caller by 15 s")


# ----------------------------------------------------------------------------- Dask
def test_dask_results_in_order_and_gpu_workers_pinned(monkeypatch):
    """local:2 on the cuda backend: one worker per GPU, each pinned by its nanny and
    declaring GPU=1; GPU tasks ask for it (placement only: no GPU is used here)."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    with make_executor("local:2", "cuda") as ex:
        assert (ex.kind, ex.slots) == ("dask", 2)
        info = ex.client.scheduler_info()["workers"]
        assert sorted(w["resources"].get("GPU") for w in info.values()) == [1, 1]
        out = ex.map(placement_task, [{"index": i, "sleep_s": 0.5 - 0.1 * i} for i in range(5)],
                     gpu=True)
    assert [r["index"] for r in out] == list(range(5))
    assert {r["cuda_visible_devices"] for r in out} == {"3", "5"}
    assert all(r["subprocess_cuda_visible_devices"] == r["cuda_visible_devices"] for r in out)


def test_dask_task_that_raises_twice_is_lost(dask2, tmp_path):
    log = tmp_path / "attempts"
    out = dask2.map(raise_and_count, [{"log": str(log)}])
    assert out[0]["verdict"] == "lost" and "always fails" in out[0]["reason"]
    assert len(log.read_text().split()) == 2  # run once more, then a verdict: no loop


def test_dask_worker_that_dies_every_time_is_lost_after_bounded_retries(dask2, tmp_path):
    log = tmp_path / "attempts"
    out = dask2.map(kill_own_worker, [{"log": str(log)}])
    assert out[0]["verdict"] == "lost" and "died" in out[0]["reason"]
    assert len(log.read_text().split()) == 3  # allowed-failures 2: three attempts in all
    again = dask2.map(echo, [{"value": v} for v in range(3)])  # the cluster recovered
    assert [r["value"] for r in again] == [0, 1, 2]


@pytest.mark.slow  # a walk over Dask, each step gated on the CPU emulator: run once, on 3.11
def test_dask_walk_gives_the_local_lineage(expert, local_walk, dask2, tmp_path):
    doc = walk(_opts(expert, tmp_path / "lineage", executor=dask2))
    assert doc["termination"]["kind"] == "naive" and len(doc["transitions"]) == 3
    assert _shape(doc) == _shape(local_walk)
    on_disk = json.load(open(tmp_path / "lineage" / "lineage.json"))
    assert _shape(on_disk) == _shape(local_walk)


@pytest.mark.slow  # a walk over Dask, each step gated on the CPU emulator: run once, on 3.11
def test_dask_walk_survives_a_worker_killed_mid_task(expert, local_walk, dask2, tmp_path):
    """SIGKILL the worker process that holds a gate task while the walk runs: the task is
    run again on the other worker and the lineage is the same."""
    client = dask2.client
    killed = []

    def killer():
        deadline = time.time() + 120
        while not killed and time.time() < deadline:
            busy = {w: ks for w, ks in client.processing().items() if ks}
            for w, keys in busy.items():
                if any(str(k).startswith("gate_task") for k in keys):
                    pid = client.run(os.getpid, workers=[w])[w]
                    os.kill(pid, signal.SIGKILL)
                    killed.append((w, pid, list(keys)))
                    return
            time.sleep(0.02)

    t = threading.Thread(target=killer)
    t.start()
    doc = walk(_opts(expert, tmp_path / "lineage", executor=dask2))
    t.join()
    assert killed, "no worker was caught holding a gate task"
    assert _shape(doc) == _shape(local_walk)
    lost = [c for tr in doc["transitions"] for c in tr["rejected"] if c.get("stage") == "lost"]
    assert not lost


@pytest.mark.slow  # a walk over Dask, each step gated on the CPU emulator: run once, on 3.11
def test_dask_walk_resumes_without_recomputing(expert, local_walk, dask2, tmp_path):
    out = tmp_path / "lineage"
    part = walk(_opts(expert, out, executor=dask2, max_steps=1))
    assert len(part["transitions"]) == 1
    log = []
    done = walk(_opts(expert, out, executor=dask2, log=log))
    assert any("1 step(s) already taken" in m for m in log)
    assert done["transitions"][0] == part["transitions"][0]  # step 1 is as written
    assert _shape(done) == _shape(local_walk)


@pytest.mark.slow  # a walk over Dask, each step gated on the CPU emulator: run once, on 3.11
def test_cli_lineage_with_cluster(expert, local_walk, tmp_path, capsys):
    from kltrans.cli import main

    rc = main(["lineage", SCALE, "--expert", expert, "--backend", "cpu", "--cluster",
               "local:2", "--size-limit", "1000", "--probes", "2", "--quiet",
               "--out", str(tmp_path / "l"), "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert _shape(doc) == _shape(local_walk)


# ----------------------------------------------------------------- bench/scale_out.py
def _scale_out():
    import importlib.util

    spec = importlib.util.spec_from_file_location("scale_out",
                                                  os.path.join(ROOT, "bench", "scale_out.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow  # gates a corpus on the CPU emulator on two clusters: run once, on 3.11
def test_scale_out_cpu_path(tmp_path, capsys):
    so = _scale_out()
    corpus = str(tmp_path / "corpus")  # two small workloads: copy (2 variants), scale (1)
    for w in ("copy", "scale"):
        shutil.copytree(os.path.join(HERE, "data", "workloads", w), os.path.join(corpus, w))
    rc = so.main(["--backend", "cpu", "--corpus", corpus, "--workers", "1,2",
                  "--out", str(tmp_path)])
    assert rc == 0
    text = (tmp_path / "scale_out.txt").read_text()
    assert text.startswith("# command: python bench/scale_out.py --backend cpu")
    doc = json.loads((tmp_path / "scale_out.json").read_text())
    assert [r["workers"] for r in doc["runs"]] == [1, 2]
    assert doc["runs"][0]["verdicts"] == doc["runs"][1]["verdicts"]
    assert all(v["correct"] == "pass" for v in doc["runs"][0]["verdicts"].values())
    assert doc["runs"][0]["tasks"] == doc["runs"][1]["tasks"] == 3  # copy: 2, scale: 1
    assert set(doc["speedup"]) == {"1", "2"}


@pytest.mark.parametrize("args", [["--workers", "0"], ["--workers", "one"],
                                  ["--corpus", "/nonexistent"]])
def test_scale_out_bad_arguments(args, capsys):
    with pytest.raises(SystemExit) as e:
        _scale_out().main(["--backend", "cpu"] + args)
    assert e.value.code == 2 and "error:" in capsys.readouterr().err


def test_bench_many_gives_each_candidate_its_own_verdict():
    """One worker times several candidates; a candidate the worker cannot take (no kernel
    in it) fails alone before the worker starts, and a worker that fails as a whole (here:
    no GPU, or a GPU worker that cannot start) gives each remaining candidate its
    verdict, in input order."""
    from kltrans.gate.backends import gpu_available
    from kltrans.gate.tasks import bench_many_task

    wl = os.path.join(ROOT, "corpus", "reduce-sum")
    expert = open(os.path.join(wl, "expert.cu")).read()
    item = {"a_source": expert, "a_name": "a.cu", "workload": wl, "trials": 1,
            "side_ms": 20.0, "timeout_s": 120,
            "bs": [{"source": "int x;\n", "name": "nokernel.cu"},
                   {"source": expert, "name": "same.cu"}]}
    out = run_task(dict(item, task="bench_many"))
    r0, r1 = out["results"]
    assert r0["ok"] is False and r0["verdict"] == "error" and "no __global__ kernel" in r0["reason"]
    assert r0["placement"]["pid"] == os.getpid()
    if gpu_available():  # the GPU run is checked in tests/test_walk_gpu.py
        assert r1["ok"] and r1["paired"]["trials_run"] == 1
    else:
        assert r1["ok"] is False and r1["verdict"] in ("error", "crash")
    assert bench_many_task(dict(item, bs=[]))["results"] == []


def test_bench_many_worker_ended_by_its_watchdog_keeps_what_it_timed():
    """A timing worker that the watchdog ended (a candidate too slow to time at the
    bench size) still gives the results its progress lines carry: the candidates it
    finished, the one it was on as ``too-slow``, the rest ``not-run`` (to time again);
    one that crashed gives its verdict to what it had not finished."""
    from kltrans.gate.tasks import _bench_many_progress

    r0 = {"ok": True, "paired": {"ratios": [1.0]}}
    lines = [{"start": 0}, {"done": 0, "result": dict(r0)}, {"start": 1}]
    out = {"ok": False, "verdict": "timeout", "reason": "past 120 s", "lines": lines}
    a, b, c = _bench_many_progress(out, 3, 120.0)
    assert a == r0
    assert b["verdict"] == "too-slow" and "120.0 s" in b["reason"]
    assert c["verdict"] == "not-run"
    # ended in the second round: the first round's timing stays, with why no full one
    lines = [{"start": 0}, {"done": 0, "result": dict(r0)}, {"start_full": 0}]
    [a] = _bench_many_progress(dict(out, lines=lines), 1, 120.0)
    assert a["paired"] == r0["paired"] and a["full_error"]["verdict"] == "too-slow"
    # a crash (no watchdog): what finished stays, the rest has the crash's verdict
    crash = {"ok": False, "verdict": "crash", "reason": "exit -11", "lines": lines[:2]}
    a, b = _bench_many_progress(crash, 2, 120.0)
    assert a == r0 and b["verdict"] == "crash" and b["ok"] is False
