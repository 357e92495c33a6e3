"""kltrans experiment: bad input is an error naming the file or option (exit 2), found
before any run, never a traceback, and the files read are left as they were.

No test here runs a search: ``_map`` (the queue the runs go through) is replaced by one
that fails the test if anything reaches it, unless the test hands results back itself."""

from __future__ import annotations

import glob
import json
import os
import shutil

import pytest

import kltrans.optimize.experiment as ex
from kltrans.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKILLS = os.path.join(ROOT, "skills")
CORPUS = os.path.join(ROOT, "corpus")
RUN = ["experiment", CORPUS, "--backend", "cpu", "--seeds", "0", "--strategies", "skills",
       "--no-corpus", "--only", "gelu", "--size-limit", "20000", "-q"]


@pytest.fixture(autouse=True)
def no_runs(monkeypatch):
    """Every check here fires before the queue: a run reaching it fails the test (and
    costs no gate time)."""
    def refuse(*a, **k):
        raise AssertionError("a run was started: the input was not checked before it")

    monkeypatch.setattr(ex, "_map", refuse)


def _err(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def _bytes(path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


# ------------------------------------------------------------------ --merge
@pytest.mark.parametrize("body, why", [
    ("[1]", "the file: [1] is not of type 'object'"),
    ("{}", "the file: 'runs' is a required property"),
    ('{"runs": [], "budget": 30}', "the file: 'backend' is a required property"),
    ('{"runs": {}, "budget": 30, "backend": "cpu"}', "runs: {} is not of type 'array'"),
    ('{"runs": [1], "budget": 30, "backend": "cpu"}', "runs[0]: 1 is not of type 'object'"),
    ('{"runs": [{"ok": true, "target": "gelu", "strategy": "skills", "seed": 0}], '
     '"budget": 30, "backend": "cpu"}', "runs[0]: 'kind' is a required property"),
    ('{"runs": [{"ok": false, "target": "gelu", "strategy": "skills", "seed": "0"}], '
     '"budget": 30, "backend": "cpu"}', "runs[0].seed: '0' is not of type 'integer'"),
    ('{"runs": [], "budget": 30, "backend": "cpu", "vendors": {"gelu": {"vendor": 3}}}',
     "vendors.gelu.vendor: 3 is not of type 'object', 'null'"),
    ('{"runs": [], "budget": 30, "backend": "cpu", "merged_from": [{}]}',
     "merged_from[0]: 'fingerprint' is a required property"),
])
def test_merge_of_a_file_that_is_no_experiment_record(tmp_path, capsys, body, why):
    m = tmp_path / "m.json"
    m.write_text(body)
    before = _bytes(m)
    out = tmp_path / "out"
    assert main(["experiment", "--merge", str(m), "--out", str(out), "-q"]) == 2
    err = _err(capsys)
    assert f"{m}: error: not a kltrans experiment record: {why}" in err, err
    assert _bytes(m) == before and not out.exists()  # no report of nothing


def test_merge_of_a_file_that_is_not_json_names_its_line_and_column(tmp_path, capsys):
    m = tmp_path / "m.json"
    m.write_text('{"runs": [1,\n 2')
    assert main(["experiment", "--merge", str(m), "--out", str(tmp_path / "out")]) == 2
    assert f"{m}:2:3: error: cannot read: not valid JSON" in _err(capsys)


def test_every_recorded_experiment_is_a_record_the_merge_reads():
    """The shape checked is the one the tool writes: every experiment record kept in
    bench/results passes (one there is an older file of another kind, and does not)."""
    seen = 0
    for p in sorted(glob.glob(os.path.join(ROOT, "bench", "results", "experiment*.json"))):
        with open(p, encoding="utf-8") as f:
            d = json.load(f)
        if isinstance(d, dict) and "runs" in d:
            assert ex._record_problem(d) is None, p
            seen += 1
    assert seen >= 10


def test_resume_and_merge_do_not_go_together(tmp_path, capsys):
    """--merge runs nothing, so --resume has no run to skip there: refused, not ignored."""
    raw = os.path.join(ROOT, "bench", "results", "experiment_v1.json")
    out = tmp_path / "out"
    assert main(["experiment", "--merge", raw, "--resume", "--out", str(out), "-q"]) == 2
    err = _err(capsys)
    assert "--resume does not go with --merge" in err and "experiment.partial.json" in err
    assert not out.exists()


# ------------------------------------------------------------------ --resume
@pytest.mark.parametrize("body, why", [
    (b"[1, 2]\n", ": error: not a kltrans experiment record: the file: [1, 2] is not of type "
                "'object'"),
    (b'{"budget": 30, "backend": "cpu", "runs": [{"target": "gelu"}]}',
     ": error: not a kltrans experiment record: runs[0]: 'strategy' is a required property"),
    (b'{"budget": 30, "ba', ":1:16: error: cannot resume from it: not valid JSON"),
    (b"\xff\xfe{}", ": error: cannot resume from it: not UTF-8 text"),
    (b'{"budget": 5, "backend": "cpu", "runs": []}',
     ": error: cannot resume from it: its runs were made with budget 5 on backend cpu, this "
     "experiment asks budget 30 on backend cpu"),
])
def test_resume_from_a_partial_file_it_cannot_use_leaves_it_untouched(tmp_path, capsys,
                                                                       body, why):
    partial = tmp_path / "experiment.partial.json"
    partial.write_bytes(body)
    rc = main(RUN + ["--skills", SKILLS, "--budget", "30", "--out", str(tmp_path), "--resume"])
    assert rc == 2
    err = _err(capsys)
    assert f"{partial}{why}" in err, err
    assert partial.read_bytes() == body  # never overwritten, never discarded
    assert not (tmp_path / "experiment.json").exists()


def test_a_partial_file_that_is_a_directory_is_refused_before_any_run(tmp_path, capsys):
    (tmp_path / "experiment.partial.json").mkdir()
    assert main(RUN + ["--skills", SKILLS, "--budget", "1", "--out", str(tmp_path)]) == 2
    assert f"{tmp_path / 'experiment.partial.json'}: error: not a file" in _err(capsys)


# ------------------------------------------------------------------ per-run options
@pytest.mark.parametrize("opts, why", [
    (["--budget", "-1"], "--budget must be 0 or more"),
    (["--size-limit", "0"], "--size-limit must be 1 or more"),
    (["--trials", "0"], "--trials must be 1 or more"),
    (["--trial-ms", "0"], "--trial-ms must be more than 0"),
    (["--trial-ms", "nan"], "--trial-ms must be more than 0"),
    (["--jobs", "0"], "--jobs must be >= 1"),
    (["--cluster", "local:0"], "--cluster 'local:0': local:N needs N >= 1"),
])
def test_a_value_every_run_would_fail_with_is_refused_before_any_run(tmp_path, capsys, opts,
                                                                      why):
    out = tmp_path / "e"
    assert main(RUN + ["--skills", SKILLS, "--out", str(out)] + opts) == 2
    assert f"kltrans: error: {why}" in _err(capsys)
    assert not out.exists()  # not one run, no report whose rows all say the same error


# ------------------------------------------------------------------ --skills
@pytest.mark.parametrize("card, where", [
    ("id: [unclosed\n", ":2:1: error: not valid YAML"),
    ("- a list\n", ":1:1: error: a card is a mapping"),
    ("id: zz-bad\npass: unroll\n", ":1:1: error: not a valid skill card"),
])
def test_a_malformed_card_in_the_library_is_an_input_error_naming_it(tmp_path, capsys, card,
                                                                     where):
    sk = tmp_path / "skills"
    sk.mkdir()
    shutil.copy(os.path.join(SKILLS, "unroll.yaml"), sk / "unroll.yaml")
    bad = sk / "zz-bad.yaml"
    bad.write_text(card)
    out = tmp_path / "e"
    assert main(RUN + ["--skills", str(sk), "--budget", "1", "--out", str(out)]) == 2
    err = _err(capsys)
    assert f"{bad}{where}" in err and "kltrans skills validate" in err, err
    assert bad.read_text() == card and not out.exists()


# ------------------------------------------------------------------ a lost task
def test_a_run_the_executor_lost_is_reported_under_its_target(tmp_path, monkeypatch, capsys):
    """A task whose worker died comes back without its target, strategy and seed: it is
    kept and reported under the item's, not a KeyError after every run has ended."""
    def lose(fn, items, args, backend, keep=None):
        lost = {"ok": False, "verdict": "lost", "reason": "experiment_task raised 2 times: "
                "MemoryError", "attempts": 2}
        for i in range(len(items)):
            keep(i, dict(lost))
        return [lost] * len(items)

    monkeypatch.setattr(ex, "_map", lose)
    out = tmp_path / "e"
    assert main(RUN + ["--skills", SKILLS, "--budget", "1", "--out", str(out)]) == 0
    _err(capsys)
    doc = json.loads((out / "experiment.json").read_text())
    assert [(r["target"], r["strategy"], r["seed"]) for r in doc["rows"]] == [
        ("gelu", "skills", 0)]
    assert "MemoryError" in (out / "experiment.txt").read_text()
    part = json.loads((out / "experiment.partial.json").read_text())
    assert part["runs"][0]["target"] == "gelu"
