"""Device limits a launch must respect, checked at the compile stage on every backend.

The CPU emulator runs a block of any size with any amount of shared memory; a GPU refuses
the launch ("too many resources requested", "invalid argument"). So that a CPU verdict
means what a GPU's would, the compile stage checks each launch the kernel's contract makes
at the workload's test sizes and bench size against the target architecture, from what
NVRTC reports of the compiled kernel (registers from ``ptxas -v``, static shared memory,
``.maxntid`` in the PTX, whatever spelling ``__launch_bounds__`` had):

* threads per block at most 1024 (``z`` at most 64), grid ``y``/``z`` at most 65535;
* at most ``.maxntid`` threads (the launch bounds);
* registers: each warp's registers (per-thread count rounded to the allocation unit)
  within the 64K-register file of a multiprocessor;
* static plus dynamic shared memory within the architecture's per-block maximum (with the
  opt-in the gate makes for more than 48 KiB).
"""

from __future__ import annotations

import re

MAX_THREADS = 1024
MAX_BLOCK = (1024, 1024, 64)
MAX_GRID = (2**31 - 1, 65535, 65535)
REGISTER_FILE = 65536
REGISTER_UNIT = 256  # registers are allocated per warp in units of 256
# the largest shared memory one block may use (static + dynamic, after opt-in), by
# compute capability; architectures not listed get the smallest recent one
SMEM_PER_BLOCK = {70: 98304, 72: 98304, 75: 65536, 80: 166912, 86: 101376, 87: 166912,
                  89: 101376, 90: 232448, 100: 232448, 101: 232448, 103: 232448,
                  120: 101376, 121: 101376}


def smem_limit(arch: str) -> int:
    m = re.search(r"(\d+)", arch or "")
    cc = int(m.group(1)) if m else 90
    return SMEM_PER_BLOCK.get(cc, 101376)


def maxntid(ptx: str | None, entry: str) -> int | None:
    """The thread count ``.maxntid`` allows the entry ``entry`` (None when unbounded)."""
    if not ptx:
        return None
    m = re.search(r"\.entry\s+" + re.escape(entry) + r"\s*\((?:[^)]*)\)(?P<dirs>[^{]*)\{",
                  ptx, re.S)
    if m is None:
        return None
    d = re.search(r"\.maxntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", m.group("dirs"))
    if d is None:
        return None
    return int(d.group(1)) * int(d.group(2) or 1) * int(d.group(3) or 1)


def check(res, ptx: str | None, launches, arch: str) -> list[str]:
    """Why the launches break the device's limits (empty when none does). ``res``: the
    kernel's resources (:class:`kltrans.gate.compile.KernelResources`, or None);
    ``launches``: (sizes, grid, block, dynamic shared bytes)."""
    out: list[str] = []
    bound = maxntid(ptx, res.name) if res is not None else None
    smem_max = smem_limit(arch)
    for sizes, grid, block, smem in launches:
        threads = block[0] * block[1] * block[2]
        at = f"at {dict(sizes)}"
        if threads > MAX_THREADS or any(b > m for b, m in zip(block, MAX_BLOCK)):
            out.append(f"{at}: a block of {tuple(block)} ({threads} threads) is more than a "
                       f"GPU runs ({MAX_THREADS} threads, z at most 64)")
        if any(g > m for g, m in zip(grid, MAX_GRID)):
            out.append(f"{at}: a grid of {tuple(grid)} is more than a GPU launches "
                       f"(y and z at most 65535)")
        if bound is not None and threads > bound:
            out.append(f"{at}: a block of {threads} threads exceeds the kernel's launch "
                       f"bounds ({bound}, .maxntid): the launch fails")
        if res is None:
            continue
        if res.registers:
            per_warp = -(-res.registers * 32 // REGISTER_UNIT) * REGISTER_UNIT
            need = -(-threads // 32) * per_warp
            if need > REGISTER_FILE:
                out.append(f"{at}: {threads} threads x {res.registers} registers need "
                           f"{need} registers, more than a multiprocessor has ({REGISTER_FILE})")
        total = (res.smem_static or 0) + int(smem or 0)
        if total > smem_max:
            out.append(f"{at}: {total} bytes of shared memory per block ({res.smem_static} "
                       f"static + {smem} dynamic) is more than {arch} gives a block "
                       f"({smem_max})")
    return out
