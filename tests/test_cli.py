"""The command line: every error path gives a diagnostic and exit 2, never a traceback."""

import json
import os
import subprocess
import sys

import pytest

GOOD = """\
__global__ void scale(float* __restrict__ y, const float* __restrict__ x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
"""


def run(*args, cwd=None, input=None):
    p = subprocess.run([sys.executable, "-m", "kltrans", *args], capture_output=True,
                       text=True, cwd=cwd, input=input, timeout=60)
    assert "Traceback" not in p.stderr, p.stderr
    return p


@pytest.fixture
def good(tmp_path):
    f = tmp_path / "scale.cu"
    f.write_text(GOOD)
    return f


def test_help_and_version():
    p = run("--help")
    assert p.returncode == 0
    for cmd in ("parse", "kernels"):
        assert cmd in p.stdout
    v = run("--version")
    from kltrans import __version__
    assert v.returncode == 0 and v.stdout.strip() == f"kltrans {__version__}"


def test_no_command_is_usage_error():
    p = run()
    assert p.returncode == 2 and "usage:" in p.stderr


def test_unknown_command_and_option():
    p = run("frobnicate")
    assert p.returncode == 2 and "invalid choice" in p.stderr
    p = run("kernels", "--bogus", "x.cu")
    assert p.returncode == 2 and "unrecognized arguments" in p.stderr


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.cu"
    for cmd in ("parse", "kernels"):
        p = run(cmd, str(missing))
        assert p.returncode == 2
        assert f"{missing}: error: no such file" in p.stderr


def test_directory_given_to_parse(tmp_path):
    p = run("parse", str(tmp_path))
    assert p.returncode == 2 and "is a directory" in p.stderr


def test_not_utf8(tmp_path):
    f = tmp_path / "latin.cu"
    f.write_bytes(b"// caf\xe9\n__global__ void k() {}\n")
    p = run("kernels", str(f))
    assert p.returncode == 2
    assert f"{f}:1:7: error: invalid UTF-8 byte 0xe9" in p.stderr
    assert "hint:" in p.stderr


def test_unparsable_file_reports_position_and_caret(tmp_path):
    f = tmp_path / "bad.cu"
    f.write_text("__global__ void k(float* x) {\n  x[0] = ;\n}\n")
    p = run("kernels", str(f))
    assert p.returncode == 2
    first = p.stderr.splitlines()[0]
    assert first.startswith(f"{f}:2:") and ": error: " in first
    assert "^" in p.stderr
    # what did parse is still listed
    assert "kernel" in p.stdout and "k(float* x)" in p.stdout


def test_wrong_suffix_and_empty_directory(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("hello")
    p = run("kernels", str(f))
    assert p.returncode == 2 and "not a CUDA or Python source" in p.stderr
    d = tmp_path / "empty"
    d.mkdir()
    p = run("kernels", str(d))
    assert p.returncode == 2 and "no .cu, .cuh or .py files" in p.stderr


def test_python_syntax_error_and_no_cuda(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n    pass\n")
    p = run("kernels", str(bad))
    assert p.returncode == 2 and "error: Python syntax error" in p.stderr
    plain = tmp_path / "plain.py"
    plain.write_text("x = 1\n")
    p = run("parse", str(plain))
    assert p.returncode == 0 and "note: no embedded CUDA sources found" in p.stderr


def test_kernels_text_and_json(good):
    p = run("kernels", str(good))
    assert p.returncode == 0, p.stderr
    assert "__global__ void scale(float* __restrict__ y, const float* __restrict__ x, float a, int n)" in p.stdout
    p = run("kernels", "--json", str(good))
    data = json.loads(p.stdout)
    [unit] = data["units"]
    [k] = unit["kernels"]
    assert k["name"] == "scale" and k["line"] == 1
    assert [(q["name"], q["const"], q["restrict"], q["pointer"]) for q in k["params"]] == [
        ("y", False, True, 1), ("x", True, True, 1), ("a", False, False, 0), ("n", False, False, 0)]


def test_kernels_over_a_directory(tmp_path, good):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "b.cuh").write_text("__device__ float twice(float v) { return 2 * v; }\n")
    p = run("kernels", "--json", str(tmp_path))
    assert p.returncode == 0
    paths = [u["path"] for u in json.loads(p.stdout)["units"]]
    assert paths == [str(good), str(sub / "b.cuh")]


def test_parse_outputs(good):
    p = run("parse", "--sexp", str(good))
    assert p.returncode == 0 and p.stdout.startswith("(translation_unit (function_definition")
    p = run("parse", str(good))
    assert "function_definition [1:1]" in p.stdout and "identifier [1:17] 'scale'" in p.stdout
    p = run("parse", "--json", str(good))
    u = json.loads(p.stdout)["units"][0]
    assert u["diagnostics"] == [] and u["lines"] == 4
    # the tree is JSON, not an S-expression string: named nodes, fields, positions, leaves
    tree = u["tree"]
    assert "sexp" not in u and tree["type"] == "translation_unit"
    [fn] = tree["children"]
    assert fn["type"] == "function_definition" and fn["start"] == {"line": 1, "column": 1}
    decl = next(c for c in fn["children"] if c.get("field") == "declarator")
    name = next(c for c in decl["children"] if c.get("field") == "declarator")
    assert name == {"type": "identifier", "field": "declarator", "start": {"line": 1, "column": 17},
                    "end": {"line": 1, "column": 22}, "text": "scale"}


def test_parse_json_marks_what_the_parser_could_not_read(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k(float* y) { y[0] = (1.0f; }\n")
    p = run("parse", "--json", str(bad))
    assert p.returncode == 2  # an input error, and the tree is still printed
    u = json.loads(p.stdout)["units"][0]
    stack, odd = [u["tree"]], []
    while stack:
        n = stack.pop()
        if n["type"] == "ERROR" or n.get("missing"):
            odd.append(n)
        stack.extend(n.get("children", []))
    assert odd and u["diagnostics"]


def test_skills_list_and_show_as_json():
    p = run("skills", "list", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    ids = [c["id"] for c in doc["cards"]]
    assert ids == sorted(ids) and "unroll" in ids
    card = next(c for c in doc["cards"] if c["id"] == "unroll")
    assert card["pass"] == "unroll" and card["evidence"] >= 1 and card["path"].endswith(".yaml")
    p = run("skills", "show", "unroll", "--json")
    assert p.returncode == 0, p.stderr
    shown = json.loads(p.stdout)
    assert shown["id"] == "unroll" and shown["card"]["pass"] == "unroll"
    assert len(shown["card"]["provenance"]) == card["evidence"]
    # a card that is not there: exit 2, one line, nothing on stdout
    p = run("skills", "show", "no-such-card", "--json")
    assert p.returncode == 2 and p.stdout == "" and "no card 'no-such-card'" in p.stderr


def test_console_script_is_installed():
    exe = os.path.join(os.path.dirname(sys.executable), "kltrans")
    p = subprocess.run([exe, "--version"], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.startswith("kltrans ")


def test_help_does_not_import_heavy_modules():
    code = ("import sys\nfrom kltrans.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('tree_sitter', 'libcst', 'cuda', 'openai', 'numpy', 'rich')"
            " if m in sys.modules]\nprint(heavy)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.stdout.strip().splitlines()[-1] == "[]"


def test_filter_mode_reads_standard_input_and_writes_standard_output(good):
    """``-`` names standard input (read as CUDA, shown as <stdin>) in parse, kernels, opt
    and diff, for editors and pipes; ``opt -o -`` is standard output; ``-i -`` and a diff
    of two standard inputs are usage errors."""
    p = run("parse", "-", input=GOOD)
    assert p.returncode == 0 and "identifier [1:17] 'scale'" in p.stdout
    p = run("kernels", "--json", "-", input=GOOD)
    [u] = json.loads(p.stdout)["units"]
    assert p.returncode == 0 and u["path"] == "<stdin>"
    assert [k["name"] for k in u["kernels"]] == ["scale"]
    p = run("opt", "-p", "restrict-pointers", "-", "--remarks", "applied", input=GOOD)
    assert p.returncode == 0 and p.stdout == GOOD  # already __restrict__: nothing to do
    p = run("opt", "-p", "unrestrict-pointers", "-", "-o", "-", input=GOOD)
    assert p.returncode == 0 and "__restrict__" not in p.stdout and "scale(" in p.stdout
    p = run("opt", "-p", "unrestrict-pointers", "-", input="__global__ void k( {\n")
    assert p.returncode == 2 and p.stderr.startswith("<stdin>:1:")  # errors name <stdin>
    p = run("opt", "-p", "unrestrict-pointers", "-i", "-", input=GOOD)
    assert p.returncode == 2 and "standard input has none" in p.stderr
    p = run("diff", "-", str(good), input=GOOD)
    assert p.returncode == 0 and "no structural difference" in p.stdout
    p = run("diff", "-", str(good), input=GOOD.replace("a * x[i]", "x[i] * a"))
    assert p.returncode == 1 and "<stdin>" in p.stdout
    p = run("diff", "-", "-", input=GOOD)
    assert p.returncode == 2 and "only one side" in p.stderr
    assert good.read_text() == GOOD
