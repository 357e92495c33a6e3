"""kltrans.model.copies: a shared array that only holds a copy, and what its reads stand for.

Each case is a kernel and, per read of its staged array, the value the model writes for it
(or the reason it gives none); refused arrays keep their reason next to them.
"""

import pytest

from kltrans.model.copies import read_value, shared_copy, shared_decl
from kltrans.syntax import parse


def _copy(src: str, name: str):
    u = parse(src)
    fn = u.kernels()[0]
    decl = next(d for d in u.nodes_of_type("declaration", within=fn.node)
                if shared_decl(u, d) and shared_decl(u, d)[0] == name)
    return u, fn, shared_copy(u, fn, decl)


def _values(src: str, name: str) -> list:
    u, fn, c = _copy(src, name)
    assert not isinstance(c, str), c
    return [read_value(u, fn, c, r)[0] or read_value(u, fn, c, r)[1] for r in c.reads]


CHUNK = """
__global__ void k(const float* x, float* y, int n) {
    __shared__ float xs[256];
    for (int base = 0; base < n; base += 256) {
        for (int i = threadIdx.x; i < min(256, n - base); i += blockDim.x)
            xs[i] = x[base + i];
        __syncthreads();
        for (int j = threadIdx.x % 32; j < min(256, n - base); j += 32)
            y[threadIdx.x] += xs[j] * 2.0f;
        __syncthreads();
    }
}
"""


def test_a_loop_copy_is_read_as_its_source_at_the_reader_index():
    assert _values(CHUNK, "xs") == ["x[base + j]"]


TILES = """
#define T 16
__global__ void mm(const float* A, const float* B, float* C, int K) {
    __shared__ float As[T][T];
    __shared__ float Bs[T * T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty;
    float acc = 0.0f;
    for (int t = 0; t < K; t += T) {
        As[ty][tx + 0] = A[row * K + t + tx];
        Bs[ty * T + tx] = B[(t + ty) * K + tx];
        __syncthreads();
        for (int k = 0; k < T; ++k)
            acc += As[ty][k] * Bs[k * T + tx];
        __syncthreads();
    }
    C[row * K + tx] = acc;
}
"""


def test_two_dimensions_and_a_row_major_pair_are_solved_for_their_variables():
    # row = blockIdx.y * T + ty: made of ty, which the index maps to itself
    assert _values(TILES, "As") == ["A[row * K + t + k]"]
    assert _values(TILES, "Bs") == ["B[(t + k) * K + tx]"]


ADVANCE = """
__global__ void k(const float* A, float* y) {
    __shared__ float s[64];
    s[threadIdx.x] = A[threadIdx.x];
    __syncthreads();
    A += 64;
    y[threadIdx.x] = s[63 - threadIdx.x];
}
"""


def test_a_pointer_advanced_after_the_copy_is_indexed_back():
    # ok: the index is a thread id itself, so the reader's index is solved for nothing:
    # refused with the reason
    assert _values(ADVANCE, "s") == ["the store index `threadIdx.x` is not a variable plus "
                                     "a constant"]
    named = ADVANCE.replace("s[threadIdx.x] = A[threadIdx.x]",
                            "int t = threadIdx.x;\n    s[t] = A[t]")
    assert _values(named, "s") == ["A[(63 - threadIdx.x) - 64]"]


@pytest.mark.parametrize("src, why", [
    # two stores, one in a loop: several stores are read by thread index, each run once
    ("__global__ void k(const float* x, float* y) { __shared__ float s[34];"
     " int t = threadIdx.x; s[t + 2] = x[t]; for (int h = t; h < 2; h += 32) s[h] = 0.0f;"
     " __syncthreads(); y[t] = s[t]; }", "in a loop"),
    # a read-modify-write is no copy
    ("__global__ void k(const float* x, float* y) { __shared__ float s[32];"
     " int t = threadIdx.x; s[t] = x[t]; s[t] += 1.0f; __syncthreads(); y[t] = s[t]; }",
     "stores"),
    # the value reads memory the kernel writes
    ("__global__ void k(float* x) { __shared__ float s[32]; int t = threadIdx.x;"
     " s[t] = x[t]; __syncthreads(); x[t] = s[31 - t]; }", "also stores to"),
    # extern arrays are reached through their casts
    ("__global__ void k(const float* x, float* y) { extern __shared__ float s[];"
     " int t = threadIdx.x; s[t] = x[t]; __syncthreads(); y[t] = s[t]; }",
     "not a static __shared__ array"),
])
def test_refused_copies_say_why(src, why):
    u = parse(src)
    fn = u.kernels()[0]
    decl = next(d for d in u.nodes_of_type("declaration", within=fn.node)
                if "__shared__" in u.text(d))
    got = shared_copy(u, fn, decl)
    assert isinstance(got, str) and why in got, got


def test_a_value_the_index_does_not_fix_is_refused():
    # ok-not: lane differs between the storing and the reading thread of one slot
    src = CHUNK.replace("xs[i] = x[base + i];", "xs[i] = x[base + i] * (threadIdx.x % 32);")
    assert "differs between threads" in _values(src, "xs")[0] or \
        "does not fix" in _values(src, "xs")[0]


HALO = """
#define AT(k) (k)
__global__ void k(const float* in, float* out, int n) {
    __shared__ float s[130];
    int i = blockIdx.x * 128 + threadIdx.x;
    s[threadIdx.x + 1] = i < n ? in[AT(i)] : 0.0f;
    if (threadIdx.x == 0)
        s[0] = i > 0 ? in[i - 1] : 0.0f;
    __syncthreads();
    out[i] = s[threadIdx.x] + s[threadIdx.x + 2];
}
"""


def test_several_stores_are_read_by_the_thread_that_wrote_the_slot():
    u, fn, c = _copy(HALO, "s")
    assert len(c.stores) == 2
    block = {"threadIdx.x": 128, "threadIdx.y": 1, "threadIdx.z": 1}
    left, right = (read_value(u, fn, c, r, block)[0] for r in c.reads)
    # the left neighbour's element, or thread 0's halo for the first thread; i written
    # out as the writer computed it (an int), the unsigned thread index kept unwrapped
    assert left == ("(threadIdx.x >= 1 ? (((int)(blockIdx.x * 128 + (threadIdx.x - 1))) < n "
                    "? in[AT(((int)(blockIdx.x * 128 + (threadIdx.x - 1))))] : 0.0f) : "
                    "(((int)(blockIdx.x * 128 + 0)) > 0 ? in[((int)(blockIdx.x * 128 + 0)) - 1]"
                    " : 0.0f))")
    # the right neighbour's element, or nobody's past the block (the halo store is
    # never the source): the machine is left to refuse that
    assert right.startswith("(threadIdx.x + 1 < 128") or right.startswith("(((int)")
