"""The launch model reads a grid dimension as count, elements per block and cap, in the
spellings launch code uses; a grid it cannot read says why."""

from __future__ import annotations

import pytest

from kltrans.model.launch import Extent, block_dim, block_items, grid_dim, read_grid
from kltrans.syntax.contract import contracts
from kltrans.syntax.unit import parse

CONSTS = {"BLOCK": 256, "MAX_BLOCKS": 1024, "VEC": 4}

# grid text, count, per-block text, per-block value, cap text (None: uncapped)
READ = [
    ("ceil_div(n, 256)", "n", "256", 256, None),
    ("CEIL_DIV(rows, BLOCK)", "rows", "BLOCK", 256, None),
    ("(n + 255) / 256", "n", "256", 256, None),
    ("(n + 256 - 1) // 256", "n", "256", 256, None),
    ("(n + BLOCK - 1) / BLOCK", "n", "BLOCK", 256, None),
    ("(count + (T - 1)) / T", "count", "T", None, None),
    ("(n + T) / T", None, None, None, None),  # rounds up one block too many: refused
    ("(n + T - 1) / T", "n", "T", None, None),  # a template parameter: no value
    ("min(ceil_div(n, VEC * BLOCK), MAX_BLOCKS)", "n", "VEC * BLOCK", 1024, "MAX_BLOCKS"),
    ("min(1024, (n + 255) / 256)", "n", "256", 256, "1024"),
    ("min(ceil_div(4096, 256), 1024)", "4096", "256", 256, "1024"),
]


@pytest.mark.parametrize("text,count,per_text,per_value,cap", READ)
def test_a_grid_reads_as_count_per_block_and_cap(text, count, per_text, per_value, cap):
    gd = read_grid(text, CONSTS)
    assert gd.count == count, gd.reason
    if count is None:
        assert "neither ceil_div(n, d) nor (n + d - 1) / d" in gd.reason
        return
    assert gd.per_block == Extent(per_text, per_value)
    assert (gd.cap.text if gd.cap else None) == cap
    if cap == "MAX_BLOCKS":
        assert gd.cap.value == 1024


# refused: what is not a covering grid, each with its reason
REFUSED = [
    ("528", "neither ceil_div"),  # a fixed grid: no count
    ("max(1, ceil_div(n, 256))", "neither ceil_div"),  # max() is no cap
    ("min(ceil_div(n, 256), ceil_div(m, 256))", "neither is a cap"),
    ("(n + 254) / 256", "neither ceil_div"),  # not a round-up
    ("rows * cols", "neither ceil_div"),
    ("n +", "not an expression"),
]


@pytest.mark.parametrize("text,why", REFUSED)
def test_what_is_not_a_covering_grid_says_why(text, why):
    gd = read_grid(text, CONSTS)
    assert not gd.covers and why in gd.reason


def test_elements_per_thread_from_the_block_and_the_per_block_count():
    gd = read_grid("min(ceil_div(n, VEC * BLOCK), MAX_BLOCKS)", CONSTS)
    assert gd.per_thread(Extent("BLOCK", 256)) == 4
    assert gd.per_thread(Extent("128", 128)) == 8
    assert gd.per_thread(Extent("384", 384)) is None  # 1024 / 384 does not divide
    assert read_grid("(n + T - 1) / T", {}).per_thread(Extent("T", None)) == 1
    assert read_grid("(n + T - 1) / T", {}).per_thread(Extent("256", 256)) is None
    assert gd.counts("(n)") and not gd.counts("m")


def test_a_contract_is_read_with_the_file_constants():
    unit = parse(b"#define THREADS 128\nconstexpr int CAP = 4 * 132;\n"
                 b"// kltrans: launch k grid=min((n + THREADS - 1) / THREADS, CAP) block=THREADS\n"
                 b"__global__ void k(float* y, int n) {}\n")
    c = contracts(unit)["k"]
    gd, block = grid_dim(c), block_dim(c)
    assert (gd.count, gd.cap.value, block.value) == ("n", 528, 128)
    assert gd.per_thread(block) == 1 and gd.covering_text == "(n + THREADS - 1) / THREADS"
    assert grid_dim(c, 1).text == "1" and not grid_dim(c, 1).covers


def _unit(header: str, pre: str = ""):
    return parse((pre + f"// kltrans: launch k {header}\n"
                  "__global__ void k(float* y, int n) {}\n").encode())


def test_launches_compare_as_functions_of_the_sizes():
    from kltrans.model.launch import same_launch

    a = _unit("grid=ceil_div(n, BLOCK_SIZE) block=BLOCK_SIZE", "#define BLOCK_SIZE 256\n")
    assert same_launch(a, _unit("grid=((n + 255) / 256) block=256"))[0]
    ok, why = same_launch(a, _unit("grid=((n + 127) / 128) block=128"))
    assert not ok and "grid" in why  # other grid and block
    # a kernel that declares no dynamic shared memory never reads what the launch reserves
    assert same_launch(a, _unit("grid=ceil_div(n, 256) block=256 smem=(4 * n)"))[0]
    ext = "__global__ void k(float* y, int n) { extern __shared__ float buf[]; y[0] = buf[0]; }\n"
    d1 = parse(f"// kltrans: launch k grid=ceil_div(n, 256) block=256 smem=1024\n{ext}".encode())
    d2 = parse(f"// kltrans: launch k grid=ceil_div(n, 256) block=256 smem=(4 * n)\n{ext}".encode())
    ok, why = same_launch(d1, d2)
    assert not ok and "smem" in why
    other = parse(b"// kltrans: launch j grid=ceil_div(n, 256) block=256\n"
                  b"__global__ void j(float* y, int n) {}\n")
    assert "kernels" in same_launch(a, other)[1]


@pytest.mark.parametrize("header, factor, divide, grid", [
    ("grid=ceil_div(n, 256) block=256", 4, False, "ceil_div(n, 4 * 256)"),
    ("grid=min(ceil_div(n, B), CAP) block=B", 2, False, "min(ceil_div(n, 2 * B), CAP)"),
    ("grid=min(ceil_div(n, 4 * B * T), CAP) block=B", 4, True, "min(ceil_div(n, B * T), CAP)"),
    ("grid=((n + 1023) / 1024) block=256", 2, False, "(ceil_div(n, 2 * 1024))"),
    # refused: not sized per element of n, or no factor of 4 written to take out
    ("grid=rows block=256", 4, False, None),
    ("grid=ceil_div(m, 256) block=256", 4, False, None),
    ("grid=ceil_div(n, 1024) block=256", 4, True, None),
])
def test_a_grid_is_resized_for_more_or_fewer_elements_per_block(header, factor, divide, grid):
    from kltrans.model.launch import regrid

    c = contracts(_unit(header, "#define B 256\n#define T 2\n#define CAP 528\n"))["k"]
    got = regrid(c, "n", factor, divide)
    assert (got.grid[0] if got else None) == grid


@pytest.mark.parametrize("header, count, cap", [
    ("grid=rows block=256", "rows", None),
    ("grid=min(rows, MAX_BLOCKS) block=256", "rows", "MAX_BLOCKS"),
    ("grid=min(1056, n) block=256", "n", "1056"),
])
def test_a_grid_of_a_block_per_item_reads_as_count_and_cap(header, count, cap):
    got = block_items(contracts(_unit(header, "#define MAX_BLOCKS 1056\n"))["k"])
    assert (got.count, got.cap) == (count, cap), got.reason


@pytest.mark.parametrize("header, why", [
    ("grid=132 block=256", "a fixed number of blocks"),
    ("grid=ceil_div(n, 256) block=256", "not a block per item"),
    ("grid=min(n, m) block=256", "neither a constant cap"),
    ("grid=(n,2) block=256", "not 1-D"),
])
def test_what_is_not_a_block_per_item_says_why(header, why):
    got = block_items(contracts(_unit(header))["k"])
    assert got.count is None and why in got.reason
