"""Index expressions as polynomials: affine_of, strides, coalescing."""

import os

import pytest

from kltrans.analysis.affine import (
    Affine,
    affine_explain,
    affine_of,
    index_stride,
    is_coalesced,
    unit_stride,
)
from kltrans.syntax import parse

KERNELS = os.path.join(os.path.dirname(__file__), "..", "data", "kernels")
CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "corpus")


def load(path):
    with open(path) as f:
        return parse(f.read(), path)


def subscripts(unit, text):
    """Every subscript expression whose text is ``text``, in source order."""
    found = [n for n in unit.walk() if n.type == "subscript_expression" and unit.text(n) == text]
    assert found, f"no subscript {text!r}"
    return found


def index(unit, text, nth=0):
    """The index expression of the ``nth`` subscript ``text``."""
    sub = subscripts(unit, text)[nth]
    return sub.child_by_field_name("indices").named_children[0]


def kernel_unit(body, params="const float* x, float* y, int n", prelude="", template=""):
    return parse(f"{prelude}\n{template}__global__ void k({params}) {{\n{body}\n}}\n")


T, B, D = Affine.sym("threadIdx.x"), Affine.sym("blockIdx.x"), Affine.sym("blockDim.x")
GID = B * D + T


# ---------------------------------------------------------------------- Affine itself
def test_affine_algebra_and_printing():
    a = Affine.sym("i") * 4 + Affine.const(3)
    assert str(a) == "4*i + 3"
    assert a - Affine.const(3) == Affine.sym("i") * 4
    assert -a == Affine.const(-3) - Affine.sym("i") * 4
    assert str(GID) == "blockDim.x*blockIdx.x + threadIdx.x"
    assert GID == T + D * B  # order of construction does not matter
    assert hash(GID) == hash(T + D * B)
    assert {GID: 1}[T + B * D] == 1
    assert str(Affine()) == "0" and Affine().is_const() and Affine().value() == 0
    assert Affine.const(7).value() == 7 and GID.value() is None
    assert GID.symbols() == {"threadIdx.x", "blockIdx.x", "blockDim.x"}
    assert str(Affine.sym("x") - Affine.sym("y") * 2 - 5) == "x - 2*y - 5"
    assert GID.terms[("blockDim.x", "blockIdx.x")] == 1
    with pytest.raises(TypeError):
        GID.terms[("z",)] = 1  # read-only view
    with pytest.raises(AttributeError):
        GID._terms = {}


def test_affine_coeff_without_and_divisibility():
    assert GID.coeff("threadIdx.x") == Affine.const(1)
    assert GID.coeff("blockIdx.x") == D
    assert GID.without("threadIdx.x") == B * D
    assert (T * T + T).coeff("threadIdx.x") is None  # degree 2
    assert Affine.const(5).coeff("threadIdx.x") == Affine.const(0)
    assert (Affine.sym("n") * 64 + 32).divisible_by(32) is True
    assert (Affine.sym("n") * 64 + 16).divisible_by(32) is False  # never a multiple
    assert (Affine.sym("n") + 32).divisible_by(32) is None  # depends on n
    assert Affine.const(96).divisible_by(32) is True
    # a symbol that stands for a value computed from threadIdx.x hides the coefficient
    hidden = Affine.sym("i", depends={"threadIdx.x"}) * 2
    assert hidden.coeff("threadIdx.x") is None
    assert hidden.coeff("i") == Affine.const(2)
    assert hidden.subs({"i": T + 1}) == T * 2 + 2


# --------------------------------------------------------------- reading expressions
@pytest.mark.parametrize("decl", [
    "int i = blockIdx.x * blockDim.x + threadIdx.x;",
    "int i = threadIdx.x + blockDim.x * blockIdx.x;",
    "const int tid = threadIdx.x; const int i = blockIdx.x * blockDim.x + tid;",
    "int gid = (int)(blockDim.x * blockIdx.x) + static_cast<int>(threadIdx.x); int i = gid;",
])
def test_global_index_in_every_style(decl):
    u = kernel_unit(decl + "\n if (i < n) y[i] = x[i];")
    assert affine_of(u, index(u, "y[i]")) == GID
    assert str(affine_of(u, index(u, "x[i]"))) == "blockDim.x*blockIdx.x + threadIdx.x"


def test_literals_shifts_macros_and_constants():
    u = kernel_unit(
        "const int tid = threadIdx.x;\n"
        "y[tid * 4u + 0x10] = 0;\n"
        "y[(tid << 2) + SHIFT] = 0;\n"
        "y[kRows * kB + warpSize] = 0;\n"
        "y[sizeof(float4) * tid] = 0;\n",
        prelude="#define TILE 32\n#define SHIFT (TILE << 1)  // 64\n"
                "constexpr int kRows = 8;\nenum { kA = 4, kB };\n")
    assert affine_of(u, index(u, "y[tid * 4u + 0x10]")) == T * 4 + 16
    assert affine_of(u, index(u, "y[(tid << 2) + SHIFT]")) == T * 4 + 64
    assert affine_of(u, index(u, "y[kRows * kB + warpSize]")) == Affine.const(8 * 5 + 32)
    assert affine_of(u, index(u, "y[sizeof(float4) * tid]")) == T * 16


def test_ceil_div_macro_folds_constants_and_stays_opaque_otherwise():
    u = kernel_unit(
        "int nb = CEIL_DIV(n, TILE);\n"
        "int nc = CEIL_DIV(100, TILE);\n"
        "y[nb] = 0; y[nc] = 0; y[CEIL_DIV(n, 4) * 4 + threadIdx.x] = 0;",
        prelude="#define TILE 32\n#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))\n")
    nb = affine_of(u, index(u, "y[nb]"))
    assert str(nb) == "CEIL_DIV(n, TILE)" and nb.symbols() == {"CEIL_DIV(n, TILE)"}
    assert nb.depends("CEIL_DIV(n, TILE)") == {"n"}
    assert affine_of(u, index(u, "y[nc]")) == Affine.const(4)  # (100 + 31) / 32
    a = affine_of(u, index(u, "y[CEIL_DIV(n, 4) * 4 + threadIdx.x]"))
    assert a.coeff("threadIdx.x") == Affine.const(1)
    assert a.coeff("n") is None  # n hides inside the opaque term


def test_non_polynomial_terms_are_opaque_unless_thread_dependent():
    u = kernel_unit(
        "int q = (n + 3) / 4;\n"
        "y[q + threadIdx.x] = 0;\n"
        "y[min(n, 64)] = 0;\n"
        "y[(threadIdx.x + 3) / 4] = 0;\n"
        "y[threadIdx.x % 32] = 0;\n"
        "y[(4 * n) / 4 + ((8 * threadIdx.x) >> 3)] = 0;\n"
        "y[(n + 8 * threadIdx.x) >> 3] = 0;\n")
    a = affine_of(u, index(u, "y[q + threadIdx.x]"))
    assert a == Affine.sym("(n + 3) / 4") + T
    assert str(affine_of(u, index(u, "y[min(n, 64)]"))) == "min(n, 64)"
    got, why = affine_explain(u, index(u, "y[(threadIdx.x + 3) / 4]"))
    assert got is None and why == "`(threadIdx.x + 3) / 4` is not a polynomial and depends on threadIdx.x"
    assert affine_of(u, index(u, "y[threadIdx.x % 32]")) is None
    # exact division and shifts of multiples fold; inexact ones do not
    assert affine_of(u, index(u, "y[(4 * n) / 4 + ((8 * threadIdx.x) >> 3)]")) == \
        Affine.sym("n") + T
    assert affine_of(u, index(u, "y[(n + 8 * threadIdx.x) >> 3]")) is None


def test_template_constants_stay_symbols_and_env_binds_them():
    u = kernel_unit("const int base = blockIdx.x * (BLOCK * ITEMS) + threadIdx.x;\n"
                    "for (int k = 0; k < ITEMS; ++k) { y[base + k * BLOCK] = 0; }",
                    template="template <int BLOCK = 256, int ITEMS = 4>\n")
    node = index(u, "y[base + k * BLOCK]")
    a = affine_of(u, node)
    assert str(a) == "BLOCK*ITEMS*blockIdx.x + BLOCK*k + threadIdx.x"
    bound = affine_of(u, node, env={"BLOCK": 128, "ITEMS": 2})
    assert bound == Affine.sym("blockIdx.x") * 256 + Affine.sym("k") * 128 + T


def test_reassigned_variables_stay_symbols():
    u = kernel_unit(
        "int i = threadIdx.x;\n"
        "if (n > 4) i = 0;\n"
        "y[i] = 1;\n"
        "int j = blockIdx.x;\n"
        "y[j] = 2;\n"
        "j = j * 2 + threadIdx.x;\n"
        "y[j] = 3;\n"
        "for (int c = threadIdx.x; c < n; c += blockDim.x) y[c] = 4;\n")
    i = affine_of(u, index(u, "y[i]"))
    assert i == Affine.sym("i") and i.depends("i") == {"threadIdx.x"}
    assert affine_of(u, index(u, "y[j]", 0)) == B  # before the re-assignment
    assert affine_of(u, index(u, "y[j]", 1)) == B * 2 + T  # the dominating definition
    c = affine_of(u, index(u, "y[c]"))
    assert c == Affine.sym("c") and {"threadIdx.x", "blockDim.x"} <= c.depends("c")


def test_dominating_redefinition_in_transpose(tmp_path):
    u = load(os.path.join(KERNELS, "transpose_tiled.cu"))
    load_idx = affine_of(u, index(u, "in[(size_t)(y + j) * cols + x]"))
    store_idx = affine_of(u, index(u, "out[(size_t)(y + j) * rows + x]"))
    # x and y are re-assigned between the two loops: each use sees its own definition
    assert load_idx.coeff("blockIdx.x") == Affine.const(32)
    assert store_idx.coeff("blockIdx.y") == Affine.const(32)
    assert load_idx.coeff("threadIdx.x") == store_idx.coeff("threadIdx.x") == Affine.const(1)


def test_odd_code_gives_none_not_an_exception():
    u = kernel_unit("y[i++] = 0; y[x[0] ? 1 : 2] = 1;")
    got, why = affine_explain(u, index(u, "y[i++]"))
    assert got is None and "side effect" in why
    assert str(affine_of(u, index(u, "y[x[0] ? 1 : 2]"))) == "x[0] ? 1 : 2"
    assert affine_explain(u, None) == (None, "no expression")


# ------------------------------------------------------------------ strides
def test_unit_stride_on_saxpy_and_vector_ops():
    u = load(os.path.join(KERNELS, "saxpy.cu"))
    v = unit_stride(u, subscripts(u, "y[i]")[0])
    assert v.holds and "stride 1 in threadIdx.x" in v.reason
    assert is_coalesced(u, index(u, "x[i]")).holds
    u = load(os.path.join(KERNELS, "vector_ops.cu"))
    assert index_stride(u, subscripts(u, "c[tid]")[0]) == Affine.const(1)
    v = unit_stride(u, subscripts(u, "a[j]")[0])
    assert v.status == "unknown"
    assert v.reason.endswith("stride stride in threadIdx.x, 1 only when stride == 1")


def test_stride_through_grid_stride_loops_and_template_loops():
    u = load(os.path.join(KERNELS, "cg_reduce.cu"))
    assert index_stride(u, subscripts(u, "a[i]")[0]) == Affine.const(1)
    assert is_coalesced(u, subscripts(u, "b[i]")[0]).holds
    u = load(os.path.join(KERNELS, "grid_stride.cu"))
    assert [index_stride(u, s) for s in subscripts(u, "data[i]")] == [Affine.const(1)] * 2
    assert is_coalesced(u, subscripts(u, "out[i]")[0]).holds  # `for (; i < n; i += stride)`
    u = load(os.path.join(KERNELS, "block_reduce.cu"))
    assert index_stride(u, subscripts(u, "in[i]")[0]) == Affine.const(1)


def test_strides_that_fail():
    u = load(os.path.join(KERNELS, "pragma_unbraced_for.cu"))
    v = unit_stride(u, subscripts(u, "a[i * 4 + j]")[0])
    assert v.fails and "stride 4 in threadIdx.x" in v.reason
    v = is_coalesced(u, subscripts(u, "x[k]")[0])
    assert v.fails and "stride 0" in v.reason and "broadcast" in v.reason
    u = load(os.path.join(KERNELS, "align_struct.cu"))
    v = unit_stride(u, subscripts(u, "stage[valid - 1 - threadIdx.x]")[0])
    assert v.fails and "stride -1" in v.reason


def test_shared_tile_rows_count_in_the_address():
    u = load(os.path.join(KERNELS, "transpose_tiled.cu"))
    assert index_stride(u, subscripts(u, "tile[threadIdx.y + j][threadIdx.x]")[0]) == 1
    col = subscripts(u, "tile[threadIdx.x][threadIdx.y + j]")[0]
    assert index_stride(u, col) == Affine.const(33)  # TILE_DIM + 1 padding
    assert index_stride(u, col, "threadIdx.y") == Affine.const(1)


def test_pointer_aliases_carry_their_offset():
    # softmax_rows: xr = x + blockIdx.x * cols, c starts at threadIdx.x: coalesced
    u = load(os.path.join(KERNELS, "softmax_rows.cu"))
    assert is_coalesced(u, subscripts(u, "xr[c]")[0]).holds
    # naive layernorm: xr = x + row * cols with row = global thread index: stride cols
    u = load(os.path.join(CORPUS, "layernorm", "naive.cu"))
    v = is_coalesced(u, subscripts(u, "xr[c]")[0])
    assert v.status == "unknown" and "stride cols in threadIdx.x" in v.reason
    assert index_stride(u, subscripts(u, "xr[c]")[0]) == Affine.sym("cols")


def test_unknown_strides_say_why():
    u = load(os.path.join(KERNELS, "helpers.cuh"))
    v = unit_stride(u, subscripts(u, "p[i]")[0])  # load_or(p, i, ...): i comes from the caller
    assert v.status == "unknown" and "caller" in v.reason
    u = load(os.path.join(KERNELS, "histogram256.cu"))
    v = unit_stride(u, subscripts(u, "local_bins[data[i]]")[0])
    assert v.status == "unknown" and "depends on threadIdx.x" in v.reason
    u = load(os.path.join(KERNELS, "softmax_rows.cu"))
    v = unit_stride(u, subscripts(u, "red[lane]")[0])
    assert v.status == "unknown" and "threadIdx.x & 31" in v.reason
