"""Gate a kernel: compile, correct, profile — one verdict per stage.

``gate()`` runs the compile stage in this process (NVRTC, cached; with the purity
check) and the correct and profile stages in a worker subprocess
(:mod:`kltrans.gate.worker`) on the chosen backend. ``bench()`` compares two kernels with
interleaved, paired trials on the GPU.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field

from kltrans.syntax.contract import ContractError, contracts

STAGES = ("compile", "correct", "profile")


@dataclass
class StageResult:
    stage: str
    status: str  # pass | fail | skipped
    reason: str = ""
    data: dict = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {"stage": self.stage, "status": self.status, "reason": self.reason,
                "seconds": self.seconds, **self.data}


@dataclass
class GateReport:
    kernel_file: str
    kernel: str
    workload: str
    backend: str
    arch: str
    stages: list

    @property
    def ok(self) -> bool:
        return all(s.status != "fail" for s in self.stages)

    def to_json(self) -> dict:
        return {"kernel_file": self.kernel_file, "kernel": self.kernel, "workload": self.workload,
                "backend": self.backend, "arch": self.arch, "ok": self.ok,
                "stages": [s.to_json() for s in self.stages]}


class GateUsageError(ValueError):
    pass


def pick_kernel(wl, path: str, unit, kernel: str | None) -> tuple[str, str | None]:
    """(kernel name, name expression) for a file: --kernel, the spec's variant, or the only one."""
    for v in wl.kernels.values():
        if os.path.abspath(os.path.join(wl.path, v["file"])) == os.path.abspath(path):
            if kernel is None or kernel == v["kernel"]:
                return v["kernel"], v.get("name_expression")
    names = [k.name for k in unit.kernels()]
    if kernel is not None:
        if kernel not in names:
            raise GateUsageError(f"{path}: no kernel {kernel!r} (kernels: {', '.join(names) or 'none'})")
        return kernel, _instantiation(wl, unit, kernel)
    if len(names) != 1:
        if not names:
            raise GateUsageError(f"{path}: no __global__ kernel in it")
        raise GateUsageError(f"{path}: {len(names)} kernels ({', '.join(names)}); choose one "
                             f"with --kernel")
    return names[0], _instantiation(wl, unit, names[0])


def _instantiation(wl, unit, kernel: str) -> str | None:
    """For a template kernel in a file the spec does not list (a rewrite of one of its
    variants, written elsewhere): the instantiation its launch contract names (``//
    kltrans: launch k<float, 256> ...``), else the name expression of the spec's variants
    of that kernel, when they agree on one. Without it NVRTC instantiates nothing to
    launch."""
    if not any(k.name == kernel and k.template_params for k in unit.kernels()):
        return None
    named = _launched_as(unit, kernel)
    if named:
        return named
    exprs = {v.get("name_expression") for v in wl.kernels.values()
             if v["kernel"] == kernel and v.get("name_expression")}
    return exprs.pop() if len(exprs) == 1 else None


def state_instantiation(source: bytes, kernel: str, fallback: str | None) -> str | None:
    """The instantiation a rewritten state of a kernel is gated as: the one its launch
    header names (a rewrite may add a template parameter or drop one, as the block-size
    passes do), None once the kernel is no template, else ``fallback`` (the variant's)."""
    from kltrans.syntax.unit import parse

    unit = parse(source, "state.cu")
    fn = next((f for f in unit.kernels() if f.name == kernel), None)
    if fn is None:
        return fallback
    if not fn.template_params:
        return None
    return _launched_as(unit, kernel) or fallback


def _launched_as(unit, kernel: str) -> str | None:
    """The instantiation the launch header names (``// kltrans: launch k<float, 256>``)."""
    try:
        c = contracts(unit).get(kernel)
    except ContractError:
        return None
    return f"{kernel}<{', '.join(c.template_args)}>" if c is not None and c.template_args \
        else None


def gate(kernel_file: str, workload: str, kernel: str | None = None, backend: str = "auto",
         stages=STAGES, arch: str | None = None, sizes=None, seeds=None,
         timeout_s: float = 300.0, name_expression: str | None = None,
         bench_size: dict | None = None, run_timeout_s: float | None = None) -> GateReport:
    from kltrans.gate.backends import resolve_backend
    from kltrans.gate.compile import compile_unit
    from kltrans.gate.purity import check_purity
    from kltrans.gate.worker import run_job
    from kltrans.syntax.unit import load
    from kltrans.workload.spec import load_workload

    wl = load_workload(workload)
    [unit] = load(kernel_file)
    kname, ne = pick_kernel(wl, kernel_file, unit, kernel)
    ne = name_expression or ne
    if "correct" in stages or "profile" in stages:
        from kltrans.syntax.contract import ContractError, contracts

        try:  # the launch the checks need, read before any work (the worker reads it too)
            have = contracts(unit)
        except ContractError as e:
            raise GateUsageError(str(e)) from None
        if kname not in have:
            raise GateUsageError(
                f"{kernel_file}: no launch contract for {kname} (add a line "
                f"'// kltrans: launch {kname} grid=... block=...', or a host launcher)")
    be = resolve_backend(backend)
    target = arch or "sm_90"
    results = []
    if "compile" in stages or "correct" in stages or "profile" in stages:
        t0 = time.perf_counter()
        impure = check_purity(unit)
        if impure:
            results.append(StageResult("compile", "fail", "; ".join(impure),
                                       {"kind": "purity"}, time.perf_counter() - t0))
            return GateReport(kernel_file, kname, wl.name, be, target, results)
        r = compile_unit(unit, arch=target, name_expressions=[ne] if ne else [],
                         want_ptx=True)  # the launch bounds (.maxntid), whatever spelled them
        res = r.resource(ne or kname)
        data = {"cached": r.cached, "compile_seconds": r.compile_seconds,
                # NVRTC's warnings, by message (lines move with any edit)
                "warnings": sorted({d.message for d in r.warnings}),
                # the machine code's hash: sources that differ in text only compile to
                # the same cubin (the file name and comments are not in it)
                "code": hashlib.sha256(r.cubin).hexdigest()[:16] if r.cubin else None,
                "resources": None if res is None else {
                    "registers": res.registers, "spill_stores": res.spill_stores,
                    "spill_loads": res.spill_loads, "smem_static": res.smem_static,
                    "stack": res.stack}}
        if not r.ok:
            first = r.errors[0] if getattr(r, "errors", None) else None
            reason = str(first).splitlines()[0] if first else r.log.strip().splitlines()[-1:]
            results.append(StageResult("compile", "fail", str(reason),
                                       {**data, "log": r.log[-4000:]}, r.seconds))
            return GateReport(kernel_file, kname, wl.name, be, target, results)
        over = _over_limits(wl, unit, kname, res, r.ptx, target, kernel_file, bench_size) \
            if ("correct" in stages or "profile" in stages) else []
        if over:  # a GPU would refuse the launch: so does every backend
            results.append(StageResult("compile", "fail", over[0],
                                       {**data, "kind": "limits", "limits": over}, r.seconds))
            return GateReport(kernel_file, kname, wl.name, be, target, results)
        results.append(StageResult("compile", "pass", "", data, r.seconds))
    job_stages = [s for s in stages if s in ("correct", "profile")]
    if not job_stages:
        return GateReport(kernel_file, kname, wl.name, be, target, results)
    if be == "cpu" and "profile" in job_stages:
        job_stages.remove("profile")
    if job_stages:
        job = {"kind": "gate", "source": unit.source.decode("utf-8"), "path": kernel_file,
               "kernel": kname, "name_expression": ne, "workload": wl.path, "backend": be,
               "arch": arch, "stages": job_stages, "sizes": sizes, "seeds": seeds,
               "bench_size": bench_size or variant_bench_size(wl, kernel_file)}
        if sizes is None:  # the workload's own sizes: and some no one can know in advance
            from kltrans.gate.correct import draw_seed

            job["draw"] = draw_seed()
        if run_timeout_s:  # the worker's own limit on its GPU time (gate.worker._watchdog)
            job["run_timeout_s"] = float(run_timeout_s)
        out = run_job(job, timeout_s)
        results.extend(stage_results(out, job_stages))
        if be == "cpu":
            _note_cpu_branches(unit, results)
    if be == "cpu" and "profile" in stages:
        results.append(StageResult("profile", "skipped", "no GPU: the profile stage needs the "
                                                         "cuda backend"))
    return GateReport(kernel_file, kname, wl.name, be, target, results)


def _over_limits(wl, unit, kname, res, ptx, arch, kernel_file, bench_size) -> list[str]:
    """The device limits the kernel's launches at the test sizes and the bench size break
    (:mod:`kltrans.gate.limits`); a size whose contract does not evaluate is the correct
    stage's to report."""
    from kltrans.gate import limits
    from kltrans.syntax.contract import contracts

    contract = contracts(unit)[kname]
    launches = []
    bench = bench_size or variant_bench_size(wl, kernel_file) or wl.bench_size
    for sizes in [*wl.test_sizes, bench]:
        try:
            launches.append((sizes, *contract.evaluate(wl.env(dict(sizes)))))
        except Exception:  # noqa: BLE001 - reported by the correct stage
            continue
    return limits.check(res, ptx, launches, arch)


def _note_cpu_branches(unit, results: list) -> None:
    """A CPU correct stage that passed on a file with ``__KLTRANS_CPU_EMULATION__``
    branches says which lines only a GPU run checks (data ``cpu_only_lines``)."""
    from kltrans.gate.purity import cpu_only_lines

    lines = cpu_only_lines(unit)
    for r in results:
        if r.stage == "correct" and r.status == "pass" and lines:
            r.data["cpu_only_lines"] = lines
            r.reason += (f"; the CPU ran its own path under __KLTRANS_CPU_EMULATION__ (line"
                         f"{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}): only a "
                         "GPU run checks the other")


def variant_bench_size(wl, path: str):
    """The bench size of the workload variant kept in ``path`` when the spec gives that
    variant one of its own (an O(n^2) naive kernel), else None."""
    for v in wl.kernels.values():
        if os.path.abspath(os.path.join(wl.path, v["file"])) == os.path.abspath(path):
            return v.get("bench_size")
    return None


def stage_results(out: dict, stages) -> list[StageResult]:
    secs = out.get("seconds", 0.0)
    if out.get("verdict") in ("timeout", "crash", "error"):
        reason = out.get("reason", "")
        if out.get("verdict") == "crash" and out.get("stderr"):
            reason += ": " + out["stderr"].strip().splitlines()[-1][:300]
        st = StageResult(stages[0], "fail", f"{out['verdict']}: {reason}",
                         {"kind": out.get("kind", out["verdict"])}, secs)
        return [st] + [StageResult(s, "skipped", f"{stages[0]} failed") for s in stages[1:]]
    res = []
    if "correct" in stages:
        c = out.get("correct") or {}
        if c.get("ok"):
            res.append(StageResult("correct", "pass", f"{c['checks']} checks",
                                   {"correct": c, "phases": out.get("phases")}, secs))
        else:
            f = c.get("failure") or {}
            where = f" at {f.get('size')} seed {f.get('seed')} run {f.get('run')}" if f.get("size") else ""
            if f.get("drawn"):
                where += (f" (a size drawn for this run: KLTRANS_GATE_SEED={c.get('draw')} "
                          "draws it again)")
            res.append(StageResult("correct", "fail", f"{f.get('reason', '?')}{where}",
                                   {"kind": f.get("kind"), "correct": c,
                                    "phases": out.get("phases")}, secs))
            if "profile" in stages:
                res.append(StageResult("profile", "skipped", "correct failed"))
            return res
    if "profile" in stages:
        p = out.get("profile")
        if p:
            res.append(StageResult("profile", "pass", f"{p['ms']:.4f} ms", {"profile": p}))
    return res


def bench(file_a: str, file_b: str, workload: str, kernel_a: str | None = None,
          kernel_b: str | None = None, timeout_s: float = 600.0, trials: int = 5,
          reps: int = 50, bench_size: dict | None = None, check_b=None,
          side_ms: float = 1500.0, stop_when_slower: bool = False, min_reps: int = 5) -> dict:
    """Paired A/B timing in one worker. ``check_b=(sizes, seeds)``: first run the correct
    stage on B in the same worker (one CUDA start-up for both); a B that fails it is not
    timed, and the result's ``correct`` says why (``gate.run.stage_results`` reads it).
    ``side_ms``, ``stop_when_slower``, ``min_reps``: see :func:`kltrans.gate.profile.paired`.
    Without ``bench_size``: the workload's, unless A (else B) is a variant of the workload
    with a bench size of its own -- then both are timed at that size."""
    from kltrans.gate.worker import run_job
    from kltrans.syntax.unit import load
    from kltrans.workload.spec import load_workload

    wl = load_workload(workload)
    if bench_size is None:  # a variant with its own bench size (an O(n^2) naive kernel)
        bench_size = variant_bench_size(wl, file_a) or variant_bench_size(wl, file_b)
    sides = {}
    for key, f, k in (("a", file_a, kernel_a), ("b", file_b, kernel_b)):
        [u] = load(f)
        name, ne = pick_kernel(wl, f, u, k)
        sides[key] = {"source": u.source.decode("utf-8"), "path": f, "kernel": name,
                      "name_expression": ne}
    job = {"kind": "bench", "a": sides["a"], "b": sides["b"], "workload": wl.path,
           "backend": "cuda", "trials": trials, "reps": reps, "bench_size": bench_size,
           "side_ms": side_ms, "stop_when_slower": stop_when_slower, "min_reps": min_reps}
    if check_b is not None:
        job["check_b"] = {"sizes": check_b[0], "seeds": check_b[1]}
    return run_job(job, timeout_s)
