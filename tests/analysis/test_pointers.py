"""Pointer parameters: written, read-only, escaping; aliasing."""

import os

from kltrans.analysis.pointers import may_alias, pointer_params
from kltrans.syntax import parse

KERNELS = os.path.join(os.path.dirname(__file__), "..", "data", "kernels")
CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "corpus")


def load(path):
    with open(path) as f:
        return parse(f.read(), path)


def fn_named(unit, name):
    return next(f for f in unit.kernels() + unit.device_functions() if f.name == name)


def written(unit, name):
    return {p.name: p.written for p in pointer_params(unit, fn_named(unit, name))}


def one_kernel(src):
    u = parse(src)
    fn = u.kernels()[-1]
    return u, fn, {p.name: p for p in pointer_params(u, fn)}


def test_saxpy_and_vector_ops():
    u = load(os.path.join(KERNELS, "saxpy.cu"))
    [x, y] = pointer_params(u, fn_named(u, "saxpy"))
    assert (x.name, x.const, x.restrict, x.written) == ("x", True, True, False)
    assert (y.name, y.const, y.restrict, y.written) == ("y", False, True, True)
    assert [u.text(w) for w in y.writes] == ["y[i] = a * x[i] + y[i]"]
    assert y.reason == "written at line 19: `y[i] = a * x[i] + y[i]`"
    u = load(os.path.join(KERNELS, "vector_ops.cu"))
    assert written(u, "vec_add") == {"a": False, "b": False, "c": True}  # `float* __restrict__ const c`


def test_every_way_of_writing():
    u, fn, pp = one_kernel(
        "__global__ void k(float* a, float* b, float* c, float* d, float* e, float* f,\n"
        "                  float4* g, float* h, float* r, int n) {\n"
        "  int i = threadIdx.x;\n"
        "  a[i] = 1.0f;\n"
        "  *b = 2.0f;\n"
        "  c[i] += 3.0f;\n"
        "  ++d[i];\n"
        "  atomicAdd(&e[i], 1.0f);\n"
        "  atomicMax((int*)(f + i), 1);\n"
        "  *reinterpret_cast<float4*>(&h[4 * i]) = g[i];\n"
        "  r[i] = r[i + 1];\n"
        "}\n")
    assert {k: v.written for k, v in pp.items()} == {
        "a": True, "b": True, "c": True, "d": True, "e": True, "f": True, "g": False,
        "h": True, "r": True}
    assert pp["g"].reason == "only read"


def test_writes_through_local_aliases():
    u = load(os.path.join(CORPUS, "layernorm", "naive.cu"))
    assert written(u, "layernorm_naive") == {
        "x": False, "weight": False, "bias": False, "y": True, "mean": True, "rstd": True}
    pp = {p.name: p for p in pointer_params(u, fn_named(u, "layernorm_naive"))}
    assert [u.text(w) for w in pp["y"].writes] == ["yr[c] = __float2bfloat16(v)"]
    u = load(os.path.join(KERNELS, "mixed_precision.cu"))
    # __half2* o = reinterpret_cast<__half2*>(out) + 2 * i; o[0] = ...
    assert written(u, "f32_to_f16_vec4") == {"in": False, "out": True}
    # float* comp = reinterpret_cast<float*>(&data[...]); comp[k] *= f[k];
    u = load(os.path.join(KERNELS, "trouble_all.cu"))
    assert written(u, "pair_scale_masked") == {"data": True, "flag": False}


def test_atomics_on_whole_pointer_and_in_device_functions():
    u = load(os.path.join(KERNELS, "cg_reduce.cu"))
    assert written(u, "dot_cg") == {"a": False, "b": False, "result": True}
    u = load(os.path.join(KERNELS, "gather_scatter.cu"))
    assert written(u, "scatter_add_rows") == {"idx": False, "src": False, "dst": True}
    u, fn, pp = one_kernel(
        "__device__ void store(float* p, int i, float v) { p[i] = v; }\n"
        "__device__ float load(const float* p, int i) { return p[i]; }\n"
        "__device__ void bump(float& v) { v += 1.0f; }\n"
        "__global__ void k(float* a, float* b, float* c) {\n"
        "  store(a, threadIdx.x, load(b, 0));\n"
        "  bump(c[threadIdx.x]);\n"
        "}\n")
    assert {k: v.written for k, v in pp.items()} == {"a": True, "b": False, "c": True}


def test_escapes_are_unknown():
    u, fn, pp = one_kernel(
        "__device__ float* g_ptr;\n"
        "extern __device__ void external(float* p);\n"
        "template <typename F>\n"
        "__global__ void k(float* a, float* b, const float* c, F f, float* d, float* e) {\n"
        "  external(a);\n"
        "  g_ptr = b;\n"
        "  external((float*)c);\n"
        "  f(d[threadIdx.x]);\n"
        "  float v = __ldg(&e[0]);\n"
        "}\n")
    assert {k: v.written for k, v in pp.items()} == {
        "a": None, "b": None, "c": None, "d": None, "e": False}
    assert pp["a"].reason == "escapes at line 5: `external(a)`"
    assert pp["b"].reason == "escapes at line 6: `g_ptr = b`"
    assert [u.text(n) for n in pp["c"].escapes] == ["external((float*)c)"]  # const cast away


def test_const_pointee_cannot_be_written_even_if_passed_on():
    u = load(os.path.join(KERNELS, "device_lambda.cu"))
    # out[i] = f(in[i]): `in` goes to an unknown functor, but it is const
    assert written(u, "transform_kernel") == {"in": False, "out": True}
    pp = {p.name: p for p in pointer_params(u, fn_named(u, "transform_kernel"))}
    assert pp["in"].reason == "const pointee, never cast to a non-const pointer"


def test_may_alias():
    u = load(os.path.join(KERNELS, "saxpy.cu"))
    fn = fn_named(u, "saxpy")
    v = may_alias(u, fn, "x", "y")
    assert v.fails and v.reason == "x is __restrict__: the kernel's declaration promises no overlap"
    assert may_alias(u, fn, "x", "x").holds
    v = may_alias(u, fn, "x", "n")
    assert v.fails and v.reason == "n is not a pointer"
    u = load(os.path.join(KERNELS, "mixed_precision.cu"))
    fn = fn_named(u, "half_axpby")  # (int n, float a, const __half* x, float b, __half* y)
    v = may_alias(u, fn, "x", "y")
    assert v.status == "unknown" and v.reason == "aliasing of x and y is a property of the call site"
    u = parse("__global__ void k(const float* a, double* b, const float* c, const char* d,\n"
              "                  int* e) { b[0] = a[0] + c[0] + d[0] + e[0]; }\n")
    fn = u.kernels()[0]
    v = may_alias(u, fn, "a", "b")
    assert v.fails and "strict aliasing" in v.reason and "float (4 bytes)" in v.reason
    assert may_alias(u, fn, "a", "d").status == "unknown"  # char may alias anything
    assert may_alias(u, fn, "a", "e").status == "unknown"  # same size: could be a bit cast
    v = may_alias(u, fn, "a", "c")
    assert v.status == "unknown" and v.reason.endswith("neither is written, so overlap would be harmless")
    assert may_alias(u, fn, "a", "zz").status == "unknown"
