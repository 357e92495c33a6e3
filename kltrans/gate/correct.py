"""The correct stage: run a kernel on a backend and compare with the reference.

For every test size and seed:

1. fresh random inputs from the seed (never all zeros), in the workload's distributions
   (where an output is compared exactly, float inputs also hold ``-0.0`` and subnormals);
2. every buffer is allocated with guard zones before and after it (a byte drawn per run),
   and
   outputs are poisoned (all-ones bytes: NaN for floats; ``0xA5`` bytes for integers)
   unless the spec says ``init: zero``;
3. launch with the contract evaluated at that size;
4. checks, in order: guard zones intact (out-of-bounds writes), inputs bit-identical
   (on the CPU backend inputs are read-only during the launch, so a write that is undone
   before the launch ends faults too),
   no element left poisoned (unwritten output), no NaN/Inf unless the reference has one,
   values within the tolerance (max abs, max rel, ‖out−ref‖/‖ref‖, worst index);
5. a second run at the same addresses with new input values (defeats output caching);
6. where the spec gives an input a ``shift`` (``inputs: {x: {shift: 1000}}``), a third
   run at the first seed with that input's values moved by it: large magnitudes and
   shifted means, where softmax without max subtraction overflows and one-pass variance
   cancels.

With a ``draw_seed`` (a fresh secret per gate run, :func:`draw_seed`), the listed sizes
are not all: three more are drawn (:func:`drawn_sizes`) -- two near listed ones with
random residues modulo 16 or 128, one just above the largest listed one in every size --
each with the drawn seed for its values, and all checks run in an order shuffled by the
seed, so a kernel right only at the published sizes, or one that counts its launches,
cannot plan for them. A drawn size the workload cannot take (its launch contract or its
reference fails there) is left out, not held against the kernel.

The first failure decides the verdict and its reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

GUARD = 4096
GUARD_BYTE = 0x5A  # the guard zones' byte when none is drawn (guard_byte)
POISON_FLOAT = 0xFF
POISON_INT = 0xA5

NP = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": np.uint16,
      "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
      "int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64}
FLOATS = ("float32", "float64", "float16", "bfloat16")


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits, round to nearest even (NaN kept NaN)."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    rounded[nan] = 0x7FC0
    return rounded


def bf16_value(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def natural(dtype: str, raw: np.ndarray) -> np.ndarray:
    """The array a reference sees: bf16 bits become float32 values."""
    return bf16_value(raw) if dtype == "bfloat16" else raw


@dataclass
class CheckFailure:
    reason: str
    kind: str  # out-of-bounds | input-modified | unwritten | nan | mismatch | launch | fault | ...
    argument: str | None = None
    size: dict | None = None
    seed: int | None = None
    run: int = 1
    errors: dict | None = None
    drawn: bool = False  # at a size drawn for this run, not a listed one

    def to_json(self) -> dict:
        return {"reason": self.reason, "kind": self.kind, "argument": self.argument,
                "size": self.size, "seed": self.seed, "run": self.run, "errors": self.errors,
                "drawn": self.drawn}


@dataclass
class CorrectResult:
    ok: bool
    checks: int = 0
    failure: CheckFailure | None = None
    errors: list = field(default_factory=list)  # per (size, seed, run, output): norms
    draw: int | None = None  # the seed of the drawn sizes and the order
    skipped: list = field(default_factory=list)  # drawn sizes the workload cannot take

    def to_json(self) -> dict:
        return {"ok": self.ok, "checks": self.checks,
                "failure": self.failure.to_json() if self.failure else None,
                "errors": self.errors, "draw": self.draw, "skipped": self.skipped}


def generate(wl, arg, shape, rng) -> np.ndarray:
    """Random input values for one argument, never all zeros."""
    spec = dict(wl.inputs.get(arg.name, {}))
    dist = spec.get("dist")
    n = int(np.prod(shape)) if shape else 1
    dt = arg.dtype
    for _ in range(10):
        if dt in FLOATS:
            if dist == "normal":
                v = rng.normal(spec.get("mean", 0.0), spec.get("std", 1.0), n)
            elif dist == "positive":
                v = rng.uniform(spec.get("low", 0.1), spec.get("high", 2.0), n)
            else:
                v = rng.uniform(spec.get("low", -1.0), spec.get("high", 1.0), n)
            if dt == "bfloat16":
                arr = bf16_bits(v.astype(np.float32))
            else:
                arr = v.astype(NP[dt])
        else:
            info = np.iinfo(NP[dt])
            lo = spec.get("low", max(info.min, -1000) if info.min < 0 else 0)
            hi = spec.get("high", min(info.max, 1000) if dt not in ("uint8", "int8") else info.max)
            arr = rng.integers(lo, hi + 1, n, dtype=np.int64).astype(NP[dt])
        if np.any(arr.view(np.uint8) != 0):
            if dt in FLOATS and any(t.exact for t in wl.tolerance.values()):
                arr = _exact_edges(arr, dt, rng)
            return arr.reshape(shape)
    raise RuntimeError(f"cannot draw non-zero inputs for {arg.name}")


def _shifted(arr: np.ndarray, dtype: str, shift) -> np.ndarray:
    """``arr`` with its values moved by ``shift`` (rounded to the dtype)."""
    if dtype == "bfloat16":
        return bf16_bits(bf16_value(arr).astype(np.float64) + shift)
    return (arr.astype(np.float64) + shift).astype(arr.dtype)


def _exact_edges(arr: np.ndarray, dtype: str, rng) -> np.ndarray:
    """Where outputs are compared bit for bit, float inputs carry the values a careless
    kernel loses: one element in 16 is ``-0.0``, one in 16 a subnormal of either sign (a
    kernel that flushes subnormals or normalizes zeros -- an "exact" transpose through
    arithmetic -- shows). bfloat16 and float16 inputs are bits already."""
    bits = {"float32": (np.uint32, 23), "float64": (np.uint64, 52), "float16": (np.uint16, 10),
            "bfloat16": (np.uint16, 7)}
    ut, mant = bits[dtype]
    raw = arr.reshape(-1).view(ut).copy()
    n = raw.size
    pick = rng.integers(0, 16, n)
    sign = ut(1) << ut(8 * raw.itemsize - 1)
    raw[pick == 0] = sign  # -0.0
    sub = pick == 1
    frac = rng.integers(1, 1 << min(mant, 62), int(sub.sum()), dtype=np.uint64).astype(ut)
    signs = np.where(rng.integers(0, 2, int(sub.sum())) == 1, sign, ut(0)).astype(ut)
    raw[sub] = frac | signs
    return raw.view(arr.dtype).reshape(arr.shape)


def compare(name: str, dtype: str, tol, out: np.ndarray, ref: np.ndarray,
            poison_bytes: np.ndarray | None) -> tuple[str | None, str | None, dict]:
    """(failure kind, reason, error norms) for one output."""
    ref = np.asarray(ref)
    if ref.shape != out.shape:
        if ref.size == out.size:
            ref = ref.reshape(out.shape)
        else:
            return "mismatch", f"{name}: reference shape {ref.shape} != output shape {out.shape}", {}
    errs: dict = {}
    # unwritten elements still hold the poison pattern
    if poison_bytes is not None:
        item = out.dtype.itemsize
        raw = out.view(np.uint8).reshape(-1, item)
        still = np.all(raw == poison_bytes[:item], axis=1)
        if np.any(still):
            refr = ref.reshape(-1)
            if dtype in FLOATS:
                really = still & ~np.isnan(refr.astype(np.float64))
            else:
                really = still & (out.reshape(-1) != refr.astype(out.dtype))
            if np.any(really):
                idx = int(np.argmax(really))
                cnt = int(really.sum())
                return "unwritten", (f"{name}: {cnt} of {out.size} elements never written "
                                     f"(first at flat index {idx})"), {"unwritten": cnt}
    o = natural(dtype, out).astype(np.float64) if dtype in FLOATS else out.astype(np.float64)
    r = ref.astype(np.float64)
    if tol.rule == "set":
        o2 = np.sort(o.reshape(-1, o.shape[-1]) if o.ndim else o, axis=-1)
        r2 = np.sort(r.reshape(-1, r.shape[-1]) if r.ndim else r, axis=-1)
        if not np.array_equal(o2, r2):
            bad = int(np.argmax(np.any(o2 != r2, axis=-1)))
            return "mismatch", f"{name}: row {bad} is not the same set as the reference", {}
        return None, None, {"exact": True}
    bad_nan = (np.isnan(o) & ~np.isnan(r)) | (np.isinf(o) & ~np.isinf(r))
    if np.any(bad_nan):
        idx = int(np.argmax(bad_nan.reshape(-1)))
        return "nan", f"{name}: NaN or Inf at flat index {idx} where the reference is finite", {}
    # where the reference is not finite the output must be the same: NaN where it is NaN,
    # the same infinity where it is one (no tolerance makes 42 equal to NaN, or -inf +inf)
    miss = (np.isnan(r) & ~np.isnan(o)) | (np.isinf(r) & (o != r))
    if np.any(miss):
        idx = int(np.argmax(miss.reshape(-1)))
        return "nan", (f"{name}: {o.reshape(-1)[idx]:.6g} at flat index {idx} where the "
                       f"reference is {r.reshape(-1)[idx]:.6g}"), {}
    finite = np.isfinite(r)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf where both are inf
        diff = np.where(finite, np.abs(o - r), 0.0)
    mag = np.where(finite, np.abs(r), 0.0)
    max_abs = float(diff.max()) if diff.size else 0.0
    rel = diff / np.maximum(mag, np.finfo(np.float64).tiny)
    max_rel = float(rel.max()) if rel.size else 0.0
    nref = float(np.linalg.norm(r[finite])) if finite.any() else 0.0
    l2 = float(np.linalg.norm(diff)) / nref if nref > 0 else (0.0 if max_abs == 0 else math.inf)
    worst = int(np.argmax(diff.reshape(-1))) if diff.size else 0
    errs = {"max_abs": max_abs, "max_rel": max_rel, "rel_l2": l2,
            "worst_index": [int(i) for i in np.unravel_index(worst, o.shape)] if o.ndim else []}
    if tol.exact:
        if max_abs != 0.0:
            return "mismatch", (f"{name}: not exact: {int((diff > 0).sum())} elements differ, "
                                f"first at {errs['worst_index']}"), errs
        if dtype in FLOATS:  # exact is bit-exact in sign too: -0.0 is not 0.0
            signs = (o == 0) & (np.signbit(o) != np.signbit(r))
            if np.any(signs):
                idx = int(np.argmax(signs.reshape(-1)))
                return "mismatch", (f"{name}: not exact: a zero of the other sign at flat "
                                    f"index {idx}"), errs
        return None, None, errs
    allowed = tol.atol + tol.rtol * mag
    if np.any(diff > allowed):
        return "mismatch", (f"{name}: max abs error {max_abs:.3g}, max rel {max_rel:.3g}, "
                            f"rel L2 {l2:.3g} at {errs['worst_index']} (out "
                            f"{o.reshape(-1)[worst]:.6g}, ref {r.reshape(-1)[worst]:.6g}); "
                            f"tolerance rtol={tol.rtol} atol={tol.atol}"), errs
    return None, None, errs


def draw_seed() -> int:
    """A fresh secret for one gate run; ``$KLTRANS_GATE_SEED`` fixes it (to reproduce a
    failure at a drawn size, or to make a test suite deterministic)."""
    import os
    import secrets

    fixed = os.environ.get("KLTRANS_GATE_SEED")
    if fixed is not None and fixed.strip().isdigit():
        return int(fixed)
    return secrets.randbits(31)


def drawn_sizes(wl, draw: int) -> list[list[dict]]:
    """Three sizes drawn from ``draw``: two near listed sizes (a size's last bits random:
    modulo 16 below 128, modulo 128 above), and the largest listed size (by element
    count) grown by 1 to 16; rounded up to the workload's ``divisible`` rule. Each comes
    with alternatives that change one size parameter only (for workloads whose sizes are
    related, like channels and groups): the first one the workload takes is used."""
    rng = np.random.default_rng([draw, 0x5EED])
    listed = [dict(t) for t in wl.test_sizes]
    div = dict(wl.divisible or {})

    def fit(name: str, v: int) -> int:
        d = div.get(name, 1)
        return max(d, -(-max(1, v) // d) * d)

    def near(v: int) -> int:
        m = 16 if v < 128 else 128
        return v - v % m + int(rng.integers(m))

    def grow(v: int) -> int:
        return v + int(rng.integers(1, 17))

    def variants(base: dict, change) -> list[dict]:
        new = {k: fit(k, change(v)) for k, v in base.items()}
        one = [{**base, k: new[k]} for k in rng.permutation(sorted(base))]
        return [new] + [v for v in one if v != base] if len(base) > 1 else [new]

    out = [variants(listed[int(rng.integers(len(listed)))], near) for _ in range(2)]
    top = max(listed, key=lambda t: (int(np.prod([max(1, v) for v in t.values()])),
                                     sorted(t.items())))
    out.append(variants(top, grow))
    return out


def run_checks(backend, kernel, wl, contract, sizes_list=None, seeds=None,
               second_run: bool = True, draw: int | None = None) -> CorrectResult:
    """The correct stage on an already loaded ``kernel`` (see module docstring); ``draw``
    adds the drawn sizes and shuffles the order of the checks."""
    from kltrans.gate.backends import BackendError

    sizes_list = list(sizes_list or wl.test_sizes)
    seeds = list(seeds or wl.seeds)
    res = CorrectResult(True, draw=draw)
    ref_fn = wl.reference()
    plan = [(si, dict(sizes), seed, False) for si, sizes in enumerate(sizes_list)
            for seed in seeds]
    if draw is not None:
        for k, choices in enumerate(drawn_sizes(wl, draw)):
            sz = next((c for c in choices if _takes(wl, contract, ref_fn, c, draw)), None)
            if sz is None:
                res.skipped.append(choices[0])
            else:
                plan.append((len(sizes_list) + k, sz, draw, True))
        order = np.random.default_rng([draw, 0x0D3]).permutation(len(plan))
        plan = [plan[i] for i in order]
    for si, sizes, seed, drawn in plan:
        env = wl.env(dict(sizes))
        try:
            grid, block, smem = contract.evaluate(env)
            shapes = {a.name: wl.shape(a, dict(sizes)) for a in wl.buffers()}
        except Exception as e:
            res.ok = False
            res.failure = CheckFailure(f"launch contract at {sizes}: {e}", "launch", size=dict(sizes))
            return res
        bufs = {}
        try:
            for a in wl.buffers():
                nbytes = int(np.prod(shapes[a.name])) * a.itemsize
                bufs[a.name] = backend.alloc(GUARD + nbytes + GUARD)
            runs = [1, 2] if second_run else [1]
            if seed == seeds[0] and any("shift" in v for v in wl.inputs.values()):
                runs.append(3)  # the shifted run
            for run in runs:
                rng = np.random.default_rng([seed, si, run])
                try:
                    failure, errors = _one_run(backend, kernel, wl, sizes, shapes, bufs,
                                               rng, grid, block, smem, ref_fn,
                                               shifted=run == 3,
                                               guard_value=guard_byte([seed, si, run]))
                except ReferenceFailure:
                    if not drawn:
                        raise
                    # the workload does not take these inputs at a drawn size
                    res.skipped.append(dict(sizes))
                    break
                res.checks += 1
                res.errors.extend({"size": dict(sizes), "seed": seed, "run": run, **e}
                                  for e in errors)
                if failure is not None:
                    failure.size, failure.seed, failure.run = dict(sizes), seed, run
                    if run == 3:
                        failure.reason += " (the run with shifted inputs: " + ", ".join(
                            f"{k} + {v['shift']:g}" for k, v in wl.inputs.items()
                            if "shift" in v) + ")"
                    failure.drawn = drawn
                    res.ok = False
                    res.failure = failure
                    return res
        except BackendError as e:
            res.ok = False
            where = f" (line {e.line})" if e.line else ""
            res.failure = CheckFailure(f"{e.kind}: {e.message}{where}", e.kind,
                                       size=dict(sizes), seed=seed, drawn=drawn)
            return res
        finally:
            for b in bufs.values():
                try:
                    backend.free(b)
                except Exception:
                    pass
    return res


def _takes(wl, contract, ref_fn, sizes, seed) -> bool:
    """Whether the workload takes a drawn size: its launch contract evaluates, its shapes
    are not empty and its reference runs on inputs of that size."""
    try:
        contract.evaluate(wl.env(dict(sizes)))
        shapes = {a.name: wl.shape(a, dict(sizes)) for a in wl.buffers()}
        if any(int(np.prod(sh)) < 1 for sh in shapes.values()):
            return False
        rng = np.random.default_rng([seed, 0x7E57])
        inputs = {}
        for a in wl.arguments:
            if a.role == "scalar":
                inputs[a.name] = wl.scalar_value(a, dict(sizes))
            elif a.role in ("in", "inout"):
                inputs[a.name] = natural(a.dtype, generate(wl, a, shapes[a.name], rng))
        refs = ref_fn(dict(sizes), **inputs)
    except Exception:  # noqa: BLE001 - the workload's limits, not the kernel's
        return False
    return isinstance(refs, dict)


class ReferenceFailure(Exception):
    """The workload's reference function raised: an error of the workload (its file and
    line named), never a verdict on the kernel."""

    kind = "reference"

    @classmethod
    def of(cls, e: Exception, wl, sizes) -> "ReferenceFailure":
        import os
        import traceback

        path = os.path.join(wl.path, wl.reference_file)
        frames = [f for f in traceback.extract_tb(e.__traceback__)
                  if os.path.abspath(f.filename) == os.path.abspath(path)]
        line = frames[-1].lineno if frames else 1
        return cls(f"{path}:{line}:1: error: the reference raised {type(e).__name__}: {e} "
                   f"(sizes {dict(sizes)})")


def guard_byte(key) -> int:
    """The guard zones' byte for one run, drawn from its key: a kernel cannot write the
    guard byte out of bounds and go unseen (not 0, 0xFF or 0xA5, the poison bytes)."""
    b = int(np.random.default_rng([*key, 0x6A]).integers(1, 253))
    return b + (b >= 0xA5)


def _one_run(backend, kernel, wl, sizes, shapes, bufs, rng, grid, block, smem, ref_fn,
             shifted: bool = False, guard_value: int = GUARD_BYTE):
    inputs_raw = {}
    scalars = {}
    guard = np.full(GUARD, guard_value, dtype=np.uint8)
    expected_bytes = {}
    for a in wl.arguments:
        if a.role == "scalar":
            v = wl.scalar_value(a, dict(sizes))
            scalars[a.name] = v
            continue
        shape = shapes[a.name]
        buf = bufs[a.name]
        if a.role in ("in", "inout"):
            arr = generate(wl, a, shape, rng)
            shift = (wl.inputs.get(a.name) or {}).get("shift") if shifted else None
            if shift:
                arr = _shifted(arr, a.dtype, shift)
            inputs_raw[a.name] = arr
            body = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
        elif a.init == "zero":
            body = np.zeros(int(np.prod(shape)) * a.itemsize, dtype=np.uint8)
        else:
            pb = POISON_FLOAT if a.dtype in FLOATS else POISON_INT
            body = np.full(int(np.prod(shape)) * a.itemsize, pb, dtype=np.uint8)
        full = np.concatenate([guard, body, guard])
        backend.upload(buf, full)
        if a.role == "in" and hasattr(backend, "protect"):  # a write faults where it can
            backend.protect(buf)
        expected_bytes[a.name] = body
    args = []
    for a in wl.arguments:
        if a.role == "scalar":
            v = scalars[a.name]
            args.append((a.dtype, float(v) if a.dtype in FLOATS else int(v)))
        else:
            args.append(("ptr", backend.ptr(bufs[a.name], GUARD)))
    # the reference on the same inputs, first: inputs the workload cannot take (at a
    # drawn size) are found before the kernel reads them
    ref_inputs = {n: natural(a.dtype, inputs_raw[n]) for n, a in
                  ((a.name, a) for a in wl.arguments if a.name in inputs_raw)}
    ref_inputs.update(scalars)
    try:
        refs = ref_fn(dict(sizes), **ref_inputs)
    except Exception as e:  # the workload's mistake, not the kernel's
        raise ReferenceFailure.of(e, wl, sizes) from None
    backend.launch(kernel, grid, block, smem, args)
    backend.synchronize()
    errors = []
    for a in wl.buffers():
        raw = backend.download(bufs[a.name])
        nb = raw.size - 2 * GUARD
        before, body, after = raw[:GUARD], raw[GUARD:GUARD + nb], raw[GUARD + nb:]
        if np.any(before != guard_value) or np.any(after != guard_value):
            which = "before" if np.any(before != guard_value) else "after"
            zone = before if which == "before" else after
            off = int(np.argmax(zone != guard_value))
            pos = off - GUARD if which == "before" else nb + off
            return CheckFailure(f"out-of-bounds write {which} buffer {a.name} (byte offset "
                                f"{pos} relative to its start)", "out-of-bounds", a.name), errors
        if a.role == "scratch":
            continue
        if a.role == "in":
            if not np.array_equal(body, expected_bytes[a.name]):
                idx = int(np.argmax(body != expected_bytes[a.name])) // a.itemsize
                return CheckFailure(f"input {a.name} was modified (first at element {idx})",
                                    "input-modified", a.name), errors
            continue
        if a.name not in refs:
            return CheckFailure(f"the reference returned no {a.name!r}", "reference", a.name), errors
        out = body.view(NP[a.dtype]).reshape(shapes[a.name])
        poison = None
        if a.role == "out" and a.init == "poison":
            pb = POISON_FLOAT if a.dtype in FLOATS else POISON_INT
            poison = np.full(8, pb, dtype=np.uint8)
        kind, reason, errs = compare(a.name, a.dtype, wl.tolerance[a.name], out,
                                     refs[a.name], poison)
        errors.append({"output": a.name, **errs})
        if kind is not None:
            return CheckFailure(reason, kind, a.name, errors=errs), errors
    return None, errors
