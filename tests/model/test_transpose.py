"""A 2-D transpose as the kernel model reads it (kltrans.model.transpose): direct and
staged copies in several spellings; copies that are not a transpose, refused with why."""

from __future__ import annotations

import pytest

from kltrans.model.transpose import transpose_of
from kltrans.syntax import parse

HEAD = "__global__ void k(const float* in, float* out, int rows, int cols) {\n"


def _read(body: str, head: str = HEAD):
    u = parse((head + body + "}\n").encode(), "k.cu")
    [fn] = u.kernels()
    return transpose_of(u, fn)


@pytest.mark.parametrize("body,col_axis,span", [
    # the classic form, blockDim spans
    ("int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "int r = blockIdx.y * blockDim.y + threadIdx.y;\n"
     "if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];\n", "x", (None, None)),
    # inline indices, thread id first, constant spans, an early return
    ("if (threadIdx.y + 8 * blockIdx.y >= rows) return;\n"
     "out[(threadIdx.x + 32 * blockIdx.x) * rows + threadIdx.y + 8 * blockIdx.y] =\n"
     "    in[(threadIdx.y + 8 * blockIdx.y) * cols + threadIdx.x + 32 * blockIdx.x];\n",
     "x", (8, 32)),
    # the input's columns along y, size_t casts
    ("size_t r = blockIdx.x * 16 + threadIdx.x, c = blockIdx.y * 16 + threadIdx.y;\n"
     "if (r < rows && c < cols) out[c * (size_t)rows + r] = in[r * (size_t)cols + c];\n",
     "y", (16, 16)),
])
def test_direct_copies(body, col_axis, span):
    t, why = _read(body)
    assert t is not None, why
    assert (t.src, t.dst, t.rows, t.cols, t.tile) == ("in", "out", "rows", "cols", None)
    assert (t.col_axis, t.span) == (col_axis, span)


def test_staged_copy_with_padded_tile_and_thread_loops():
    t, why = _read(
        "__shared__ float buf[32][33];\n"
        "int bx = blockIdx.x * 32, by = blockIdx.y * 32;\n"
        "for (int k = threadIdx.y; k < 32; k += 8)\n"
        "    if (by + k < rows && bx + threadIdx.x < cols)\n"
        "        buf[k][threadIdx.x] = in[(by + k) * cols + bx + threadIdx.x];\n"
        "__syncthreads();\n"
        "for (int k = threadIdx.y; k < 32; k += 8)\n"
        "    if (bx + k < cols && by + threadIdx.x < rows)\n"
        "        out[(bx + k) * rows + by + threadIdx.x] = buf[threadIdx.x][k];\n")
    assert t is not None, why
    assert (t.tile, t.col_axis, t.span, t.elem) == ("buf", "x", (32, 32), "float")


@pytest.mark.parametrize("body,why", [
    # ok: a copy, not a transpose: the output is stored at the input's own place
    ("int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "int r = blockIdx.y * blockDim.y + threadIdx.y;\n"
     "if (r < rows && c < cols) out[r * cols + c] = in[r * cols + c];\n",
     "transposed place"),
    # ok: two outputs written
    ("int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "int r = blockIdx.y * blockDim.y + threadIdx.y;\n"
     "out[c * rows + r] = in[r * cols + c]; out[0] = 0.0f;\n", "write(s)"),
    # ok: one block axis only (a 1-D launch over a flattened index)
    ("int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "out[(i % cols) * rows + i / cols] = in[i];\n", "affine indices"),
    # ok: the row stride is not one size parameter
    ("int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "int r = blockIdx.y * blockDim.y + threadIdx.y;\n"
     "out[c * rows + r] = in[r * 1024 + c];\n", "one size parameter"),
])
def test_refused(body, why):
    t, reason = _read(body)
    assert t is None
    assert why in reason, reason


def test_refused_in_place():
    t, reason = _read("int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
                      "int r = blockIdx.y * blockDim.y + threadIdx.y;\n"
                      "float v = a[r * n + c]; a[c * n + r] = v;\n",
                      head="__global__ void k(float* a, int n) {\n")
    assert t is None and "two known arrays" in reason, reason
