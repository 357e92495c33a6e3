"""Launch contracts: header lines, host launchers, expressions."""

import pytest

from kltrans.syntax import parse
from kltrans.syntax.contract import ContractError, contracts, evaluate, format_contract, parse_header_line

SRC = """\
// kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 8)
// kltrans: launch softmax grid=rows block=256 smem=256*4
__global__ void transpose(const float* in, float* out, int rows, int cols) {}
__global__ void softmax(const float* x, float* y, int rows, int cols) {}
__global__ void scale(float* x, int n) {}
void run(float* x, int n) {
  int blocks = (n + 255) / 256;
  dim3 block(256);
  scale<<<blocks, block>>>(x, n);
}
"""


def test_header_and_launcher_contracts():
    cs = contracts(parse(SRC, "c.cu"))
    t = cs["transpose"]
    assert t.grid == ("ceil_div(cols, 32)", "ceil_div(rows, 32)") and t.block == ("32", "8")
    assert t.evaluate({"rows": 100, "cols": 33}) == ((2, 4, 1), (32, 8, 1), 0)
    s = cs["softmax"]
    assert s.evaluate({"rows": 7, "cols": 1})[2] == 1024
    sc = cs["scale"]
    assert sc.source == "launcher" and sc.grid == ("(n + 255) / 256",) and sc.block == ("256",)
    assert sc.evaluate({"n": 1000})[0] == (4, 1, 1)


def test_format_round_trip():
    line = "// kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 8)"
    assert format_contract(parse_header_line(line)) == line


@pytest.mark.parametrize("expr, env, value", [
    ("ceil_div(n, 256)", {"n": 1000}, 4), ("n / 4", {"n": 7}, 1), ("-7 / 2", {}, -3),
    ("min(n, 1024) * 2", {"n": 5000}, 2048), ("1 << k", {"k": 5}, 32), ("n % 3", {"n": 8}, 2),
])
def test_evaluate(expr, env, value):
    assert evaluate(expr, env) == value


@pytest.mark.parametrize("line, message", [
    ("// kltrans: launch k grid=4", "needs block"),
    ("// kltrans: launch k grid=4 block=1 speed=9", "unknown key"),
    ("// kltrans: launch k grid=__import__('os') block=1", "not allowed|unknown function"),
    ("// kltrans: launch k grid=(4 block=1", "cannot parse|needs block"),
])
def test_bad_headers(line, message):
    with pytest.raises(ContractError, match=message):
        parse_header_line(line)


def test_unknown_name_in_expression():
    with pytest.raises(ContractError, match="'m' in 'm' has no value"):
        evaluate("m", {"n": 1})


def test_contract_reads_file_constants_and_launch_bounds():
    from kltrans.syntax import parse
    from kltrans.syntax.contract import ContractError, contracts, file_constants

    src = (b"#define TX 32\n#define TY (TX / 4)  // rows\nconstexpr int PER = 2 * TY;\n"
           b"// kltrans: launch k grid=ceil_div(n, TX * PER) block=(TX, TY)\n"
           b"extern \"C\" __global__ void __launch_bounds__(TX * TY) k(float* x, int n) {}\n")
    u = parse(src, "k.cu")
    assert file_constants(u) == {"TX": 32, "TY": 8, "PER": 16}
    c = contracts(u)["k"]
    assert c.max_threads == 256
    assert c.evaluate({"n": 1000}) == ((2, 1, 1), (32, 8, 1), 0)
    small = u.source.replace(b"__launch_bounds__(TX * TY)", b"__launch_bounds__(128)")
    with pytest.raises(ContractError, match="exceeds __launch_bounds__"):
        contracts(parse(small, "k.cu"))["k"].evaluate({"n": 1000})


@pytest.mark.parametrize("expr, why", [
    ("5 % 0", "division by zero"), ("ceil_div(n, 0)", "division by zero"),
    ("1 << 100000000000", "shift by"), ("n << -1", "shift by"),
    ("(1 << 40) * (1 << 40)", "64-bit"),
])
def test_evaluate_refuses_what_a_cpp_integer_cannot_be(expr, why):
    with pytest.raises(ContractError, match=why):
        evaluate(expr, {"n": 7})


def test_a_file_with_hostile_macros_still_gives_its_contract():
    """Macros the contract does not use may be anything: a division by zero, a shift that
    would take all memory, a chain of squarings that would never end."""
    chain = "\n".join(f"#define S{i} (S{i - 1} * S{i - 1})" for i in range(1, 28))
    src = ("#define KL_BAD (5 % 0)\n#define KL_HUGE (1 << 100000000000)\n#define S0 3\n"
           + chain + "\n#define BLOCK 128\n"
           "// kltrans: launch k grid=ceil_div(n, BLOCK) block=BLOCK\n"
           "__global__ void k(float* y, int n) { y[0] = 1.f; }\n")
    c = contracts(parse(src, "h.cu"))["k"]
    assert c.evaluate({"n": 1000})[:2] == ((8, 1, 1), (128, 1, 1))


def _both(header: str, launch: str, tmpl: str = "") -> str:
    return (f"// kltrans: launch k {header}\n{tmpl}__global__ void k(float* x, int n) {{}}\n"
            f"void run(float* d, int count) {{\n  {launch}\n}}\n")


@pytest.mark.parametrize("header, launch, tmpl", [
    # the same launch, spelled apart; the launcher's count is the kernel's n
    ("grid=ceil_div(n, 256) block=256", "k<<<(count + 255) / 256, 256>>>(d, count);", ""),
    # a template parameter of the header, bound by the launch
    ("grid=ceil_div(n, B) block=B", "k<128><<<(count + 127) / 128, 128>>>(d, count);",
     "template <int B>\n"),
    # ok: a launcher expression this reader cannot evaluate is not compared
    ("grid=ceil_div(n, 256) block=256", "k<<<blocks_for(count), 256>>>(d, count);", ""),
])
def test_a_header_and_a_launcher_that_agree(header, launch, tmpl):
    assert contracts(parse(_both(header, launch, tmpl), "c.cu"))["k"].source == "header"


def test_a_header_that_disagrees_with_the_launcher_is_an_error():
    src = _both("grid=ceil_div(n, 256) block=256", "k<<<(count + 127) / 128, 128>>>(d, count);")
    with pytest.raises(ContractError, match=r"^c\.cu:1:1: the launch header of k disagrees "
                                            r"with its host launcher at line 4: grid="):
        contracts(parse(src, "c.cu"))


def test_header_names_the_template_instantiation():
    line = "// kltrans: launch rmsNorm<float, 256> grid=min(rows, 1056) block=256 smem=256*4"
    c = parse_header_line(line)
    assert c.kernel == "rmsNorm" and c.template_args == ("float", "256")
    assert format_contract(c) == line
    # a pass that changes the grid keeps the instantiation
    assert format_contract(c.with_(grid=("rows",))).startswith("// kltrans: launch rmsNorm<float, 256> ")


def test_header_with_empty_template_arguments_is_an_error():
    with pytest.raises(ContractError, match="empty template arguments"):
        parse_header_line("// kltrans: launch k<> grid=1 block=32")


def test_header_and_launcher_must_name_one_instantiation():
    src = ("// kltrans: launch k<float, 128> grid=n block=128\n"
           "template <class T, int B> __global__ void k(T* x, int n) {}\n"
           "void run(float* x, int n) { k<float, 256><<<n, 128>>>(x, n); }\n")
    with pytest.raises(ContractError, match="template arguments"):
        contracts(parse(src, "k.cu"))
    same = src.replace("k<float, 256><<<", "k<float,128><<<")
    assert contracts(parse(same, "k.cu"))["k"].template_args == ("float", "128")
