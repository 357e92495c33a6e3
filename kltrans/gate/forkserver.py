"""A fork server for CPU-backend gate workers.

Each gate job runs in a process of its own (:mod:`kltrans.gate.worker`), so that a kernel
that faults or hangs ends only that process. Starting a fresh interpreter for each job and
importing numpy, the syntax layer and the gate again costs about 0.2 s, a fifth of a CPU
gate. This server imports them once and forks one child per job instead: the child is as
fresh as a new worker (nothing of an earlier job is in it; it gets the caller's
environment, working directory and output files), at the cost of a fork.

Protocol, one JSON object per line: the client sends ``{"op": "run", "id", "job", "stdout",
"stderr", "env", "cwd"}`` and ``{"op": "kill", "id"}``; the server answers ``{"ready":
true}`` once, then ``{"id", "pid"}`` when a job's child starts and ``{"id", "code"}`` when
it ends (``code`` as :class:`subprocess.Popen` gives it: the exit status, or minus the
signal that ended it). The server ends, and kills its children, when its stdin closes
(the client's process ended).

It is not used for the CUDA backend (those workers start fresh), nor with
``KLTRANS_GATE_FORKSERVER=0``; a client that cannot start or reach its server makes
:func:`kltrans.gate.worker.run_job` fall back to a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

# what a CPU gate worker imports, imported once by the server
PRELOAD = ("numpy", "pyseccomp", "kltrans.gate.worker", "kltrans.gate.kernel_process",
           "kltrans.gate.sandbox", "kltrans.gate.backends", "kltrans.gate.correct",
           "kltrans.gate.devlock", "kltrans.gate.cpu.build", "kltrans.syntax",
           "kltrans.syntax.contract", "kltrans.workload.spec")


class ServerGone(RuntimeError):
    """The server could not be started or ended before the job did."""


# ------------------------------------------------------------------ the client
class Client:
    """One server per process, shared by its threads."""

    def __init__(self, start_timeout: float = 60.0):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kltrans.gate.forkserver"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        self.cond = threading.Condition()
        self.jobs: dict[int, dict] = {}
        self.next_id = 0
        self.ready = False
        self.gone = False
        threading.Thread(target=self._read, name="kltrans-forkserver", daemon=True).start()
        with self.cond:
            self.cond.wait_for(lambda: self.ready or self.gone, start_timeout)
            if not self.ready:
                self.close()
                raise ServerGone("the fork server did not start")

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            with self.cond:
                if msg.get("ready"):
                    self.ready = True
                elif msg.get("id") in self.jobs:
                    self.jobs[msg["id"]].update(msg)
                self.cond.notify_all()
        with self.cond:
            self.gone = True
            self.cond.notify_all()

    def _send(self, msg: dict) -> None:
        try:
            self.proc.stdin.write((json.dumps(msg) + "\n").encode("utf-8"))
        except (OSError, ValueError):
            with self.cond:
                self.gone = True
                self.cond.notify_all()
            raise ServerGone("the fork server ended") from None

    def run(self, job_text: str, stdout: str, stderr: str, env: dict,
            timeout_s: float) -> int | None:
        """Run a job in a forked child; its exit code, or None if it ran past
        ``timeout_s`` (then it has been killed). :class:`ServerGone` if the server could
        not start the job (nothing ran: the caller may run it elsewhere)."""
        with self.cond:
            if self.gone:
                raise ServerGone("the fork server ended")
            self.next_id += 1
            jid = self.next_id
            job = self.jobs[jid] = {}
            try:
                cwd = os.getcwd()
            except OSError:  # removed under us: the child stays where the server is
                cwd = None
            self._send({"op": "run", "id": jid, "job": job_text, "stdout": stdout,
                        "stderr": stderr, "env": env, "cwd": cwd})
            try:
                self.cond.wait_for(lambda: "pid" in job or self.gone, 30.0)
                if "pid" not in job:
                    raise ServerGone("the fork server did not start the job")
                t_end = time.monotonic() + timeout_s
                self.cond.wait_for(lambda: "code" in job or self.gone,
                                   max(0.0, t_end - time.monotonic()))
                if "code" in job:
                    return int(job["code"])
                if self.gone:  # the child may still run, orphaned: end it
                    _kill(job["pid"])
                    return -signal.SIGKILL
                self._send({"op": "kill", "id": jid})
                self.cond.wait_for(lambda: "code" in job or self.gone, 30.0)
                return None
            finally:
                self.jobs.pop(jid, None)

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _kill(pid: int) -> None:
    """End a job's child and anything it started (it leads its own process group)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


_CLIENT: dict = {"pid": None, "client": None, "broken": None}
_LOCK = threading.Lock()


def client() -> Client | None:
    """This process's client (started on first use), or None where the server is not to
    be used: ``KLTRANS_GATE_FORKSERVER=0``, or it failed before in this process."""
    if os.environ.get("KLTRANS_GATE_FORKSERVER", "1") == "0":
        return None
    with _LOCK:
        if _CLIENT["pid"] != os.getpid():  # a forked copy of a process: its own server
            _CLIENT.update(pid=os.getpid(), client=None, broken=None)
        if _CLIENT["broken"]:
            return None
        c = _CLIENT["client"]
        if c is None or c.gone:
            try:
                c = _CLIENT["client"] = Client()
            except (OSError, ServerGone) as e:
                _CLIENT["broken"] = f"{type(e).__name__}: {e}"
                return None
        return c


# ------------------------------------------------------------------ the server
def serve() -> int:
    import importlib
    import selectors

    for m in PRELOAD:
        importlib.import_module(m)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # it ends when its client does
    reply = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)  # nothing but replies reaches the client
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *a: None)
    sel = selectors.DefaultSelector()
    sel.register(0, selectors.EVENT_READ)
    sel.register(wake_r, selectors.EVENT_READ)
    children: dict[int, int] = {}  # pid -> job id
    buf = b""

    def send(msg: dict) -> None:
        data = (json.dumps(msg) + "\n").encode("utf-8")
        while data:
            data = data[os.write(reply, data):]

    def reap() -> None:
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            jid = children.pop(pid, None)
            if jid is not None:
                code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else \
                    os.WEXITSTATUS(status)
                send({"id": jid, "code": code})

    send({"ready": True})
    while True:
        for key, _ in sel.select():
            if key.fd == wake_r:
                os.read(wake_r, 4096)
                reap()
                continue
            data = os.read(0, 1 << 16)
            if not data:  # the client is gone: so are its jobs
                for pid in children:
                    _kill(pid)
                return 0
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                req = json.loads(line)
                if req["op"] == "kill":
                    for pid, jid in children.items():
                        if jid == req["id"]:
                            _kill(pid)
                    continue
                pid = os.fork()
                if pid == 0:
                    _child(req, [reply, devnull, wake_r, wake_w])
                children[pid] = req["id"]
                send({"id": req["id"], "pid": pid})
        reap()


def _child(req: dict, close: list) -> None:
    """In the forked child: the job's files, environment and directory, then the worker's
    main; never returns."""
    code = 1
    try:
        os.setsid()  # its own process group: a kill ends what it started too
        signal.set_wakeup_fd(-1)
        for s in (signal.SIGCHLD, signal.SIGALRM, signal.SIGTERM):
            signal.signal(s, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd in close:
            os.close(fd)
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, req["stdout"], os.O_WRONLY),
                                (2, req["stderr"], os.O_WRONLY)):
            f = os.open(path, flags)
            os.dup2(f, fd)
            os.close(f)
        os.environ.clear()
        os.environ.update(req["env"])
        if req.get("cwd"):
            os.chdir(req["cwd"])
        from kltrans.gate import worker

        code = worker.main(req["job"])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


if __name__ == "__main__":
    sys.exit(serve())
