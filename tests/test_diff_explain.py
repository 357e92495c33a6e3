"""kltrans diff --explain: pass sequences that turn A into B, run for real."""

import glob
import json
import os
import shlex
import subprocess
import sys

import pytest

from kltrans.cli import main
from kltrans.diff import explain, signature
from kltrans.syntax import parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURE = os.path.join(HERE, "data", "diff", "explain", "two_step.cu")
KLTRANS = [sys.executable, "-m", "kltrans"]


def transitions():
    out = []
    for lj in sorted(glob.glob(os.path.join(ROOT, "corpus", "*", "lineage", "lineage.json"))):
        doc = json.load(open(lj))
        base = os.path.dirname(lj)
        for i, t in enumerate(doc["transitions"]):
            out.append((os.path.join(base, doc["states"][i]["file"]),
                        os.path.join(base, doc["states"][i + 1]["file"]), t, doc["config"]))
    return out


TRANSITIONS = transitions()


def test_the_committed_lineages_have_the_steps_the_sweep_explains():
    assert len(TRANSITIONS) >= 50


@pytest.mark.slow  # a sweep over every lineage step: run once, on 3.11
@pytest.mark.sampled(5)  # CI explains a stable fifth; KLTRANS_FULL_SWEEPS=1 every step
@pytest.mark.parametrize("a, b, t, cfg", TRANSITIONS,
                         ids=[f"{os.path.relpath(a, ROOT).split(os.sep)[1]}-{t['step']}"
                              for a, _b, t, _c in TRANSITIONS])
def test_every_lineage_transition_is_explained_by_its_own_pass(a, b, t, cfg):
    e = explain(open(a).read(), open(b).read(), depth=1, assume=tuple(cfg["facts"]),
                kernel=cfg["kernel"], a_path=a, b_path=b)
    where = f"{os.path.relpath(a, ROOT)} step {t['step']} ({t['spec']})"
    assert e.exact and e.direction == "forward", where
    [step] = e.steps
    # the recorded spec as the pass reads it today (an option added since then takes
    # its default, and spec() names every option)
    from kltrans.passes.pipeline import parse_pipeline as _pp

    assert step.spec == _pp(t["spec"])[0].spec(), where
    # the step, run as the manager runs it, gives B token for token
    from kltrans.passes.facts import Context
    from kltrans.passes.manager import run_pass
    from kltrans.passes.pipeline import parse_pipeline

    ctx = Context.from_strings(tuple(cfg["facts"]), None, False, cfg["kernel"])
    [p] = parse_pipeline(step.spec)
    got, _ = run_pass(parse(open(a).read(), a), p, ctx, only_site=step.site)
    assert signature(got) == signature(parse(open(b).read(), b)), where


def _run_commands(cmds, cwd):
    """Run the printed ``kltrans opt`` lines; return the last one's stdout."""
    out = None
    for line in cmds:
        argv = shlex.split(line)
        assert argv[:2] == ["kltrans", "opt"]
        r = subprocess.run(KLTRANS + argv[1:], cwd=cwd, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        out = r.stdout
    return out


def _make_two_step(tmp_path):
    """B = A after two passes (run here with the manager, not by the code under test)."""
    from kltrans.passes.facts import Context
    from kltrans.passes.manager import run_pipeline
    from kltrans.passes.pipeline import parse_pipeline

    src = open(FIXTURE).read()
    ctx = Context.from_strings(("no_alias(*)",))
    res = run_pipeline(parse(src, FIXTURE),
                       parse_pipeline("unroll{factor=full,style=manual},add-launch-bounds"), ctx)
    assert all(r.applied for r in res.reports)
    a = tmp_path / "a.cu"
    b = tmp_path / "b.cu"
    a.write_text(src)
    b.write_bytes(res.unit.source)
    return a, b


def test_two_step_difference_is_explained_at_depth_2_and_the_pipeline_reproduces_b(tmp_path, capsys):
    a, b = _make_two_step(tmp_path)
    one = explain(a.read_text(), b.read_text(), depth=1, assume=("no_alias(*)",), code=False,
                  model=False)
    assert not one.exact and one.residual is not None and not one.residual.equal
    # the kernel model runs the manual unroll to the same effects: one pass explains it
    # up to the model
    m = explain(a.read_text(), b.read_text(), depth=1, assume=("no_alias(*)",), code=False)
    assert m.exact and m.equal == "model" and m.note
    # up to machine code one pass is enough: NVRTC unrolls the loop fully by itself, so
    # the manual unroll does not change the cubin
    code = explain(a.read_text(), b.read_text(), depth=1, assume=("no_alias(*)",))
    assert code.exact and code.equal == "machine code"
    assert [s.spec.split("{")[0] for s in code.steps] == ["add-launch-bounds"]
    e = explain(a.read_text(), b.read_text(), depth=2, assume=("no_alias(*)",),
                a_path="a.cu", b_path="b.cu")
    assert e.exact and len(e.steps) == 2
    assert {s.spec.split("{")[0] for s in e.steps} == {"unroll", "add-launch-bounds"}
    # the CLI prints the pipeline; running the printed command literally gives B
    rc = main(["diff", str(a), str(b), "--explain", "--assume", "no_alias(*)"])
    out = capsys.readouterr().out
    assert rc == 1 and "residual: none" in out
    line = next(l for l in out.splitlines() if l.startswith("reproduce: "))
    cmd = line[len("reproduce: "):]
    assert cmd.startswith("kltrans opt -p ") and f"'{e.pipeline}'" in cmd
    got = _run_commands([cmd], cwd=tmp_path)
    (tmp_path / "got.cu").write_text(got)
    assert signature(parse(got)) == signature(parse(b.read_text()))
    assert main(["diff", str(tmp_path / "got.cu"), str(b)]) == 0


def test_inverse_direction_recovers_options_from_b(tmp_path):
    """reroll turns scan's state 6 back into 5 at one site; from 6 to 5 the explanation
    is the optimize pass with the options inverse_for reads off the site."""
    base = os.path.join(ROOT, "corpus", "scan", "lineage", "states")
    a = os.path.join(base, "06-reroll.cu")
    b = os.path.join(base, "05-drop-launch-bounds.cu")
    facts = ("no_alias(*)", "aligned(*,16)")
    e = explain(open(a).read(), open(b).read(), depth=1, assume=facts, kernel="scan",
                a_path=a, b_path=b)
    assert e.exact
    [step] = e.steps
    assert step.spec == "unroll{factor=full,style=pragma}"
    got = _run_commands(e.commands(), cwd=tmp_path)
    assert signature(parse(got)) == signature(parse(open(b).read()))


def test_equal_chooses_how_a_result_must_equal_b_on_the_command_line(tmp_path, capsys):
    a, b = _make_two_step(tmp_path)
    base = ["diff", str(a), str(b), "--explain", "--depth", "1", "--assume", "no_alias(*)"]

    def explanation(args):
        assert main(args + ["--json"]) == 1  # the exit status is the diff's: A is not B
        return json.loads(capsys.readouterr().out)["explanation"]

    e = explanation(base)  # machine code is tried before the model
    assert e["exact"] and e["equal"] == "machine code"
    # ok: token for token one pass is not enough (the unroll writes other tokens)
    assert not explanation(base + ["--equal", "tokens"])["exact"]
    assert not explanation(base + ["--tokens"])["exact"]
    # a human-written grid stride: only the model reads v0 undone from it
    wild = os.path.join(os.path.dirname(HERE), "corpus", "wild", "adamw-packed")
    base = ["diff", os.path.join(wild, "v0_naive.cu"), os.path.join(wild, "v1_while_stride.cu"),
            "--explain", "--assume", "no_alias(*)", "--assume", "reassoc"]
    main(base)
    out = capsys.readouterr().out
    assert "explained backwards: one-per-thread" in out and "as the kernel model reads it" in out
    assert not explanation(base + ["--equal", "code"])["exact"]


def test_unexplained_difference_lists_residual_hunks(tmp_path, capsys):
    a = os.path.join(HERE, "data", "diff", "pairs", "literal.a.cu")
    b = os.path.join(HERE, "data", "diff", "pairs", "literal.b.cu")
    e = explain(open(a).read(), open(b).read(), depth=2)
    assert not e.exact and not e.steps
    assert e.residual.counts()["update"] == 1
    rc = main(["diff", a, b, "--explain", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1
    ex = doc["explanation"]
    assert ex["exact"] is False and ex["pipeline"] == ""
    [act] = ex["residual"]["actions"]
    assert (act["action"], act["a"]["text"], act["b"]["text"]) == ("update", "0.5f", "0.25f")
    rc = main(["diff", a, b, "--explain"])
    out = capsys.readouterr().out
    assert "not explained" in out and "residual hunks" in out and "{+0.25f+}" in out


def test_equal_files_explain_as_the_empty_pipeline(capsys):
    a = os.path.join(HERE, "data", "diff", "pairs", "format_only.a.cu")
    b = os.path.join(HERE, "data", "diff", "pairs", "format_only.b.cu")
    e = explain(open(a).read(), open(b).read())
    assert e.exact and e.direction == "equal" and e.pipeline == ""
    assert main(["diff", a, b, "--explain"]) == 0


SAME = os.path.join(HERE, "data", "diff", "explain")


def _same_code(x: str) -> tuple[str, str]:
    return (open(os.path.join(SAME, "same_code_a.cu")).read(),
            open(os.path.join(SAME, f"same_code_{x}.cu")).read())


def test_a_step_that_gives_the_program_of_b_is_explained_up_to_machine_code():
    a, b = _same_code("b")
    e = explain(a, b, depth=1)
    assert e.exact and e.equal == "machine code" and e.direction == "forward"
    assert e.steps[0].spec.startswith("grid-stride{max-blocks=1024,")
    assert e.to_json()["equal"] == "machine code"
    # token for token, no pass writes B (its named cap and comments are new)
    assert not explain(a, b, depth=1, code=False, model=False).exact


def test_explained_backwards_when_the_simplify_pass_gives_the_program_of_a():
    a, c = _same_code("c")  # a cap of 1000 blocks: no option variant writes it
    e = explain(a, c, depth=2)  # the second level searches backwards from C
    assert e.exact and e.direction == "inverse" and e.equal == "machine code"
    assert [s.spec for s in e.inverse_steps] == ["one-per-thread{const=false}"]


def test_other_machine_code_is_not_explained():
    a, d = _same_code("d")  # ok: v >= 0.0f compiles to another comparison
    e = explain(a, d, depth=1)
    assert not e.exact and e.residual is not None


def test_a_renamed_kernel_is_explained_up_to_its_name(capsys, tmp_path):
    a, _ = _same_code("b")
    e0 = explain(a, a.replace("leaky_relu", "leaky_relu_v2"), depth=1)
    assert e0.exact and e0.direction == "equal" and e0.renamed == ("leaky_relu", "leaky_relu_v2")
    b = explain(a, _same_code("b")[1], depth=1).steps  # grid-stride, as above
    from kltrans.passes.facts import Context
    from kltrans.passes.manager import run_pass
    from kltrans.passes.pipeline import parse_pipeline

    after, _ = run_pass(parse(a), parse_pipeline(b[0].spec)[0], Context.from_strings(()))
    want = after.source.decode().replace("leaky_relu", "leaky_relu_gs")
    e = explain(a, want, depth=1)
    assert e.exact and e.equal == "tokens" and e.renamed == ("leaky_relu", "leaky_relu_gs")
    pa, pb = tmp_path / "a.cu", tmp_path / "b.cu"
    pa.write_text(a)
    pb.write_text(want)
    main(["diff", str(pa), str(pb), "--explain"])
    assert "kernel renamed: " in capsys.readouterr().out
    # ok: B's name already names something in A, so no rename is made
    clash = a.replace("float slope", "float leaky_relu_gs")
    clash = clash.replace("slope * v", "leaky_relu_gs * v")
    assert explain(clash, want, depth=1).renamed is None


def test_same_kernel_code_reads_code_and_data_not_metadata():
    from kltrans.gate.compile import compile_unit, same_kernel_code

    def cubin(src: str) -> bytes:
        r = compile_unit(parse(src, "k.cu"), arch="sm_90")
        assert r.ok, r.log
        return r.cubin

    k = ('extern "C" __global__ void k(float* y) { y[threadIdx.x] = c[threadIdx.x % 4]; }\n')
    base = "__constant__ float c[4] = {1, 2, 3, 4};\n" + k
    assert same_kernel_code(cubin(base), cubin("// a comment\n" + base))
    # an unused file-scope constant adds data sections only one side has: the identical
    # code reaches none of them
    assert same_kernel_code(cubin(base), cubin("constexpr int kUnused = 7;\n" + base))
    # ruleid: the constant bank's values differ, the code does not
    assert not same_kernel_code(cubin(base), cubin(base.replace("3, 4", "3, 5")))
    # ruleid: other code
    assert not same_kernel_code(cubin(base), cubin(base.replace("% 4", "% 2")))


def test_same_program_compares_launch_bounds():
    from kltrans.passes.canonical import same_program

    k = ("// kltrans: launch k grid=1 block=64\n"
         'extern "C" __global__ void {lb} k(float* y) {{ y[threadIdx.x] = 2.0f; }}\n')
    a = parse(k.format(lb=""), "a.cu")
    b = parse(k.format(lb="__launch_bounds__(1024)"), "b.cu")
    assert same_program(a, parse(k.format(lb=""), "c.cu"), None)[0]
    ok, why = same_program(a, b, None)
    assert not ok and "launch bounds" in why


def test_same_program_compiles_a_template_kernel_as_its_contract_instantiates_it():
    """NVRTC emits no code for a template kernel nobody instantiates: without the
    contract's ``k<float>`` both sides compiled to nothing and never compared equal."""
    from kltrans.passes.canonical import instantiations, same_program

    k = ("// kltrans: launch k<float> grid=ceil_div(n, 128) block=128\n"
         "template <class T>\n__global__ void k(T* y, int n) {{\n"
         "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "    if ({cond}) y[i] = y[i] * 2;\n}}\n")
    a = parse(k.format(cond="i < n"), "a.cu")
    assert instantiations(a) == ["k<float>"]
    # ok: redundant parentheses and a comment are the same machine code
    assert same_program(a, parse("// twice\n" + k.format(cond="((i) < n)"), "b.cu"), None)[0]
    # ruleid: another bound is other code
    ok, why = same_program(a, parse(k.format(cond="i <= n"), "c.cu"), None)
    assert not ok and why == "other machine code"


def test_an_expert_step_that_two_simplify_passes_peel_is_explained_backwards():
    """B adds two mechanisms in spellings no optimize pass writes (launch bounds as an
    expression, __ldcs through a pointer sum): the forward side's move cannot meet, and B
    peeled by drop-launch-bounds and then drop-stream-hints is A."""
    a = ("// kltrans: launch k grid=ceil_div(n, 256) block=256\n"
         "__global__ void k(const float* x, float* y, int n) {\n"
         "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "    if (i < n) y[i] = 2.0f * x[i];\n}\n")
    b = a.replace("__global__ void k", "__global__ void __launch_bounds__(128 * 2) k").replace(
        "2.0f * x[i]", "2.0f * __ldcs(x + i)")
    got = explain(a, b, passes=["add-launch-bounds", "drop-launch-bounds", "drop-stream-hints"])
    assert got.exact and got.direction == "inverse", got
    assert sorted(s.spec.split("{")[0] for s in got.inverse_steps) == \
        ["drop-launch-bounds", "drop-stream-hints"]


def test_a_vector_step_whose_leftovers_go_to_the_first_block_is_explained_by_unchunk_loop():
    """reduce-cg's float4 step (corpus/wild): the leftover n % 4 values are added by the
    first threads of block 0, the index written inline, and the grid is sized for four
    values per thread. unchunk-loop reads that tail, merges it (checked on the grid
    machine: the chunks keep their sum in a register) and sizes the grid per value again."""
    d = os.path.join(ROOT, "corpus", "wild", "reduce-cg")
    a, b = (open(os.path.join(d, f)).read() for f in ("v3_cg_reduce.cu", "v4_vector_loads.cu"))
    got = explain(a, b, passes=["unchunk-loop", "chunk-loop", "drop-stream-hints"])
    assert got.exact and got.direction == "inverse", got
    assert [s.spec.split("{")[0] for s in got.inverse_steps] == ["unchunk-loop"]


def test_a_warp_per_row_to_a_block_per_row_meets_in_the_middle_by_the_model():
    """softmax-cg v1 -> v2 (a cooperative-groups tile per row, then a block per row with
    per-warp slots): no pass turns one into the other, but unshare-row on v1 and
    unshare-row on v2 reach one program (the thread per row); the explanation is v1's
    chain, then the inverse of v2's (share-row{group=block}) applied to its result, which
    must do what v2 does as the model reads it (mixed)."""
    from kltrans.generality.measure import lineage_facts, step_bindings

    d = os.path.join(ROOT, "corpus", "wild", "softmax-cg")
    a, b = (open(os.path.join(d, v)).read() for v in ("v1_warp_tile.cu", "v2_block_row.cu"))
    wl = os.path.join(d, "workload.yaml")
    facts = lineage_facts(wl) + step_bindings(wl, parse(a), parse(b))
    e = explain(a, b, depth=2, assume=tuple(facts))
    assert e.exact and e.direction == "mixed" and e.equal == "model"
    assert [s.spec for s in e.steps] == ["unshare-row", "share-row{group=block}"]
    assert [s.spec for s in e.inverse_steps] == ["unshare-row"]  # found on v2


def test_a_search_tries_the_block_sizes_of_its_goal_alone():
    from kltrans.passes.registry import get_pass

    d = os.path.join(ROOT, "corpus", "wild", "softmax-cg")
    goal = parse(open(os.path.join(d, "v1_warp_tile.cu")).read())  # block=kThreadsPerBlock
    assert get_pass("grow-block").goal_options(goal) == [{"threads": 256}]
    assert get_pass("shrink-block").goal_options(goal) == [{"threads": 256}]
    # ok: a pass whose options the goal does not say tries its domain's values
    assert get_pass("unroll").goal_options(goal) is None


def test_an_unroll_pragma_the_compiler_ignores_is_no_mechanism_to_the_model():
    """A full ``#pragma unroll`` on a shuffle loop of five constant trips compiles to the
    code the loop gives without it: the model's comparison drops it (softmax-raw v2's
    butterflies), so share-row's loop without the pragma meets the expert's."""
    from kltrans.diff.search import _idle_pragmas_dropped
    from kltrans.model.mechanisms import mechanism_kinds

    path = os.path.join(ROOT, "corpus", "wild", "softmax-raw", "v2_warp_shfl.cu")
    u = parse(open(path).read(), path)
    assert "unroll pragma" in mechanism_kinds(u)
    bare = _idle_pragmas_dropped(u, "sm_90")
    assert "unroll pragma" not in mechanism_kinds(bare)
    assert b"#pragma unroll" not in bare.source


def test_refused_an_unroll_pragma_that_changes_the_machine_code_stays():
    src = """// kltrans: launch k grid=ceil_div(n, 128) block=128
__global__ void k(const float* x, float* y, int n, int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 200; j++)
        s += x[(i + j * m) % n] * (float)j;
    y[i] = s;
}
"""
    from kltrans.diff.search import _idle_pragmas_dropped
    from kltrans.passes.canonical import same_program

    u = parse(src, "k.cu")
    bare = parse(src.replace("#pragma unroll\n", ""), "k.cu")
    assert not same_program(u, bare, "sm_90")[0]   # 200 trips: unrolled only when asked
    assert _idle_pragmas_dropped(u, "sm_90") is u
