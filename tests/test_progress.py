"""Progress with counts on long commands: ``[k/N] what (elapsed, about S left)``."""

import os
import re
import subprocess
import sys

from kltrans.progress import Progress

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LINE = re.compile(r"^kltrans (\S+): \[(\d+)/(\d+)\] (.*) \((\d+) s, about (\d+) s left\)$")


def test_each_step_is_a_line_with_its_count_and_an_estimate(capsys):
    with Progress("demo", 3) as p:  # stderr is no terminal here: lines, no bar
        for what in ("a", "b", "c"):
            p.step(what)
    lines = capsys.readouterr().err.splitlines()
    got = [LINE.match(x) for x in lines]
    assert all(got), lines
    assert [(m[1], m[2], m[3], m[4]) for m in got] == [
        ("demo", "1", "3", "a"), ("demo", "2", "3", "b"), ("demo", "3", "3", "c")]
    assert got[-1][6] == "0"  # nothing left after the last


def test_quiet_says_nothing(capsys):
    p = Progress("demo", 2, quiet=True)
    p.step("a")
    p.close()
    assert capsys.readouterr().err == "" and p.done == 1


def test_bench_corpus_counts_its_tasks(tmp_path):
    r = subprocess.run([sys.executable, "-m", "kltrans", "bench-corpus", "corpus", "--only",
                        "reduce-sum", "--backend", "cpu", "--jobs", "1"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    got = [LINE.match(x) for x in r.stderr.splitlines() if x.startswith("kltrans bench-corpus: [")]
    assert got and all(got)
    assert [int(m[2]) for m in got] == list(range(1, int(got[0][3]) + 1))


def test_a_walk_says_each_line_with_the_seconds_since_its_start(capsys):
    from kltrans.lineage.walk import WalkOptions, _say

    opts = WalkOptions("corpus/reduce-sum", progress=True)
    _say(opts, "step 1 of at most 100: unroll at site 1")
    err = capsys.readouterr().err
    assert re.fullmatch(r"kltrans lineage: \[\d+ s\] step 1 of at most 100: unroll at site 1\n",
                        err), err
    quiet = WalkOptions("corpus/reduce-sum", progress=False)
    _say(quiet, "said to the log alone")
    assert capsys.readouterr().err == "" and quiet.log == ["said to the log alone"]
