"""The correct stage's comparison rules, on real arrays (backend-independent part)."""

import numpy as np
import pytest

from kltrans.gate.correct import POISON_FLOAT, POISON_INT, bf16_bits, bf16_value, compare, generate
from kltrans.workload import Tolerance, load_workload

TOL = Tolerance(rtol=1e-6, atol=1e-6)
PF = np.full(8, POISON_FLOAT, dtype=np.uint8)
PI = np.full(8, POISON_INT, dtype=np.uint8)


def poisoned(n, dtype=np.float32, pb=POISON_FLOAT):
    return np.full(n * np.dtype(dtype).itemsize, pb, dtype=np.uint8).view(dtype)


def test_pass_and_norms():
    ref = np.linspace(-1, 1, 11)
    out = ref.astype(np.float32)
    kind, reason, errs = compare("y", "float32", TOL, out, ref, PF)
    assert kind is None and errs["max_abs"] < 1e-7 and errs["rel_l2"] < 1e-7


def test_unwritten_is_told_apart_from_wrong():
    ref = np.ones(10)
    out = poisoned(10)
    out[:7] = 1.0
    kind, reason, _ = compare("y", "float32", TOL, out, ref, PF)
    assert kind == "unwritten" and "3 of 10 elements never written (first at flat index 7)" in reason


def test_nan_never_passes_and_zeros_fail():
    ref = np.ones(4)
    out = np.array([1, 1, np.float32("nan"), 1], dtype=np.float32)
    out[2] = np.float32(np.nan)  # a computed NaN (0x7FC00000), not the poison pattern
    assert compare("y", "float32", TOL, out, ref, PF)[0] == "nan"
    kind, reason, errs = compare("y", "float32", TOL, np.zeros(4, np.float32), ref, PF)
    assert kind == "mismatch" and errs["rel_l2"] == 1.0


def test_tolerance_and_worst_index():
    ref = np.array([[1.0, 2.0], [3.0, 4.0]])
    out = ref.astype(np.float32).copy()
    out[1, 0] += 1e-3
    kind, reason, errs = compare("y", "float32", TOL, out, ref, PF)
    assert kind == "mismatch" and errs["worst_index"] == [1, 0]
    assert compare("y", "float32", Tolerance(rtol=1e-3), out, ref, PF)[0] is None


def test_exact_and_set_rules_for_integers():
    ref = np.array([[3, 1, 2], [5, 4, 6]])
    out = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    assert compare("idx", "int32", Tolerance(exact=True), out, ref, PI)[0] == "mismatch"
    assert compare("idx", "int32", Tolerance(rule="set"), out, ref, PI)[0] is None
    out[1, 2] = 7
    assert compare("idx", "int32", Tolerance(rule="set"), out, ref, PI)[0] == "mismatch"
    left = poisoned(3, np.int32, POISON_INT)
    left[0] = 3
    assert compare("idx", "int32", Tolerance(exact=True), left, np.array([3, 1, 2]), PI)[0] == "unwritten"


def test_bf16_round_to_nearest_even():
    x = np.array([1.0, 1.00390625, 1.01171875, -2.5, np.inf], dtype=np.float32)
    bits = bf16_bits(x)
    assert list(bf16_value(bits)) == [1.0, 1.0, 1.015625, -2.5, np.inf]


def test_generated_inputs_are_seeded_and_never_zero():
    wl = load_workload(__import__("os").path.join(__import__("os").path.dirname(__file__),
                                                  "data", "workloads", "scale"))
    x = wl.arguments[0]
    a = generate(wl, x, (1000,), np.random.default_rng([0, 0, 1]))
    b = generate(wl, x, (1000,), np.random.default_rng([0, 0, 1]))
    c = generate(wl, x, (1000,), np.random.default_rng([0, 0, 2]))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.dtype == np.float32 and np.all(np.abs(a) <= 1) and np.any(a != 0)


def test_a_non_finite_reference_is_matched_strictly():
    """Where the reference is NaN the output must be NaN, where it is an infinity the same
    infinity: no tolerance accepts 42 for NaN or -inf for +inf."""
    ref = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    same = ref.copy()
    assert compare("y", "float32", TOL, same, ref, PF)[0] is None
    for i, wrong in ((0, 42.0), (1, -np.inf), (2, 3.0)):
        out = ref.copy()
        out[i] = wrong
        kind, reason, _ = compare("y", "float32", Tolerance(rtol=1.0, atol=1e30), out, ref, PF)
        assert kind == "nan" and f"flat index {i}" in reason, reason
        assert compare("y", "float32", Tolerance(exact=True), out, ref, PF)[0] == "nan"


def test_exact_floats_keep_the_sign_of_zero():
    ref = np.array([-0.0, 0.0, 1.0], np.float32)
    out = np.array([0.0, 0.0, 1.0], np.float32)
    kind, reason, _ = compare("y", "float32", Tolerance(exact=True), out, ref, PF)
    assert kind == "mismatch" and "other sign" in reason
    assert compare("y", "float32", Tolerance(exact=True), ref.copy(), ref, PF)[0] is None
    assert compare("y", "float32", TOL, out, ref, PF)[0] is None  # a tolerance: zeros are zeros
