"""Workload specs: what a kernel computes, at which sizes, checked how.

A workload is a folder with ``workload.yaml``, ``reference.py`` and kernel variants::

    schema: 1
    name: scale
    description: y = a * x + b
    sizes: [n]                                   # size parameters
    arguments:                                   # in kernel parameter order
      - {name: x, role: in, dtype: float32, shape: [n]}
      - {name: y, role: out, dtype: float32, shape: [n]}
      - {name: a, role: scalar, dtype: float32, value: 1.5}
      - {name: n, role: scalar, dtype: int32, value: n}
    test_sizes: [{n: 1}, {n: 1000}, {n: 1000003}]   # at least one ragged size
    bench_size: {n: 67108864}
    divisible: {}                                # sizes every kernel may assume divisible
    inputs: {x: {dist: normal}}                  # default: uniform(-1, 1) / full integer range
                                                 # shift: S adds a run with x + S (large
                                                 # magnitudes, shifted means)
    tolerance: {y: {rtol: 1.0e-6, atol: 1.0e-6}} # or {exact: true}, or {rule: set, axis: -1}
    roofline: {bytes: "8 * n", flops: "2 * n"}
    reference: reference.py                      # def reference(sizes, **inputs) -> {output: array}
    seeds: [0, 1, 2]
    kernels:
      naive: {file: naive.cu, kernel: scale_naive, bench_size: {n: 1048576}}  # own bench size
      expert: {file: expert.cu, kernel: scale, name_expression: "scale<float, 4>"}

Roles: ``in`` (random, must come back bit-identical), ``out`` (poisoned before the run
unless ``init: zero``, every element checked), ``inout`` (random in, checked out),
``scratch`` (workspace the kernel may use, e.g. tile flags of a single-pass scan: zeroed
before every launch, guard zones checked, contents not compared), ``scalar`` (a value or
an expression of the sizes). The launch comes from the kernel
file's contract (``// kltrans: launch ...``, see :mod:`kltrans.syntax.contract`),
evaluated with the sizes and scalar values. Validation errors point at the field
(``workload.yaml: arguments[2].dtype: ...``).
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass, field
from typing import Any

SCHEMA = 1
DTYPES = {
    "float32": ("float", 4), "float64": ("double", 8), "float16": ("__half", 2),
    "bfloat16": ("__nv_bfloat16", 2), "int8": ("signed char", 1), "uint8": ("unsigned char", 1),
    "int16": ("short", 2), "uint16": ("unsigned short", 2), "int32": ("int", 4),
    "uint32": ("unsigned int", 4), "int64": ("long long", 8), "uint64": ("unsigned long long", 8),
}
ROLES = ("in", "out", "inout", "scratch", "scalar")
DISTS = ("uniform", "normal", "randint", "positive", "bytes")


class SpecError(ValueError):
    """A workload spec that does not validate; the message names the file and field."""


def _check_python(path: str) -> None:
    """A reference that is not valid Python is a spec error where it is (file:line:col),
    found when the spec is read, not when a check first runs it."""
    try:
        with open(path, "rb") as f:
            compile(f.read(), path, "exec", dont_inherit=True)
    except SyntaxError as e:
        raise SpecError(f"{path}:{e.lineno or 0}:{e.offset or 0}: Python syntax error: "
                        f"{e.msg}") from None
    except ValueError as e:  # null bytes
        raise SpecError(f"{path}: {e}") from None


def _err(path: str, where: str, msg: str) -> SpecError:
    return SpecError(f"{path}: {where}: {msg}")


@dataclass(frozen=True)
class Argument:
    name: str
    role: str
    dtype: str
    shape: tuple = ()  # expressions of sizes
    value: Any = None  # scalars: a number or an expression
    init: str = "poison"  # outputs: poison | zero

    @property
    def is_buffer(self) -> bool:
        return self.role != "scalar"

    @property
    def itemsize(self) -> int:
        return DTYPES[self.dtype][1]


@dataclass(frozen=True)
class Tolerance:
    rtol: float = 0.0
    atol: float = 0.0
    exact: bool = False
    rule: str | None = None  # "set": equal as multisets along the last axis (indices)


@dataclass
class Workload:
    path: str  # the folder
    name: str
    description: str
    sizes: tuple
    arguments: tuple
    test_sizes: tuple
    bench_size: dict
    divisible: dict
    inputs: dict
    tolerance: dict
    roofline: dict
    reference_file: str
    seeds: tuple
    kernels: dict  # variant -> {"file", "kernel", "name_expression"}
    vendor: str | None = None  # a torch expression timing the vendor reference
    bar: dict = field(default_factory=dict)  # {roofline: 0.85} or {vendor_fraction: 0.7}
    _reference: Any = field(default=None, repr=False)

    # ------------------------------------------------------------------ helpers
    def kernel_path(self, variant: str) -> str:
        return os.path.join(self.path, self.kernels[variant]["file"])

    def buffers(self):
        return [a for a in self.arguments if a.is_buffer]

    def shape(self, arg: Argument, sizes: dict) -> tuple:
        from kltrans.syntax.contract import evaluate

        return tuple(evaluate(str(e), sizes) for e in arg.shape)

    def scalar_value(self, arg: Argument, sizes: dict):
        from kltrans.syntax.contract import evaluate

        v = arg.value
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return v
        return evaluate(str(v), sizes)

    def env(self, sizes: dict) -> dict:
        """Sizes plus scalar argument values (for launch contracts and formulas)."""
        env = dict(sizes)
        for a in self.arguments:
            if a.role == "scalar":
                val = self.scalar_value(a, sizes)
                if isinstance(val, int):
                    env[a.name] = val
        return env

    def reference(self):
        if self._reference is None:
            p = os.path.join(self.path, self.reference_file)
            spec = importlib.util.spec_from_file_location(f"kltrans_ref_{self.name}", p)
            mod = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(mod)
            except Exception as e:
                raise SpecError(f"{p}: cannot load the reference: {type(e).__name__}: {e}") from None
            fn = getattr(mod, "reference", None)
            if not callable(fn):
                raise SpecError(f"{p}: defines no function reference(sizes, **inputs)")
            self._reference = fn
        return self._reference

    def bytes_moved(self, sizes: dict) -> int | None:
        from kltrans.syntax.contract import evaluate

        b = self.roofline.get("bytes")
        return evaluate(str(b), self.env(sizes)) if b is not None else None

    def flops(self, sizes: dict) -> int | None:
        from kltrans.syntax.contract import evaluate

        f = self.roofline.get("flops")
        return evaluate(str(f), self.env(sizes)) if f is not None else None


_NAME = re.compile(r"^[A-Za-z_]\w*$")


def _instantiation_disagrees(path: str, kernel: str, name_expression: str | None
                             ) -> str | None:
    """Why the instantiation the kernel file's launch header names (``// kltrans: launch
    k<float, 256> ...``) is not ``name_expression``; None when they agree or the header
    names none."""
    from kltrans.syntax.contract import HEADER, split_top

    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    m = next((m for m in HEADER.finditer(text) if m.group("kernel") == kernel), None)
    if m is None or m.group("targs") is None or not name_expression:
        return None
    header = [a.replace(" ", "") for a in split_top(m.group("targs"), ",")]
    ne = name_expression.strip()
    given = [a.replace(" ", "") for a in split_top(ne[ne.index("<") + 1:-1], ",")] \
        if "<" in ne and ne.endswith(">") else []
    if ne.split("<")[0].strip() != kernel or header != given:
        return (f"{name_expression!r} is not the instantiation the launch header of "
                f"{os.path.basename(path)} names ({kernel}<{m.group('targs')}>)")
    return None


def load_workload(path: str) -> Workload:
    """Load and validate ``path/workload.yaml`` (``path`` may name the file itself)."""
    import yaml

    folder = path
    if os.path.isfile(path):
        folder = os.path.dirname(os.path.abspath(path))
    spec_path = os.path.join(folder, "workload.yaml")
    if not os.path.isfile(spec_path):
        raise SpecError(f"{path if os.path.isfile(path) else folder}: "
                        f"{'not a workload: ' if os.path.isfile(path) else ''}no workload.yaml "
                        f"(a workload is a folder with workload.yaml, reference.py and kernel "
                        f"files)")
    from kltrans.syntax import yamldoc
    from kltrans.syntax.diagnostics import InputError
    from kltrans.syntax.unit import read_failure, read_source

    try:
        data = yamldoc.safe_load(read_source(spec_path))
    except InputError as e:
        where, why = read_failure(e)
        raise SpecError(f"{where}: {why}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "parse"
        raise _err(spec_path, where, f"not valid YAML: {getattr(e, 'problem', e)}") from None
    if not isinstance(data, dict):
        raise _err(spec_path, "top level", "must be a mapping")
    P = spec_path

    def need(key, typ, where=None):
        if key not in data:
            raise _err(P, key, "missing")
        v = data[key]
        if not isinstance(v, typ):
            raise _err(P, where or key, f"must be {typ.__name__ if isinstance(typ, type) else 'of the right type'}")
        return v

    known = {"schema", "name", "description", "sizes", "arguments", "test_sizes", "bench_size",
             "divisible", "inputs", "tolerance", "roofline", "reference", "seeds", "kernels",
             "vendor", "bar"}
    for k in data:
        if k not in known:
            raise _err(P, k, f"unknown field (known: {', '.join(sorted(known))})")
    if data.get("schema") != SCHEMA:
        raise _err(P, "schema", f"must be {SCHEMA}")
    name = need("name", str)
    sizes = need("sizes", list)
    for i, s in enumerate(sizes):
        if not isinstance(s, str) or not _NAME.match(s):
            raise _err(P, f"sizes[{i}]", "must be an identifier")
    args = []
    seen = set()
    for i, a in enumerate(need("arguments", list)):
        w = f"arguments[{i}]"
        if not isinstance(a, dict):
            raise _err(P, w, "must be a mapping")
        for k in a:
            if k not in ("name", "role", "dtype", "shape", "value", "init"):
                raise _err(P, f"{w}.{k}", "unknown field")
        nm = a.get("name")
        if not isinstance(nm, str) or not _NAME.match(nm):
            raise _err(P, f"{w}.name", "must be an identifier")
        if nm in seen:
            raise _err(P, f"{w}.name", f"duplicate argument {nm!r}")
        seen.add(nm)
        role = a.get("role")
        if role not in ROLES:
            raise _err(P, f"{w}.role", f"must be one of {', '.join(ROLES)}")
        dt = a.get("dtype")
        if dt not in DTYPES:
            raise _err(P, f"{w}.dtype", f"{dt!r} is not one of {', '.join(DTYPES)}")
        shape = a.get("shape", [])
        if role != "scalar":
            if not isinstance(shape, list) or not shape:
                raise _err(P, f"{w}.shape", "a buffer needs a shape: a list of size expressions")
            if "value" in a:
                raise _err(P, f"{w}.value", "only scalars have a value")
        else:
            if "value" not in a:
                raise _err(P, f"{w}.value", "a scalar needs a value (a number or a size expression)")
        init = a.get("init", "poison")
        if init not in ("poison", "zero"):
            raise _err(P, f"{w}.init", "must be poison or zero")
        if init == "zero" and role not in ("out", "scratch"):
            raise _err(P, f"{w}.init", "only outputs and scratch can start at zero")
        if role == "scratch":
            init = "zero"
        args.append(Argument(nm, role, dt, tuple(str(x) for x in shape), a.get("value"), init))
    if not any(a.role in ("out", "inout") for a in args):
        raise _err(P, "arguments", "no output (role out or inout)")
    tests = need("test_sizes", list)
    if not tests:
        raise _err(P, "test_sizes", "needs at least one size")
    for i, t in enumerate(tests):
        if not isinstance(t, dict) or set(t) != set(sizes):
            raise _err(P, f"test_sizes[{i}]", f"must give exactly {', '.join(sizes)}")
        for k, v in t.items():
            if not isinstance(v, int) or v < 0:
                raise _err(P, f"test_sizes[{i}].{k}", "must be a non-negative integer")
    divisible = data.get("divisible") or {}
    if not isinstance(divisible, dict) or any(k not in sizes or not isinstance(v, int) or v < 1
                                              for k, v in divisible.items()):
        raise _err(P, "divisible", "must map size names to positive integers")
    if not divisible:
        ragged = [t for t in tests if all(v % 2 == 1 or v < 2 for v in t.values())
                  or any(v % 2 == 1 for v in t.values())]
        if not ragged:
            raise _err(P, "test_sizes", "needs at least one ragged size (odd, not a multiple of "
                                        "any tile or vector width), or a divisible rule")
    else:
        for i, t in enumerate(tests):
            for k, d in divisible.items():
                if t[k] % d:
                    raise _err(P, f"test_sizes[{i}].{k}", f"must be divisible by {d} (divisible rule)")
    bench = need("bench_size", dict)
    if set(bench) != set(sizes):
        raise _err(P, "bench_size", f"must give exactly {', '.join(sizes)}")
    inputs = data.get("inputs") or {}
    for k, v in inputs.items():
        if k not in seen:
            raise _err(P, f"inputs.{k}", "no such argument")
        if not isinstance(v, dict) or v.get("dist", "uniform") not in DISTS:
            raise _err(P, f"inputs.{k}.dist", f"must be one of {', '.join(DISTS)}")
        extra = set(v) - {"dist", "mean", "std", "low", "high", "shift"}
        if extra:
            raise _err(P, f"inputs.{k}.{sorted(extra)[0]}",
                       "unknown field (known: dist, mean, std, low, high, shift)")
        if "shift" in v and (isinstance(v["shift"], bool) or
                             not isinstance(v["shift"], (int, float)) or not v["shift"]):
            raise _err(P, f"inputs.{k}.shift", "must be a non-zero number")
        for f in ("mean", "std", "low", "high"):
            x = v.get(f, 0)
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                raise _err(P, f"inputs.{k}.{f}", "must be a number")
    tol = {}
    outs = [a.name for a in args if a.role in ("out", "inout")]
    for k, v in (need("tolerance", dict)).items():
        if k not in outs:
            raise _err(P, f"tolerance.{k}", "not an output argument")
        if not isinstance(v, dict):
            raise _err(P, f"tolerance.{k}", "must be a mapping (rtol/atol, exact or rule)")
        extra = set(v) - {"rtol", "atol", "exact", "rule"}
        if extra:
            raise _err(P, f"tolerance.{k}.{sorted(extra)[0]}", "unknown field")
        if v.get("rule") not in (None, "set"):
            raise _err(P, f"tolerance.{k}.rule", "must be set")
        for f in ("rtol", "atol"):
            x = v.get(f, 0.0)
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not x >= 0:
                raise _err(P, f"tolerance.{k}.{f}", "must be a number, 0 or more")
        if not isinstance(v.get("exact", False), bool):
            raise _err(P, f"tolerance.{k}.exact", "must be true or false")
        tol[k] = Tolerance(float(v.get("rtol", 0.0)), float(v.get("atol", 0.0)),
                           bool(v.get("exact", False)), v.get("rule"))
    missing = [o for o in outs if o not in tol]
    if missing:
        raise _err(P, "tolerance", f"no rule for output {missing[0]!r}")
    roof = data.get("roofline") or {}
    if not isinstance(roof, dict) or set(roof) - {"bytes", "flops"}:
        raise _err(P, "roofline", "may hold bytes and flops formulas")
    ref = data.get("reference", "reference.py")
    if not isinstance(ref, str) or not os.path.isfile(os.path.join(folder, ref)):
        raise _err(P, "reference", f"{ref} not found in {folder}")
    _check_python(os.path.join(folder, ref))
    seeds = data.get("seeds", [0, 1, 2])
    if not isinstance(seeds, list) or len(seeds) < 3 or not all(isinstance(s, int) for s in seeds):
        raise _err(P, "seeds", "needs at least 3 integer seeds")
    kernels = {}
    for vname, k in (data.get("kernels") or {}).items():
        w = f"kernels.{vname}"
        if not isinstance(k, dict) or "file" not in k or "kernel" not in k:
            raise _err(P, w, "needs file and kernel")
        if not os.path.isfile(os.path.join(folder, k["file"])):
            raise _err(P, f"{w}.file", f"{k['file']} not found")
        extra = set(k) - {"file", "kernel", "name_expression", "bench_size"}
        if extra:
            raise _err(P, f"{w}.{sorted(extra)[0]}", "unknown field")
        kb = k.get("bench_size")
        if kb is not None and (not isinstance(kb, dict) or set(kb) != set(sizes)):
            raise _err(P, f"{w}.bench_size", f"must give exactly {', '.join(sizes)}")
        why = _instantiation_disagrees(os.path.join(folder, k["file"]), k["kernel"],
                                       k.get("name_expression"))
        if why:
            raise _err(P, f"{w}.name_expression", why)
        kernels[vname] = {"file": k["file"], "kernel": k["kernel"],
                          "name_expression": k.get("name_expression"), "bench_size": kb}
    # formulas must evaluate at the bench size
    from kltrans.syntax.contract import ContractError, evaluate

    wl = Workload(folder, name, data.get("description", ""), tuple(sizes), tuple(args),
                  tuple(tests), bench, divisible, inputs, tol, roof, ref, tuple(seeds), kernels,
                  data.get("vendor"), _bar(P, data.get("bar")))
    for a in args:
        try:
            if a.is_buffer:
                wl.shape(a, dict(bench))
            else:
                wl.scalar_value(a, dict(bench))
        except ContractError as e:
            raise _err(P, f"arguments.{a.name}", str(e)) from None
    for k in ("bytes", "flops"):
        if k in roof:
            try:
                evaluate(str(roof[k]), wl.env(dict(bench)))
            except ContractError as e:
                raise _err(P, f"roofline.{k}", str(e)) from None
    return wl


def _bar(path: str, bar) -> dict:
    if bar is None:
        return {}
    if not isinstance(bar, dict) or set(bar) - {"roofline", "vendor_fraction"} or not all(
            isinstance(v, (int, float)) and 0 < v <= 1 for v in bar.values()):
        raise _err(path, "bar", "may hold roofline and vendor_fraction, numbers in (0, 1]")
    return dict(bar)
