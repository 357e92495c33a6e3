"""kltrans generality: the suite loader, the PTX audit, the measures and the report.

Two small suites under tests/data/generality/: ``mini`` (a naive kernel and the same with
a grid-stride loop, made by ``kltrans opt -p grid-stride``: one step a registered pass
explains), ``cgsum`` (a row sum, then a warp per row through cooperative groups: a
mechanism with no ``__shfl`` token, which ``share-row`` explains and ``unshare-row``
takes back) and ``cgscan`` (a row scan by a warp through cooperative groups, which the
catalogue cannot take back: the report must see it in the PTX).
"""

from __future__ import annotations

import html.parser
import json
import os
import shutil
import subprocess
import sys

import pytest

from kltrans.gate.ptx import mechanisms, ptx_mechanisms
from kltrans.generality.report import SUMMARY_KEYS
from kltrans.generality.suite import SuiteError, load_suite

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "generality")
MINI = os.path.join(DATA, "mini")
CGSUM = os.path.join(DATA, "cgsum")
CGSCAN = os.path.join(DATA, "cgscan")


def _kltrans(*argv, cwd=None):
    return subprocess.run([sys.executable, "-m", "kltrans", *argv], capture_output=True,
                          text=True, cwd=cwd or ROOT, timeout=900)


def _copy(tmp_path, suite=MINI):
    dst = tmp_path / os.path.basename(suite)
    shutil.copytree(suite, dst)
    return dst


# ------------------------------------------------------------------------ the suite
def test_load_suite_orders_versions_as_history_says():
    [lin] = load_suite(MINI)
    assert lin.name == "scale" and lin.family == "elementwise"
    assert [v.variant for v in lin.versions] == ["v0_naive", "v1_grid_stride"]
    assert lin.naive.path.endswith("v0_naive.cu") and lin.expert.kernel == "scale"
    assert [(a.variant, b.variant) for a, b in lin.pairs()] == [("v0_naive", "v1_grid_stride")]


@pytest.mark.parametrize("edit, message", [
    # ruleid: a version that is not a variant of the workload
    (lambda t: t.replace("variant: v1_grid_stride", "variant: v9_missing"),
     "no variant 'v9_missing'"),
    # ruleid: a field the schema does not know
    (lambda t: t + "colour: blue\n", "Additional properties are not allowed"),
    # ruleid: the name must be the folder's
    (lambda t: t.replace("name: scale", "name: other"), "is not the folder's name"),
    # ruleid: an idiom outside the vocabulary
    (lambda t: t.replace("idioms: [grid-stride]", "idioms: [magic]"), "'magic' is not one of"),
    # ruleid: one version is not a lineage
    (lambda t: t.split("  - variant: v1_grid_stride")[0], "is too short"),
])
def test_bad_history_is_an_error_naming_the_file(tmp_path, edit, message):
    d = _copy(tmp_path)
    h = d / "scale" / "history.yaml"
    h.write_text(edit(h.read_text()))
    with pytest.raises(SuiteError) as e:
        load_suite(str(d))
    assert str(h) in str(e.value) and message in str(e.value)
    # the command says the same, exit 2, no traceback
    r = _kltrans("generality", str(d), "--measures", "explain")
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_only_and_missing_lineage(tmp_path):
    r = _kltrans("generality", MINI, "--only", "nope", "--measures", "explain")
    assert r.returncode == 2 and "no lineage 'nope'" in r.stderr
    r = _kltrans("generality", str(tmp_path), "--measures", "explain")
    assert r.returncode == 2 and "no lineage in it" in r.stderr


def test_usage_errors():
    # ok: each of these is refused before any work
    r = _kltrans("generality", MINI, "--measures", "explain,nonsense")
    assert r.returncode == 2 and "unknown measure 'nonsense'" in r.stderr
    r = _kltrans("generality", MINI, "--measures", "speedup", "--backend", "cpu")
    assert r.returncode == 2 and "needs a GPU" in r.stderr
    r = _kltrans("generality", MINI, "--skills", "/no/such/dir")
    assert r.returncode == 2 and "no skill library" in r.stderr


def test_out_never_replaces_a_report_without_force(tmp_path):
    (tmp_path / "generality.json").write_text("{}")
    r = _kltrans("generality", MINI, "--measures", "explain", "--out", str(tmp_path))
    assert r.returncode == 2 and "--force" in r.stderr
    assert (tmp_path / "generality.json").read_text() == "{}"


# ------------------------------------------------------------------------ the audit
def test_ptx_audit_sees_mechanisms_whatever_their_spelling():
    naive = os.path.join(CGSUM, "rowsum", "v0_naive.cu")
    cg = os.path.join(CGSUM, "rowsum", "v1_warp_tile.cu")
    assert mechanisms(naive) == []
    assert "warp shuffle" in mechanisms(cg)  # tile.shfl_down: no __shfl token in the source
    # shared memory reached through an accessor struct over an extern __shared__ array
    src = b"""// kltrans: launch k grid=1 block=64
template <class T> struct Smem { __device__ T* get() { extern __shared__ int raw[];
    return reinterpret_cast<T*>(raw); } };
__global__ void k(const float* x, float* y, int n) {
    float* s = Smem<float>().get(); s[threadIdx.x] = x[threadIdx.x]; __syncthreads();
    y[threadIdx.x] = s[63 - threadIdx.x]; }
"""
    got = mechanisms("accessor.cu", source=src)
    assert "shared memory" in got and "block barrier" in got
    assert "vector global access" in ptx_mechanisms("ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];")
    assert ptx_mechanisms("ld.global.f32 %f1, [%rd1]; // shfl.sync in a comment") == []
    for line in ("match.any.sync.b32 %r1, %r2, -1;", "vote.sync.ballot.b32 %r1, %p1, -1;",
                 "redux.sync.add.u32 %r1, %r2, -1;"):
        assert ptx_mechanisms(line) == ["warp vote or match"], line


def test_the_naive_check_reads_the_compiled_code():
    from kltrans.lineage.naive import mechanisms_left, residual_mechanisms
    from kltrans.syntax.unit import load

    from kltrans.syntax.unit import parse

    [cg] = load(os.path.join(CGSUM, "rowsum", "v1_warp_tile.cu"))
    # tile.shfl_down: the kernel model reads it in the source, and the PTX shows it
    assert ("warp primitive", 18) in residual_mechanisms(cg)
    assert ("warp shuffle (in the compiled code)", 5) in mechanisms_left(cg)
    [naive] = load(os.path.join(CGSUM, "rowsum", "v0_naive.cu"))
    assert mechanisms_left(naive) == []
    # a 16-byte struct copied whole: no vector type, no intrinsic in the source, but
    # 128-bit loads and stores in the compiled code
    quad = parse(b"struct __align__(16) Quad { float a, b, c, d; };\n"
                 b"__global__ void copy(const Quad* x, Quad* y, int n)\n"
                 b"{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }\n",
                 "quad.cu")
    assert residual_mechanisms(quad) == []
    assert ("vector global access (in the compiled code)", 2) in mechanisms_left(quad)


# ------------------------------------------------------------------------ the measures
@pytest.mark.slow
def test_generality_on_the_mini_suite(tmp_path):
    """The whole command on the CPU: explain, walk and forward, the files it writes."""
    out = tmp_path / "report"
    r = _kltrans("generality", MINI, "--budget", "2", "--explain-seconds", "60",
                 "--skills", os.path.join(ROOT, "skills"), "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    s = doc["summary"]
    for k in SUMMARY_KEYS:
        assert k in s
    assert s["pairs"] == 1 and s["experts"] == 1
    # grid-stride explains the one step, both ways round
    assert s["pairs_fully_explained"] == 1 and s["actions_explained"] == s["actions"] > 0
    assert sum(s["pairs_explained_by"].values()) == 1
    [row] = doc["lineages"]
    assert s["pairs_explained_by"][row["pairs"][0]["equal"]] == 1
    assert "grid-stride" in row["pairs"][0]["pipeline"]
    # the walk takes the grid-stride loop out and ends with nothing left
    assert row["walk"]["termination"] == "naive" and row["walk"]["reached_naive"]
    assert s["experts_walked_to_naive"] == 1 and s["false_naive"] == 0
    # forward on the CPU: a gate verdict, no speed
    assert row["forward"]["ok"] and row["forward"]["verdict"] == "pass"
    assert s["forward_gate_passed"] == 1 and s["forward_fraction_geomean"] is None
    assert json.loads((out / "generality.json").read_text())["summary"] == s
    assert "experts walked to naive" in (out / "generality.txt").read_text()
    page = (out / "generality.html").read_text()
    html.parser.HTMLParser().feed(page)  # well-formed enough to parse
    assert page.count("<svg") == 3 and "scale" in page
    assert "[1/3]" in r.stderr or "[3/3]" in r.stderr  # progress with counts


@pytest.mark.slow
def test_a_cooperative_groups_warp_per_row_is_explained_and_walked_back():
    """cgsum's step (a warp per row through ``tile.shfl_down``, written without our
    spelling) is explained by share-row, and the walk takes it back to a naive kernel
    with unshare-row: nothing left, in the source or the PTX."""
    r = _kltrans("generality", CGSUM, "--measures", "explain,walk", "--explain-seconds", "30",
                 "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    [row] = doc["lineages"]
    assert "share-row" in row["pairs"][0]["pipeline"]
    assert doc["summary"]["pairs_fully_explained"] == 1
    w = row["walk"]
    assert w["reached_naive"] and w["termination"] == "naive" and not w["mechanisms_left"]
    assert not w["false_naive"]


@pytest.mark.slow
def test_a_walk_is_judged_on_the_ptx():
    """A warp per row scanning through cooperative groups is a mechanism although its
    source has no shuffle token: the walk does not end in naive (it reads the PTX too),
    and the report, judging on the PTX, agrees. (cgsum's warp per row no longer serves:
    unshare-row takes it back to naive.)"""
    r = _kltrans("generality", CGSCAN, "--measures", "explain,walk", "--explain-seconds", "30",
                 "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    w = doc["lineages"][0]["walk"]
    assert "warp shuffle" in w["mechanisms_left"]
    assert not w["reached_naive"]
    assert w["termination"] != "naive" and not w["false_naive"]
    assert doc["summary"]["false_naive"] == int(w["false_naive"])
    assert doc["summary"]["experts_walked_to_naive"] == 0


def test_merge_refuses_what_is_not_a_report_of_these_lineages(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": 1}')
    r = _kltrans("generality", MINI, "--measures", "explain", "--merge", str(bad))
    assert r.returncode == 2 and "not a generality report" in r.stderr
    out = tmp_path / "cg"
    r = _kltrans("generality", CGSUM, "--measures", "explain", "--explain-seconds", "30",
                 "--quiet", "--out", str(out))  # (time enough for share-row's search)
    assert r.returncode == 0, r.stderr
    r = _kltrans("generality", MINI, "--measures", "explain", "--merge",
                 str(out / "generality.json"))
    assert r.returncode == 2 and "are not this run's" in r.stderr
    # a report may cover some of the lineages; --measures none only merges
    both = tmp_path / "both"
    shutil.copytree(os.path.join(MINI, "scale"), both / "scale")
    shutil.copytree(os.path.join(CGSUM, "rowsum"), both / "rowsum")
    r = _kltrans("generality", str(both), "--measures", "none", "--merge",
                 str(out / "generality.json"), "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    # rowsum's step (a warp per row through cooperative groups) is share-row's
    assert doc["summary"]["pairs"] == 2 and doc["summary"]["pairs_fully_explained"] == 1
    r = _kltrans("generality", str(both), "--measures", "none", "--merge",
                 str(out / "generality.json"), "--merge", str(out / "generality.json"))
    assert r.returncode == 2 and "merge each once" in r.stderr


@pytest.mark.slow
def test_merge_carries_the_measures_this_run_does_not_make(tmp_path):
    r = _kltrans("generality", MINI, "--measures", "explain", "--explain-seconds", "60",
                 "--quiet", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    r = _kltrans("generality", MINI, "--measures", "walk", "--quiet", "--json",
                 "--merge", str(tmp_path / "generality.json"))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["config"]["measures"] == ["walk", "explain"]
    assert [m["config"]["measures"] for m in doc["config"]["merged"]] == [["explain"]]
    s = doc["summary"]
    assert s["pairs_fully_explained"] == 1 and s["experts_walked_to_naive"] == 1


@pytest.mark.slow
def test_a_walk_of_a_suite_lineage_is_marked_and_never_becomes_a_card(tmp_path):
    out = tmp_path / "walk"
    r = _kltrans("lineage", os.path.join(MINI, "scale"), "--backend", "cpu",
                 "--expert", os.path.join(MINI, "scale", "v1_grid_stride.cu"),
                 "--out", str(out), "--probes", "0", "--quiet")
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "lineage.json").read_text())["config"]["suite"] == "generality"
    r = _kltrans("skills", "extract", str(out), "-o", str(tmp_path / "cards"))
    assert r.returncode == 2 and "never become skill cards" in r.stderr
    assert not (tmp_path / "cards").exists()


def test_merge_takes_only_the_measures_named(tmp_path):
    out = tmp_path / "r"
    r = _kltrans("generality", MINI, "--measures", "explain", "--explain-seconds", "30",
                 "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stderr
    rep = str(out / "generality.json")
    r = _kltrans("generality", MINI, "--measures", "none", "--merge", rep + ":walk")
    assert r.returncode == 2 and "has no walk measure to merge" in r.stderr
    r = _kltrans("generality", MINI, "--measures", "none", "--merge", rep + ":explain",
                 "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["summary"]["pairs_fully_explained"] == 1


def test_a_walk_past_its_time_limit_ends_as_time_limit_not_stuck():
    """--walk-seconds bounds a walk's model checks too: past it they answer unknown, so a
    walk that then finds no step ends `time-limit` (not `stuck`, which would blame the
    catalogue); a limit of 0 is a usage error."""
    r = _kltrans("generality", CGSUM, "--measures", "walk", "--walk-seconds", "0.001",
                 "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    w = json.loads(r.stdout)["lineages"][0]["walk"]
    assert w["termination"] == "time-limit" and "ran past 0.001 s" in w["reason"]
    assert not w["reached_naive"] and not w["false_naive"]
    r = _kltrans("generality", CGSUM, "--measures", "walk", "--walk-seconds", "0")
    assert r.returncode == 2 and "--walk-seconds above 0" in r.stderr
