"""One GPU, one measurer: an inter-process lock per physical GPU.

Several gate workers may share a GPU (``kltrans experiment --jobs``: more searches than
GPUs, so that one worker's start-up, NVRTC compiles and host-side reference work overlap
another's GPU work). Whatever touches the GPU -- the correct stage's launches and copies,
paired and single timings, vendor timings -- runs under :func:`gpu_lock`, so a timing
never shares its GPU with another kltrans process. The lock is an exclusive
``fcntl.flock`` on a file named by the GPU's PCI bus id (the same physical GPU has the
same name whatever ``CUDA_VISIBLE_DEVICES`` a process sees), kept in the temporary
directory; the kernel releases it when the holder exits, also when it is killed.
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
def gpu_lock(key: str, waits: dict | None = None):
    """Hold the exclusive lock of the GPU named ``key`` (a PCI bus id); the seconds spent
    waiting for it are added to ``waits["lock_wait"]`` when ``waits`` is given."""
    import fcntl

    t0 = time.perf_counter()
    fd = os.open(lock_path(key), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if waits is not None:
            waits["lock_wait"] = waits.get("lock_wait", 0.0) + time.perf_counter() - t0
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
