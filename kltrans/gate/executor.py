"""Where gate work runs: one interface, a local pool or a Dask cluster.

Every place that gates candidates in parallel (the lineage walk, its probes and paired
timings, the corpus benchmark, the optimizer) hands plain-data items to a module-level
task function (:mod:`kltrans.gate.tasks`) through an :class:`Executor`::

    with make_executor(cluster, backend, jobs) as ex:
        results = ex.map(gate_task, items, gpu=backend == "cuda")   # in input order

``cluster=None``: the local pool. Each slot is a thread that owns one worker process
(spawned once, then reused); the task runs there, and the gate's own correct/profile
subprocess (:func:`kltrans.gate.worker.run_job`) inherits that process's environment. On
the cuda backend there is one slot per visible GPU, each pinned with
``CUDA_VISIBLE_DEVICES=<its gpu>`` before anything initializes CUDA (``jobs`` slots, if
given, share the GPUs round-robin, but a ``gpu`` task still has its GPU to itself); on
the CPU backend ``jobs`` slots (default: the CPU cores). The gate's own workers also take
a per-GPU lock (:mod:`kltrans.gate.devlock`) for everything they run on the GPU, so the
walk and the experiment map with ``gpu=False`` and let several slots share a GPU: one
slot's start-up and compiles overlap another's GPU work, correct stages run side by
side, and a timing never shares its GPU.

``cluster="local:N"``: a Dask cluster on this machine (N worker processes, one thread
each; on the cuda backend each worker pinned to one GPU and declaring the resource
``GPU=1``). ``cluster="tcp://HOST:PORT"``: an existing Dask scheduler. Tasks that need a
GPU ask for ``GPU=1``, so two timing runs never share a GPU.

Faults: a worker process that dies while it runs a task (killed, GPU fault, lost
connection) has that task run again on another worker, at most ``ALLOWED_FAILURES``
more times; a task that raises is run once more. A task that still fails becomes the
verdict ``{"ok": False, "verdict": "lost", "reason": ...}`` for its item: ``map`` never
raises for one item, and the results of the other items are kept.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import threading
import uuid

# how many times a task may be on a worker that dies before it is a "lost" verdict
# (distributed.scheduler.allowed-failures: 2 means three attempts in all)
ALLOWED_FAILURES = 2
# a task that raises is run this many more times (then: "lost")
RETRIES = 1

_CLUSTER_FORMS = "local:N (N >= 1 worker processes on this machine) or tcp://HOST:PORT"


class ExecutorError(ValueError):
    """A usage problem: a bad --cluster string, dask missing, no reachable scheduler."""


def lost(reason: str, attempts: int | None = None) -> dict:
    out = {"ok": False, "verdict": "lost", "reason": reason}
    if attempts is not None:
        out["attempts"] = attempts
    return out


class Executor:
    """Runs ``fn(item)`` for many items; a context manager (``close`` releases all)."""

    kind: str = ""
    slots: int = 1

    def map(self, fn, items, *, gpu: bool = False, on_result=None) -> list:
        """``[fn(item) for item in items]``, run in parallel, results in input order.

        ``fn`` is a module-level function taking one plain-data item and returning plain
        data. ``gpu``: each task needs a GPU of its own while it runs. ``on_result(i,
        result)`` is called in the caller's thread as each result arrives (any order)."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    def describe(self) -> str:
        return f"{self.kind} executor, {self.slots} slot(s)"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# --------------------------------------------------------------------------- parsing
def parse_cluster(cluster: str | None) -> tuple[str, object]:
    """``("local", None)``, ``("local-dask", N)`` or ``("address", "tcp://H:P")``."""
    if cluster is None:
        return "local", None
    s = cluster.strip()
    m = re.fullmatch(r"local:(\d+)", s)
    if m:
        n = int(m.group(1))
        if n < 1:
            raise ExecutorError(f"--cluster {cluster!r}: local:N needs N >= 1")
        return "local-dask", n
    m = re.fullmatch(r"(tcp|tls)://([A-Za-z0-9._\-]+|\[[0-9A-Fa-f:]+\]):(\d{1,5})", s)
    if m and 0 < int(m.group(3)) < 65536:
        return "address", s
    raise ExecutorError(f"--cluster {cluster!r}: expected {_CLUSTER_FORMS}")


def visible_gpus() -> list[str]:
    """The GPUs worker processes may be pinned to, as CUDA_VISIBLE_DEVICES values: the
    entries of CUDA_VISIBLE_DEVICES where it is set, else every GPU nvidia-smi (or the
    CUDA driver) lists; ``[]`` when none is found."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        ids = [x.strip() for x in env.split(",") if x.strip()]
        return [] if ids and ids[0].startswith("-") else ids
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
            n = sum(1 for ln in out.stdout.splitlines() if ln.startswith("GPU "))
            if out.returncode == 0 and n:
                return [str(i) for i in range(n)]
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        from cuda.bindings import driver

        (err,) = driver.cuInit(0)
        if err == driver.CUresult.CUDA_SUCCESS:
            err, n = driver.cuDeviceGetCount()
            if err == driver.CUresult.CUDA_SUCCESS and n > 0:
                return [str(i) for i in range(n)]
    except Exception:
        pass
    return []


def check_cluster(cluster: str | None) -> None:
    """Raise :class:`ExecutorError` for a bad ``--cluster`` or a missing dask, before any
    work starts."""
    kind, _ = parse_cluster(cluster)
    if kind != "local" and not _have_dask():
        raise ExecutorError("--cluster needs dask (pip install 'kltrans[scale]')")


def _have_dask() -> bool:
    try:
        import dask
        import distributed
    except ImportError:
        return False
    return bool(dask.__version__ and distributed.__version__)


def make_executor(cluster: str | None, backend: str, jobs: int | None = None) -> Executor:
    """The executor for ``--cluster`` (None: the local pool) on ``backend`` ("cuda",
    "cpu" or "auto"). Raises :class:`ExecutorError` for a usage problem."""
    kind, arg = parse_cluster(cluster)
    if jobs is not None and jobs < 1:
        raise ExecutorError("--jobs must be >= 1")
    if backend == "auto":
        from kltrans.gate.backends import resolve_backend

        backend = resolve_backend(backend)
    gpu = backend == "cuda"
    if kind == "local":
        if gpu:
            devices = visible_gpus() or [None]
            n = jobs or len(devices)
        else:
            devices, n = [None], jobs or os.cpu_count() or 1
        return LocalExecutor([devices[i % len(devices)] for i in range(n)])
    if not _have_dask():
        raise ExecutorError("--cluster needs dask (pip install 'kltrans[scale]')")
    if kind == "local-dask":
        devices = None
        if gpu:
            found = visible_gpus()
            if found and arg > len(found):
                raise ExecutorError(f"--cluster local:{arg}: {len(found)} GPU(s) visible "
                                    f"({','.join(found)}); one worker per GPU at most")
            devices = found[:arg] if found else [str(i) for i in range(arg)]
        return DaskExecutor.local(arg, devices)
    return DaskExecutor.connect(arg)


# ------------------------------------------------------------------------ local pool
class _SlotDied(Exception):
    pass


class _TaskError(Exception):
    """The task raised in the worker process (the message holds its traceback tail)."""


class _Slot:
    """One worker process (``python -m kltrans.gate.executor``), started on first use and
    reused: tasks go in as pickled ``(fn, item)`` frames on its stdin, results come back
    on its stdout. Its environment pins it (and the gate subprocesses it starts)."""

    def __init__(self, env: dict):
        self.env = env
        self.proc = None

    def run(self, fn, item):
        import pickle
        import sys

        if self.proc is None or self.proc.poll() is not None:
            # a session of its own: a Ctrl-C reaches the caller alone, which then ends
            # the worker and the gate processes it started together (kill)
            self.proc = subprocess.Popen([sys.executable, "-m", "kltrans.gate.executor"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         env={**os.environ, **self.env,
                                              "KLTRANS_EXECUTOR_CALLER": str(os.getpid())},
                                         start_new_session=True)
        data = pickle.dumps((fn, item))
        try:
            self.proc.stdin.write(len(data).to_bytes(8, "little") + data)
            self.proc.stdin.flush()
            n = self.proc.stdout.read(8)
            body = self.proc.stdout.read(int.from_bytes(n, "little")) if len(n) == 8 else b""
        except (BrokenPipeError, OSError):
            body = b""
        if not body:
            code = self.proc.wait()
            self.proc = None
            raise _SlotDied(f"the worker process exited with code {code}")
        status, value = pickle.loads(body)
        if status == "ok":
            return value
        raise _TaskError(value)

    def kill(self):
        """End the worker process and every process it started, at once."""
        p = self.proc
        if p is not None and p.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(p.pid, signal.SIGKILL)

    def close(self):
        if self.proc is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
            self.proc = None


def _end_with_caller(caller: int, every: float = 1.0) -> None:
    """End this worker and every process of its session once the process that started it
    (``caller``, named by the caller itself: it may be gone before this one starts) is
    gone. Its session of its own keeps a Ctrl-C from reaching it, so a caller killed by a
    signal would otherwise leave it running its task, minutes of a core, unread."""
    import time

    while os.getppid() == caller:
        time.sleep(every)
    os.killpg(0, signal.SIGKILL)


def _slot_main() -> int:
    """The worker process of a local slot: run (fn, item) frames until stdin closes."""
    import pickle
    import sys
    import traceback

    inp = sys.stdin.buffer
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what a task prints goes to stderr, not into the result stream
    caller = int(os.environ.get("KLTRANS_EXECUTOR_CALLER") or os.getppid())
    threading.Thread(target=_end_with_caller, args=(caller,), daemon=True).start()
    while True:
        n = inp.read(8)
        if len(n) < 8:
            return 0
        fn, item = pickle.loads(inp.read(int.from_bytes(n, "little")))
        try:
            data = pickle.dumps(("ok", fn(item)))
        except Exception as e:  # the task raised, or returned what cannot be pickled
            data = pickle.dumps(("error", f"{type(e).__name__}: {e}\n"
                                          f"{traceback.format_exc()[-2000:]}"))
        out.write(len(data).to_bytes(8, "little") + data)
        out.flush()


class LocalExecutor(Executor):
    """Threads, each owning one worker process pinned to its GPU (or to none)."""

    kind = "local"

    def __init__(self, devices: list):
        self.devices = list(devices) or [None]
        self.slots = len(self.devices)
        self._slots = [_Slot({} if d is None else {"CUDA_VISIBLE_DEVICES": str(d)})
                       for d in self.devices]
        self._free = list(range(self.slots))
        self._cv = threading.Condition()
        self._gpu_busy: set = set()
        self._closed = False

    def describe(self) -> str:
        pins = [d for d in self.devices if d is not None]
        where = f", pinned to GPU(s) {','.join(pins)}" if pins else ""
        return f"local pool, {self.slots} worker process(es){where}"

    def _acquire(self, gpu: bool) -> int:
        """A free slot; for a GPU task, one whose GPU no other GPU task holds."""
        with self._cv:
            while True:
                if self._closed:
                    return None
                for s in self._free:
                    d = self.devices[s]
                    if not gpu or d not in self._gpu_busy:
                        self._free.remove(s)
                        if gpu:
                            self._gpu_busy.add(d)
                        return s
                self._cv.wait()

    def _release(self, slot: int, gpu: bool) -> None:
        with self._cv:
            self._free.append(slot)
            if gpu:
                self._gpu_busy.discard(self.devices[slot])
            self._cv.notify_all()

    def _run(self, fn, item, gpu: bool):
        deaths = errors = 0
        name = getattr(fn, "__name__", str(fn))
        while True:
            slot = self._acquire(gpu)
            if slot is None:
                return lost("interrupted", deaths + errors)
            try:
                return self._slots[slot].run(fn, item)
            except _SlotDied as e:  # a fresh worker process runs it again
                if self._closed:  # interrupted: the caller ended it
                    return lost("interrupted", deaths + errors)
                deaths += 1
                if deaths > ALLOWED_FAILURES:
                    return lost(f"the worker process died {deaths} times while running "
                                f"this task ({e})", deaths + errors)
            except _TaskError as e:
                errors += 1
                if errors > RETRIES:
                    first = str(e).splitlines()[0] if str(e) else type(e).__name__
                    return lost(f"{name} raised {errors} times: {first}", deaths + errors)
            finally:
                self._release(slot, gpu)

    def map(self, fn, items, *, gpu: bool = False, on_result=None) -> list:
        from concurrent.futures import ThreadPoolExecutor, as_completed

        if self._closed:
            raise RuntimeError("the executor is closed")
        items = list(items)
        out: list = [None] * len(items)
        if not items:
            return out
        tp = ThreadPoolExecutor(max_workers=min(self.slots, len(items)))
        try:
            futs = {tp.submit(self._run, fn, it, gpu): i for i, it in enumerate(items)}
            for f in as_completed(futs):
                i = futs[f]
                out[i] = f.result()
                if on_result is not None:
                    on_result(i, out[i])
        except BaseException:  # Ctrl-C, a time limit's SIGINT, on_result raising
            # end the tasks in flight now, not when they finish: nothing more starts, each
            # worker and its gate processes are killed, and its thread sees it die
            with self._cv:
                self._closed = True
                self._cv.notify_all()
            tp.shutdown(wait=False, cancel_futures=True)
            for s in self._slots:
                s.kill()
            raise
        tp.shutdown(wait=True)
        return out

    def worker_pids(self) -> list:
        """The process ids of the slots' worker processes now running."""
        return [s.proc.pid for s in self._slots if s.proc is not None and s.proc.poll() is None]

    def close(self) -> None:
        self._closed = True
        for s in self._slots:
            s.close()


# ----------------------------------------------------------------------------- Dask
class DaskExecutor(Executor):
    """Tasks submitted to a Dask scheduler; GPU tasks ask for the resource ``GPU=1``."""

    kind = "dask"

    def __init__(self, client, cluster=None, label: str = ""):
        self.client = client
        self.cluster = cluster  # ours to close (local:N), or None (an existing scheduler)
        self.label = label
        info = client.scheduler_info()
        self.slots = sum(int(w.get("nthreads", 1)) for w in info["workers"].values()) or 1

    @classmethod
    def local(cls, n: int, devices: list | None) -> DaskExecutor:
        """``n`` worker processes on this machine, one thread each; ``devices``: one GPU
        per worker (CUDA_VISIBLE_DEVICES set by its nanny before the worker starts, and
        the resource GPU=1), or None for the CPU backend."""
        import logging

        import dask
        from distributed import Client, Nanny, Scheduler, SpecCluster

        workers = {}
        for i in range(n):
            opts = {"nthreads": 1, "host": "127.0.0.1", "silence_logs": logging.ERROR,
                    "dashboard": False}
            if devices is not None:
                opts["env"] = {"CUDA_VISIBLE_DEVICES": str(devices[i])}
                opts["resources"] = {"GPU": 1}
            workers[f"kltrans-{i}"] = {"cls": Nanny, "options": opts}
        scheduler = {"cls": Scheduler,
                     "options": {"host": "127.0.0.1", "port": 0, "dashboard": False,
                                 "dashboard_address": "127.0.0.1:0",
                                 "allowed_failures": ALLOWED_FAILURES}}
        with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}):
            cluster = SpecCluster(workers=workers, scheduler=scheduler,
                                  silence_logs=logging.ERROR, name="kltrans")
        try:
            client = Client(cluster)
            client.wait_for_workers(n, timeout=120)
        except Exception:
            cluster.close()
            raise
        pins = f", GPU(s) {','.join(devices)}" if devices else ""
        return cls(client, cluster, f"Dask LocalCluster, {n} worker(s){pins}")

    @classmethod
    def connect(cls, address: str) -> DaskExecutor:
        from distributed import Client

        try:
            client = Client(address, timeout="20s")
        except (OSError, TimeoutError) as e:
            raise ExecutorError(f"--cluster {address}: cannot reach a Dask scheduler there "
                                f"({type(e).__name__}: {e})") from None
        try:
            client.wait_for_workers(1, timeout=120)
        except TimeoutError:
            client.close()
            raise ExecutorError(f"--cluster {address}: the scheduler has no workers "
                                f"(start them with 'dask worker {address} --nthreads 1 "
                                f"--resources GPU=1', one per GPU)") from None
        return cls(client, None, f"Dask scheduler {address}")

    def describe(self) -> str:
        return f"{self.label} ({self.slots} slot(s))"

    def _check_gpu_workers(self) -> None:
        info = self.client.scheduler_info()
        if not any((w.get("resources") or {}).get("GPU") for w in info["workers"].values()):
            raise ExecutorError(f"{self.label}: no worker declares a GPU resource; start "
                                f"one worker per GPU with "
                                f"'CUDA_VISIBLE_DEVICES=i dask worker ADDRESS --nthreads 1 "
                                f"--resources GPU=1'")

    def map(self, fn, items, *, gpu: bool = False, on_result=None) -> list:
        from distributed import as_completed

        items = list(items)
        out: list = [None] * len(items)
        if not items:
            return out
        if gpu:
            self._check_gpu_workers()
        name = getattr(fn, "__name__", "task")
        batch = uuid.uuid4().hex[:8]
        futs = []
        index = {}
        for i, it in enumerate(items):
            f = self.client.submit(fn, it, key=f"{name}-{batch}-{i}", pure=False,
                                   retries=RETRIES, resources={"GPU": 1} if gpu else None)
            futs.append(f)
            index[f.key] = i
        try:
            for f in as_completed(futs):
                i = index[f.key]
                if f.status == "finished":
                    out[i] = f.result()
                else:
                    out[i] = _lost_from(f, name)
                if on_result is not None:
                    on_result(i, out[i])
        finally:
            pending = [f for f in futs if not f.done()]
            if pending:
                self.client.cancel(pending)
            for f in futs:
                f.release()
        return out

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()


def _lost_from(f, name: str) -> dict:
    try:
        e = f.exception()
    except Exception as x:  # cancelled, or the scheduler went away
        e = x
    if type(e).__name__ == "KilledWorker":
        return lost(f"every worker that ran it died ({ALLOWED_FAILURES + 1} attempts): {e}",
                    ALLOWED_FAILURES + 1)
    return lost(f"{name} raised {RETRIES + 1} times: {type(e).__name__}: {e}", RETRIES + 1)


if __name__ == "__main__":
    raise SystemExit(_slot_main())
