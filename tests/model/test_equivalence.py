"""Model equivalence (kltrans.model.equivalence, kltrans.model.mechanisms) and the grid
machine's 2-D launches: two human spellings of one kernel read as one program, a changed
element read as another; ``diff --explain`` explains a step up to the model."""

from __future__ import annotations

import os

from kltrans.model.equivalence import check_launches, same_model
from kltrans.model.grid import grid_run, launch_dims, same_grid_effects
from kltrans.model.mechanisms import mechanism_kinds
from kltrans.syntax import parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WILD = os.path.join(ROOT, "corpus", "wild")


def _wild(name: str, version: str):
    path = os.path.join(WILD, name, version)
    return parse(open(path).read(), path)


def _transpose(version: str):
    return _wild("transpose-tiles", version)


def test_a_2d_launch_runs_every_block_and_thread_of_the_contract():
    u = _transpose("v1_coalesced.cu")
    fn = u.kernels()[0]
    assert launch_dims(u, fn, {"rows": 37, "cols": 45}) == ((2, 2, 1), (32, 8, 1))
    fx = grid_run(u, fn, {"rows": 37, "cols": 45})
    # every element of the 45 x 37 output is written once
    assert len([k for k in fx.stores if k[0] == "odata"]) == 37 * 45


def test_tiled_transposes_are_one_program_with_the_naive_one_on_the_grid():
    v0 = _transpose("v0_naive.cu")
    launches = [{"rows": 37, "cols": 45}, {"rows": 70, "cols": 33}]
    for v in ("v1_coalesced.cu", "v2_no_bank_conflicts.cu", "v3_wide_tile.cu"):
        a, b = v0, _transpose(v)
        # the kernels are named after their version: compare each against a renamed v0
        src = a.source.decode().replace(a.kernels()[0].name, b.kernels()[0].name)
        a = parse(src, "v0.cu")
        ok, why = same_grid_effects(a, b, b.kernels()[0].name, launches)
        assert ok, (v, why)


def test_refused_a_tile_read_one_column_off_is_another_program():
    v1 = _transpose("v1_coalesced.cu")
    src = v1.source.decode()
    bad = src.replace("tile[threadIdx.x][threadIdx.y + j]",
                      "tile[threadIdx.x][(threadIdx.y + j + 1) % TILE_DIM]")
    assert bad != src
    name = v1.kernels()[0].name
    ok, why = same_grid_effects(v1, parse(bad, "bad.cu"), name, [{"rows": 37, "cols": 45}])
    assert not ok and why


def test_multi_dimensional_shared_arrays_hold_rows():
    u = parse("""// kltrans: launch k grid=1 block=(4, 4)
__global__ void k(const float* x, float* y, int n) {
    __shared__ float t[4][5];
    t[threadIdx.y][threadIdx.x] = x[threadIdx.y * 4 + threadIdx.x];
    __syncthreads();
    y[threadIdx.y * 4 + threadIdx.x] = t[threadIdx.x][threadIdx.y];
}
""", "k.cu")
    fx = grid_run(u, u.kernels()[0], {"n": 16})
    got = {k[1]: str(v) for k, v in fx.stores.items() if k[0] == "y"}
    # y[r * 4 + c] = x[c * 4 + r]: the tile's row r is read as a column
    assert got == {r * 4 + c: f"load('x', {c * 4 + r})" for r in range(4) for c in range(4)}


def test_mechanism_kinds_name_mechanisms_not_their_spelling():
    gemv1 = _wild("gemv", "v1_warp_per_row.cu")
    gemv2 = _wild("gemv", "v2_shared_x.cu")
    k1, k2 = mechanism_kinds(gemv1), mechanism_kinds(gemv2)
    assert k1 and all("(" not in k and ":" not in k for k in k1)
    assert k1 < k2  # staging x in shared memory adds a kind, keeps the warp reduction


def test_same_model_with_and_refused_without_the_same_mechanisms():
    a = _wild("adamw-packed", "v0_naive.cu")
    b = _wild("adamw-packed", "v1_while_stride.cu")
    name = b.kernels()[0].name
    a = parse(a.source.decode().replace(a.kernels()[0].name, name), "a.cu")
    # different launches (a thread per element against a capped grid): not one program
    ok, why = same_model(a, b, name)
    assert not ok and "launches differ" in why
    # a copy staged through shared memory does what the direct copy does, with one more
    # mechanism: the same effects, another kind of kernel
    direct, staged = (parse(HEAD + 'extern "C" __global__ void k(const float* x, float* y, '
                            'int n) {\n' + body + "}\n", f"{i}.cu")
                      for i, body in enumerate((DIRECT, STAGED)))
    ok, why = same_model(direct, staged, "k")
    assert ok, why
    ok, why = same_model(direct, staged, "k", mechanisms=True)
    assert not ok and "mechanisms differ (shared memory)" in why


HEAD = "// kltrans: launch k grid=ceil_div(n, 64) block=64\n"
DIRECT = """    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
"""
STAGED = """    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = 2.0f * s[threadIdx.x];
"""


def test_explain_equal_up_to_the_model_and_refused_where_the_model_differs():
    from kltrans.diff.search import explain
    from kltrans.generality.measure import lineage_facts
    facts = tuple(lineage_facts(os.path.join(WILD, "adamw-packed")))
    a = open(os.path.join(WILD, "adamw-packed", "v0_naive.cu")).read()
    b = open(os.path.join(WILD, "adamw-packed", "v1_while_stride.cu")).read()
    # the search back from v1 undoes its grid stride; the result is v0 as the model reads it
    e = explain(a, b, depth=2, assume=facts, a_path="v0.cu", b_path="v1.cu")
    assert e.exact and e.equal == "model" and e.direction == "inverse" and e.note
    assert [s.spec.split("{")[0] for s in e.inverse_steps] == ["one-per-thread"]
    assert e.to_json()["equal"] == "model" and e.to_json()["equal_note"] == e.note
    # no model equality asked: the step stays unexplained
    assert not explain(a, b, depth=2, assume=facts, model=False).exact


_SEEDED = """// kltrans: launch rowmax grid=ceil_div(rows, 128) block=128
__global__ void rowmax(const float* x, float* y, int numRows, int numCols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= numRows) return;
    SEED
    y[r] = m;
}
"""


def _rowmax(seed: str):
    return parse(_SEEDED.replace("SEED", seed), "rowmax.cu")


def test_a_max_kept_by_an_if_is_the_max_fold_whatever_its_seed():
    binds = {"numRows": "rows", "numCols": "cols"}
    folded = _rowmax("float m = -INFINITY;\n    for (int j = 0; j < numCols; ++j) "
                     "m = fmaxf(m, x[r * numCols + j]);")
    kept = _rowmax("float m = x[r * numCols];\n    for (int j = 1; j < numCols; ++j) "
                   "{ if (x[r * numCols + j] > m) { m = x[r * numCols + j]; } }")
    ternary = _rowmax("float m = x[r * numCols];\n    for (int j = 1; j < numCols; ++j) "
                      "m = m < x[r * numCols + j] ? x[r * numCols + j] : m;")
    few = {"numCols": 7}  # a thread per row: a short row keeps the block run quick
    assert same_model(folded, kept, "rowmax", few, binds=binds)[0]
    assert same_model(folded, ternary, "rowmax", few, binds=binds)[0]
    # refused: the if keeps the smaller one, a min, not the max
    smaller = _rowmax("float m = x[r * numCols];\n    for (int j = 1; j < numCols; ++j) "
                      "{ if (x[r * numCols + j] < m) m = x[r * numCols + j]; }")
    ok, why = same_model(folded, smaller, "rowmax", few, binds=binds)
    assert not ok and "differ" in why


def test_launches_written_in_workload_sizes_take_the_bound_parameters():
    fn = _rowmax("float m = 0.0f;").kernels()[0]
    binds = {"numRows": "rows", "numCols": "cols"}
    for ints in check_launches(fn, 128, binds=binds):
        assert ints["rows"] == ints["numRows"] and ints["cols"] == ints["numCols"]
    # refused: a size no parameter is bound to stays unknown
    assert all("rows" not in ints for ints in check_launches(fn, 128))


def test_an_answer_the_time_budget_cut_short_is_not_remembered():
    """A comparison stopped by the caller's deadline says no; the same question asked
    again with time left gets the real answer, not the remembered no."""
    import time

    from kltrans.model.values import time_budget

    body = ("    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    float s = 0.0f;\n"
            "    for (int j = 0; j < n; STEP) s += x[j];\n    if (i < n) y[i] = s;\n")
    a, b = (parse(HEAD + 'extern "C" __global__ void k(const float* x, float* y, int n) {\n'
                  + body.replace("STEP", step) + "}\n", f"budget{k}.cu")
            for k, step in enumerate(("++j", "j += 1")))
    with time_budget(time.perf_counter() - 1.0):  # thousands of statements: cut short
        ok, why = same_model(a, b, "k")
    assert not ok and "time budget" in why
    ok, why = same_model(a, b, "k")
    assert ok, why


def test_a_block_is_compared_at_the_grid_its_launch_gives():
    """The block machine runs one block at the launch contract's grid for the drawn sizes
    (``grid=rows``: one row per block), not at a drawn grid of a few blocks, which would
    give a block of a grid-strided row loop dozens of rows to run."""
    from kltrans.model.equivalence import _at_launch

    src = ("// kltrans: launch row_scale grid=rows block=128\n"
           "__global__ void row_scale(const float* x, float* y, int rows, int cols) {\n"
           "  for (int r = blockIdx.x; r < rows; r += gridDim.x)\n"
           "    for (int c = threadIdx.x; c < cols; c += blockDim.x)\n"
           "      y[r * cols + c] = 2.0f * x[r * cols + c];\n}\n")
    u = parse(src, "rows.cu")
    fn = u.kernels()[0]
    for ints in check_launches(fn, 128):
        at = _at_launch(u, fn, ints)
        assert at["gridDim.x"] == ints["rows"] and 0 <= at["blockIdx.x"] < at["gridDim.x"]
        assert ints["gridDim.x"] < 9  # the drawn grid it replaces
    # ok: a contract that cannot be read at these sizes keeps the drawn grid
    bad = parse(src.replace("grid=rows", "grid=ceil_div(m, 4)"), "bad.cu")
    ints = check_launches(bad.kernels()[0], 128)[0]
    assert _at_launch(bad, bad.kernels()[0], ints) == ints
    # the comparison runs at that grid: launched with one block per row, a row loop over
    # the grid and a block that does its own row only are one program (at a drawn grid
    # of 2 to 8 blocks the loop would also do rows the other leaves alone)
    one = src.replace("  for (int r = blockIdx.x; r < rows; r += gridDim.x)\n",
                      "  int r = blockIdx.x;\n")
    ok, why = same_model(u, parse(one, "one.cu"), "row_scale")
    assert ok, why


def test_inner_sizes_are_counted_loop_bounds_no_launch_extent_names():
    """The k of a matrix product is drawn small on the block machine (every thread of a
    1024-thread block runs its loop); M and N size the grid and keep their draws, and a
    column count threads stride over is not inner."""
    from kltrans.model.equivalence import inner_sizes
    from kltrans.syntax.contract import contracts

    for name, version, want in (("sgemm-steps", "v0_naive.cu", {"K"}),
                                ("sgemm-steps", "v1_coalesced.cu", {"K"}),
                                ("softmax-cg", "v1_warp_tile.cu", set())):
        u = _wild(name, version)
        k = u.kernels()[0].name
        assert inner_sizes((u,), k, contracts(u).get(k)) == want, (name, version)
    a, b = _wild("softmax-cg", "v0_naive.cu"), _wild("softmax-cg", "v1_warp_tile.cu")
    # inner in the thread-per-row kernel, strided by the warps of the other: not inner
    k = a.kernels()[0].name
    assert inner_sizes((a,), k, contracts(a).get(k), {"numCols": "cols"}) == {"numCols"}
    assert inner_sizes((a, b), k, contracts(a).get(k), {"numCols": "cols"}) == set()


def test_refused_a_k_loop_one_short_is_another_program_at_the_inner_sizes():
    src = open(os.path.join(WILD, "sgemm-steps", "v0_naive.cu")).read()
    a = parse(src, "a.cu")
    short = src.replace("k < K;", "k < K - 1;")
    assert short != src
    b = parse(short, "b.cu")
    kernel = a.kernels()[0].name
    assert same_model(a, a, kernel)[0]
    assert not same_model(a, b, kernel)[0]
