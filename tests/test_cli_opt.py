"""kltrans opt / passes / pass-info / test-passes / new-pass from the command line."""

import json
import os
import subprocess
import sys

import pytest

LOOP = """\
__global__ void sum4(const float* x, float* out) {
  float acc = 0.0f;
  for (int k = 0; k < 4; ++k) acc += x[k];
  out[0] = acc;
}
"""


def run(*args, cwd=None, env=None):
    p = subprocess.run([sys.executable, "-m", "kltrans", *args], capture_output=True, text=True,
                       cwd=cwd, env=env, timeout=120)
    assert "Traceback" not in p.stderr, p.stderr
    return p


@pytest.fixture
def loop(tmp_path):
    f = tmp_path / "sum4.cu"
    f.write_text(LOOP)
    return f


def test_opt_prints_and_never_touches_the_input(loop):
    p = run("opt", "-p", "unroll{factor=4}", str(loop))
    assert p.returncode == 0
    assert "  #pragma unroll 4\n  for (int k = 0" in p.stdout
    assert loop.read_text() == LOOP


def test_opt_output_file_and_in_place(loop, tmp_path):
    out = tmp_path / "out.cu"
    p = run("opt", "-p", "unroll{factor=full}", str(loop), "-o", str(out))
    assert p.returncode == 0 and p.stdout == ""
    assert "#pragma unroll\n" in out.read_text() and loop.read_text() == LOOP
    p = run("opt", "-p", "unroll{factor=2}", str(loop), "-i")
    assert p.returncode == 0 and "#pragma unroll 2" in loop.read_text()
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".kltrans-")], "temp files left"


def test_opt_diff_and_between_passes(loop):
    p = run("opt", "-p", "unroll{factor=4},reroll", str(loop), "--diff", "--print-between-passes")
    assert p.returncode == 0
    assert p.stdout == ""  # unroll then reroll: no net change, empty diff
    assert "after unroll{factor=4,style=pragma} ***" in p.stderr
    assert "#pragma unroll 4" in p.stderr


def test_opt_remarks_are_opt_in_like_clangs_rpass(loop):
    """A skipped site is a remark only with --remarks missed (or -v); an applied one only
    with --remarks applied; by default a pass that rewrote nothing says so in one line."""
    p = run("opt", "-p", "unroll{factor=8}", str(loop))
    assert p.returncode == 0 and "remark:" not in p.stderr
    assert p.stderr.strip() == (f"{loop}: note: unroll{{factor=8,style=pragma}}: rewrote none "
                                f"of its 1 site(s); --remarks missed says why")
    for flags in (["--remarks", "missed"], ["-v"], ["--remarks", "applied,missed"]):
        p = run("opt", "-p", "unroll{factor=8}", str(loop), *flags)
        assert p.returncode == 0 and "note:" not in p.stderr
        assert "remark: unroll: skipped site 1: precondition factor-fits" in p.stderr, flags
    p = run("opt", "-p", "unroll{factor=4}", str(loop))
    assert p.returncode == 0 and p.stderr == "" and "#pragma unroll 4" in p.stdout
    p = run("opt", "-p", "unroll{factor=4}", str(loop), "--remarks", "applied")
    assert f"{loop}:3:3: remark: unroll: applied (site 1)" in p.stderr
    p = run("opt", "-p", "unroll{factor=8}", str(loop), "--remarks", "applied")
    assert "remark:" not in p.stderr  # ok: only applied sites were asked for, none was
    p = run("opt", "-p", "unroll{factor=4}", str(loop), "--remarks", "skipped")
    assert p.returncode == 2 and "'skipped' is no kind of remark" in p.stderr
    assert loop.read_text() == LOOP


def test_opt_dry_run_lists_sites_and_reasons(loop):
    p = run("opt", "-p", "unroll{factor=8}", str(loop), "--dry-run")
    assert p.returncode == 0
    assert f"{loop}:3:3: remark: unroll: skipped site 1: precondition factor-fits (pipeline): " \
           f"fails: factor 8 exceeds the 4 iterations of the loop" in p.stderr
    assert "0 of 1 site(s) would be rewritten" in p.stdout
    assert loop.read_text() == LOOP


def test_opt_json(loop):
    p = run("opt", "-p", "unroll{factor=4}", str(loop), "--json")
    data = json.loads(p.stdout)
    [unit] = data["units"]
    [rep] = unit["passes"]
    assert rep["applied"] == 1 and rep["sites"][0]["line"] == 3
    assert data["changed"] and "#pragma unroll 4" in data["output"]


def test_opt_kernel_and_site_filters(tmp_path):
    f = tmp_path / "two.cu"
    f.write_text(LOOP + LOOP.replace("sum4", "other"))
    p = run("opt", "-p", "unroll", str(f), "--kernel", "other")
    assert p.stdout.count("#pragma unroll 4") == 1 and p.stdout.index("#pragma") > p.stdout.index("other")
    p = run("opt", "-p", "unroll", str(f), "--site", "2")  # sites are numbered per file
    assert p.stdout.count("#pragma unroll 4") == 1 and p.stdout.index("#pragma") > p.stdout.index("other")


def test_opt_force_skips_a_site_whose_rewrite_needs_the_form_it_lacks(tmp_path):
    """Forced at sites its preconditions rule out, vectorize-bytes cannot build its
    rewrite there (it needs the byte loop the precondition looks for): each site is
    skipped with that precondition and the error, no traceback, the input kept."""
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "corpus",
                       "histogram", "expert.cu")
    out = tmp_path / "out.cu"
    p = run("opt", "-p", "vectorize-bytes", src, "--force", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert "skipped site 1: precondition byte-loop (layout): cannot be forced (fails:" in p.stderr
    assert "the rewrite needs what it checks (AttributeError" in p.stderr
    assert out.read_bytes() == open(src, "rb").read()


def test_opt_force_reports_what_it_forced(loop):
    p = run("opt", "-p", "unroll{factor=8}", str(loop), "--force", "-v")
    assert p.returncode == 0 and "#pragma unroll 8" in p.stdout
    assert "forced past: factor-fits" in p.stderr


@pytest.mark.parametrize("pipeline, message", [
    ("unrol", "unknown pass 'unrol'"),
    ("unroll{factr=2}", "has no option 'factr'"),
    ("unroll{factor=1}", "bad value for unroll{factor}"),
    ("unroll{factor=2", "expected ',' or '}'"),
])
def test_opt_bad_pipelines(loop, pipeline, message):
    p = run("opt", "-p", pipeline, str(loop))
    assert p.returncode == 2 and message in p.stderr and "^" in p.stderr


def test_opt_bad_assumption_and_arch(loop):
    p = run("opt", "-p", "unroll", str(loop), "--assume", "n is big")
    assert p.returncode == 2 and "cannot read the assumption" in p.stderr
    p = run("opt", "-p", "unroll", str(loop), "--arch", "hopper")
    assert p.returncode == 2 and "cannot read the architecture" in p.stderr
    p = run("opt", "-p", "unroll", str(loop), "-i", "-o", "x.cu")
    assert p.returncode == 2


def test_opt_rewrites_cuda_inside_python(tmp_path):
    py = tmp_path / "ext.py"
    src = ('import cupy as cp\n\n# a comment that must survive\n'
           'kernel = cp.RawKernel(r"""\n' + LOOP + '""", "sum4")\n')
    py.write_text(src)
    out = tmp_path / "ext_opt.py"
    p = run("opt", "-p", "unroll{factor=4}", str(py), "-o", str(out))
    assert p.returncode == 0, p.stderr
    new = out.read_text()
    assert new.startswith('import cupy as cp\n\n# a comment that must survive\n')
    assert "  #pragma unroll 4\n  for (int k" in new and new.endswith('""", "sum4")\n')
    assert py.read_text() == src


def test_passes_and_pass_info():
    p = run("passes", "--json")
    names = {r["name"]: r for r in json.loads(p.stdout)["passes"]}
    assert names["unroll"]["inverse"] == "reroll" and names["unroll"]["kind"] == "optimize"
    assert [o["name"] for o in names["unroll"]["options"]] == ["factor", "style"]
    p = run("passes", "--kind", "simplify")
    listed = [ln.split()[0] for ln in p.stdout.splitlines() if not ln.startswith(" ")]
    assert {"reroll", "unrestrict-pointers"} <= set(listed) and listed == sorted(listed)
    assert "unroll" not in listed and "restrict-pointers" not in listed
    assert "options: const=false, params=all" in p.stdout
    p = run("pass-info", "restrict-pointers")
    assert p.returncode == 0 and "no-alias" in p.stdout and "[storage]" in p.stdout
    p = run("pass-info", "restrict-pointer")
    assert p.returncode == 2 and "did you mean restrict-pointers" in p.stderr


def test_test_passes_cli():
    p = run("test-passes", "reroll")
    assert p.returncode == 0 and p.stdout.strip().endswith("passed, 0 failed")
    p = run("test-passes", "reroll", "--json")
    doc = json.loads(p.stdout)
    assert p.returncode == 0 and doc["failed"] == 0 and doc["passed"] == len(doc["cases"]) > 0
    assert all(c["status"] == "pass" and c["messages"] == [] for c in doc["cases"])
    p = run("test-passes", "nope-pass")
    assert p.returncode == 2 and "unknown pass" in p.stderr


def test_new_pass_refuses_bad_or_taken_names(tmp_path):
    import shutil

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shutil.copytree(os.path.join(root, "passes"), tmp_path / "passes",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    before = (tmp_path / "passes" / "__init__.py").read_text()
    p = run("new-pass", "Bad_Name", "--root", str(tmp_path), env=env)
    assert p.returncode == 2 and "kebab-case" in p.stderr
    p = run("new-pass", "unroll", "--root", str(tmp_path), env=env)
    assert p.returncode == 2 and "already registered" in p.stderr
    p = run("new-pass", "demo", "--inverse", "demo", "--root", str(tmp_path), env=env)
    assert p.returncode == 2 and "different names" in p.stderr
    assert (tmp_path / "passes" / "__init__.py").read_text() == before
    assert sorted(os.listdir(tmp_path / "passes")) == sorted(
        f for f in os.listdir(os.path.join(root, "passes")) if f != "__pycache__")


def test_opt_refuses_to_write_over_its_input_or_into_a_directory(loop, tmp_path):
    """-o naming the input (under any name), a directory, or a path below a file is a
    usage error before anything is written; the input is kept byte for byte."""
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("x")
    link = tmp_path / "same.cu"
    os.link(loop, link)
    for out, what in ((loop, "would overwrite"), (link, "would overwrite"),
                      (tmp_path / "d", "is a directory"), (tmp_path / "f" / "x.cu", "is a file")):
        p = run("opt", "-p", "unroll{factor=4}", str(loop), "-o", str(out))
        assert p.returncode == 2 and what in p.stderr, (out, p.stderr)
        assert loop.read_text() == LOOP
    assert (tmp_path / "f").read_text() == "x"


def test_opt_writes_nothing_for_a_file_with_syntax_errors(tmp_path):
    """A file with a syntax error gets its diagnostic and exit 2, and no output at all:
    not in place (-i), not -o, not stdout; the loop of its other kernel is not unrolled."""
    f = tmp_path / "two.cu"
    text = LOOP + "__global__ void bad(float* x) { x[0] = ; }\n"
    f.write_text(text)
    out = tmp_path / "out.cu"
    for extra in (["-i"], ["-o", str(out)], []):
        p = run("opt", "-p", "unroll{factor=4}", str(f), *extra)
        assert p.returncode == 2, p.stderr
        assert f"{f}:6:" in p.stderr and "syntax error" in p.stderr
        assert "not rewritten" in p.stderr and "#pragma" not in p.stdout
        assert f.read_text() == text and not out.exists()


def test_opt_allow_errors_rewrites_the_rest_and_leaves_the_broken_declaration(tmp_path):
    """--allow-errors (clang-tidy's -fix-errors): the kernel that parsed is rewritten, the
    declaration that did not is byte for byte as it was, the diagnostic still printed."""
    f = tmp_path / "two.cu"
    bad = "__global__ void bad(float* x) { x[0] = ; }\n"
    f.write_text(LOOP + bad)
    out = tmp_path / "out.cu"
    p = run("opt", "-p", "unroll{factor=4}", str(f), "--allow-errors", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert f"{f}:6:" in p.stderr and "syntax error" in p.stderr
    assert "#pragma unroll 4" in out.read_text() and out.read_text().endswith(bad)
    assert f.read_text() == LOOP + bad


def test_opt_site_kernel_and_repeated_option_are_checked(loop):
    """A site number below 1 or beyond every pass's sites, a --kernel the file does not
    have, and an option given twice are usage errors, not a silent no-op."""
    for argv, what in ((["--site", "0"], "sites are numbered from 1"),
                       (["--site", "99"], "no pass of the pipeline has a site 99"),
                       (["--kernel", "nosuch"], "--kernel nosuch: no such function")):
        p = run("opt", "-p", "unroll{factor=4}", str(loop), *argv)
        assert p.returncode == 2 and what in p.stderr, p.stderr
    p = run("opt", "-p", "unroll{factor=4,factor=8}", str(loop))
    assert p.returncode == 2 and "option 'factor' given twice" in p.stderr
    p = run("opt", "-p", "unroll{factor=4}", str(loop), "--site", "1", "--kernel", "sum4")
    assert p.returncode == 0 and "#pragma unroll 4" in p.stdout
    assert loop.read_text() == LOOP


def test_test_passes_reports_a_bad_fixture_without_a_traceback(tmp_path):
    """A fixture whose RUN line the pipeline refuses fails with the reason (exit 1); one
    that is not UTF-8 is an input error (exit 2)."""
    d = tmp_path / "tests" / "passes" / "unroll"
    d.mkdir(parents=True)
    case = d / "bad_run.cu"
    case.write_text("// RUN: kltrans opt -p 'unroll{factor=abc}'\n" + LOOP)
    (d / "bad_run.expected.cu").write_text(LOOP)
    p = run("test-passes", "--root", str(tmp_path), "unroll")
    assert p.returncode == 1 and "FAIL" in p.stdout and "the RUN line is refused" in p.stdout
    p = run("test-passes", "--root", str(tmp_path), "unroll", "--json")  # the same, as data
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and (doc["passed"], doc["failed"]) == (0, 1)
    [c] = doc["cases"]
    assert c["status"] == "fail" and c["path"].endswith("bad_run.cu")
    assert any("the RUN line is refused" in m for m in c["messages"])
    case.write_bytes(b"// RUN: kltrans opt -p 'unroll{factor=4}'\n" + LOOP.encode() + b"\xff\n")
    p = run("test-passes", "--root", str(tmp_path), "unroll")
    assert p.returncode == 2 and "not UTF-8 text" in p.stderr and str(case) in p.stderr


def test_new_pass_into_another_checkout_without_its_path(tmp_path):
    """--root names a checkout that is not the one Python imports (no PYTHONPATH): the
    goldens are made with that checkout's passes, the new pass and its fixtures are
    complete there, and this checkout is not touched."""
    import shutil

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shutil.copytree(os.path.join(root, "passes"), tmp_path / "passes",
                    ignore=shutil.ignore_patterns("__pycache__"))
    ours = open(os.path.join(root, "passes", "__init__.py")).read()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    (tmp_path / "elsewhere").mkdir()  # not the checkout: python -m puts the cwd on the path
    p = run("new-pass", "demo-scale", "--root", str(tmp_path), env=env,
            cwd=str(tmp_path / "elsewhere"))
    assert p.returncode == 0, p.stderr
    assert '"demo-scale"' in (tmp_path / "passes" / "__init__.py").read_text()
    cases = sorted(os.listdir(tmp_path / "tests" / "passes" / "demo_scale"))
    assert len(cases) == 8 and sum(c.endswith(".expected.cu") for c in cases) == 4
    assert open(os.path.join(root, "passes", "__init__.py")).read() == ours
    assert not os.path.exists(os.path.join(root, "passes", "demo_scale.py"))


def test_test_passes_update_still_checks_the_round_trip(tmp_path):
    """-U writes the golden but does not call a fixture whose round trip fails a pass: the
    C-style cast comes back from vectorize-views as a reinterpret_cast."""
    d = tmp_path / "tests" / "passes" / "vector_views"
    d.mkdir(parents=True)
    (d / "c_cast.cu").write_text(
        "// RUN: kltrans opt -p 'scalarize-vectors' --assume 'aligned(*,16)'\n"
        "__global__ void put(float* y, float4 r, int n4) {\n"
        "  int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (t < n4) ((float4*)y)[t] = r;\n"
        "}\n")
    p = run("test-passes", "scalarize-vectors", "-U", "--root", str(tmp_path))
    assert p.returncode == 1 and "round trip differs" in p.stdout, p.stdout
    assert (d / "c_cast.expected.cu").is_file()


def test_in_place_keeps_a_symlink_and_refuses_a_read_only_file(loop, tmp_path):
    link = tmp_path / "link.cu"
    link.symlink_to(loop)
    p = run("opt", "-p", "unroll{factor=4}", str(link), "-i")
    assert p.returncode == 0, p.stderr
    assert link.is_symlink() and "#pragma unroll 4" in loop.read_text()
    ro = tmp_path / "ro.cu"
    ro.write_text(LOOP)
    ro.chmod(0o444)
    try:
        p = run("opt", "-p", "unroll{factor=4}", str(ro), "-i")
        assert p.returncode == 2 and "read-only" in p.stderr, p.stderr
        assert ro.read_text() == LOOP
    finally:
        ro.chmod(0o644)
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".kltrans-")]
