"""Tests for kltrans.syntax.embedded: CUDA strings inside Python files."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kltrans.syntax.embedded import (
    EmbeddedError,
    EmbeddedSource,
    SkippedSite,
    apply_embedded_edits,
    find_embedded,
)

HERE = os.path.dirname(os.path.abspath(__file__))
PYDATA = os.path.join(HERE, "data", "python")


def read(name: str) -> str:
    with open(os.path.join(PYDATA, name), encoding="utf-8", newline="") as f:
        return f.read()


def module_constants(src: str) -> dict[str, str]:
    """Module-level NAME = "string" assignments, evaluated by Python itself."""
    out = {}
    for stmt in ast.parse(src).body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
            for t in stmt.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = stmt.value.value
    return out


def span(src: EmbeddedSource, py: str) -> tuple[int, int]:
    """File byte range from the first literal's start to the closing quote of the last part."""
    lines = py.encode("utf-8").splitlines(keepends=True)
    line = lines[src.line - 1].decode("utf-8")
    start = sum(map(len, lines[:src.line - 1])) + len(line[:src.column - 1].encode("utf-8"))
    return start, src.source_offset(len(src.text.encode("utf-8")))


def assert_only_spans_changed(old: str, new: str, old_srcs, new_srcs) -> None:
    """Bytes outside the given literal spans are identical, in order."""
    ob, nb = old.encode("utf-8"), new.encode("utf-8")

    def gaps(data: bytes, spans):
        out, cur = [], 0
        for a, b in sorted(spans):
            out.append(data[cur:a])
            cur = b
        out.append(data[cur:])
        return out

    assert gaps(ob, [span(s, old) for s in old_srcs]) == gaps(nb, [span(s, new) for s in new_srcs])


def assert_only_range_changed(old: str, new: str, start: int, end: int) -> None:
    """Every byte before ``start`` and from ``end`` on (old file offsets) is unchanged."""
    ob, nb = old.encode("utf-8"), new.encode("utf-8")
    assert nb[:start] == ob[:start]
    assert nb[len(nb) - (len(ob) - end):] == ob[end:]


def edited(text: str, edits: list[tuple[int, int, str]]) -> str:
    tb = text.encode("utf-8")
    out, cur = [], 0
    for s, e, r in sorted(edits):
        out += [tb[cur:s], r.encode("utf-8")]
        cur = e
    out.append(tb[cur:])
    return b"".join(out).decode("utf-8")


def boff(text: str, needle: str, nth: int = 0) -> int:
    """Byte offset of the nth occurrence of needle in text."""
    tb, nb = text.encode("utf-8"), needle.encode("utf-8")
    i = -1
    for _ in range(nth + 1):
        i = tb.index(nb, i + 1)
    return i


# ----------------------------------------------------------------------------------------
# Finding sources in the fixtures


def test_torch_load_inline_fixture():
    src = read("torch_load_inline.py")
    found, skipped = find_embedded(src)
    assert skipped == []
    assert [f.kind for f in found] == ["load_inline"] * 3
    assert [f.index for f in found] == [0, 1, 2]
    consts = module_constants(src)
    assert found[0].text == consts["cuda_source"]
    assert (found[0].line, found[0].column) == (6, 15)
    assert "__global__ void bias_gelu_kernel" in found[0].text
    assert "— one thread per element" in found[0].text  # non-ASCII survives
    # list form: one source per element, raw and plain triple-quoted
    assert "__global__ void scale_kernel(float* __restrict__ x" in found[1].text
    assert "torch::Tensor scale(" in found[2].text
    assert (found[1].line, found[1].column) == (45, 9)
    assert all(f.name is None for f in found)


def test_cupy_fixture():
    src = read("cupy_kernels.py")
    found, skipped = find_embedded(src)
    assert skipped == []
    saxpy, module = found
    assert (saxpy.kind, saxpy.name, saxpy.line, saxpy.column) == ("RawKernel", "saxpy", 5, 22)
    assert 'extern "C" __global__\nvoid saxpy(' in saxpy.text
    assert module.kind == "RawModule" and module.name is None
    assert module.text == module_constants(src)["loaded_from_source"]
    assert (module.line, module.column) == (15, 22)  # the literal, not the call


def test_cuda_core_fixture():
    src = read("cuda_core_program.py")
    found, skipped = find_embedded(src)
    assert len(found) == 1
    prog = found[0]
    assert prog.kind == "Program" and prog.text == module_constants(src)["code"]
    assert "__global__ void vector_add" in prog.text
    # the f-string in ProgramOptions(arch=f"...") is not a site; code_type "ptx" is skipped
    assert skipped == [SkippedSite(28, 20, "Program", "code_type 'ptx' is not CUDA C++")]


def test_fstring_and_runtime_sites_are_skipped():
    src = read("fstring_sites.py")
    found, skipped = find_embedded(src)
    assert [f.name for f in found] == ["one"]
    reasons = {s.line: s.reason for s in skipped}
    assert all(s.kind in ("RawKernel", "RawModule") for s in skipped)
    assert reasons[7] == "f-string with substitutions cannot be rewritten losslessly"
    assert "str.format" in reasons[23]
    assert "%-formatting" in reasons[26]
    assert "assigned 2 times" in reasons[30]
    assert "bytes literal" in reasons[32]
    assert len(skipped) == 5


def test_escaped_single_quoted_and_concatenation():
    src = read("escaped_strings.py")
    found, skipped = find_embedded(src)
    assert skipped == []
    relu, debug = found
    assert (relu.kind, relu.name) == ("RawKernel", "relu")
    assert relu.text == (
        'extern "C" __global__\n'
        'void relu(const float* x, float* y, int n) {\n'
        '\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n'
        '\tif (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;  // max(x, 0) — ReLU\n'
        '}\n'
    )
    assert (relu.line, relu.column) == (7, 5)
    # `from cupy import RawKernel as Kernel` is recognized
    assert debug.name == "debug" and 'printf("x[%d] = %d\\n"' in debug.text


def test_offsets_map_to_literal_bytes():
    """Every value byte maps to the same byte in the file, or to the escape producing it."""
    for name in sorted(os.listdir(PYDATA)):
        src = read(name)
        data = src.encode("utf-8")
        for f in find_embedded(src)[0]:
            tb = f.text.encode("utf-8")
            for v in range(len(tb)):
                o = f.source_offset(v)
                assert data[o] == tb[v] or data[o:o + 1] == b"\\", (name, v)
            end = f.source_offset(len(tb))
            assert data[end:end + 1] in (b'"', b"'")


def test_source_position_through_escapes_and_parts():
    src = read("escaped_strings.py")
    relu = find_embedded(src)[0][0]
    lines = src.splitlines()
    # "ReLU" is in the fourth part of the concatenation, line 10
    line, col = relu.source_position(boff(relu.text, "ReLU"))
    assert line == 10 and lines[line - 1][col - 1:col + 3] == "ReLU"
    # the byte made by the '\t' escape maps to the backslash
    tab = boff(relu.text, "\tint")
    line, col = relu.source_position(tab)
    assert line == 9 and lines[line - 1][col - 1:col + 1] == "\\t"
    # the end of the text is the closing quote of the last part
    assert relu.source_position(len(relu.text.encode())) == (11, 9)
    # triple-quoted: CUDA line k is python line (literal line + k)
    torch_src = read("torch_load_inline.py")
    gelu = find_embedded(torch_src)[0][0]
    tlines = torch_src.splitlines()
    off = boff(gelu.text, "int idx")
    line, col = gelu.source_position(off)
    assert tlines[line - 1][col - 1:].startswith("int idx")
    # non-ASCII before the position: columns count characters
    off = boff(gelu.text, "one thread")
    line, col = gelu.source_position(off)
    assert tlines[line - 1][col - 1:].startswith("one thread")


def test_source_offset_range_checked():
    relu = find_embedded(read("escaped_strings.py"))[0][0]
    with pytest.raises(ValueError):
        relu.source_offset(-1)
    with pytest.raises(ValueError):
        relu.source_offset(len(relu.text.encode()) + 1)


# ----------------------------------------------------------------------------------------
# Round trips


@pytest.mark.parametrize("name", sorted(os.listdir(PYDATA)))
def test_no_edits_is_identity(name):
    src = read(name)
    assert apply_embedded_edits(src, []) == src
    found = find_embedded(src)[0]
    if found:  # a no-op edit also leaves the file alone
        assert apply_embedded_edits(src, [(found[0], 0, 0, "")]) == src


def test_rename_variable_in_load_inline_source():
    src = read("torch_load_inline.py")
    gelu = find_embedded(src)[0][0]
    tb = gelu.text.encode()
    edits, i = [], tb.find(b"idx")
    while i >= 0:
        edits.append((gelu, i, i + 3, "gid"))
        i = tb.find(b"idx", i + 3)
    assert len(edits) == 5
    new = apply_embedded_edits(src, edits)
    assert new != src
    refound = find_embedded(new)[0]
    assert refound[0].text == gelu.text.replace("idx", "gid")
    assert [f.text for f in refound[1:]] == [f.text for f in find_embedded(src)[0][1:]]
    # only bytes between the first and the last renamed identifier changed
    first, last = edits[0][1], edits[-1][2]
    assert_only_range_changed(src, new, gelu.source_offset(first), gelu.source_offset(last))
    assert_only_spans_changed(src, new, [gelu], [refound[0]])


def test_insert_pragma_in_raw_list_element():
    src = read("torch_load_inline.py")
    scale = find_embedded(src)[0][1]
    at = boff(scale.text, "    for (int i")
    new = apply_embedded_edits(src, [(scale, at, at, "    #pragma unroll 4\n")])
    refound = find_embedded(new)[0][1]
    assert refound.text == scale.text.replace("    for (int i", "    #pragma unroll 4\n    for (int i")
    o = scale.source_offset(at)
    assert_only_range_changed(src, new, o, o)
    assert "    #pragma unroll 4\n    for (int i" in new


def test_insert_pragma_in_escaped_single_quoted_part():
    src = read("escaped_strings.py")
    relu = find_embedded(src)[0][0]
    at = boff(relu.text, "\tif (i < n)")
    new = apply_embedded_edits(src, [(relu, at, at, '\t#pragma unroll\n\tprintf("i=%d\\n", i);\n')])
    # escaped for a non-raw single-quoted literal: quotes, backslashes and newlines
    # (an insertion at the joint of two parts goes to the start of the later one)
    assert ("threadIdx.x;\\n'\n"
            "    '\\t#pragma unroll\\n\\tprintf(\"i=%d\\\\n\", i);\\n\\tif (i < n)") in new
    refound = find_embedded(new)[0][0]
    assert refound.text == edited(relu.text, [(at, at, '\t#pragma unroll\n\tprintf("i=%d\\n", i);\n')])
    o = relu.source_offset(at)
    assert_only_range_changed(src, new, o, o)
    assert ast.parse(new)  # still Python


def test_single_quote_in_single_quoted_literal_is_escaped():
    src = "import cupy\nk = cupy.RawKernel('__global__ void k() { char c = 0; }', 'k')\n"
    k = find_embedded(src)[0][0]
    at = boff(k.text, "0;")
    new = apply_embedded_edits(src, [(k, at, at + 1, "'\\''")])
    assert "char c = \\'\\\\\\'\\';" in new
    assert find_embedded(new)[0][0].text == "__global__ void k() { char c = '\\''; }"


def test_edits_in_two_sources_at_once():
    src = read("cupy_kernels.py")
    saxpy, module = find_embedded(src)[0]
    e1 = (saxpy, boff(saxpy.text, "out[tid]"), boff(saxpy.text, "out[tid]") + 3, "result")
    s2 = boff(module.text, "x1[tid] * x2[tid]")
    e2 = (module, s2, s2 + len("x1[tid] * x2[tid]"), "__fmul_rn(x1[tid], x2[tid])")
    s3 = boff(module.text, "void test_sum")
    e3 = (module, s3, s3, "__launch_bounds__(256) ")
    new = apply_embedded_edits(src, [e2, e1, e3])  # any order
    a, b = find_embedded(new)[0]
    assert a.text == edited(saxpy.text, [e1[1:]])
    assert b.text == edited(module.text, [e2[1:], e3[1:]])
    assert a.name == "saxpy"
    assert_only_spans_changed(src, new, [saxpy, module], [a, b])


def test_edit_program_source_and_delete():
    src = read("cuda_core_program.py")
    prog = find_embedded(src)[0][0]
    start = boff(prog.text, "    for (size_t i")
    # replace the loop header line and insert a pragma before it
    end = prog.text.encode().index(b"\n", start) + 1
    new = apply_embedded_edits(src, [(prog, start, start, "    #pragma unroll\n"),
                                     (prog, start, end, "    for (size_t i = tid; i < N; i += 4096) {\n")])
    want = edited(prog.text, [(start, start, "    #pragma unroll\n"),
                              (start, end, "    for (size_t i = tid; i < N; i += 4096) {\n")])
    assert find_embedded(new)[0][0].text == want
    assert_only_range_changed(src, new, prog.source_offset(start), prog.source_offset(end))


def test_crlf_file_keeps_its_line_endings():
    src = ('import cupy as cp\r\n'
           'SRC = """\r\n__global__ void k(float* x) {\r\n    x[0] = 1.f;\r\n}\r\n"""\r\n'
           'k = cp.RawKernel(SRC, "k")\r\n')
    k = find_embedded(src)[0][0]
    assert k.text == "\n__global__ void k(float* x) {\n    x[0] = 1.f;\n}\n"
    at = boff(k.text, "    x[0]")
    new = apply_embedded_edits(src, [(k, at, at, "    #pragma unroll\n")])
    assert "    #pragma unroll\r\n    x[0]" in new
    assert "\n" not in new.replace("\r\n", "")
    assert find_embedded(new)[0][0].text == edited(k.text, [(at, at, "    #pragma unroll\n")])


def test_shared_literal_reported_once():
    src = ('import cupy as cp\nSRC = "__global__ void k() {}"\n'
           'a = cp.RawKernel(SRC, "k")\nb = cp.RawModule(code=SRC)\n')
    found, skipped = find_embedded(src)
    assert len(found) == 1 and found[0].kind == "RawKernel" and skipped == []


def test_more_call_shapes():
    src = (
        "from torch.utils import cpp_extension\n"
        "import cuda.core.experimental as cc\n"
        "import cupy\n"
        "A = 'x'\n"
        "SRCS = ['__global__ void a() {}', A]\n"
        "ext = cpp_extension.load_inline('e', '', SRCS)\n"          # third positional, via a name
        "p = cc.Program(code='__global__ void p() {}', code_type='C++')\n"
        "m = cupy.RawModule(path='kernels.cubin')\n"                 # nothing embedded
        "n = cupy.RawKernel(code=(A), name=A)\n"
        "def f(src):\n"
        "    return cupy.RawKernel(src, 'f')\n"
        "def g():\n"
        "    return cupy.RawKernel(A + 'y', 'g')\n"
        "h = cupy.RawKernel(*args)\n"
    )
    found, skipped = find_embedded(src)
    # in file order of the literals; A (used by SRCS[1] and by n) is reported once, for the
    # first call site that uses it
    assert [(f.kind, f.text, f.index) for f in found] == [
        ("load_inline", "x", 0),
        ("load_inline", "__global__ void a() {}", 1),
        ("Program", "__global__ void p() {}", 2),
    ]
    reasons = [s.reason for s in skipped]
    assert any("local variable" in r for r in reasons)
    assert any("built with +" in r for r in reasons)
    assert any("*args" in r for r in reasons)
    assert len(skipped) == 3


def test_bom_and_non_ascii_before_literal():
    src = "\ufeff# é → ü\nimport cupy\nk = cupy.RawKernel('/* ü */ __global__ void k() {}', 'k')\n"
    k = find_embedded(src)[0][0]
    assert (k.line, k.column) == (3, 20)
    at = boff(k.text, "k()")
    new = apply_embedded_edits(src, [(k, at, at + 1, "κ")])
    assert new == src.replace("void k()", "void κ()")
    b = find_embedded(src.encode("utf-8"))[0][0]
    assert b.text == k.text and b.source_offset(0) == k.source_offset(0)


# ----------------------------------------------------------------------------------------
# Neighbours of an edit that need care


def test_triple_quoted_quotes_are_escaped_only_when_needed():
    src = 'import cupy\nk = cupy.RawKernel("""__global__ void k() { printf("hi"); }""", "k")\n'
    k = find_embedded(src)[0][0]
    at = boff(k.text, "hi")
    new = apply_embedded_edits(src, [(k, at, at + 2, 'say "hi"')])
    assert 'printf("say "hi""); }"""' in new  # no quote run of three: nothing escaped
    assert find_embedded(new)[0][0].text == '__global__ void k() { printf("say "hi""); }'
    # a quote at the very end of the body must be escaped
    end = len(k.text.encode())
    new = apply_embedded_edits(src, [(k, end, end, '"')])
    assert find_embedded(new)[0][0].text == k.text + '"'
    assert_only_range_changed(src, new, k.source_offset(end), k.source_offset(end))


def test_deletion_joining_quote_runs_widens_the_edit():
    src = 'import cupy\nk = cupy.RawKernel("""a""b""", "k")\n'
    k = find_embedded(src)[0][0]
    assert k.text == 'a""b'
    new = apply_embedded_edits(src, [(k, 3, 4, "")])  # delete "b": the body would end in ""
    assert find_embedded(new)[0][0].text == 'a""'
    assert new == 'import cupy\nk = cupy.RawKernel("""a\\"\\"""", "k")\n'


def test_short_octal_escape_is_not_extended():
    src = 'import cupy\nk = cupy.RawKernel("\\1a2", "k")\n'
    k = find_embedded(src)[0][0]
    assert k.text == "\x01a2"
    new = apply_embedded_edits(src, [(k, 1, 2, "")])  # "\1" + "2" would read "\12"
    assert find_embedded(new)[0][0].text == "\x012"
    new = apply_embedded_edits(src, [(k, 1, 2, "7")])
    assert find_embedded(new)[0][0].text == "\x0172"


# ----------------------------------------------------------------------------------------
# Errors


def test_overlapping_edits_rejected():
    src = read("cupy_kernels.py")
    saxpy = find_embedded(src)[0][0]
    with pytest.raises(EmbeddedError, match="overlapping"):
        apply_embedded_edits(src, [(saxpy, 10, 20, "a"), (saxpy, 15, 25, "b")])
    with pytest.raises(EmbeddedError, match="overlapping"):
        apply_embedded_edits(src, [(saxpy, 10, 10, "a"), (saxpy, 10, 10, "b")])
    # touching is fine
    apply_embedded_edits(src, [(saxpy, 10, 20, "a"), (saxpy, 20, 25, "b"), (saxpy, 20, 20, "c")])


def test_edit_splitting_an_escape_rejected():
    src = 'import cupy\nk = cupy.RawKernel("\\u00e9 \\N{GREEK SMALL LETTER ALPHA} \\q é", "k")\n'
    k = find_embedded(src)[0][0]
    assert k.text == "é α \\q é"
    with pytest.raises(EmbeddedError, match="inside an escape") as ei:
        apply_embedded_edits(src, [(k, 1, 2, "x")])  # second byte of the \u00e9 escape
    assert (ei.value.line, ei.value.column) == (2, 21)
    with pytest.raises(EmbeddedError, match="inside an escape"):
        apply_embedded_edits(src, [(k, 4, 5, "")])  # inside \N{...}
    with pytest.raises(EmbeddedError, match="inside an escape"):
        apply_embedded_edits(src, [(k, 7, 7, "x")])  # between the \ and q of an invalid escape
    with pytest.raises(EmbeddedError, match="UTF-8 character"):
        apply_embedded_edits(src, [(k, 10, 11, "")])  # inside the literal é
    # whole escapes are fine
    new = apply_embedded_edits(src, [(k, 0, 2, "e"), (k, 6, 8, "\\")])
    assert find_embedded(new)[0][0].text == "e α \\ é"


def test_edit_spanning_two_parts_rejected():
    src = read("escaped_strings.py")
    relu = find_embedded(src)[0][0]
    joint = len('extern "C" __global__\n')
    with pytest.raises(EmbeddedError, match="spans two parts"):
        apply_embedded_edits(src, [(relu, joint - 1, joint + 1, "")])
    # ending or starting exactly at the joint is fine
    new = apply_embedded_edits(src, [(relu, joint - 1, joint, " "), (relu, joint, joint + 4, "int")])
    assert find_embedded(new)[0][0].text == edited(relu.text, [(joint - 1, joint, " "), (joint, joint + 4, "int")])


@pytest.mark.parametrize("replacement", ["x'''y", "trailing\\", "\r"])
def test_unrepresentable_raw_replacement_rejected(replacement):
    src = read("cupy_kernels.py")
    saxpy = find_embedded(src)[0][0]
    end = len(saxpy.text.encode())
    with pytest.raises(EmbeddedError, match="raw string literal"):
        apply_embedded_edits(src, [(saxpy, end, end, replacement)])


def test_raw_replacement_with_escaped_quote_is_fine():
    src = read("cupy_kernels.py")
    saxpy = find_embedded(src)[0][0]
    at = boff(saxpy.text, "void saxpy")
    new = apply_embedded_edits(src, [(saxpy, at, at, "/* \\''' */ ")])
    assert find_embedded(new)[0][0].text == edited(saxpy.text, [(at, at, "/* \\''' */ ")])


def test_raw_single_line_cannot_take_a_newline():
    src = "import cupy\nk = cupy.RawKernel(r'__global__ void k() {}', 'k')\n"
    k = find_embedded(src)[0][0]
    with pytest.raises(EmbeddedError, match="raw string literal"):
        apply_embedded_edits(src, [(k, 0, 0, "// hi\n")])


def test_python_syntax_error_has_location():
    src = "import cupy\n\nk = cupy.RawKernel('__global__ void k() {}', 'k'\nx = = 1\n"
    with pytest.raises(EmbeddedError) as ei:
        find_embedded(src)
    assert (ei.value.line, ei.value.column) == (3, 19)  # the unclosed parenthesis
    with pytest.raises(EmbeddedError) as ei:
        find_embedded("x = 1\ndef f(:\n    pass\n")
    assert (ei.value.line, ei.value.column) == (2, 7)
    assert "line 2, column 7" in str(ei.value)


def test_edit_against_another_file_rejected():
    k = find_embedded(read("cupy_kernels.py"))[0][0]
    with pytest.raises(EmbeddedError, match="does not match"):
        apply_embedded_edits(read("cuda_core_program.py"), [(k, 0, 0, "x")])
    with pytest.raises(EmbeddedError, match="out of range"):
        apply_embedded_edits(read("cupy_kernels.py"), [(k, 0, 10**6, "x")])


def test_module_imports_without_libcst():
    code = ("import sys; sys.modules['libcst'] = None\n"
            "import kltrans.syntax.embedded as m\n"
            "assert 'libcst' not in [k for k, v in sys.modules.items() if v is not None]\n"
            "print(m.EmbeddedSource.__name__)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=os.path.dirname(HERE))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "EmbeddedSource"


# ----------------------------------------------------------------------------------------
# Property: random CUDA-ish text, literal styles and edits

CHARS = st.sampled_from(list("ab xyz019{}();*+=<>#_[],.") + ["\t", "\n", "\n", '"', '"', "'", "\\", "\\",
                                                             "\r", "é", "→", "😀", "\0"])
TEXT = st.text(CHARS, max_size=40)


def _triple(text: str, quote: str, minimal: bool, nl: str) -> str:
    q = quote[0]
    out = []
    for i, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\0":
            out.append("\\x00")
        elif ch == "\n":
            out.append(nl)
        elif ch == q and (not minimal or i + 1 == len(text) or text[i + 1] == q):
            out.append("\\" + q)
        else:
            out.append(ch)
    return quote + "".join(out) + quote


def make_literal(text: str, style: str, cut: int, nl: str) -> tuple[str | None, list[tuple[int, int]]]:
    """A literal spelling ``text`` and the char ranges of its parts (None if impossible)."""
    whole = [(0, len(text))]
    if style == "repr":
        return repr(text), whole
    if style == "triple":
        return _triple(text, '"""', False, nl), whole
    if style == "triple_min":
        return _triple(text, "'''", True, nl), whole
    if style == "raw":
        lit = 'r"""' + text.replace("\n", nl) + '"""'
        try:
            ok = ast.literal_eval(lit) == text
        except SyntaxError:
            ok = False
        return (lit if ok else None), whole
    if style == "concat":
        a, b = text[:cut], text[cut:]
        second = _triple(b, '"""', True, nl)
        return f"({a!r}{nl}    {second})", [(0, cut), (cut, len(text))]
    raise AssertionError(style)


def raw_representable(value: str) -> bool:
    try:
        return ast.literal_eval('r"""' + value + '"""') == value and "\r" not in value
    except SyntaxError:
        return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_property_random_edits_round_trip(data):
    text = data.draw(TEXT, label="text")
    style = data.draw(st.sampled_from(["repr", "triple", "triple_min", "raw", "concat"]), label="style")
    nl = data.draw(st.sampled_from(["\n", "\r\n"]), label="newline")
    cut = data.draw(st.integers(0, len(text)), label="cut")
    literal, parts = make_literal(text, style, cut, nl)
    assume(literal is not None)
    lines = ["import cupy as cp", "", "# un commentaire — é", f"SRC = {literal}", "",
             'kernel = cp.RawKernel(SRC, "k")',
             "other = cp.RawModule(code='__global__ void other() {}')  # untouched", ""]
    src = nl.join(lines)
    found, skipped = find_embedded(src)
    assert skipped == [] and len(found) == 2
    source, other = found
    assert source.text == text and source.kind == "RawKernel" and source.name == "k"

    # random non-overlapping char ranges, each inside one part
    n_edits = data.draw(st.integers(0, 4), label="n_edits")
    points = sorted(data.draw(st.lists(st.integers(0, len(text)), min_size=2 * n_edits,
                                       max_size=2 * n_edits), label="points"))
    char_edits = []
    for i in range(0, len(points), 2):
        s, e = points[i], points[i + 1]
        if not any(a <= s and e <= b for a, b in parts):
            continue
        if char_edits and s == e == char_edits[-1][0] == char_edits[-1][1]:
            continue
        char_edits.append((s, e, data.draw(TEXT, label=f"replacement{i // 2}")))

    def b(i: int) -> int:
        return len(text[:i].encode("utf-8"))

    edits = [(source, b(s), b(e), r) for s, e, r in char_edits]
    want = "".join(text[prev:s] + r for (prev, _), (s, _, r) in
                   zip([(0, 0)] + [(e, 0) for _, e, _ in char_edits], char_edits))
    want += text[char_edits[-1][1]:] if char_edits else text
    assert want == edited(text, [(b(s), b(e), r) for s, e, r in char_edits])

    if style == "raw" and not raw_representable(want):
        with pytest.raises(EmbeddedError):
            apply_embedded_edits(src, edits)
        return
    new = apply_embedded_edits(src, edits)
    new_found, new_skipped = find_embedded(new)
    assert new_skipped == []
    assert new_found[0].text == want
    assert new_found[1].text == other.text
    assert_only_spans_changed(src, new, [source], [new_found[0]])
    # bytes before the literal body and after it never change
    ob, nb = src.encode(), new.encode()
    start, end = span(source, src)
    assert nb[:start] == ob[:start] and nb[len(nb) - (len(ob) - end):] == ob[end:]
    # Python itself agrees about the value
    assign = next(n for n in ast.parse(new).body if isinstance(n, ast.Assign))
    assert ast.literal_eval(assign.value) == want
