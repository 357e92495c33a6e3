"""The CPU emulation backend of the gate (issue 6): CUDA kernels run as C++ on fibers.

:func:`build` translates a :class:`~kltrans.syntax.unit.Unit` to C++
(:mod:`~kltrans.gate.cpu.translate`), compiles it with g++ against the runtime header
(:mod:`~kltrans.gate.cpu.build`, cached on disk) and loads it as a
:class:`~kltrans.gate.cpu.emulator.CpuModule`, whose ``launch`` runs a whole grid in
this process: every CUDA thread a fiber, ``__syncthreads`` and warp primitives barriers,
fiber order randomized at every barrier by ``seed``, blocks spread over OS threads.
Failures are :class:`EmulationError` with ``kind`` in ``deadlock``, ``divergent-warp``,
``timeout``, ``crash``, ``compile``, ``unsupported`` (and ``invalid`` for a bad launch).
Only :mod:`kltrans.syntax` is imported from the rest of kltrans.

Semantics (stricter than hardware where hardware behaviour is undefined):

* ``__syncthreads`` (and ``_count/_and/_or``, ``thread_block::sync``) needs every thread
  of the block at the same call site; a thread that has exited, or threads waiting at
  another ``__syncthreads`` line, make it a deadlock.
* A warp collective (shuffles, votes, ``__reduce_*_sync``, ``__match_*_sync``,
  cooperative-groups tile operations) needs every lane its mask names, at the same call
  site with the same mask; lanes beyond the end of the block do not exist and are
  exempt. A named lane that exits, or waits elsewhere, is a divergent-warp error.
  ``__syncwarp`` matches on the mask only (any call site). ``__activemask()`` returns the
  lanes that reach that call together (it waits until the other lanes of the warp arrive
  or block elsewhere).
* Fibers switch only at barriers: code between two barriers runs as whole per-thread
  segments in a random order (which exposes missing barriers), but a data race inside
  one segment (two threads doing ``s[0] += 1`` with no atomic) is not interleaved.
* Shared memory, static and dynamic, is fresh per block and filled with 0xFF bytes (NaN
  as float/half/bf16, -1 as an integer), so reading unwritten shared memory shows.
* ``__device__``/``__constant__`` variables are process globals that keep their values
  across launches (``CpuModule.set_symbol`` writes them).
* Not emulated: inline PTX (``asm``), dynamic parallelism, textures and surfaces,
  ``cp.async``/``memcpy_async``/pipelines, wmma/mma, clusters, ``grid_group::sync``,
  cub/thrust/curand. Kernels may test ``__KLTRANS_CPU_EMULATION__`` (defined, with
  ``__CUDA_ARCH__`` = 800 unless given) to select portable code paths.
"""

from kltrans.gate.cpu.build import build, build_runtime, cache_root
from kltrans.gate.cpu.emulator import CpuModule, load_runtime, switch_cost_ns
from kltrans.gate.cpu.translate import EmulationError, Translation, translate

__all__ = [
    "CpuModule",
    "EmulationError",
    "Translation",
    "build",
    "build_runtime",
    "cache_root",
    "load_runtime",
    "switch_cost_ns",
    "translate",
]
