"""kltrans diff: edit scripts of before/after pairs, kernel pairing, rendering, the CLI.

Each pair is tests/data/diff/pairs/NAME.a.* -> NAME.b.*; the expected edit script is
written below by hand as (action, node type, text in A, text in B).
"""

import json
import os

import pytest

from kltrans.cli import main
from kltrans.diff import diff_files, diff_units
from kltrans.syntax import parse

HERE = os.path.dirname(os.path.abspath(__file__))
PAIRS = os.path.join(HERE, "data", "diff", "pairs")


def pair(name):
    a = next(f for f in os.listdir(PAIRS) if f.startswith(name + ".a."))
    return os.path.join(PAIRS, a), os.path.join(PAIRS, a.replace(".a.", ".b."))


def script(fd):
    out = []
    for d in fd.units:
        for x in d.actions:
            ta = d.span("a", x.a).text if x.a is not None else None
            tb = d.span("b", x.b).text if x.b is not None else None
            out.append((x.kind, x.node_type, ta, tb))
    return out


def kernels(fd):
    return [(k.a, k.b, k.status) for d in fd.units for k in d.kernels if k.status != "same"]


EXPECTED = {
    "rename_var": [("update", "identifier", "i", "idx")] * 5,
    "move_stmt": [("move", "expression_statement", "y[i] = v * 2.0f;", "y[i] = v * 2.0f;")],
    "launch_contract": [("update", "kltrans_directive_token", "256", "512")] * 2,
    "insert_stmt": [("insert", "expression_statement", None, "__syncthreads();")],
    "delete_stmt": [("delete", "expression_statement", "__syncthreads();", None)],
    "literal": [("update", "number_literal", "0.5f", "0.25f")],
    "rename_kernel": [("update", "identifier", "copy", "copy_kernel")],
    "operator": [("update", "token", "+", "-")],
    "type_change": [("update", "primitive_type", "float", "double")] * 2,
    "pragma": [("insert", "pragma_token", None, "2")],
    "host_launch": [("update", "number_literal", "255", "127"),
                    ("update", "number_literal", "256", "128"),
                    ("update", "number_literal", "256", "128")],
    "two_kernels": [("update", "number_literal", "1.0f", "10.0f"),
                    ("update", "number_literal", "2.0f", "20.0f")],
    "wrap_if": [("move", "expression_statement", "y[i] = x[i];", "y[i] = x[i];"),
                ("insert", "if_statement", None, "if (i < n) {\n        y[i] = x[i];\n    }")],
    "embedded": [("move", "binary_expression", "x[i] * s", "x[i] * s"),
                 ("insert", "binary_expression", None, "x[i] * s + 1.0f")],
    "add_kernel": [("insert", "function_definition", None,
                    "__global__ void zero(float* x, int n) {\n    for (int i = threadIdx.x; "
                    "i < n; i += blockDim.x) x[i] = 0.0f;\n}")],
    "delete_kernel": [("delete", "function_definition",
                       "__global__ void zero(float* x, int n) {\n    for (int i = threadIdx.x; "
                       "i < n; i += blockDim.x) x[i] = 0.0f;\n}", None)],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_edit_script(name):
    a, b = pair(name)
    fd = diff_files(a, b)
    assert not fd.equal
    assert script(fd) == EXPECTED[name]


@pytest.mark.parametrize("name", ["format_only", "comment_only"])
def test_formatting_and_comments_are_not_differences(name):
    a, b = pair(name)
    assert diff_files(a, b).equal
    strict = diff_files(a, b, strict=True)
    assert not strict.equal
    assert all(x.kind in ("update", "insert", "delete") for d in strict.units for x in d.actions)


def test_strict_comment_changes_are_updates_of_comments():
    fd = diff_files(*pair("comment_only"), strict=True)
    got = [(k, t, a, b) for k, t, a, b in script(fd) if t == "comment"]
    assert ("update", "comment", "// global index", "// one element per thread") in got


def test_kernel_pairing():
    assert kernels(diff_files(*pair("rename_kernel"))) == [("copy", "copy_kernel", "renamed")]
    assert kernels(diff_files(*pair("add_kernel"))) == [(None, "zero", "added")]
    assert kernels(diff_files(*pair("delete_kernel"))) == [("zero", None, "removed")]
    assert kernels(diff_files(*pair("two_kernels"))) == [("first", "first", "changed"),
                                                         ("second", "second", "changed")]


def test_kernel_filter():
    fd = diff_files(*pair("two_kernels"), kernel="second")
    assert script(fd) == [("update", "number_literal", "2.0f", "20.0f")]
    fd = diff_files(*pair("rename_kernel"), kernel="add_one")
    assert fd.equal  # that kernel did not change
    fd = diff_files(*pair("rename_kernel"), kernel="copy_kernel")  # B's name works too
    assert script(fd) == [("update", "identifier", "copy", "copy_kernel")]


def test_identical_code_in_different_kernels_is_not_matched_across_them():
    a = ("__global__ void f(float* x) { x[0] = 1.0f; }\n"
         "__global__ void g(float* x) { x[0] = 2.0f; }\n")
    b = ("__global__ void f(float* x) { x[0] = 2.0f; }\n"
         "__global__ void g(float* x) { x[0] = 1.0f; }\n")
    d = diff_units(parse(a, "a.cu"), parse(b, "b.cu"))
    assert [(x.kind, d.span("a", x.a).text, d.span("b", x.b).text) for x in d.actions] == [
        ("update", "1.0f", "2.0f"), ("update", "2.0f", "1.0f")]


def test_spans_are_file_line_column_of_the_origin():
    fd = diff_files(*pair("embedded"))
    [d] = fd.units
    ins = next(x for x in d.actions if x.kind == "insert")
    s = d.span("b", ins.b)
    # the Python file's line and column, not the embedded string's
    assert (s.path, s.line, s.column) == (pair("embedded")[1], 13, 16)


def test_hunks_and_stat():
    d = diff_files(*pair("two_kernels")).units[0]
    hunks = d.hunks()
    assert [(h.a_lines, h.b_lines, h.kernel) for h in hunks] == [
        ([3], [3], "first"), ([8], [8], "second")]
    st = d.stat()
    assert st["counts"] == {"update": 2, "insert": 0, "delete": 0, "move": 0}
    assert st["by_kernel"] == {"first": {"update": 1}, "second": {"update": 1}}
    assert (st["lines_removed"], st["lines_added"]) == (2, 2)


# ---------------------------------------------------------------------------- CLI
def run(capsys, *argv):
    rc = main(["diff", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_exit_codes(capsys, tmp_path):
    a, b = pair("literal")
    assert run(capsys, a, a)[0] == 0
    assert run(capsys, *pair("format_only"))[0] == 0
    assert run(capsys, *pair("format_only"), "--strict")[0] == 1
    rc, out, err = run(capsys, a, b)
    assert rc == 1
    # plain output (not a terminal): changed tokens marked in the text
    assert "[-0.5f-]" in out and "{+0.25f+}" in out
    assert "@@ " in out and "1 update, 0 inserts, 0 deletes, 0 moves" in out


def test_cli_bad_input(capsys, tmp_path):
    a, _ = pair("literal")
    rc, out, err = run(capsys, a, str(tmp_path / "missing.cu"))
    assert rc == 2 and "missing.cu: error: no such file" in err and "Traceback" not in err
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k(float* x) {\n    x[0] = ;\n}\n")
    rc, out, err = run(capsys, a, str(bad))
    assert rc == 2 and f"{bad}:2:" in err and "error:" in err
    rc, out, err = run(capsys, a, a, "--kernel", "nope")
    assert rc == 2 and "no kernel or device function named 'nope'" in err
    assert "hint: functions: damp" in err
    rc, out, err = run(capsys, a, a, "--explain", "--depth", "-1")
    assert rc == 2 and "kltrans diff: error: --depth" in err
    txt = tmp_path / "notes.txt"
    txt.write_text("hello\n")
    rc, out, err = run(capsys, a, str(txt))
    assert rc == 2 and "not a CUDA or Python source" in err


def test_cli_json(capsys):
    rc, out, err = run(capsys, *pair("launch_contract"), "--format", "json")
    assert rc == 1
    doc = json.loads(out)
    assert doc["equal"] is False
    [u] = doc["units"]
    acts = u["actions"]
    assert [(x["action"], x["a"]["text"], x["b"]["text"]) for x in acts] == [
        ("update", "256", "512"), ("update", "256", "512")]
    assert (acts[0]["a"]["line"], acts[0]["a"]["column"]) == (1, 43)
    assert (acts[1]["b"]["line"], acts[1]["b"]["column"]) == (1, 58)
    rc, out, _ = run(capsys, *pair("literal"), "--json")
    assert json.loads(out)["units"][0]["stat"]["counts"]["update"] == 1


def test_cli_stat_and_side_by_side(capsys):
    rc, out, _ = run(capsys, *pair("rename_kernel"), "--stat")
    assert rc == 1
    assert "kernel copy -> copy_kernel" in out and "renamed" in out and "1 update" in out
    rc, out, _ = run(capsys, *pair("literal"), "--format", "side-by-side")
    assert rc == 1
    row = next(l for l in out.splitlines() if "[-0.5f-]" in l)
    assert "{+0.25f+}" in row  # both versions of the line on one row


def test_cli_help_lists_diff(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "diff" in capsys.readouterr().out


def test_ten_thousand_nesting_levels_diff_without_a_crash(tmp_path, capsys):
    """No recursion in lowering or in matching: nesting is bounded by memory, and the
    bottom-up phase by a budget (past it, containers are deleted and inserted)."""
    import time

    n = 10_000
    a, b = tmp_path / "a.cu", tmp_path / "b.cu"
    for path, leaf in ((a, "1"), (b, "2")):
        path.write_text("__global__ void k(float* y) { y[0] = " + "(" * n + leaf + ")" * n + "; }\n")
    t0 = time.perf_counter()
    assert main(["diff", str(a), str(b)]) == 1
    assert time.perf_counter() - t0 < 60
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "1 delete" in out.out
    assert main(["diff", str(a), str(a)]) == 0
