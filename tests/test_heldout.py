"""The held-out set (corpus/heldout/): 22 instances, each a complete workload.

Every spec loads; every naive kernel compiles with NVRTC for sm_80 and sm_90, matches
its spec's arguments, and follows the naive rules (one thread per element or row:
no shared memory, no warp primitives or barriers, no unrolling pragmas, no vector
types); its launch contract evaluates at every test size and the bench size; every
reference returns each output with the right shape on the gate's own random inputs.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from kltrans.gate.compile import compile_unit
from kltrans.gate.correct import generate
from kltrans.syntax import load
from kltrans.syntax.contract import contracts
from kltrans.workload.spec import DTYPES, load_workload

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HELDOUT = os.path.join(ROOT, "corpus", "heldout")

NAMES = sorted(n for n in os.listdir(HELDOUT)
               if os.path.isfile(os.path.join(HELDOUT, n, "workload.yaml")))

EXPECTED = {
    # elementwise
    "gelu", "swiglu", "adamw_step", "bias_add_relu", "cast_fp16",
    # reductions
    "row_max", "column_sum", "argmax", "dot_product", "l2_norm", "cross_entropy",
    # stencils
    "stencil1d_3pt", "stencil2d_5pt",
    # layout / matrix
    "batched_transpose", "gemv", "embedding_gather", "im2col",
    # normalizations
    "rmsnorm", "log_softmax", "group_norm",
    # two more
    "residual_add_rmsnorm", "softmax_cross_entropy_backward",
}

# integer inputs that index into a dimension: (instance, argument) -> that size
INDEX_INPUTS = {
    ("cross_entropy", "target"): "classes",
    ("softmax_cross_entropy_backward", "target"): "classes",
    ("embedding_gather", "idx"): "V",
}

# the largest buffer of a test size (elements): small enough for the CPU emulator
MAX_TEST_ELEMENTS = 1_100_000
# the largest buffer at the bench size (bytes): fills an H200's memory system
MIN_BENCH_BYTES = 256 << 20

WARP_CALLS = re.compile(r"^(__shfl\w*|__syncthreads\w*|__syncwarp|__ballot\w*|__any\w*|__all\w*"
                        r"|__activemask|__match_\w+|__reduce_\w+_sync|__threadfence_block)$")
VECTOR_TYPE = re.compile(r"^(u?char|u?short|u?int|u?long|u?longlong|float|double|half|__half"
                         r"|__nv_bfloat16|bfloat16)[1-4]$")


def _sizes(wl):
    return [dict(t) for t in wl.test_sizes] + [dict(wl.bench_size)]


def _elements(wl, arg, sizes) -> int:
    return int(np.prod(wl.shape(arg, sizes)))


def test_exactly_22_instances():
    assert len(NAMES) == 22, NAMES
    assert set(NAMES) == EXPECTED


def test_readme_lists_every_instance_and_the_rule():
    text = open(os.path.join(HELDOUT, "README.md")).read()
    for name in NAMES:
        assert f"| `{name}` |" in text, name
    assert "never used to derive" in text and "evaluation time" in text


@pytest.mark.parametrize("name", NAMES)
def test_spec(name):
    d = os.path.join(HELDOUT, name)
    wl = load_workload(d)
    assert wl.name == name
    assert wl.kernels == {"naive": {"file": "naive.cu", "kernel": f"{name}_naive",
                                    "name_expression": None, "bench_size": None}}
    assert isinstance(wl.vendor, str) and wl.vendor.strip()
    compile(wl.vendor.strip(), f"{name}/vendor", "eval")  # a Python expression
    assert list(wl.seeds) == [0, 1, 2]
    assert len(wl.test_sizes) >= 3
    assert os.path.isfile(os.path.join(d, "reference.py"))
    # at least one ragged test size: some size is odd and > 1
    assert any(any(v > 1 and v % 2 for v in t.values()) for t in wl.test_sizes)
    assert wl.roofline.get("bytes")
    for t in wl.test_sizes:
        biggest = max(_elements(wl, a, dict(t)) for a in wl.buffers())
        assert biggest <= MAX_TEST_ELEMENTS, (t, biggest)
        assert wl.bytes_moved(dict(t)) > 0
    bench = dict(wl.bench_size)
    assert max(_elements(wl, a, bench) * a.itemsize for a in wl.buffers()) >= MIN_BENCH_BYTES
    assert sum(_elements(wl, a, bench) * a.itemsize for a in wl.buffers()) < (8 << 30)
    assert wl.bytes_moved(bench) >= MIN_BENCH_BYTES
    if "flops" in wl.roofline:
        assert wl.flops(bench) > 0
    for a in wl.arguments:
        if a.is_buffer:
            assert a.name in wl.tolerance or a.role in ("in", "scratch")


@pytest.mark.parametrize("name", NAMES)
def test_index_inputs_stay_in_range(name):
    wl = load_workload(os.path.join(HELDOUT, name))
    for a in wl.arguments:
        if a.role in ("in", "inout") and DTYPES[a.dtype][0] in ("int", "long long"):
            assert (name, a.name) in INDEX_INPUTS, f"{name}.{a.name}: an integer input " \
                                                   "needs a fixed range and a bound here"
            spec = wl.inputs.get(a.name, {})
            assert spec.get("dist") == "randint" and spec.get("low") == 0
            dim = INDEX_INPUTS[(name, a.name)]
            for sizes in _sizes(wl):
                assert spec["high"] < sizes[dim], (a.name, sizes)


@pytest.mark.parametrize("name", NAMES)
def test_naive_kernel_compiles(name):
    d = os.path.join(HELDOUT, name)
    unit = load(os.path.join(d, "naive.cu"))[0]
    for arch in ("sm_80", "sm_90"):
        r = compile_unit(unit, arch=arch)
        assert r.ok and not r.errors, (arch, r.log)
        assert r.resource(f"{name}_naive") is not None, (arch, list(r.resources))


@pytest.mark.parametrize("name", NAMES)
def test_naive_kernel_matches_spec_and_contract(name):
    d = os.path.join(HELDOUT, name)
    wl = load_workload(d)
    unit = load(os.path.join(d, "naive.cu"))[0]
    assert not unit.has_errors
    kernels = unit.kernels()
    assert [k.name for k in kernels] == [f"{name}_naive"]
    k = kernels[0]
    assert k.extern_c and not k.template_params
    # parameters: the spec's arguments, in order, with matching C types
    assert [p.name for p in k.params] == [a.name for a in wl.arguments]
    for p, a in zip(k.params, wl.arguments):
        assert p.base_type == DTYPES[a.dtype][0], (p, a)
        assert p.pointer == (1 if a.is_buffer else 0), (p, a)
        if a.is_buffer:
            assert p.const == (a.role == "in"), (p, a)
    c = contracts(unit)[f"{name}_naive"]
    assert c.source == "header" and c.smem == "0"
    for sizes in _sizes(wl):
        grid, block, smem = c.evaluate(wl.env(sizes))
        assert smem == 0
        assert grid[0] < 2 ** 31 and grid[1] <= 65535 and grid[2] <= 65535
        assert block[0] * block[1] * block[2] <= 1024


@pytest.mark.parametrize("name", NAMES)
def test_naive_rules(name):
    unit = load(os.path.join(HELDOUT, name, "naive.cu"))[0]
    assert unit.shared_decls() == []
    assert unit.pragmas == []
    calls = [unit.text(n.child_by_field_name("function"))
             for n in unit.nodes_of_type("call_expression")]
    assert not [c for c in calls if WARP_CALLS.match(c.strip())], calls
    names = [unit.text(n) for n in unit.walk()
             if n.type in ("type_identifier", "primitive_type", "identifier")]
    assert not [n for n in names if VECTOR_TYPE.match(n)]
    assert not [n for n in names if n.startswith(("__ldg", "__ldcs", "__stcs", "cp_async"))]
    assert b"asm" not in unit.source


def _inputs(wl, sizes, rng):
    """The gate's inputs, drawn in argument order as the correct stage draws them."""
    shapes = {a.name: wl.shape(a, sizes) for a in wl.buffers()}
    out = {}
    for a in wl.arguments:
        if a.role in ("in", "inout"):
            out[a.name] = generate(wl, a, shapes[a.name], rng)
    return out


@pytest.mark.parametrize("name", NAMES)
def test_reference_outputs(name):
    wl = load_workload(os.path.join(HELDOUT, name))
    ref = wl.reference()
    outs = [a for a in wl.arguments if a.role in ("out", "inout")]
    for si, t in enumerate(wl.test_sizes):
        sizes = dict(t)
        rng = np.random.default_rng([0, si, 1])
        inputs = _inputs(wl, sizes, rng)
        kept = {k: v.copy() for k, v in inputs.items()}
        args = dict(inputs)
        for a in wl.arguments:
            if a.role == "scalar":
                args[a.name] = wl.scalar_value(a, sizes)
        res = ref(dict(sizes), **args)
        for a in outs:
            assert a.name in res, (name, a.name)
            got = np.asarray(res[a.name])
            want = wl.shape(a, sizes)
            assert got.shape == want or got.size == int(np.prod(want)), (a.name, got.shape, want)
            assert np.all(np.isfinite(got.astype(np.float64))), a.name
        for k, v in kept.items():  # the reference leaves its inputs alone
            assert np.array_equal(v, inputs[k]), k


def test_argmax_inputs_have_no_ties():
    """At every recorded seed, test size and run the gate's argmax input has one maximum
    per row, so the expected index does not depend on a tie rule."""
    wl = load_workload(os.path.join(HELDOUT, "argmax"))
    for si, t in enumerate(wl.test_sizes):
        for seed in wl.seeds:
            for run in (1, 2):
                x = _inputs(wl, dict(t), np.random.default_rng([seed, si, run]))["x"]
                top = x.max(axis=1, keepdims=True)
                assert np.all((x == top).sum(axis=1) == 1), (t, seed, run)


def test_group_norm_channels_divide_into_groups():
    wl = load_workload(os.path.join(HELDOUT, "group_norm"))
    for sizes in _sizes(wl):
        assert sizes["C"] % sizes["G"] == 0, sizes
