"""The CPU backend's trust boundary: the kernel runs in a sandbox, the verdict is the caller's.

A CPU-backend kernel is C++ loaded into a process, so that process can do anything the
process can: print a forged result, patch the comparison through the CPython API, write
the expected values from a lookup. Therefore the process that runs the kernel decides
nothing. :func:`run_cpu_gate` runs the correct stage (:func:`kltrans.gate.correct.run_checks`)
in the calling process over :class:`RemoteBackend`, whose memory and launches live in a
child confined by :mod:`kltrans.gate.sandbox`: the inputs are drawn, the reference is
computed and every buffer is compared here; the child only allocates, copies bytes in and
out and launches. What it sends back is checked for shape and size and is never executed.

The child (a fork of the fork server, or a fresh ``python -m kltrans.gate.worker``)
connects to a Unix socket in a private directory, builds the kernel module (g++ runs
before the sandbox is installed), confines itself, loads the module (its static
constructors run confined), says hello with the kernel's parameter list and serves
requests until told to exit. Its stdout and stderr are capture files bounded by
``RLIMIT_FSIZE`` (device ``printf`` lands there, never in a result channel).

Framing, both ways: an 8-byte little-endian length, a JSON header of that length, then
``header["n"]`` bytes of payload where the header has ``n``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import struct
import tempfile
import threading
import time
import traceback

import numpy as np

HEADER_LIMIT = 1 << 20
CAPTURE_BYTES = 1 << 20


class ChannelError(RuntimeError):
    pass


class JobTimeout(Exception):
    """The whole gate job ran past its limit (the caller's verdict ``timeout``)."""


def _send(sock, header: dict, payload: bytes | memoryview = b"") -> None:
    if payload:
        header = {**header, "n": len(payload)}
    h = json.dumps(header).encode()
    sock.sendall(struct.pack("<Q", len(h)) + h)
    if payload:
        sock.sendall(payload)


def _recv_exact(sock, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ChannelError("the kernel process closed the channel")
        got += k
    return buf


def _recv(sock, payload_limit: int) -> tuple[dict, bytearray]:
    (hn,) = struct.unpack("<Q", _recv_exact(sock, 8))
    if hn > HEADER_LIMIT:
        raise ChannelError(f"a message header of {hn} bytes (limit {HEADER_LIMIT})")
    header = json.loads(_recv_exact(sock, hn))
    if not isinstance(header, dict):
        raise ChannelError("a message header that is not an object")
    n = header.get("n", 0)
    if type(n) is not int or not 0 <= n <= payload_limit:
        raise ChannelError(f"a payload of {n!r} bytes (limit {payload_limit})")
    return header, _recv_exact(sock, n) if n else bytearray()


# ------------------------------------------------------------------ the caller's side
class RemoteBackend:
    """The backend interface of :mod:`kltrans.gate.backends` over the channel: buffers are
    ids in the child, a pointer argument is ``(id, offset)``."""

    name = "cpu"
    device_name = "cpu-emulator"
    arch = None

    def __init__(self, proc: "KernelProcess"):
        self.proc = proc
        self.sizes: dict[int, int] = {}

    def alloc(self, nbytes: int):
        from kltrans.gate.backends import Buffer

        h = self.proc.call({"op": "alloc", "nbytes": int(nbytes)})
        if type(h.get("id")) is not int:
            raise self.proc.broken("a reply to alloc without an id")
        self.sizes[h["id"]] = int(nbytes)
        return Buffer(h["id"], int(nbytes))

    def free(self, buf) -> None:
        self.proc.call({"op": "free", "id": buf.handle})

    def ptr(self, buf, offset: int):
        return ("buffer", buf.handle, int(offset))

    def upload(self, buf, data: np.ndarray, offset: int = 0) -> None:
        raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        if offset < 0 or offset + raw.nbytes > buf.nbytes:
            raise ValueError(f"upload of {raw.nbytes} bytes at {offset} into {buf.nbytes}")
        self.proc.call({"op": "upload", "id": buf.handle, "offset": int(offset)},
                       memoryview(raw))

    def protect(self, buf) -> None:
        """Make an input read-only until its next upload: a kernel that writes its input
        (and restores it before the launch ends) faults instead."""
        self.proc.call({"op": "protect", "id": buf.handle})

    def download(self, buf) -> np.ndarray:
        _, payload = self.proc.call({"op": "download", "id": buf.handle},
                                    payload_limit=buf.nbytes)
        if len(payload) != buf.nbytes:
            raise self.proc.broken(f"{len(payload)} bytes back for a buffer of {buf.nbytes}")
        return np.frombuffer(payload, dtype=np.uint8).copy()

    def memset(self, buf, value: int) -> None:
        self.upload(buf, np.full(buf.nbytes, value, dtype=np.uint8))

    def launch(self, kernel, grid, block, smem: int, args: list) -> None:
        out = []
        for kind, v in args:
            if kind == "ptr":
                _, bid, off = v
                out.append(["ptr", [bid, off]])
            else:
                out.append([kind, v])
        self.proc.call({"op": "launch", "grid": list(grid), "block": list(block),
                        "smem": int(smem or 0), "args": out},
                       timeout_s=self.proc.launch_timeout_s + 30.0)

    def synchronize(self) -> None:
        pass


class KernelProcess:
    """One sandboxed child serving one kernel (see the module docstring)."""

    def __init__(self, job: dict, timeout_s: float, env: dict | None = None):
        self.deadline = time.monotonic() + timeout_s
        self.timeout_s = timeout_s
        self.launch_timeout_s = float(job.get("launch_timeout", 60))
        self.dir = tempfile.mkdtemp(prefix="kltrans-kernel-")
        os.mkdir(os.path.join(self.dir, "cwd"), 0o500)
        path = os.path.join(self.dir, "channel")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(1)
        child = {"kind": "cpu-kernel", "channel": path, "workdir": os.path.join(self.dir, "cwd"),
                 "capture_bytes": CAPTURE_BYTES,
                 "memory_bytes": int(job.get("memory_bytes") or _memory_bytes()),
                 # the emulator's order at barriers: drawn per run too, unless fixed
                 "seed": int(job.get("emulator_seed", job.get("draw") or 0)),
                 "launch_timeout": self.launch_timeout_s,
                 **{k: job.get(k) for k in ("source", "path", "kernel", "name_expression")}}
        self.ended: dict = {}
        self.env = env
        self.thread = threading.Thread(target=self._run_child, args=(child, env), daemon=True)
        self.thread.start()
        self.sock = None
        self.peer: int | None = None  # the child's pid, from the kernel (SO_PEERCRED)
        self.hello: dict = {}
        self.phases: dict = {}

    def _run_child(self, child: dict, env) -> None:
        from kltrans.gate.worker import spawn

        try:
            # the spawner's own limit is a backstop: the deadline is this side's to call
            # (a timeout, not a broken channel), and close() kills the child then
            self.ended.update(spawn(child, max(1.0, self.deadline - time.monotonic()) + 15.0,
                                    env))
        except BaseException as e:  # noqa: BLE001 - reported as the child's end
            self.ended.update(code=None, stdout="", stderr=f"{type(e).__name__}: {e}")
        finally:
            self.ended["done"] = True
            try:
                self.listener.close()
            except OSError:
                pass

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def broken(self, why: str) -> Exception:
        from kltrans.gate.backends import BackendError

        return BackendError("crash", f"the kernel process broke the channel: {why}")

    def start(self) -> dict:
        """Wait for the child's hello: ``{"ok": True, "params", "sandbox"}`` or its error."""
        self.listener.settimeout(max(0.1, self.remaining()))
        t0 = time.perf_counter()
        try:
            self.sock, _ = self.listener.accept()
        except OSError:
            return {}
        cred = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                    struct.calcsize("3i"))
        self.peer = struct.unpack("3i", cred)[0]
        self.phases["setup"] = time.perf_counter() - t0
        self.sock.settimeout(max(0.1, self.remaining()))
        try:
            self.hello, _ = _recv(self.sock, 0)
        except (OSError, ChannelError, ValueError):
            return {}
        self.phases["compile"] = time.perf_counter() - t0 - self.phases["setup"]
        return self.hello

    def call(self, header: dict, payload=b"", *, payload_limit: int = 0,
             timeout_s: float = 60.0):
        from kltrans.gate.backends import BackendError

        if self.remaining() <= 0:
            raise JobTimeout()
        wait = min(timeout_s, self.remaining())
        self.sock.settimeout(max(0.1, wait))
        try:
            _send(self.sock, header, payload)
            reply, data = _recv(self.sock, payload_limit)
        except socket.timeout:
            if wait < timeout_s:
                raise JobTimeout() from None
            raise BackendError("timeout", f"the kernel process did not answer {header['op']} "
                                          f"within {timeout_s:g} s (hang?)") from None
        except (OSError, ChannelError, ValueError) as e:
            if self.remaining() <= 0:
                raise JobTimeout() from None
            self.close()
            raise self.broken(f"{header['op']}: {e}{self._ending()}") from None
        if reply.get("ok") is True:
            return (reply, data) if payload_limit else reply
        kind, msg = reply.get("kind"), reply.get("message")
        if not isinstance(kind, str) or not isinstance(msg, str):
            raise self.broken(f"a malformed reply to {header['op']}")
        line = reply.get("line") if type(reply.get("line")) is int else None
        if line is None and type(reply.get("pc_offset")) is int:
            line = self.line_of(reply["pc_offset"])
        raise BackendError(kind[:40], msg[:2000], line)

    def line_of(self, pc_offset: int) -> int | None:
        """The CUDA line of a fault or a hang the child reported by its offset in the
        module, looked up here (the child cannot start addr2line); only in a module of
        the build cache."""
        from kltrans.gate.cpu import cache_root
        from kltrans.gate.cpu.emulator import addr2line

        module, paths = self.hello.get("module"), self.hello.get("paths")
        roots = [cache_root()]
        if (self.env or {}).get("KLTRANS_CACHE_DIR"):  # the job's own cache
            roots.append(os.path.join(os.path.abspath(self.env["KLTRANS_CACHE_DIR"]), "cpu"))
        caches = tuple(os.path.realpath(os.path.join(r, "mod")) + os.sep for r in roots)
        if not isinstance(module, str) or not os.path.realpath(module).startswith(caches) or \
                not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            return None
        loc = addr2line(os.path.realpath(module), paths, pc_offset)
        return loc[1] if loc else None

    def _ending(self) -> str:
        self.thread.join(5.0)
        return ending(self.ended.get("code"))

    def close(self) -> None:
        """Tell the child to exit; kill it (its process group) if it does not."""
        import signal

        if self.sock is not None:
            try:
                self.sock.settimeout(1.0)
                _send(self.sock, {"op": "exit"})
            except OSError:
                pass
            self.sock.close()
            self.sock = None
        self.thread.join(2.0)
        if self.thread.is_alive() and self.peer:
            for kill in (os.killpg, os.kill):
                try:
                    kill(self.peer, signal.SIGKILL)
                except OSError:
                    pass
        self.thread.join(max(1.0, min(30.0, self.remaining())))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def ending(code) -> str:
    """How the kernel process ended, for a reason."""
    import signal

    if code is None:
        return ""
    if code == -signal.SIGSYS:
        return " (it was killed for a system call the sandbox forbids)"
    return f" (it ended with code {code})"


def _memory_bytes() -> int:
    """The kernel process's memory limit (RLIMIT_DATA): ``$KLTRANS_SANDBOX_MEMORY_MB``,
    else 2 GiB and 160 MiB per CPU (the emulator's fiber stacks: 128 MiB for a block of
    1024 threads on each of its OS threads), at most half the machine's memory."""
    mb = os.environ.get("KLTRANS_SANDBOX_MEMORY_MB")
    if mb and mb.isdigit():
        return int(mb) << 20
    want = (2 << 30) + (os.cpu_count() or 1) * (160 << 20)
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return want
    return max(1 << 30, min(want, ram // 2))


def run_cpu_gate(job: dict, timeout_s: float, env: dict | None = None) -> dict:
    """A CPU ``gate`` job (see :mod:`kltrans.gate.worker`): its result, the same fields."""
    from kltrans.gate.backends import BackendError
    from kltrans.gate.correct import ReferenceFailure, run_checks
    from kltrans.syntax import parse
    from kltrans.syntax.contract import contracts
    from kltrans.workload.spec import load_workload

    t0 = time.perf_counter()
    wl = load_workload(job["workload"])
    contract = contracts(parse(job["source"], job["path"]))[job["kernel"]]
    with KernelProcess(job, timeout_s, env) as kp:
        hello = kp.start()
        phases = kp.phases
        if not hello:
            kp.close()
            return _no_hello(kp, timeout_s, t0)
        if hello.get("ok") is not True:
            return {"ok": False, "verdict": "error", "kind": str(hello.get("kind"))[:40],
                    "reason": str(hello.get("message"))[-3000:], "seconds": time.perf_counter() - t0}
        wrong = signature_mismatch(hello.get("params"), wl)
        if wrong:
            return {"ok": False, "verdict": "error", "kind": "signature", "reason": wrong,
                    "seconds": time.perf_counter() - t0}
        out = {"ok": True, "backend": "cpu", "device": "cpu-emulator",
               "sandbox": hello.get("sandbox")}
        t1 = time.perf_counter()
        limit, job_deadline = job.get("run_timeout_s"), kp.deadline
        if limit:  # the correct stage's own limit (the job's covers the compile too)
            kp.deadline = min(kp.deadline, time.monotonic() + float(limit))
        try:
            res = run_checks(RemoteBackend(kp), "kernel", wl, contract,
                             job.get("sizes") or None, job.get("seeds"), draw=job.get("draw"))
        except JobTimeout:
            why = (f"the gate's run on the device went past {float(limit):g} s (hang?)"
                   if limit and kp.deadline < job_deadline else
                   f"the worker did not finish within {timeout_s:g} s (hang?)")
            return {"ok": False, "verdict": "timeout", "seconds": time.perf_counter() - t0,
                    "reason": why}
        except (ReferenceFailure, BackendError) as e:
            return {"ok": False, "verdict": "error", "kind": getattr(e, "kind", "error"),
                    "reason": str(e)[-3000:], "seconds": time.perf_counter() - t0}
        except Exception as e:  # noqa: BLE001 - a workload's mistake becomes data
            return {"ok": False, "verdict": "error", "kind": type(e).__name__,
                    "reason": str(e)[-3000:], "traceback": traceback.format_exc()[-3000:],
                    "seconds": time.perf_counter() - t0}
        phases["correct"] = time.perf_counter() - t1
        out["correct"] = res.to_json()
        out["ok"] = res.ok
    out["output"] = (kp.ended.get("stdout") or "")[-2000:]
    phases["total"] = time.perf_counter() - t0
    out["phases"] = {k: round(v, 4) for k, v in phases.items()}
    out["seconds"] = phases["total"]
    return out


# the parameter type (kl_param_desc code) each workload dtype is passed as
PARAM_CODES = {"float32": "f4", "float64": "f8", "float16": "h2", "bfloat16": "e2",
               "int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2", "int32": "i4",
               "uint32": "u4", "int64": "i8", "uint64": "u8", "bool": "b1"}


def signature_mismatch(params, wl) -> str | None:
    """Why the kernel's parameters (as the compiled module declares them, through
    templates and typedefs) do not take the workload's arguments; None when they do. The
    emulator converts a value to whatever type a parameter has; a GPU passes the bytes the
    gate packs for the spec's type, so a ``double`` parameter for a float32 argument reads
    garbage there. Integers of one size pass either way (signed or unsigned)."""
    if not isinstance(params, list) or not all(isinstance(p, str) for p in params):
        return "the kernel process sent no parameter list"
    args = wl.arguments
    if len(params) != len(args):
        return (f"the kernel takes {len(params)} parameters, the workload passes "
                f"{len(args)} ({', '.join(a.name for a in args)})")
    for i, (code, a) in enumerate(zip(params, args)):
        if code.startswith("s"):
            continue  # a struct by value: its layout is the kernel's
        want = "p" if a.role != "scalar" else PARAM_CODES.get(a.dtype)
        if want is None or code == want:
            continue
        if code[0] in "iu" and want[0] in "iu" and code[1:] == want[1:]:
            continue
        what = {"p": "a pointer", "f4": "float", "f8": "double", "h2": "__half",
                "e2": "__nv_bfloat16", "b1": "bool"}.get(code, f"a {code[1:]}-byte integer")
        return (f"parameter {i + 1} ({a.name}) is {what}, but the workload passes "
                f"{'a buffer' if a.role != 'scalar' else a.dtype}: a GPU would read other "
                "bytes than the emulator converts")
    return None


def _no_hello(kp: KernelProcess, timeout_s: float, t0: float) -> dict:
    end = kp.ended
    secs = time.perf_counter() - t0
    if kp.remaining() <= 0 or end.get("code") is None:
        return {"ok": False, "verdict": "timeout", "stderr": (end.get("stderr") or "")[-2000:],
                "reason": f"the kernel process did not start within {timeout_s:g} s (hang?)",
                "seconds": secs}
    return {"ok": False, "verdict": "crash", "stderr": (end.get("stderr") or "")[-4000:],
            "reason": f"the kernel process ended before it loaded the kernel"
                      f"{ending(end.get('code'))}", "seconds": secs}


# ------------------------------------------------------------------ the child's side
class _Buffers:
    """Page-backed buffers that end where 1 MiB of inaccessible address space begins (and
    follow 64 KiB of it): a read or a write up to 1 MiB past a buffer's end faults.
    256-byte aligned, like cudaMalloc. The inaccessible ranges are address space only
    (``PROT_NONE``), not memory."""

    PAGE = 4096
    BEFORE, AFTER = 64 << 10, 1 << 20

    def __init__(self):
        self.bufs: dict[int, np.ndarray] = {}
        self.pages: dict[int, tuple[int, int]] = {}  # id -> (first data page, length)
        self.protected: set[int] = set()
        self.next = 1

    def alloc(self, nbytes: int) -> int:
        import ctypes
        import mmap

        total = max(256, -(-nbytes // 256) * 256)
        span = -(-total // self.PAGE) * self.PAGE
        m = mmap.mmap(-1, self.BEFORE + span + self.AFTER)
        base = ctypes.addressof(ctypes.c_char.from_buffer(m))
        libc = ctypes.CDLL(None)
        for at, size in ((base, self.BEFORE), (base + self.BEFORE + span, self.AFTER)):
            libc.mprotect(ctypes.c_void_p(at), ctypes.c_size_t(size), 0)
        arr = np.frombuffer(m, dtype=np.uint8, count=nbytes,
                            offset=self.BEFORE + span - total)
        bid = self.next
        self.next += 1
        self.bufs[bid] = arr
        self.pages[bid] = (base + self.BEFORE, span)
        return bid

    def protect(self, bid: int, writable: bool) -> None:
        import ctypes
        import mmap

        at, span = self.pages[bid]
        prot = mmap.PROT_READ | (mmap.PROT_WRITE if writable else 0)
        ctypes.CDLL(None).mprotect(ctypes.c_void_p(at), ctypes.c_size_t(span), prot)
        (self.protected.discard if writable else self.protected.add)(bid)

    def read_only_at(self, addr: int) -> int | None:
        """The protected buffer whose pages hold ``addr``."""
        for bid in self.protected:
            at, span = self.pages[bid]
            if at <= addr < at + span:
                return bid
        return None


def serve(job: dict) -> int:
    """The child: connect, build, confine, load, then serve requests until ``exit``."""
    from kltrans.gate.backends import BackendError, CpuBackend
    from kltrans.gate.cpu import EmulationError, build_runtime, load_runtime
    from kltrans.gate.cpu.build import build_module
    from kltrans.gate.sandbox import SandboxError, confine, forbidden_imports
    from kltrans.syntax import parse

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(job["channel"])
    try:
        unit = parse(job["source"], job["path"])
        load_runtime(build_runtime())
        built = build_module(unit, job["kernel"], job.get("name_expression"))
        bad = forbidden_imports(built.path)
        if bad:
            raise SandboxError(
                f"the kernel's host code calls {', '.join(bad[:8])}"
                f"{' ...' if len(bad) > 8 else ''}: a CUDA kernel cannot (only the CUDA "
                "runtime's device functions, math functions and printf are available)",
                "host-call")
        info = confine(keep_fds=[sock.fileno()], workdir=job["workdir"],
                       read_beneath=[os.path.dirname(built.path)],
                       memory_bytes=job["memory_bytes"], capture_bytes=job["capture_bytes"])
        module = built.load()
        module.lookup_lines = False
    except (EmulationError, SandboxError) as e:
        _send(sock, {"ok": False, "kind": getattr(e, "kind", "sandbox"), "message": str(e),
                     "line": getattr(e, "line", None)})
        return 0
    backend = CpuBackend(seed=job.get("seed", 0), timeout_s=job.get("launch_timeout", 60))
    bufs = _Buffers()
    _send(sock, {"ok": True, "params": module.params, "sandbox": info,
                 "module": built.path, "paths": list(built.translation.paths)})
    while True:
        req, data = _recv(sock, 1 << 40)
        op = req.get("op")
        try:
            if op == "exit":
                return 0
            if op == "alloc":
                _send(sock, {"ok": True, "id": bufs.alloc(int(req["nbytes"]))})
            elif op == "free":
                bufs.bufs.pop(req["id"], None)
                bufs.protected.discard(req["id"])
                _send(sock, {"ok": True})
            elif op == "protect":
                bufs.protect(req["id"], writable=False)
                _send(sock, {"ok": True})
            elif op == "upload":
                if req["id"] in bufs.protected:
                    bufs.protect(req["id"], writable=True)
                arr, off = bufs.bufs[req["id"]], int(req["offset"])
                arr[off:off + len(data)] = np.frombuffer(data, dtype=np.uint8)
                _send(sock, {"ok": True})
            elif op == "download":
                _send(sock, {"ok": True}, memoryview(bufs.bufs[req["id"]]))
            elif op == "launch":
                args = [("ptr", bufs.bufs[v[0]][v[1]:]) if k == "ptr" else (k, v)
                        for k, v in req["args"]]
                backend.launch(module, req["grid"], req["block"], req["smem"], args)
                _send(sock, {"ok": True})
            else:
                _send(sock, {"ok": False, "kind": "invalid", "message": f"unknown op {op!r}"})
        except BackendError as e:
            kind, message = e.kind, e.message
            m = re.search(r"SIGSEGV: invalid memory access at (0x[0-9a-f]+)", message)
            if m and bufs.read_only_at(int(m.group(1), 16)) is not None:
                kind, message = "input-modified", (
                    "the kernel wrote to an input (read-only during the launch)"
                    + message[m.end():])
            _send(sock, {"ok": False, "kind": kind, "message": message, "line": e.line,
                         "pc_offset": getattr(e, "pc_offset", None)})
