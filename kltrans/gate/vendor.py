"""Vendor reference timing: the workload's ``vendor`` torch expression, timed with the
same protocol as the profile stage (warm-up, CUDA events, cold L2, trials). TF32 is off,
so float32 matrix products are true float32 (the corpus's sgemm bar is against that)."""

from __future__ import annotations

import statistics

import numpy as np


def time_vendor(wl, sizes: dict, reps: int = 50, trials: int = 3, warmup: int = 5,
                device_lock=None) -> dict:
    """Median of trial medians of the spec's vendor expression, cold L2. ``device_lock``:
    a context manager held from the first upload to the last timing (the inputs are drawn
    on the host before it)."""
    import contextlib

    import torch

    from kltrans.gate.correct import generate

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.cuda.init()  # the context, before the lock: no work on the GPU yet
    dev = torch.device("cuda")
    rng = np.random.default_rng([0, 7])
    env: dict = {"torch": torch, **sizes}
    tdt = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
           "bfloat16": torch.bfloat16, "int32": torch.int32, "int64": torch.int64,
           "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16}
    host = {}
    for a in wl.arguments:  # drawn on the host first, outside the device lock
        if a.role == "scalar":
            env[a.name] = wl.scalar_value(a, dict(sizes))
        elif a.role in ("in", "inout"):
            arr = generate(wl, a, wl.shape(a, dict(sizes)), rng)
            host[a.name] = arr.astype(np.int16) if a.dtype == "bfloat16" else np.ascontiguousarray(arr)
    with device_lock if device_lock is not None else contextlib.nullcontext():
        for a in wl.arguments:
            if a.role == "scalar":
                continue
            if a.name in host:
                t = torch.from_numpy(host[a.name]).to(dev)
                if a.dtype == "bfloat16":
                    t = t.view(torch.bfloat16)
            else:
                t = torch.zeros(wl.shape(a, dict(sizes)), dtype=tdt.get(a.dtype, torch.float32),
                                device=dev)
            env[a.name] = t
        expr = wl.vendor
        fn = eval(f"lambda: ({expr})", env)  # the spec's own expression, on its own tensors
        flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        s0, e0 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s0.record()
        fn()
        e0.record()
        e0.synchronize()
        reps = max(5, min(reps, int(3000.0 / max(s0.elapsed_time(e0), 1e-3))))
        meds = []
        for _ in range(trials):
            times = []
            for _ in range(reps):
                flush.zero_()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                e.synchronize()
                times.append(s.elapsed_time(e))
            meds.append(statistics.median(times))
        del env, flush
    ms = statistics.median(meds)
    return {"expression": expr, "ms": ms, "trials": meds,
            "spread": (max(meds) - min(meds)) / ms if ms else 0.0}
