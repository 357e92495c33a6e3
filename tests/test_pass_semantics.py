"""Passes keep what a kernel computes: fixtures gated on the CPU emulator.

Every positive fixture that names a workload with ``// GATE: DIR`` (a folder from the
repository root, e.g. ``corpus/reduce-sum``) is gated twice, input and output, with the
compile and correct stages on the ``cpu`` backend at every test size of that workload.

Also, every positive fixture of ``grid-stride``/``one-per-thread``, ``coarsen``/``uncoarsen``
and ``vectorize-access``/``scalarize-access`` whose kernel has the signature of the
``scale`` test workload (``scale(const float* x, float* y, float a, float b, int n)``) is
gated twice, input and output, with the compile and correct stages on the ``cpu``
backend at every test size of the workload (n = 1, 1000, 100003: ragged, so the scalar
tail of the vector kernel and the extra iterations of the grid-stride loop on its capped
grid both run). The launch comes from each file's ``// kltrans: launch`` header, which
the passes rewrite, so a wrong grid fails here too.

A program (the code as ``kltrans diff`` compares it: comments and spacing aside) is gated
once a session on a workload: about a third of the inputs and outputs repeat another
fixture's (``gated_this_session``).

Also: inputs and outputs of every positive fixture of every pass compile with NVRTC for
sm_80 (tests/test_pass_fixtures.py compiles them for sm_90).
"""

import os
import re
import shutil

import pytest

from kltrans.passes.fixtures import discover, run_case

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOAD = os.path.join(HERE, "data", "workloads", "scale")
FOLDERS = ("grid_stride", "coarsen", "vectorize_access")
SCALE = re.compile(r'extern\s+"C"\s+__global__\s+void\s+scale\s*\(\s*const\s+float\s*\*\s*x\s*,'
                   r'\s*float\s*\*\s*y\s*,\s*float\s+a\s*,\s*float\s+b\s*,\s*int\s+n\s*\)')


ROOT = os.path.dirname(HERE)
POSITIVE = [c for c in discover() if not c.negative]


def _mine():
    return [c for c in POSITIVE if os.path.basename(os.path.dirname(c.path)) in FOLDERS]


def _id(c):
    return os.path.relpath(c.path, os.path.join(HERE, "passes"))


CASES = _mine()
GATED = [(c, WORKLOAD) for c in CASES if not c.gate and SCALE.search(open(c.path).read())]
GATED += [(c, os.path.join(ROOT, c.gate)) for c in POSITIVE if c.gate]


def test_every_pass_module_has_a_gated_fixture():
    """Each pass module's folder has at least one positive fixture gated on a workload."""
    folders = {os.path.basename(os.path.dirname(c.path)) for c in POSITIVE}
    gated = {os.path.basename(os.path.dirname(c.path)) for c, _ in GATED}
    assert folders - gated == set(), f"no gated fixture in {sorted(folders - gated)}"


@pytest.fixture(scope="module")
def cpu_backend(tmp_path_factory):
    try:
        from kltrans.gate.cpu import build  # noqa: F401
    except ImportError as e:
        pytest.skip(f"the CPU emulator (kltrans.gate.cpu) cannot be imported: {e}")
    if shutil.which("g++") is None:
        pytest.skip("the CPU emulator needs g++")
    mp = pytest.MonkeyPatch()
    mp.setenv("KLTRANS_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kltrans-cpu-cache"))
    yield
    mp.undo()


@pytest.fixture(scope="session")
def gated_this_session(tmp_path_factory):
    """A folder shared by the session's xdist workers: one file per program gated so far
    (its key: the code as ``kltrans diff`` compares it, comments and spacing aside, and
    the workload), written once the gate has passed it. About a third of the fixtures'
    inputs and outputs are the same program as another's (an inverse pass's output is the
    forward fixture's input, with other comments): each program is gated once a session,
    and a later fixture with the same program reads which fixture passed it."""
    root = tmp_path_factory.getbasetemp()
    root = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root
    d = root / "gated-programs"
    d.mkdir(exist_ok=True)
    return d


@pytest.mark.slow
@pytest.mark.sampled(8)  # CI gates a stable eighth; KLTRANS_FULL_SWEEPS=1 all of them
@pytest.mark.parametrize("case,workload", GATED, ids=[_id(c) for c, _ in GATED])
def test_input_and_output_pass_the_gate(case, workload, cpu_backend, gated_this_session,
                                        tmp_path):
    import hashlib

    from kltrans.diff import signature
    from kltrans.gate.run import gate
    from kltrans.syntax import parse
    from kltrans.syntax.files import atomic_write

    assert os.path.isfile(os.path.join(workload, "workload.yaml")), \
        f"{case.path}: GATE names {workload}, which has no workload.yaml"
    out = run_case(case)
    assert out.ok, "\n".join(out.messages)
    for label, src in (("input", open(case.path, "rb").read()), ("output", out.output)):
        key = hashlib.sha256(repr((signature(parse(src, case.path)),
                                   os.path.abspath(workload))).encode()).hexdigest()
        done = gated_this_session / key
        if done.is_file():  # the same program passed the gate in this session already
            continue
        path = tmp_path / f"{label}.cu"
        path.write_bytes(src)
        rep = gate(str(path), workload, backend="cpu", stages=("compile", "correct"))
        stages = {s.stage: s for s in rep.stages}
        got = [(s.stage, s.status, s.reason) for s in rep.stages]
        assert "correct" in stages, f"{label}: {got}"
        for s in rep.stages:
            assert s.status == "pass", f"{label} {s.stage}: {s.reason}"
        atomic_write(str(done), f"pass {_id(case)} {label}\n")


@pytest.mark.slow  # NVRTC over every fixture (sm_90: test_pass_fixtures.py): once, on 3.11
@pytest.mark.sampled(5)
@pytest.mark.parametrize("case", POSITIVE, ids=_id)
def test_input_and_output_compile_for_sm80(case):
    from kltrans.gate.compile import compile_source

    out = run_case(case)
    for label, src in (("input", open(case.path).read()), ("output", out.output.decode())):
        r = compile_source(src, case.path, arch="sm_80")
        assert r.ok, f"{label} does not compile for sm_80:\n{r.log}"
