"""Fuzzing the tools with Hypothesis, on a fixed budget: mutated kernels (spans deleted or
repeated, stray braces, parentheses, comments, preprocessor lines and strings inserted,
lines swapped) through ``kltrans kernels``, ``kltrans opt`` with any registered pass, and
``kltrans diff`` against the original. Each must end with an exit status (0, 1 or 2) and
no exception, within a bound on its time, and ``opt`` must never write over its input.

The examples are drawn from a fixed seed (``derandomize``) so that CI is repeatable;
``KLTRANS_FUZZ_EXAMPLES=N`` and ``KLTRANS_FUZZ_RANDOM=1`` explore further by hand.
"""

import contextlib
import io
import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kltrans.cli import main
from kltrans.passes.registry import names

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = [os.path.join(ROOT, "corpus", w, v) for w, v in
         (("reduce-sum", "expert.cu"), ("softmax", "naive.cu"), ("transpose", "expert.cu"),
          ("histogram", "expert.cu"), ("scan", "naive.cu"))]
SOURCES = {p: open(p, "rb").read() for p in SEEDS}
PASSES = sorted(names())
TOKENS = [b"{", b"}", b"(", b")", b";", b"[", b"]", b"<", b">", b"/*", b"*/", b"//", b'"',
          b"'", b"\\\n", b"#if 0\n", b"#endif\n", b"#define X (\n", b"#include X\n",
          b"__syncthreads();", b"for (;;) {", b"while (1)", b"template <int N>",
          b"<<<1, 1>>>", b"__shared__ float s[", b"asm(\"trap;\");", b"\x00", b"\xff\xfe",
          "\u00e9\u4e2d".encode(), b"((((((((((((((((((((", b"))))))))))))))))))))", b"\n" * 3,
          b"// kltrans: launch k grid=(0 block=\n", b"#pragma unroll\n", b"goto L; L:"]
LIMIT_S = 60.0  # one tool call on a kernel of a few kB


@st.composite
def mutated(draw):
    path = draw(st.sampled_from(SEEDS))
    src = bytearray(SOURCES[path])
    for _ in range(draw(st.integers(1, 4))):
        n = len(src)
        a = draw(st.integers(0, n))
        b = draw(st.integers(a, min(n, a + 400)))
        op = draw(st.sampled_from(["delete", "repeat", "insert", "swap"]))
        if op == "delete":
            del src[a:b]
        elif op == "repeat":
            src[b:b] = src[a:b]
        elif op == "insert":
            src[a:a] = draw(st.sampled_from(TOKENS)) * draw(st.integers(1, 3))
        else:
            lines = bytes(src).split(b"\n")
            i, j = (draw(st.integers(0, len(lines) - 1)) for _ in range(2))
            lines[i], lines[j] = lines[j], lines[i]
            src = bytearray(b"\n".join(lines))
    return path, bytes(src)


def _run(*argv) -> int:
    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    took = time.perf_counter() - t0
    assert code in (0, 1, 2), (argv, code, err.getvalue()[-2000:])
    assert took < LIMIT_S, (argv, took)
    assert "Traceback" not in err.getvalue(), err.getvalue()[-3000:]
    return code


EXAMPLES = int(os.environ.get("KLTRANS_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                derandomize=os.environ.get("KLTRANS_FUZZ_RANDOM") != "1",
                suppress_health_check=list(HealthCheck))


@FUZZ
@given(case=mutated(), pass_name=st.sampled_from(PASSES))
def test_mutated_kernels_never_crash_the_tools(case, pass_name, tmp_path_factory):
    path, src = case
    d = tmp_path_factory.mktemp("fuzz")
    f = d / "k.cu"
    f.write_bytes(src)
    _run("kernels", str(f))
    _run("opt", "-p", pass_name, str(f), "-o", str(d / "out.cu"), "--assume", "no_alias(*)")
    assert f.read_bytes() == src  # opt -o never touches its input
    _run("diff", path, str(f))


@pytest.mark.parametrize("depth", [10_000])
def test_deep_nesting_is_bounded(tmp_path, depth):
    """10,000 levels of parentheses and of braces: an answer, not a crash or a hang."""
    for opener, closer, name in ((b"(", b")", "parens"), (b"{", b"}", "braces")):
        f = tmp_path / f"{name}.cu"
        body = opener * depth + b"1" + closer * depth if opener == b"(" else \
            opener * depth + closer * depth
        f.write_bytes(b"__global__ void k(float* y) { y[0] = " + body + b"; }\n")
        _run("kernels", str(f))
        _run("opt", "-p", "restrict-pointers", str(f), "-o", str(tmp_path / "o.cu"))
        _run("diff", str(f), str(f))
