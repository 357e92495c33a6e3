"""Gate work in a subprocess: one job in (JSON on stdin), one result out (a JSON line on
the descriptor the parent passed, ``result_fd``; stdout is the kernel's ``printf``).

A kernel that faults, hangs or breaks its CUDA context ends only this process; the
parent (:func:`run_job`) turns a timeout or a crash into a verdict and goes on with the
next candidate. Jobs are small and self-contained (source text, workload path, stage
list, sizes, seeds) and results are plain data, so any executor can run them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import traceback


def run_job(job: dict, timeout_s: float = 300.0, env: dict | None = None) -> dict:
    """Run ``job`` in a fresh worker process; never raises for what the kernel does.

    A CPU ``gate`` job runs its checks here, over a sandboxed kernel process
    (:func:`kltrans.gate.kernel_process.run_cpu_gate`): the process that runs kernel
    code never decides a verdict. Any other job runs in a fresh ``python -m
    kltrans.gate.worker`` that writes its result to a descriptor of its own, never to
    stdout (where a kernel's ``printf`` goes)."""
    if job.get("backend") == "cpu" and job.get("kind") == "gate":
        from kltrans.gate.kernel_process import run_cpu_gate

        return run_cpu_gate(job, timeout_s, env)
    t0 = time.perf_counter()
    r = spawn(job, timeout_s, env)
    if r["code"] is None:
        return _timed_out(timeout_s, r["lines"], r["stderr"], t0)
    return _ended(job, r["code"], r["lines"], r["stderr"], t0)


def spawn(job: dict, timeout_s: float, env: dict | None = None) -> dict:
    """Run ``job`` in a child: ``{"code", "stdout", "stderr", "lines"}``, ``code`` None
    when it ran past ``timeout_s`` (then it was killed), ``lines`` what it wrote to its
    result descriptor. A ``cpu-kernel`` child is forked from this process's fork server
    (:mod:`kltrans.gate.forkserver`), which has the gate's modules imported already,
    where the server can be used (not with ``KLTRANS_GATE_FORKSERVER=0``)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="kltrans-worker-") as d:
        paths = [os.path.join(d, n) for n in ("stdout", "stderr", "result")]
        for f in paths:
            open(f, "wb").close()
        code = _forked(job, paths, timeout_s, env) if job.get("kind") == "cpu-kernel" else "gone"
        if code == "gone":
            code = _fresh(job, paths, timeout_s, env)
        if code == "timeout":
            code = None
        so, se, res = (_read_tail(f, 1 << 20) for f in paths)
    return {"code": code, "stdout": so, "stderr": se,
            "lines": [ln for ln in res.splitlines() if ln.startswith("{")]}


def _read_tail(path: str, limit: int) -> str:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - limit))
        return f.read().decode("utf-8", "replace")


def _forked(job: dict, paths: list, timeout_s: float, env: dict | None):
    """The exit code of ``job`` in a child of the fork server; "timeout" when it ran past
    ``timeout_s``, "gone" when the server could not run it."""
    from kltrans.gate.forkserver import ServerGone, client

    c = client()
    if c is None:
        return "gone"
    try:
        code = c.run(json.dumps(job), paths[0], paths[1], {**os.environ, **(env or {})},
                     timeout_s)
    except ServerGone:
        return "gone"
    return "timeout" if code is None else code


def _fresh(job: dict, paths: list, timeout_s: float, env: dict | None):
    """The exit code of ``job`` in a fresh interpreter, its result written to a
    descriptor passed to it; "timeout" when it ran past ``timeout_s`` (killed, with its
    process group)."""
    with open(paths[0], "wb") as so, open(paths[1], "wb") as se, \
            open(paths[2], "wb") as result:
        fd = result.fileno()  # the child's descriptor has the same number
        p = subprocess.Popen([sys.executable, "-m", "kltrans.gate.worker"],
                             stdin=subprocess.PIPE, stdout=so, stderr=se, pass_fds=(fd,),
                             env={**os.environ, **(env or {})}, start_new_session=True)
        try:
            p.communicate(json.dumps({**job, "result_fd": fd}).encode(), timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(p)
            return "timeout"
        return p.returncode


def _kill_group(p) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except OSError:
        p.kill()
    p.wait()


def _timed_out(timeout_s: float, lines: list, stderr: str, t0: float) -> dict:
    return {"ok": False, "verdict": "timeout",
            "reason": f"the worker did not finish within {timeout_s:g} s (hang?)",
            "lines": _json_lines(lines), "stderr": stderr[-2000:],
            "seconds": time.perf_counter() - t0}


def _ended(job: dict, returncode: int, lines: list, stderr: str, t0: float) -> dict:
    """The result of a worker that ended by itself (or by its own watchdog)."""
    limit = job.get("run_timeout_s") or job.get("pair_timeout_s")
    if limit and returncode == -signal.SIGALRM:  # ended by its _watchdog
        return {"ok": False, "verdict": "timeout",
                "reason": f"the {job.get('kind', 'job')}'s run on the device went past "
                          f"{limit:g} s (hang?)", "lines": _json_lines(lines),
                "stderr": stderr[-2000:], "seconds": time.perf_counter() - t0}
    parsed = _json_lines(lines[-1:])
    if returncode != 0 or not parsed or not isinstance(parsed[0], dict):
        return {"ok": False, "verdict": "crash",
                "reason": f"the worker exited with code {returncode}",
                "lines": _json_lines(lines),
                "stderr": stderr[-4000:], "seconds": time.perf_counter() - t0}
    out = parsed[0]
    out.setdefault("seconds", time.perf_counter() - t0)
    return out


def _json_lines(lines: list) -> list:
    """The progress lines a worker wrote before it ended (the ones that parse)."""
    out = []
    for ln in lines:
        try:
            out.append(json.loads(ln))
        except ValueError:
            pass
    return out


# ------------------------------------------------------------------ in the worker
def _load_kernel(backend, job, wl):
    """Compile (cuda) or build (cpu) the job's kernel; returns (handle, contract, info)."""
    from kltrans.syntax import parse
    from kltrans.syntax.contract import contracts

    unit = parse(job["source"], job["path"])
    kernel = job["kernel"]
    cons = contracts(unit)
    if kernel not in cons:
        raise LookupError(f"{job['path']}: no launch contract for {kernel} (add a line "
                          f"'// kltrans: launch {kernel} grid=... block=...')")
    from kltrans.gate.compile import compile_unit

    ne = [job["name_expression"]] if job.get("name_expression") else []
    r = compile_unit(unit, arch=job.get("arch") or backend.arch, name_expressions=ne)
    if not r.ok:
        raise RuntimeError("compile failed:\n" + r.log[-3000:])
    symbol = r.symbol(job["name_expression"]) if ne else None
    if symbol is None:
        symbol = r.symbol(kernel) or kernel
    handle = backend.load(r.cubin, symbol)
    return handle, cons[kernel], {"symbol": symbol}


def _plain(o):
    """numpy scalars and arrays in results become plain JSON values."""
    if hasattr(o, "tolist"):
        return o.tolist()
    if hasattr(o, "item"):
        return o.item()
    raise TypeError(f"{type(o).__name__} is not JSON serializable")


def main(job_text: str | None = None) -> int:
    job = json.loads(sys.stdin.read() if job_text is None else job_text)
    if job.get("kind") == "cpu-kernel":  # the sandboxed side of a CPU gate job
        from kltrans.gate.kernel_process import serve

        return serve(job)
    if job.get("result_fd") is not None:
        _RESULT["stream"] = os.fdopen(int(job["result_fd"]), "w")
    out: dict = {"ok": False}
    phases: dict = {}
    partial: dict = {}
    t0 = time.perf_counter()
    try:
        out = _work(job, phases, partial)
    except Exception as e:  # everything becomes data for the parent
        from kltrans.gate.backends import BackendError

        kind = e.kind if isinstance(e, BackendError) else getattr(e, "kind", type(e).__name__)
        # what finished before it (a passed correct stage) stays: the error is a later stage's
        out = {**partial, "ok": False, "verdict": "error", "kind": kind,
               "reason": str(e)[-3000:],
               "traceback": traceback.format_exc()[-3000:]}
    phases["total"] = time.perf_counter() - t0
    out["phases"] = {k: round(v, 4) for k, v in phases.items()}
    _emit(out)
    return 0


_RESULT: dict = {"stream": None}


def _emit(obj) -> None:
    """One line on the result descriptor (stdout only for a worker run by hand)."""
    stream = _RESULT["stream"] or sys.stdout
    stream.write(json.dumps(obj, default=_plain) + "\n")
    stream.flush()


class _Phases:
    """Wall seconds per phase of a job (``phases`` in its result): where a worker's time
    goes -- start-up, compiles, waiting for the GPU, work on the GPU."""

    def __init__(self, acc: dict):
        self.acc = acc
        self.t = time.perf_counter()

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.acc[name] = self.acc.get(name, 0.0) + now - self.t
        self.t = now


def _work(job: dict, phases: dict | None = None, partial: dict | None = None) -> dict:
    from kltrans.gate.backends import CudaBackend
    from kltrans.gate.devlock import gpu_lock, pci_bus_id
    from kltrans.workload.spec import load_workload

    ph = _Phases({} if phases is None else phases)
    wl = load_workload(job["workload"])
    if job["kind"] == "vendor":
        from kltrans.gate.vendor import time_vendor

        if not wl.vendor:
            return {"ok": False, "verdict": "error", "reason": f"{wl.name} has no vendor expression"}
        key = pci_bus_id(0)
        ph.mark("setup")
        res = time_vendor(wl, dict(job.get("bench_size") or wl.bench_size),
                          device_lock=gpu_lock(key, ph.acc))
        ph.mark("vendor")
        return {"ok": True, "vendor": res}
    if job["backend"] != "cuda":  # CPU kernels run only in a sandbox (gate.kernel_process)
        raise ValueError(f"a {job['backend']!r} job in a worker (CPU gate jobs run through "
                         "kltrans.gate.kernel_process)")
    backend = CudaBackend(job.get("device", 0))

    def device(shared: bool = False):  # held for everything that runs on the GPU
        return gpu_lock(backend.pci_bus_id, ph.acc, shared=shared)
    out: dict = {} if partial is None else partial  # the caller keeps it if a stage raises
    out.update({"ok": True, "backend": backend.name, "device": backend.device_name})
    ph.mark("setup")
    if job["kind"] == "gate":
        handle, contract, info = _load_kernel(backend, job, wl)
        out.update(info)
        ph.mark("compile")
        if "correct" in job["stages"]:
            from kltrans.gate.correct import run_checks

            # correct stages share the GPU, never with a timing
            with device(shared=True), _watchdog(job.get("run_timeout_s"), "the correct stage"):
                ph.t = time.perf_counter()
                sizes = job.get("sizes") or None
                res = run_checks(backend, handle, wl, contract, sizes, job.get("seeds"),
                                 draw=job.get("draw"))
                out["correct"] = res.to_json()
                ph.mark("correct")
            if not res.ok:
                out["ok"] = False
                return out
        if "profile" in job["stages"] and backend.name == "cuda":
            from kltrans.gate.profile import profile

            with device():
                ph.t = time.perf_counter()
                sizes = job.get("bench_size") or wl.bench_size
                launch = contract.evaluate(wl.env(dict(sizes)))
                t = profile(backend, handle, wl, launch, sizes, reps=job.get("reps", 50),
                            trials=job.get("trials", 3))
                out["profile"] = {"size": sizes, **t.to_json()}
                ph.mark("profile")
        return out
    if job["kind"] == "bench":
        from kltrans.gate.profile import paired

        ha, ca, _ = _load_kernel(backend, job["a"], wl)
        hb, cb, _ = _load_kernel(backend, job["b"], wl)
        ph.mark("compile")
        if job.get("check_b"):
            from kltrans.gate.correct import run_checks

            chk = job["check_b"]
            with device(shared=True):
                ph.t = time.perf_counter()
                res = run_checks(backend, hb, wl, cb, chk.get("sizes") or None, chk.get("seeds"))
                out["correct"] = res.to_json()
                ph.mark("correct")
            if not res.ok:
                out["ok"] = False
                return out
        sizes = job.get("bench_size") or wl.bench_size
        env = wl.env(dict(sizes))
        with device():
            ph.t = time.perf_counter()
            out["paired"] = paired(backend, ha, ca.evaluate(env), hb, cb.evaluate(env), wl,
                                   sizes, reps=job.get("reps", 50), trials=job.get("trials", 5),
                                   side_ms=float(job.get("side_ms", 1500.0)),
                                   stop_when_slower=bool(job.get("stop_when_slower")),
                                   min_reps=int(job.get("min_reps", 5)))
            ph.mark("profile")
        out["size"] = sizes
        return out
    if job["kind"] == "bench_many":
        return _bench_many(job, wl, backend, device, ph, out)
    raise ValueError(f"unknown job kind {job['kind']!r}")


@contextlib.contextmanager
def _watchdog(seconds, what: str):
    """End this worker when ``what`` runs past ``seconds``: :func:`run_job` reads the
    worker killed by SIGALRM as the verdict ``timeout``.

    Started once the GPU lock is held, so a wait for the lock never counts. A hung kernel
    otherwise keeps its (shared) lock until the caller's job timeout kills the worker, and
    a timing waiting for that lock holds every other correct stage on the GPU behind it.
    The signal's default action ends the process even while a driver call that holds the
    GIL waits for the hung kernel (a Python timer thread could not run then); the kernel
    releases the lock with the process."""
    if not seconds:
        yield
        return
    old = signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, old)


def _bench_many(job: dict, wl, backend, device, ph, out: dict) -> dict:
    """One A against several B's (``job["bs"]``), each paired as a ``bench`` job pairs
    them, on one set of timing inputs and under one hold of the GPU: the walk times every
    accepted candidate against the current state, and a worker, an A compile and a
    bench-size upload per candidate cost more than the timing. ``out["results"]`` has one
    entry per B, in order: the ``bench`` result's ``paired`` and ``size``, or a verdict.
    A B that does not compile or load fails alone; after a failed launch (the context may
    be gone) the B's not timed yet are ``not-run``, for the caller to time on their own.

    ``job["pair_timeout_s"]``: each pairing's limit (:func:`_watchdog`); the worker
    writes a progress line as it starts and ends each one, so that a worker ended there
    still gives what it timed (``gate.tasks.bench_many_task`` reads them).

    ``job["then"]`` (``keep``, ``include``, ``trials``, ``side_ms``): a second round on
    the same inputs -- the ``keep`` B's that the first round found slowest relative to A
    (median time B / time A), and the B's at the indexes in ``include``, are paired again
    with ``trials`` trials of ``side_ms``; their entries get it as ``full``."""
    from kltrans.gate.backends import BackendError
    from kltrans.gate.profile import Setup, paired

    ha, ca, _ = _load_kernel(backend, job["a"], wl)
    bs = []
    for b in job["bs"]:
        try:
            bs.append(_load_kernel(backend, b, wl)[:2])
        except Exception as e:
            bs.append({"ok": False, "verdict": "error", "kind": type(e).__name__,
                       "reason": str(e)[-3000:]})
    ph.mark("compile")
    sizes = job.get("bench_size") or wl.bench_size
    env = wl.env(dict(sizes))
    results: list = [None] * len(bs)
    state = {"broken": None}

    def pair(k: int, trials: int, side_ms: float):
        """B number k against A; None where it cannot run (a verdict is in results)."""
        if state["broken"] is not None:
            results[k] = {"ok": False, "verdict": "not-run",
                          "reason": f"an earlier B broke the batch: {state['broken']}"}
            return None
        hb, cb = bs[k]
        try:
            return paired(backend, ha, ca.evaluate(env), hb, cb.evaluate(env), wl, sizes,
                          reps=job.get("reps", 50), trials=trials, side_ms=side_ms,
                          stop_when_slower=bool(job.get("stop_when_slower")),
                          min_reps=int(job.get("min_reps", 5)), setup=setup)
        except BackendError as e:
            state["broken"] = f"{e.kind}: {e.message}"
            results[k] = {"ok": False, "verdict": "error", "kind": e.kind,
                          "reason": state["broken"]}
            return None

    limit = job.get("pair_timeout_s")

    emit = _emit  # progress lines: what a worker ended by the watchdog had finished

    with device():
        ph.t = time.perf_counter()
        setup = Setup(backend, wl, sizes)
        try:
            for k, b in enumerate(bs):
                if isinstance(b, dict):
                    results[k] = b
                    continue
                emit({"start": k})
                with _watchdog(limit, "a paired timing"):
                    p = pair(k, int(job.get("trials", 5)), float(job.get("side_ms", 1500.0)))
                if p is not None:
                    results[k] = {"ok": True, "backend": backend.name,
                                  "device": backend.device_name, "paired": p, "size": sizes}
                emit({"done": k, "result": results[k]})
            then = job.get("then")
            if then:
                timed = [k for k, r in enumerate(results) if r.get("paired")]
                slowest = sorted(timed, key=lambda k: results[k]["paired"]["ratio_median"])
                again = sorted(set(slowest[: int(then.get("keep", 0))])
                               | {k for k in then.get("include", ()) if k in timed})
                for k in again:
                    first = results[k]
                    emit({"start_full": k})
                    with _watchdog(limit, "a paired timing"):
                        p = pair(k, int(then["trials"]), float(then["side_ms"]))
                    if p is not None:
                        first["full"] = p
                        emit({"done_full": k, "full": p})
                    else:  # the round-one timing stays; the entry says why no full one
                        results[k] = dict(first, full_error=results[k])
        finally:
            if state["broken"] is None:
                setup.close()
        ph.mark("profile")
    out["results"] = results
    out["size"] = sizes
    return out


if __name__ == "__main__":
    sys.exit(main())
