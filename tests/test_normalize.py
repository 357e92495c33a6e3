"""The four known tree-sitter-cuda misreads are normalized, and the tree is right."""

import pytest

from kltrans.syntax import parse
from kltrans.syntax.normalize import normalize


def kids(node, type_):
    return [c for c in node.named_children if c.type == type_]


def only(unit, type_):
    found = [n for n in unit.walk() if n.type == type_]
    assert found, f"no {type_} node"
    return found


def test_pragma_between_unbraced_for_and_body():
    src = (
        "__global__ void k(const float* a, float* o, int n) {\n"
        "  float acc = 0;\n"
        "  for (int i = 0; i < n; ++i)\n"
        "#pragma unroll\n"
        "    for (int j = 0; j < 4; ++j) acc += a[i * 4 + j];\n"
        "  o[0] = acc;\n"
        "}\n"
    )
    u = parse(src)
    assert not u.has_errors
    fors = only(u, "for_statement")
    outer = fors[0]
    body = outer.child_by_field_name("body")
    # the inner loop is the outer loop's body, not a sibling after a MISSING ';'
    assert body.type == "for_statement"
    assert u.text(body).startswith("for (int j = 0")
    # and the statement after the loops is still the assignment
    stmts = kids(u.root.named_children[0].child_by_field_name("body"), "expression_statement")
    assert [u.text(s) for s in stmts] == ["o[0] = acc;"]
    [p] = u.pragmas
    assert p.text == "#pragma unroll" and p.name == "unroll" and p.line == 4
    assert p.loop is not None and p.loop.id == body.id


def test_pragma_between_unbraced_if_and_loop():
    src = (
        "__global__ void k(float* o, int n) {\n"
        "  if (n > 4)\n"
        "  #pragma unroll 2\n"
        "    for (int j = 0; j < 4; ++j) o[j] = j;\n"
        "  else o[0] = 1;\n"
        "}\n"
    )
    u = parse(src)
    assert not u.has_errors
    [ifs] = only(u, "if_statement")
    cons = ifs.child_by_field_name("consequence")
    assert cons.type == "for_statement"
    assert ifs.child_by_field_name("alternative") is not None
    [p] = u.pragmas
    assert (p.text, p.argument, p.line, p.column) == ("#pragma unroll 2", "2", 3, 3)
    assert p.loop.id == cons.id


def test_braced_pragma_targets_next_loop_across_comments():
    src = (
        "__global__ void k(float* o) {\n"
        "#pragma unroll 4  // four\n"
        "  /* the loop */\n"
        "  for (int j = 0; j < 16; ++j) { o[j] = j; }\n"
        "}\n"
    )
    u = parse(src)
    [p] = u.pragmas
    assert p.text == "#pragma unroll 4 // four" or p.text.startswith("#pragma unroll 4")
    assert p.loop is not None and u.line_col(p.loop.start_byte) == (4, 3)


def test_device_lambdas():
    src = (
        "template <typename F> __global__ void apply(F f, float* o, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) o[i] = f(i);\n"
        "}\n"
        "void run(float* o, int n) {\n"
        "  float s = 2.f;\n"
        "  auto f = [=] __device__ (int i) { return s * i; };\n"
        "  auto g = [=] __host__ __device__ (float x) -> float { return x + s; };\n"
        "  apply<<<(n + 255) / 256, 256>>>(f, o, n);\n"
        "}\n"
    )
    u = parse(src)
    assert not u.has_errors
    lambdas = only(u, "lambda_expression")
    assert len(lambdas) == 2
    for lam, param in zip(lambdas, ["int i", "float x"]):
        decl = lam.child_by_field_name("declarator")
        assert decl is not None and decl.type == "lambda_declarator"
        params = decl.child_by_field_name("parameters")
        assert u.text(params) == f"({param})"
        assert lam.child_by_field_name("body").type == "compound_statement"
    rules = [(n.rule, n.original) for n in u.normalizations]
    assert rules == [("device-lambda", b"__device__"), ("device-lambda", b"__host__ __device__")]
    [launch] = u.launches()
    assert launch.kernel == "apply" and launch.args == ("f", "o", "n")


def test_align_struct_and_shared():
    src = (
        "struct __align__(16) Pair { float a, b, c, d; };\n"
        "__global__ void k(Pair* p) { __shared__ __align__(16) float s[32][33]; p[0].a = s[0][0]; }\n"
    )
    u = parse(src)
    assert not u.has_errors
    [st] = [n for n in u.root.named_children if n.type == "struct_specifier"]
    [al] = kids(st, "alignas_qualifier")
    assert u.text(al) == "__align__(16)"  # node text comes from the original bytes
    assert u.text(st.child_by_field_name("name")) == "Pair"
    fields = only(u, "field_identifier")
    assert [u.text(f) for f in fields][:4] == ["a", "b", "c", "d"]
    [k] = u.kernels()
    assert k.params[0].base_type == "Pair" and k.params[0].pointer == 1
    [sh] = u.shared_decls()
    assert (sh.name, sh.type, sh.dims) == ("s", "float", ("32", "33"))


def test_launch_bounds_three_arguments():
    src = "__global__ void __launch_bounds__(128, 4, 1) k(float* x, int n) { x[0] = n; }\n"
    u = parse(src)
    assert not u.has_errors
    [k] = u.kernels()
    assert k.name == "k"
    assert k.launch_bounds == ("128", "4", "1")
    assert [p.name for p in k.params] == ["x", "n"]
    [lb] = only(u, "launch_bounds")
    assert u.text(lb) == "__launch_bounds__(128, 4, 1)"


@pytest.mark.parametrize("args, expect", [
    ("(256)", ("256",)),
    ("(256, 2)", ("256", "2")),
    ("(MAX_THREADS, MIN_BLOCKS(2, 3), 1)", ("MAX_THREADS", "MIN_BLOCKS(2, 3)", "1")),
])
def test_launch_bounds_arguments_as_written(args, expect):
    u = parse(f"__global__ void __launch_bounds__{args} k() {{}}\n")
    assert not u.has_errors
    assert u.kernels()[0].launch_bounds == expect


def test_comments_strings_and_macros_untouched():
    src = (
        "// #pragma unroll in a comment, and __align__(8) too\n"
        "/* [=] __device__ (int i) {} */\n"
        "#define ALIGNED __align__(8)\n"
        "#define LB(a) __launch_bounds__(a, 1, 1)\n"
        "const char* s = \"#pragma unroll __align__(4)\";\n"
        "[[nodiscard]] __device__ int f() { return 1; }\n"
    )
    norm, changes = normalize(src.encode())
    assert changes == ()
    assert norm == src.encode()
    u = parse(src)
    assert [f.name for f in u.device_functions()] == ["f"]


def test_normalization_keeps_offsets_and_lines():
    src = (
        "struct __align__(16) P { float x; };\n"
        "__global__ void __launch_bounds__(64, 2, 1) k(P* p) {\n"
        "  for (int i = 0; i < 4; ++i)\n"
        "  #pragma unroll \\\n"
        "     4\n"
        "    for (int j = 0; j < 4; ++j) p[i].x += j;\n"
        "  auto f = [] __device__ () { return 1; };\n"
        "}\n"
    ).encode()
    norm, changes = normalize(src)
    assert len(norm) == len(src)
    assert [i for i, b in enumerate(norm) if b == 10] == [i for i, b in enumerate(src) if b == 10]
    assert {c.rule for c in changes} == {"align", "launch-bounds", "pragma", "device-lambda"}
    for c in changes:
        assert src[c.start:c.end] == c.original and norm[c.start:c.end] == c.replacement
    u = parse(src)
    assert not u.has_errors
    [p] = u.pragmas
    assert p.text == "#pragma unroll 4"
    assert u.line_col(p.loop.start_byte) == (6, 5)


def test_remaining_errors_are_diagnostics():
    u = parse("__global__ void k(float* x) { x[0] = ; }\n", "bad.cu")
    assert u.has_errors
    [d] = u.parse_diagnostics()
    assert d.severity == "error" and str(d.location).startswith("bad.cu:1:")
    text = d.render()
    assert "bad.cu:1:" in text and "^" in text and "hint:" in text
