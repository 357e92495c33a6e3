"""Lossless edits: untouched bytes stay identical, bad rewrites are refused."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kltrans.syntax import Edit, EditError, apply_edits, parse

KERNEL = """\
// Block-wide sum: one float per thread, shared-memory tree.
#include <cuda_runtime.h>
#define BLOCK 256

template <int N>
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

__global__ void __launch_bounds__(BLOCK) block_sum(const float* __restrict__ x,
                                                   float* __restrict__ out, int n) {
  __shared__ float s[BLOCK];   /* one slot per thread */
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
}
"""
SRC = KERNEL.encode()
UNIT = parse(SRC, "block_sum.cu")

REPLACEMENTS = ["", " ", "\n", "/* note */", "// c\n", "acc", "x", "0", "(", ")", ";",
                "{", "}", "+ 1", "\u00e9t\u00e9", "#pragma unroll\n"]


@st.composite
def edit_lists(draw, max_edits=5):
    n = len(SRC)
    cuts = sorted(draw(st.lists(st.integers(0, n), min_size=0, max_size=2 * max_edits)))
    edits = []
    # pair consecutive cut points into disjoint ranges; ranges may be empty (insertions)
    last_end = -1
    for a, b in zip(cuts[::2], cuts[1::2]):
        if a == last_end or (a == b and a == last_end):
            continue  # keep edits strictly separated so they never overlap
        text = draw(st.sampled_from(REPLACEMENTS))
        edits.append(Edit(a, b, text))
        last_end = b
    return edits


def untouched_identical(src: bytes, out: bytes, edits) -> bool:
    """Every byte outside the edited ranges is copied unchanged, in order."""
    pos_src = pos_out = 0
    for e in sorted(edits):
        keep = e.start - pos_src
        if src[pos_src:e.start] != out[pos_out:pos_out + keep]:
            return False
        pos_out += keep + len(e.replacement)
        if out[pos_out - len(e.replacement):pos_out] != e.replacement:
            return False
        pos_src = e.end
    return src[pos_src:] == out[pos_out:]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edit_lists())
def test_edits_are_lossless_or_refused(edits):
    try:
        new = apply_edits(UNIT, edits)
    except EditError as e:
        # refused: only because the result would not parse (the input parses)
        assert "parse error" in str(e)
        return
    assert untouched_identical(SRC, new.source, edits)
    assert len(new.error_nodes()) == 0


@settings(max_examples=200, deadline=None)
@given(edit_lists())
def test_inverse_edits_restore_the_original(edits):
    try:
        new = apply_edits(UNIT, edits)
    except EditError:
        return
    # the inverse of each edit, at the position where its replacement landed
    inverse, shift = [], 0
    for e in sorted(edits):
        s = e.start + shift
        inverse.append(Edit(s, s + len(e.replacement), SRC[e.start:e.end]))
        shift += len(e.replacement) - (e.end - e.start)
    back = apply_edits(new, inverse)
    assert back.source == SRC


def test_rename_keeps_comments_and_formatting():
    ids = [n for n in UNIT.walk() if n.type == "identifier" and UNIT.text(n) == "s"]
    new = apply_edits(UNIT, [Edit.replace(n, "smem") for n in ids])
    assert new.source.decode() == KERNEL.replace("s[", "smem[").replace("float s[", "float smem[")
    assert b"/* one slot per thread */" in new.source
    assert [s.name for s in new.shared_decls()] == ["smem"]


def test_overlapping_edits_are_rejected():
    with pytest.raises(EditError, match="overlapping edits"):
        apply_edits(UNIT, [Edit(10, 20, "a"), Edit(15, 25, "b")])
    with pytest.raises(EditError, match="overlapping edits"):
        apply_edits(UNIT, [Edit(10, 10, "a"), Edit(10, 10, "b")])
    with pytest.raises(EditError, match="overlapping edits"):
        apply_edits(UNIT, [Edit(10, 20, "a"), Edit(12, 12, "b")])
    # touching ranges are fine
    apply_edits(UNIT, [Edit(100, 105, "xx"), Edit(105, 105, " ")])


def test_edit_past_end_and_bad_range():
    with pytest.raises(EditError, match="past the end"):
        apply_edits(UNIT, [Edit(len(SRC), len(SRC) + 1, "")])
    with pytest.raises(ValueError):
        Edit(5, 3, "")


def test_edit_that_breaks_the_parse_is_refused():
    body = next(n for n in UNIT.walk() if n.type == "compound_statement")
    with pytest.raises(EditError, match="introduces a parse error") as info:
        apply_edits(UNIT, [Edit(body.start_byte, body.start_byte + 1, "")])  # drop a '{'
    assert info.value.diagnostic is not None
    assert info.value.diagnostic.location.path == "block_sum.cu"
    # the message says what the parser saw and how many errors each side has
    assert "(missing ; in `__device__ __forceinline__ float warp_sum(float v)`; 0 parse error(s) "\
           "before the edit, 2 after)" in str(info.value)


def test_no_rewrite_inside_a_declaration_that_does_not_parse():
    bad = parse("__global__ void broken(float* x) { x[0] = ; }\n"
                "__global__ void fine(float* y) { y[0] = 1; }\n", "two.cu")
    assert bad.has_errors
    x = next(n for n in bad.walk() if n.type == "identifier" and bad.text(n) == "x")
    with pytest.raises(EditError, match="does not parse"):
        apply_edits(bad, [Edit.replace(x, "z")])
    # the function that parses can still be rewritten
    y = [n for n in bad.walk() if n.type == "identifier" and bad.text(n) == "y"]
    new = apply_edits(bad, [Edit.replace(n, "w") for n in y])
    assert b"fine(float* w) { w[0] = 1; }" in new.source


def test_walk_from_the_pre_order_list_is_the_cursor_walk():
    """Unit.walk serves a subtree from the unit's one pre-order list: for every node of a
    corpus kernel it yields the very nodes, in the order, of a fresh cursor walk."""
    import os

    from kltrans.syntax import parse

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "corpus", "layernorm", "expert.cu")
    u = parse(open(path, "rb").read(), path)
    every = list(u._walk_cursor(None))
    assert [n.id for n in u.walk()] == [n.id for n in every] and len(every) > 1000
    for n in every:
        assert [m.id for m in u.walk(n)] == [m.id for m in u._walk_cursor(n)]
    # a node of another tree is walked where it is
    other = parse(b"__global__ void k(int* p) { p[0] = 1; }", "o.cu")
    assert [m.type for m in u.walk(other.root)] == [m.type for m in other.walk()]
