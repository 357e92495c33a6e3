"""Translation to C++, compile errors, unsupported constructs and the build cache."""

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from kltrans.syntax import load, parse

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS = os.path.join(ROOT, "tests", "data", "kernels")


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    root = tmp_path_factory.getbasetemp() / "kltrans-cpu-cache"
    mp.setenv("KLTRANS_CACHE_DIR", str(root))
    yield root
    mp.undo()


def line_of(src, needle):
    lines = [i + 1 for i, text in enumerate(src.splitlines()) if needle in text]
    assert len(lines) == 1, (needle, lines)
    return lines[0]


def test_translation_keeps_lines_and_removes_host_code():
    from kltrans.gate.cpu import translate

    unit = load(os.path.join(KERNELS, "cg_reduce.cu"))[0]
    t = translate(unit, "count_above")
    body = t.source.split("\n", 2)[2]  # after the #include and the #line directive
    orig = unit.source.decode().splitlines()
    new = body.splitlines()
    assert len(new) >= len(orig)
    # every line is either unchanged, blanked (host code), or a rewritten shared declaration
    for a, b in zip(orig, new):
        assert a == b or not b.strip() or "kl_sh" in b or "kl_empty.h" in b
    assert "<<<" not in t.source and "cudaMemset" not in t.source
    removed = {what for _, _, what in t.removed}
    assert {"host function dot", "host function count"} <= removed
    assert "struct kl_sh0_t { unsigned int block_count; }" in t.source
    assert "&::count_above" in t.source


def test_translation_of_every_fixture_kernel_compiles():
    from kltrans.gate.cpu import build

    skipped = {"for_each_index", "transform_kernel", "apply_pairs"}  # need a functor type
    built = 0
    for name in ("align_struct.cu", "trouble_all.cu", "launch_bounds3.cu", "grid_stride.cu"):
        unit = load(os.path.join(KERNELS, name))[0]
        for k in unit.kernels():
            if k.name in skipped:
                continue
            m = build(unit, k.name)
            assert m.params
            built += 1
    assert built >= 8


def test_histogram256_and_pragma_kernels_run():
    from kltrans.gate.cpu import build

    unit = load(os.path.join(KERNELS, "histogram256.cu"))[0]
    m = build(unit, "histogram256")
    rng = np.random.default_rng(31)
    n = 4099
    data = rng.integers(0, 256, n, dtype=np.uint8)
    bins = np.zeros(256, np.uint32)
    m.launch(4, 256, 0, [data, n, bins], threads=2)
    np.testing.assert_array_equal(bins, np.bincount(data, minlength=256))

    unit = load(os.path.join(KERNELS, "pragma_unbraced_for.cu"))[0]
    box = build(unit, "box_sum_4x2")
    x = rng.random(16 * 10).astype(np.float32)
    out = np.zeros(10, np.float32)
    box.launch(1, 32, 0, [x, out, 10])
    np.testing.assert_allclose(out, x.reshape(10, 16).sum(1), rtol=1e-6)


def test_compile_error_maps_to_the_cuda_line():
    from kltrans.gate.cpu import EmulationError, build

    src = textwrap.dedent("""\
        __device__ float helper(float v) { return v * 2.0f; }

        __global__ void broken(float* x, int n)
        {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) x[i] = helper(x[i]) + undeclared_thing;
        }
        """)
    with pytest.raises(EmulationError) as ei:
        build(parse(src, "broken.cu"), "broken")
    e = ei.value
    assert e.kind == "compile"
    assert e.line == line_of(src, "undeclared_thing") and e.path == "broken.cu"
    assert "undeclared_thing" in e.message and e.log


def test_compile_error_in_a_template_instantiation():
    from kltrans.gate.cpu import EmulationError, build

    src = textwrap.dedent("""\
        template <typename T>
        __global__ void tk(T* x)
        {
            x[threadIdx.x] = x[threadIdx.x].no_such_member;
        }
        """)
    with pytest.raises(EmulationError) as ei:
        build(parse(src, "tk.cu"), "tk", "tk<float>")
    assert ei.value.kind == "compile" and ei.value.line == 4


def test_asm_is_unsupported_at_translate_time():
    from kltrans.gate.cpu import EmulationError, translate

    src = textwrap.dedent("""\
        __global__ void lane_id(unsigned* out)
        {
            unsigned id;
            asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
            out[threadIdx.x] = id;
        }
        """)
    with pytest.raises(EmulationError) as ei:
        translate(parse(src, "asm.cu"), "lane_id")
    assert ei.value.kind == "unsupported" and ei.value.line == 4 and ei.value.path == "asm.cu"


def test_asm_in_an_arch_conditional_fails_only_when_reached():
    from kltrans.gate.cpu import EmulationError, build

    src = textwrap.dedent("""\
        __global__ void maybe(unsigned* out, int use_asm)
        {
            unsigned id = threadIdx.x & 31;
            if (use_asm) {
        #if __CUDA_ARCH__ >= 700
                asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
        #endif
            }
            out[threadIdx.x] = id;
        }
        """)
    m = build(parse(src, "maybe.cu"), "maybe")
    out = np.zeros(32, np.uint32)
    m.launch(1, 32, 0, [out, 0])
    np.testing.assert_array_equal(out, np.arange(32))
    with pytest.raises(EmulationError) as ei:
        m.launch(1, 32, 0, [out, 1])
    assert ei.value.kind == "unsupported" and ei.value.line == 6


@pytest.mark.parametrize("snippet,what", [
    ("float v = tex1Dfetch<float>(tex, 0);", "texture"),
    ("child<<<1, 1>>>();", "dynamic parallelism"),
])
def test_other_unsupported_constructs(snippet, what):
    from kltrans.gate.cpu import EmulationError, translate

    src = f"__global__ void child() {{}}\n__global__ void k(int tex)\n{{\n    {snippet}\n}}\n"
    with pytest.raises(EmulationError) as ei:
        translate(parse(src, "u.cu"), "k")
    assert ei.value.kind == "unsupported" and ei.value.line == 4 and what in ei.value.message


def test_unsupported_header():
    from kltrans.gate.cpu import EmulationError, translate

    src = "#include <mma.h>\n__global__ void k() {}\n"
    with pytest.raises(EmulationError) as ei:
        translate(parse(src, "h.cu"), "k")
    assert ei.value.kind == "unsupported" and ei.value.line == 1


def test_unknown_kernel():
    from kltrans.gate.cpu import EmulationError, translate

    with pytest.raises(EmulationError) as ei:
        translate(parse("__global__ void a() {}\n", "a.cu"), "b")
    assert ei.value.kind == "compile" and "a" in ei.value.message


def test_namespace_scope_shared_noinline_and_macros():
    from kltrans.gate.cpu import build

    src = textwrap.dedent("""\
        #define HD __host__ __device__
        __shared__ int counter;
        __shared__ float stage[64];
        HD inline int twice(int v) { return 2 * v; }
        __device__ __noinline__ int bump() { return atomicAdd(&counter, 1); }
        __global__ void k(int* out)
        {
            if (threadIdx.x == 0) counter = 0;
            stage[threadIdx.x] = (float)twice(threadIdx.x);
            __syncthreads();
            bump();
            __syncthreads();
            out[blockIdx.x * 64 + threadIdx.x] = counter + (int)stage[63 - threadIdx.x];
        }
        int main() { int* d; k<<<2, 64>>>(d); return 0; }
        """)
    m = build(parse(src, "ns.cu"), "k")
    out = np.zeros(128, np.int32)
    m.launch(2, 64, 0, [out], threads=2)
    expect = 64 + 2 * (63 - np.arange(64))
    np.testing.assert_array_equal(out, np.concatenate([expect, expect]))


def test_second_build_is_served_from_the_cache(cache_dir):
    from kltrans.gate.cpu import build

    src = "__global__ void cached_kernel(float* x) { x[threadIdx.x] += 1.0f; }\n"
    first = build(parse(src, "cached.cu"), "cached_kernel")
    second = build(parse(src, "cached.cu"), "cached_kernel")
    assert not first.cached and second.cached
    assert first.key == second.key and first.path == second.path
    assert first.path.startswith(str(cache_dir))
    other = build(parse(src, "cached.cu"), "cached_kernel", extra_flags=("-O1",))
    assert not other.cached and other.key != first.key
    x = np.zeros(32, np.float32)
    second.launch(1, 32, 0, [x])
    assert (x == 1).all()


def test_failed_compiles_are_cached_too():
    from kltrans.gate.cpu import EmulationError, build

    src = "__global__ void nope(float* x) { x[0] = nope_value; }\n"
    for _ in range(2):
        with pytest.raises(EmulationError) as ei:
            build(parse(src, "nope.cu"), "nope")
        assert ei.value.kind == "compile" and ei.value.line == 1


def test_concurrent_builds_of_one_source(tmp_path):
    code = textwrap.dedent("""\
        import sys
        import numpy as np
        from kltrans.syntax import parse
        from kltrans.gate.cpu import build
        src = "__global__ void par(int* x) { x[threadIdx.x] = threadIdx.x * 3; }\\n"
        m = build(parse(src, "par.cu"), "par")
        x = np.zeros(64, np.int32)
        m.launch(1, 64, 0, [x])
        assert (x == np.arange(64) * 3).all()
        print("ok", m.cached)
        """)
    env = dict(os.environ, KLTRANS_CACHE_DIR=str(tmp_path / "cache"))
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.startswith("ok")
    mod = tmp_path / "cache" / "cpu" / "mod"
    assert len(list(mod.rglob("*.so"))) == 1
    assert not list((tmp_path / "cache" / "cpu" / "tmp").iterdir())


def test_switch_cost_is_measurable():
    from kltrans.gate.cpu import switch_cost_ns

    ns = switch_cost_ns(200_000)
    assert 0 < ns < 5000


def test_ucontext_fallback_runtime(tmp_path):
    """The swapcontext fallback (used off x86-64) runs barriers, shuffles and detects a
    deadlock too (a separate process: one runtime per process)."""
    code = textwrap.dedent("""\
        import numpy as np
        from kltrans.syntax import parse
        from kltrans.gate.cpu import EmulationError, build, load_runtime
        assert load_runtime().kl_rt_uses_ucontext() == 1
        src = '''
        __global__ void k(const int* x, int* out)
        {
            __shared__ int s[64];
            s[threadIdx.x] = x[threadIdx.x];
            __syncthreads();
            int v = s[63 - threadIdx.x];
            v += __shfl_xor_sync(0xffffffffu, v, 1);
            out[threadIdx.x] = v;
            if (threadIdx.x == 5 && x[0] == 99) __syncthreads();
        }
        '''
        m = build(parse(src, "uc.cu"), "k")
        x = np.arange(64, dtype=np.int32)
        out = np.zeros(64, np.int32)
        m.launch(3, 64, 0, [x, out], threads=2)
        r = x[::-1]
        assert (out == r + r.reshape(-1, 2)[:, ::-1].reshape(-1)).all(), out
        x[0] = 99
        try:
            m.launch(1, 64, 0, [x, out])
            raise SystemExit("no deadlock")
        except EmulationError as e:
            assert e.kind == "deadlock" and e.line == 10, e
        print("ok")
        """)
    env = dict(os.environ, KLTRANS_CACHE_DIR=str(tmp_path / "cache"), KLTRANS_CPU_UCONTEXT="1")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def test_shared_hidden_by_a_macro_is_a_compile_error():
    from kltrans.gate.cpu import EmulationError, build

    src = "#define SMEM __shared__\n__global__ void k(float* x)\n{\n    SMEM float s[32];\n" \
          "    s[threadIdx.x] = 1.0f; x[threadIdx.x] = s[threadIdx.x];\n}\n"
    with pytest.raises(EmulationError) as ei:
        build(parse(src, "macro_shared.cu"), "k")
    assert ei.value.kind == "compile" and ei.value.line == 4
