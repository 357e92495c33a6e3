"""Gate work as plain-data tasks, for any executor (:mod:`kltrans.gate.executor`).

Each task is a module-level function taking one dict of plain data (kernel source or a
path on a shared file system, workload path, stages, sizes, seeds...) and returning a
dict of plain data, so it runs the same in a local pool's worker process and in a Dask
worker: the compile happens in that process (NVRTC), the correct/profile stages in the
gate's worker subprocess (:func:`kltrans.gate.worker.run_job`), which inherits the
process's ``CUDA_VISIBLE_DEVICES``. What a kernel does (a fault, a hang, wrong results)
is a verdict in the result, never an exception.

Every result carries ``placement``: the host, the process and the CUDA_VISIBLE_DEVICES
the work ran under.
"""

from __future__ import annotations

import os
import socket
import tempfile
import time


def placement() -> dict:
    return {"host": socket.gethostname(), "pid": os.getpid(),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


def _materialize(item: dict, d: str, key: str = "source", name_key: str = "name") -> str:
    """The file to gate: ``item["path"]`` as it is, or the source written under ``d``."""
    if item.get(key) is None:
        return item["path"]
    path = os.path.join(d, item.get(name_key) or "kernel.cu")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(item[key])
    return path


def gate_task(item: dict) -> dict:
    """Gate one kernel. ``item``: ``source`` (text) and ``name`` (its file name), or
    ``path`` (a file every worker can read); ``workload`` (folder), ``kernel``,
    ``name_expression``, ``backend``, ``stages`` (default compile, correct), ``arch``,
    ``sizes``, ``seeds``, ``timeout_s``, ``bench_size``.

    Returns ``ok`` (passed, and the correct stage ran), ``stages`` (stage, status, reason,
    seconds), ``resources`` (ptxas), ``code`` (the cubin's hash, when it compiled),
    ``fail`` ((stage, reason) or None), ``checks``, ``profile`` (when profiled),
    ``kernel``, ``seconds`` and ``placement``."""
    from kltrans.gate.run import gate

    t0 = time.perf_counter()
    stages = tuple(item.get("stages") or ("compile", "correct"))
    with tempfile.TemporaryDirectory(prefix="kltrans-task-") as d:
        path = _materialize(item, d)
        rep = gate(path, item["workload"], item.get("kernel"), item.get("backend", "auto"),
                   stages, item.get("arch"), item.get("sizes"), item.get("seeds"),
                   float(item.get("timeout_s", 300.0)), item.get("name_expression"),
                   item.get("bench_size"), item.get("run_timeout_s"))
    out = {"ok": rep.ok and any(s.stage == "correct" for s in rep.stages),
           "stages": [{"stage": s.stage, "status": s.status, "reason": s.reason,
                       "seconds": round(s.seconds, 3)} for s in rep.stages],
           "resources": None, "fail": None, "checks": None, "kernel": rep.kernel}
    for s in rep.stages:
        if s.stage == "compile" and s.data.get("resources"):
            out["resources"] = s.data["resources"]
        if s.stage == "compile" and s.data.get("code"):
            out["code"] = s.data["code"]
        if s.stage == "compile":
            out["warnings"] = s.data.get("warnings") or []
        if s.stage == "correct" and s.data.get("correct"):
            out["checks"] = s.data["correct"].get("checks")
        if s.stage == "correct" and s.data.get("phases"):
            out["phases"] = s.data["phases"]  # the worker's: setup, compile, lock_wait...
        if s.stage == "profile" and s.data.get("profile"):
            out["profile"] = s.data["profile"]
    fail = next((s for s in rep.stages if s.status == "fail"), None)
    if fail is not None:
        out["fail"] = (fail.stage, fail.reason)
    out["seconds"] = time.perf_counter() - t0
    out["placement"] = placement()
    return out


def bench_task(item: dict) -> dict:
    """Paired A/B trials on the GPU (:func:`kltrans.gate.run.bench`). ``item``:
    ``a_source``/``a_name`` and ``b_source``/``b_name`` (or ``a_path``/``b_path``),
    ``workload``, optional ``kernel_a``, ``kernel_b``, ``trials``, ``reps``,
    ``bench_size``, ``timeout_s``, ``check_b`` ((sizes, seeds): B's correct stage first, in
    the same worker), ``side_ms``, ``stop_when_slower``, ``min_reps``
    (:func:`kltrans.gate.profile.paired`).
    Returns the bench result (``paired``, ``device``,
    ``size``; or a verdict) with ``placement``."""
    from kltrans.gate.run import bench

    with tempfile.TemporaryDirectory(prefix="kltrans-task-") as d:
        paths = []
        for side in ("a", "b"):
            src, name = item.get(f"{side}_source"), item.get(f"{side}_name")
            if src is None:
                paths.append(item[f"{side}_path"])
                continue
            os.makedirs(os.path.join(d, side))
            paths.append(_materialize({"source": src, "name": name}, os.path.join(d, side)))
        out = bench(paths[0], paths[1], item["workload"], item.get("kernel_a"),
                    item.get("kernel_b"), timeout_s=float(item.get("timeout_s", 600.0)),
                    trials=int(item.get("trials", 5)), reps=int(item.get("reps", 50)),
                    bench_size=item.get("bench_size"), check_b=item.get("check_b"),
                    side_ms=float(item.get("side_ms", 1500.0)),
                    stop_when_slower=bool(item.get("stop_when_slower")),
                    min_reps=int(item.get("min_reps", 5)))
    out["placement"] = placement()
    return out


def bench_many_task(item: dict) -> dict:
    """Paired A/B trials of one A against several B's in one worker, on one upload of the
    timing inputs (the ``bench_many`` job of :mod:`kltrans.gate.worker`). ``item``:
    ``a_source``, ``a_name``, ``bs`` (a list of ``{"source", "name"}``), ``workload``,
    optional ``kernel`` and ``name_expression`` (both sides), ``trials``, ``reps``,
    ``bench_size``, ``timeout_s``, ``side_ms``, ``min_reps``, ``stop_when_slower``, and
    ``then`` (``keep``, ``include`` (indexes into ``bs``), ``trials``, ``side_ms``: a
    second round for the slowest B's and those named, each result's ``full``).
    Returns ``results``: one per B, in order, each shaped as :func:`bench_task`'s result
    (``paired``, ``device``, ``size``; or a verdict: ``not-run`` where an earlier B broke
    the worker's context), with ``placement``. ``pair_timeout_s``: each pairing's limit;
    a worker that does not finish keeps what its progress lines report
    (:func:`_bench_many_progress`)."""
    from kltrans.gate.run import pick_kernel, state_instantiation
    from kltrans.gate.worker import run_job
    from kltrans.syntax import parse
    from kltrans.workload.spec import load_workload

    wl = load_workload(item["workload"])

    def side(src: str, name: str) -> dict:
        path = os.path.join(tempfile.gettempdir(), name or "kernel.cu")  # a name only
        kname, ne = pick_kernel(wl, path, parse(src, path), item.get("kernel"))
        # each side its own instantiation: a step may add or drop a template parameter
        return {"source": src, "path": path, "kernel": kname,
                "name_expression": state_instantiation(src.encode(), kname,
                                                       item.get("name_expression") or ne)}

    results: list = [None] * len(item["bs"])
    bs = []
    for i, b in enumerate(item["bs"]):
        try:
            bs.append((i, side(b["source"], b.get("name"))))
        except Exception as e:  # a B without the kernel: its own verdict
            results[i] = {"ok": False, "verdict": "error", "kind": type(e).__name__,
                          "reason": str(e)}
    job = {"kind": "bench_many", "a": side(item["a_source"], item.get("a_name")),
           "bs": [b for _, b in bs], "workload": wl.path, "backend": "cuda",
           "trials": int(item.get("trials", 5)), "reps": int(item.get("reps", 50)),
           "bench_size": item.get("bench_size"), "side_ms": float(item.get("side_ms", 1500.0)),
           "stop_when_slower": bool(item.get("stop_when_slower")),
           "min_reps": int(item.get("min_reps", 5))}
    if item.get("pair_timeout_s"):
        job["pair_timeout_s"] = float(item["pair_timeout_s"])
    if item.get("then"):  # a second round on the same inputs (gate.worker._bench_many)
        pos = {i: n for n, (i, _) in enumerate(bs)}
        then = dict(item["then"])
        then["include"] = [pos[i] for i in then.get("include", ()) if i in pos]
        job["then"] = then
    out = run_job(job, float(item.get("timeout_s", 600.0))) if bs else {"results": []}
    got = out.get("results")
    if got is None:  # the worker did not finish: what its progress lines say, else its verdict
        got = _bench_many_progress(out, len(bs), job.get("pair_timeout_s"))
    for (i, _), r in zip(bs, got):
        results[i] = r
    out["results"] = results
    pl = placement()
    for r in out["results"]:
        r["placement"] = pl
    out["placement"] = pl
    return out


def _bench_many_progress(out: dict, n: int, limit) -> list:
    """The results of a ``bench_many`` worker that did not finish, from its progress
    lines: each B it finished keeps its result; the one it was timing when the watchdog
    ended it is ``too-slow`` (a paired trial past ``limit`` s at the bench size: its
    removal costs more than can be timed there); the B's after it are ``not-run``. A
    worker that ended otherwise gives every B it had not finished its verdict."""
    res: list = [None] * n
    now = now_full = None
    for ln in out.get("lines") or []:
        if "start" in ln:
            now = ln["start"]
        elif "done" in ln:
            res[ln["done"]], now = ln["result"], None
        elif "start_full" in ln:
            now_full = ln["start_full"]
        elif "done_full" in ln:
            res[ln["done_full"]]["full"], now_full = ln["full"], None
    watchdog = out.get("verdict") == "timeout" and limit
    slow = {"ok": False, "verdict": "too-slow",
            "reason": f"a paired trial ran past {limit} s at the bench size (the watchdog "
                      f"ended it)"}
    if watchdog and now is not None:
        res[now] = slow
    if watchdog and now_full is not None:
        res[now_full] = dict(res[now_full], full_error=slow)
    for k in range(n):
        if res[k] is None:
            res[k] = ({"ok": False, "verdict": "not-run",
                       "reason": "the worker ended before it: " + out.get("reason", "")}
                      if watchdog else
                      {**{x: out[x] for x in ("verdict", "kind", "reason", "stderr") if x in out},
                       "ok": False})
    return res


def vendor_task(item: dict) -> dict:
    """Time the workload's vendor (torch) expression at its bench size on the GPU.
    ``item``: ``workload``, optional ``bench_size``, ``timeout_s``."""
    from kltrans.gate.worker import run_job

    job = {"kind": "vendor", "workload": item["workload"], "backend": "cuda"}
    if item.get("bench_size"):
        job["bench_size"] = item["bench_size"]
    out = run_job(job, float(item.get("timeout_s", 600.0)))
    out["placement"] = placement()
    return out


def placement_task(item: dict) -> dict:
    """Where work runs: this process, and the CUDA_VISIBLE_DEVICES a gate subprocess
    started from here sees (to check pinning). ``item`` may hold ``sleep_s``."""
    import subprocess
    import sys

    if item.get("sleep_s"):
        time.sleep(float(item["sleep_s"]))
    p = subprocess.run([sys.executable, "-c",
                        "import os; print(os.environ.get('CUDA_VISIBLE_DEVICES', ''))"],
                       capture_output=True, text=True, timeout=60)
    return {**placement(), "subprocess_cuda_visible_devices": p.stdout.strip() or None,
            "index": item.get("index")}


TASKS = {"gate": gate_task, "bench": bench_task, "bench_many": bench_many_task,
         "vendor": vendor_task,
         "placement": placement_task}


def run_task(item: dict) -> dict:
    """One map over mixed work: ``item["task"]`` names the task (gate, bench, vendor,
    placement); the rest of the item is its input."""
    fn = TASKS.get(item.get("task"))
    if fn is None:
        raise ValueError(f"unknown task {item.get('task')!r} (tasks: {', '.join(TASKS)})")
    return fn(item)
