"""One GPU, one measurer: an inter-process lock per physical GPU.

Several gate workers may share a GPU (``kltrans experiment --jobs``, the walk's
``--jobs``: more slots than GPUs, so that one worker's start-up, NVRTC compiles and
host-side reference work overlap another's GPU work). Whatever touches the GPU runs under
:func:`gpu_lock`: timings (paired, single, vendor) hold it exclusively, so a timing never
shares its GPU with another kltrans process; correct stages hold it shared, so they run
side by side with each other (a correct stage's verdict does not depend on what else runs
on the GPU) but never during a timing. The lock is an ``fcntl.flock`` on a file named by
the GPU's PCI bus id (the same physical GPU has the same name whatever
``CUDA_VISIBLE_DEVICES`` a process sees), with a turnstile file beside it that gives
timings precedence; both are kept in the temporary directory, and the kernel releases
them when the holder exits, also when it is killed.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time


def pci_bus_id(ordinal: int = 0) -> str:
    """The PCI bus id of the ``ordinal``-th visible GPU (no context is created)."""
    from cuda.bindings import driver as cu

    cu.cuInit(0)
    err, dev = cu.cuDeviceGet(ordinal)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"no CUDA device {ordinal}: {err}")
    err, bus = cu.cuDeviceGetPCIBusId(64, dev)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuDeviceGetPCIBusId: {err}")
    bus = bus.split(b"\0")[0].decode() if isinstance(bus, bytes) else str(bus)
    return bus.strip() or f"ordinal-{ordinal}"


def lock_path(key: str) -> str:
    d = os.path.join(tempfile.gettempdir(), "kltrans-gpu-locks")
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, re.sub(r"[^A-Za-z0-9_.-]", "_", key) + ".lock")


@contextlib.contextmanager
def gpu_lock(key: str, waits: dict | None = None, shared: bool = False):
    """Hold the lock of the GPU named ``key`` (a PCI bus id): exclusive for a timing,
    ``shared`` for a correct stage. The seconds spent waiting for it are added to
    ``waits["lock_wait"]`` when ``waits`` is given.

    Writers go first: everyone passes through a turnstile (a second lock file) before
    taking the GPU's lock; an exclusive holder keeps the turnstile while it waits and
    while it times, so a stream of correct stages cannot starve a timing, and a
    correct stage that arrives during a timing waits for it to end."""
    import fcntl

    t0 = time.perf_counter()
    path = lock_path(key)
    turn = os.open(path[: -len(".lock")] + ".turnstile", os.O_RDWR | os.O_CREAT, 0o666)
    fd = -1
    try:
        fcntl.flock(turn, fcntl.LOCK_EX)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        if shared:  # readers hold the turnstile only to get in
            os.close(turn)
            turn = -1
        if waits is not None:
            waits["lock_wait"] = waits.get("lock_wait", 0.0) + time.perf_counter() - t0
        yield
    finally:
        for f in (fd, turn):  # closing a descriptor releases its lock
            if f >= 0:
                os.close(f)
