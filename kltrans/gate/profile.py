"""The profile stage (GPU only): warm-up, CUDA events, cold L2, trials, paired A/B.

One *trial* is ``reps`` launches; before each launch the L2 cache is flushed by writing a
buffer larger than L2 (``cuMemsetD8Async``), and CUDA events bracket the launch alone. A
trial's figure is the median of its launches; the reported time is the median of the
trial medians. ``paired`` interleaves trials of two kernels (A B B A A B ...) and reports
the ratio per trial; "B is faster" needs the ratio above the threshold in every trial.
Bandwidth counts the workload's minimum bytes (``roofline.bytes``); the roofline fraction
is against the device's measured copy bandwidth (read + write of a 1 GiB device copy),
measured once per device and cached.
"""

from __future__ import annotations

import json
import os
import statistics
from dataclasses import dataclass

import numpy as np

from kltrans.gate.correct import GUARD, generate


@dataclass
class Timing:
    ms: float  # median of trial medians
    trials: list  # each trial's median (ms)
    spread: float  # (max - min) / median of the trial medians
    gbps: float | None
    tflops: float | None
    roofline: float | None  # fraction of measured copy bandwidth (memory-bound view)

    def to_json(self) -> dict:
        return {"ms": self.ms, "trials": self.trials, "spread": self.spread, "gbps": self.gbps,
                "tflops": self.tflops, "roofline": self.roofline}


def _cache_path() -> str:
    from kltrans.cachedir import cache_root

    return os.path.join(cache_root(), "devices.json")


def copy_bandwidth(backend) -> float:
    """Measured device copy bandwidth (bytes/s), cached per device name."""
    path = _cache_path()
    data = {}
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        pass
    if backend.device_name in data:
        return float(data[backend.device_name]["copy_bandwidth"])
    bw = backend.copy_bandwidth()
    data[backend.device_name] = {"copy_bandwidth": bw}
    try:
        from kltrans.syntax.files import atomic_write

        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, json.dumps(data, indent=2))
    except OSError:
        pass
    return bw


def _sample_hash(arr: np.ndarray) -> str:
    """SHA-256 of 16 spread-out 64 KiB windows of ``arr``'s bytes (and its dtype and
    shape): cheap enough for every load of a 1 GiB input, and it catches a file whose
    pages came back as zeros or from another array."""
    import hashlib

    raw = np.asarray(arr).reshape(-1).view(np.uint8)
    h = hashlib.sha256(f"{arr.dtype.str}{tuple(arr.shape)}".encode())
    win = 1 << 16
    n = raw.size
    starts = sorted({min(max(0, n - win), (n * k) // 16) for k in range(16)}) if n else []
    for a in starts:
        h.update(memoryview(np.ascontiguousarray(raw[a:a + win])))
    return h.hexdigest()


def bench_input(wl, arg, shape, seed: int, index: int) -> np.ndarray:
    """Timing inputs for one argument: drawn once per (distribution, dtype, shape, seed,
    position) and kept in the cache root (``inputs/``, one .npy per key, written
    atomically, with a hash of a sample of its bytes beside it), because drawing a 512 MiB
    input takes seconds and a search times many kernels on the same inputs. A file that
    does not load, or whose sample no longer matches, is drawn again.""" 
    import hashlib
    import json as _json

    from kltrans.gate.cache import cache_root
    from kltrans.syntax.files import atomic_write

    spec = {"dist": dict(wl.inputs.get(arg.name, {})), "dtype": arg.dtype,
            "shape": [int(x) for x in shape], "seed": seed, "index": index, "v": 1}
    key = hashlib.sha256(_json.dumps(spec, sort_keys=True).encode()).hexdigest()[:24]
    path = os.path.join(cache_root(), "inputs", f"{key}.npy")
    try:
        arr = np.load(path, mmap_mode="r")
        with open(path + ".sample", encoding="utf-8") as f:
            want = f.read().strip()
        if arr.shape == tuple(spec["shape"]) and arr.size and _sample_hash(arr) == want:
            return arr
    except Exception:  # missing, half-read, a damaged header (numpy may raise SyntaxError)
        pass
    arr = np.ascontiguousarray(generate(wl, arg, shape, np.random.default_rng([seed, 99, index])))
    try:
        import io

        buf = io.BytesIO()
        np.save(buf, arr)
        atomic_write(path, buf.getvalue(), durable=False)
        # written second: a reader that sees the new array before its sample hash draws
        # the input itself, never uses unchecked bytes
        atomic_write(path + ".sample", _sample_hash(arr) + "\n", durable=False)
    except OSError:
        pass  # a read-only cache only costs the drawing time
    return arr


class Setup:
    """Buffers with inputs at one size, ready to launch repeatedly."""

    def __init__(self, backend, wl, sizes: dict, seed: int = 0):
        self.backend = backend
        self.bufs = {}
        self.args = []
        self.scratch = []
        for idx, a in enumerate(wl.arguments):
            if a.role == "scalar":
                v = wl.scalar_value(a, dict(sizes))
                self.args.append((a.dtype, float(v) if a.dtype.startswith(("float", "bfloat")) else int(v)))
                continue
            shape = wl.shape(a, dict(sizes))
            nbytes = int(np.prod(shape)) * a.itemsize
            buf = backend.alloc(GUARD + nbytes + GUARD)
            if a.role in ("in", "inout"):
                backend.upload(buf, bench_input(wl, a, shape, seed, idx), GUARD)
            else:
                backend.memset(buf, 0)
            if a.role == "scratch" or a.init == "zero":
                self.scratch.append(buf)  # zeroed before every launch (flags, accumulators)
            self.bufs[a.name] = buf
            self.args.append(("ptr", backend.ptr(buf, GUARD)))
        self.flush = backend.alloc(max(4 * backend.l2_bytes, 256 << 20))

    def close(self):
        for b in list(self.bufs.values()) + [self.flush]:
            self.backend.free(b)


def time_trial(backend, fn, setup: Setup, launch, reps: int) -> float:
    grid, block, smem = launch
    start, end = backend.event(), backend.event()
    times = []
    for _ in range(reps):
        for b in setup.scratch:
            backend.memset(b, 0)
        backend.memset(setup.flush, 0)  # cold L2
        backend.record(start)
        backend.launch(fn, grid, block, smem, setup.args)
        backend.record(end)
        times.append(backend.elapsed_ms(start, end))
    return statistics.median(times)


def _timing(wl, sizes, trials) -> Timing:
    ms = statistics.median(trials)
    spread = (max(trials) - min(trials)) / ms if ms > 0 else 0.0
    return Timing(ms, trials, spread, None, None, None)


def _rates(t: Timing, wl, sizes, bw) -> Timing:
    b = wl.bytes_moved(dict(sizes))
    f = wl.flops(dict(sizes))
    s = t.ms / 1e3
    if b:
        t.gbps = b / s / 1e9
        t.roofline = (b / s) / bw if bw else None
    if f:
        t.tflops = f / s / 1e12
    return t


def adapt_reps(backend, fn, setup: Setup, launch, reps: int, budget_ms: float = 3000.0) -> int:
    """Fewer repetitions for slow kernels (a naive kernel can take seconds): each trial
    stays near ``budget_ms``, with at least 5 repetitions."""
    one = time_trial(backend, fn, setup, launch, 1)
    return max(5, min(reps, int(budget_ms / max(one, 1e-3))))


def profile(backend, fn, wl, launch, sizes: dict, reps: int = 50, trials: int = 3,
            warmup: int = 5) -> Timing:
    setup = Setup(backend, wl, sizes)
    try:
        for _ in range(warmup):
            for b in setup.scratch:
                backend.memset(b, 0)
            backend.launch(fn, *launch, setup.args)
        backend.synchronize()
        reps = adapt_reps(backend, fn, setup, launch, reps)
        meds = [time_trial(backend, fn, setup, launch, reps) for _ in range(trials)]
    finally:
        setup.close()
    return _rates(_timing(wl, sizes, meds), wl, sizes, copy_bandwidth(backend))


def paired(backend, fn_a, launch_a, fn_b, launch_b, wl, sizes: dict, reps: int = 50,
           trials: int = 5, warmup: int = 5, side_ms: float = 1500.0,
           stop_when_slower: bool = False, min_reps: int = 5, setup: Setup | None = None) -> dict:
    """Interleaved trials of A and B on the same inputs; ratio = time A / time B per trial.

    Slow kernels (a naive one can take 100 ms and more) get fewer repetitions and warm-up
    launches: each side of a trial stays near ``side_ms``, with at least ``min_reps``
    repetitions, and warm-up stops at ``warmup`` launches or a quarter of ``side_ms``.
    ``stop_when_slower``: stop after the first trial in which B is not faster -- for a
    caller that accepts B only if it is faster in every trial, the remaining trials
    cannot change the verdict (``trials_run`` says how many ran). ``setup``: inputs
    already uploaded (at ``sizes``), kept open for the caller's next pair."""
    own = setup is None
    setup = setup or Setup(backend, wl, sizes)
    try:
        def warm(n):
            for _ in range(n):
                for fn, launch in ((fn_a, launch_a), (fn_b, launch_b)):
                    for b in setup.scratch:
                        backend.memset(b, 0)
                    backend.launch(fn, *launch, setup.args)
            backend.synchronize()

        warm(1)
        one = max(time_trial(backend, fn_a, setup, launch_a, 1),
                  time_trial(backend, fn_b, setup, launch_b, 1))
        warm(max(0, min(warmup - 1, int(side_ms / 4.0 / max(one, 1e-3)))))
        reps = max(min_reps, min(reps, int(side_ms / max(one, 1e-3))))
        ta, tb = [], []
        for t in range(trials):
            order = ((fn_a, launch_a, ta), (fn_b, launch_b, tb))
            if t % 2:
                order = order[::-1]
            for fn, launch, acc in order:
                acc.append(time_trial(backend, fn, setup, launch, reps))
            if stop_when_slower and ta[-1] / tb[-1] <= 1.0:
                break
    finally:
        if own:
            setup.close()
    bw = copy_bandwidth(backend)
    ratios = [a / b for a, b in zip(ta, tb)]
    return {"a": _rates(_timing(wl, sizes, ta), wl, sizes, bw).to_json(),
            "b": _rates(_timing(wl, sizes, tb), wl, sizes, bw).to_json(),
            "ratios": ratios, "ratio_median": statistics.median(ratios),
            "b_faster": all(r > 1.0 for r in ratios),
            "b_no_slower": all(r >= 0.99 for r in ratios), "reps": reps,
            "trials_run": len(ratios),
            "copy_bandwidth_gbps": bw / 1e9}
