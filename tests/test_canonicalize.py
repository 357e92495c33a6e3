"""Canonicalization: every case file of tests/data/canonical becomes its golden, the golden is
a fixed point, lines after an ``// ok: why`` comment are left as written, and the result
compiles to the input's machine code (NVRTC); a rule that changes the machine code is
undone by the same-code check."""

from __future__ import annotations

import glob
import hashlib
import os
import subprocess
import sys

import pytest

from kltrans.passes.canonical import CanonicalError, canonicalize, parse_rules, rules
from kltrans.syntax import parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "canonical")
CASES = sorted(p for p in glob.glob(os.path.join(DATA, "*.cu")) if not p.endswith(".expected.cu"))


def _read(path: str) -> str:
    return open(path, encoding="utf-8").read()


@pytest.mark.parametrize("path", CASES, ids=os.path.basename)
def test_a_case_becomes_its_golden_and_the_golden_is_canonical(path):
    want = _read(path[:-3] + ".expected.cu")
    new, steps, notes = canonicalize(parse(_read(path), path), check=False)
    assert new.source.decode() == want
    assert steps and not notes
    again, more, _ = canonicalize(parse(want, path), check=False)
    assert not more, f"the golden is not a fixed point: {more[:3]}"


@pytest.mark.parametrize("path", CASES, ids=os.path.basename)
def test_lines_marked_ok_are_left_as_written(path):
    src = _read(path).splitlines()
    out = _read(path[:-3] + ".expected.cu").splitlines()
    marked = [src[i + 1] for i, line in enumerate(src) if line.strip().startswith("// ok:")]
    assert marked, "each case file keeps refused spellings, with why"
    for line in marked:
        assert line in out, f"changed although marked ok: {line.strip()}"


@pytest.mark.parametrize("path", CASES, ids=os.path.basename)
def test_the_result_compiles_to_the_same_machine_code(path):
    from kltrans.gate.compile import compile_unit

    before = compile_unit(parse(_read(path), path), arch="sm_90")
    after = compile_unit(parse(_read(path[:-3] + ".expected.cu"), path), arch="sm_90")
    assert before.ok and after.ok and before.cubin
    assert hashlib.sha256(before.cubin).digest() == hashlib.sha256(after.cubin).digest()


WARP_SIZE = {"schema": 1, "rules": {"warp-size": {
    "doc": "warpSize as 32 (equivalent, but it changes the machine code)",
    "from": ["warpSize"], "to": "32"}}}


def test_a_rule_that_changes_the_machine_code_is_undone():
    src = ("__global__ void lanes(int* y) {\n"
           "  y[threadIdx.x] = threadIdx.x % warpSize;\n"
           "}\n")
    table = parse_rules(WARP_SIZE)
    new, steps, _ = canonicalize(parse(src, "w.cu"), check=False, table=table)
    assert "% 32" in new.source.decode() and [s.rule for s in steps] == ["warp-size"]
    kept, steps, notes = canonicalize(parse(src, "w.cu"), check=True, table=table)
    assert kept.source.decode() == src and not steps
    assert notes == ["warp-size: undone, the machine code changed"]


def test_a_user_variable_with_a_builtin_name_is_not_rewritten():
    src = "__global__ void k(int* y) { int warpSize = 16; y[0] = warpSize; }\n"
    new, steps, _ = canonicalize(parse(src, "u.cu"), check=False, table=parse_rules(WARP_SIZE))
    assert not steps and new.source.decode() == src


@pytest.mark.parametrize("raw, why", [
    ({"rules": {}}, "schema: 1"),
    ({"schema": 1, "rules": {"a": {"doc": "x", "builtin": "nope"}}}, "unknown builtin"),
    ({"schema": 1, "rules": {"a": {"doc": "x", "op": "shuffle.sideways", "to": "y"}}},
     "not an operation"),
    ({"schema": 1, "rules": {"a": {"doc": "x", "from": ["$X +"], "to": "y"}}}, "pattern"),
    ({"schema": 1, "rules": {"a": {"doc": "x", "from": ["$X"], "op": "barrier.warp",
                                   "to": "y"}}}, "exactly one"),
    ({"schema": 1, "rules": {"a": {"from": ["$X"], "to": "y"}}}, "doc"),
])
def test_a_malformed_rule_table_is_refused_with_the_reason(raw, why):
    with pytest.raises(CanonicalError, match=why):
        parse_rules(raw)


def test_the_bundled_table_loads_and_every_rule_has_a_case():
    text = "\n".join(_read(p) for p in CASES)
    for name, rule in rules().items():
        if rule.builtin or rule.op:
            continue
        assert rule.patterns, name
    used = set()
    for path in CASES:
        _, steps, _ = canonicalize(parse(_read(path), path), check=False)
        used |= {s.rule for s in steps}
    assert used == set(rules()), f"rules without a case: {sorted(set(rules()) - used)}"
    assert text


def test_opt_runs_canonicalize_and_reports_each_step(tmp_path):
    src = os.path.join(DATA, "loops_and_statements.cu")
    out = tmp_path / "c.cu"
    r = subprocess.run([sys.executable, "-m", "kltrans", "opt", "-p", "canonicalize{check=none}",
                        src, "-o", str(out), "--remarks", "applied"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert out.read_text() == _read(src[:-3] + ".expected.cu")
    assert "remark: canonicalize: applied" in r.stderr and "split-declarations" in r.stderr
    r = subprocess.run([sys.executable, "-m", "kltrans", "opt", "-p", "canonicalize{rules=nope}",
                        src], capture_output=True, text=True)
    assert r.returncode == 2 and "brace-bodies" in r.stderr and "Traceback" not in r.stderr


def test_explain_holds_up_to_canonical_form():
    from kltrans.diff.search import explain

    a = "__global__ void k(float* y, int n) {\n  for (int i = 0; i < n; ++i)\n    y[i] = y[i] * 2.f;\n}\n"
    b = "__global__ void k(float* y, int n) {\n  for (int i = 0; i < n; i++) {\n    y[i] = y[i] * 2.f;\n  }\n}\n"
    plain = explain(a, b, depth=1, passes=["unroll"])
    assert not plain.exact
    e = explain(a, b, depth=1, passes=["unroll"], canonical=True)
    assert e.exact and e.pipeline == "canonicalize" and e.canonical["a"] == 2
    assert e.to_json()["canonical"]["b"] == 0


@pytest.mark.skipif(not __import__("shutil").which("g++"), reason="the CPU emulator needs g++")
def test_a_walk_from_the_canonical_form_reverses_each_step_up_to_it(tmp_path):
    """The expert is written with an unbraced body and a prefix increment; the walk starts
    from its canonical form, and each state it reaches is canonical."""
    from kltrans.lineage import WalkOptions, walk
    from kltrans.lineage.store import read_state

    scale = os.path.join(ROOT, "tests", "data", "workloads", "scale")
    expert = tmp_path / "scale_expert.cu"
    expert.write_text(
        "// kltrans: launch scale grid=ceil_div(n, 256) block=256\n"
        'extern "C" __global__ void __launch_bounds__(256) scale(const float* __restrict__ x, '
        "float* __restrict__ y, float a, float b, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x, j;\n"
        "  if (i < n) y[i] = a * x[i] + b;\n"
        "}\n")
    out = str(tmp_path / "lineage")
    doc = walk(WalkOptions(scale, expert=str(expert), backend="cpu", out=out, jobs=1,
                           progress=False, probes=0, canonicalize=True))
    assert doc["config"]["canonicalize"]["rules"] == ["brace-bodies", "split-declarations"]
    assert doc["termination"]["kind"] == "naive"
    assert {t["pass"] for t in doc["transitions"]} == {"drop-launch-bounds", "unrestrict-pointers"}
    for st in doc["states"]:
        src = read_state(out, st)
        assert not canonicalize(parse(src, "s.cu"), check=False)[1]
    assert all(t["roundtrip"]["ok"] for t in doc["transitions"])


@pytest.mark.skipif(not __import__("shutil").which("g++"), reason="the CPU emulator needs g++")
def test_optimize_starts_from_the_canonical_form(tmp_path):
    from kltrans.optimize.search import OptimizeOptions, run

    scale = os.path.join(ROOT, "tests", "data", "workloads", "scale")
    doc = run(OptimizeOptions(os.path.join(scale, "scale.cu"), scale, skills=os.path.join(
        ROOT, "skills"), corpus=os.path.join(ROOT, "corpus"), backend="cpu", budget=1,
        progress=False, canonicalize=True))
    assert doc["start"]["canonicalized"]["rules"] == ["brace-bodies"]
    assert doc["start"]["gate"] and all(s["status"] == "pass" for s in doc["start"]["gate"])


@pytest.mark.skipif(not __import__("shutil").which("g++"), reason="the CPU emulator needs g++")
@pytest.mark.parametrize("canonicalize", [True, False])
def test_a_round_trip_to_another_spelling_of_the_same_machine_code_holds(tmp_path, canonicalize):
    """The expert reads its float4 through a C-style cast; the inverse writes the view
    another way: other tokens, the same kernels and launches, so the step is reversible,
    from canonical forms and in a plain walk alike."""
    from kltrans.lineage import WalkOptions, walk

    scale = os.path.join(ROOT, "tests", "data", "workloads", "scale")
    expert = tmp_path / "scale_c_cast.cu"
    stores = "".join(f"    y[4 * i + {k}] = r.{f};\n" for k, f in enumerate("xyzw"))
    body = "".join(f"    r.{f} = a * v.{f} + b;\n" for f in "xyzw")
    expert.write_text(
        "// kltrans: launch scale grid=ceil_div(ceil_div(n, 4), 256) block=256\n"
        'extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {\n'
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (4 * i + 3 < n) {\n    float4 v = ((const float4*)x)[i];\n    float4 r;\n"
        + body + stores +
        "  } else {\n    for (int k = 4 * i; k < n; k++) {\n      y[k] = a * x[k] + b;\n    }\n"
        "  }\n}\n")
    doc = walk(WalkOptions(scale, expert=str(expert), backend="cpu", out=str(tmp_path / "l"),
                           jobs=1, progress=False, probes=0, max_steps=1,
                           canonicalize=canonicalize))
    [t] = doc["transitions"]
    assert t["pass"] == "scalarize-vectors"
    assert t["roundtrip"]["ok"] and t["roundtrip"]["equal"] == "machine code"
