"""Output paths and input specs that the CLI refuses before any work: a directory where a
file goes, a path below a file, an output that names an input or another output, a file
that is not a kltrans checkpoint, a workload spec that is not UTF-8 or has a tolerance that
is not a number, a gate asked for no stage or for a kernel without a launch. Each is exit 2
with the path in the message, no traceback, and every input byte for byte as it was."""

import os
import re
import shutil

import pytest

from kltrans.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GELU = os.path.join(ROOT, "corpus", "heldout", "gelu")


def kltrans(capsys, *argv):
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return rc, err


@pytest.fixture
def kernel(tmp_path):
    k = tmp_path / "k.cu"
    shutil.copy(os.path.join(GELU, "naive.cu"), k)
    return k


def test_optimize_checks_every_output_before_any_gate(kernel, tmp_path, capsys):
    base = ["optimize", kernel, "--workload", GELU, "--backend", "cpu", "--budget", "1", "-q"]
    text = kernel.read_bytes()
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("keep")
    for extra, what in ((["--log", kernel], "--log would overwrite the input kernel"),
                        (["-o", tmp_path / "x.cu", "--log", tmp_path / "x.cu"],
                         "--log would overwrite the -o file"),
                        (["-o", tmp_path / "d"], "-o is a directory"),
                        (["--log", tmp_path / "f" / "log.json"], "is a file"),
                        (["--checkpoint", tmp_path / "d"], "--checkpoint is a directory")):
        rc, err = kltrans(capsys, *base, *extra)
        assert rc == 2 and what in err, (extra, err)
        assert kernel.read_bytes() == text and (tmp_path / "f").read_text() == "keep"
        assert not (tmp_path / "x.cu").exists()


@pytest.mark.parametrize("content", ["__global__ void k() {}\n", '{"v": [', "[1, 2]\n",
                                     '{"key": 1}\n'])
def test_optimize_never_replaces_a_file_that_is_not_its_checkpoint(kernel, tmp_path, capsys,
                                                                   content):
    ck = tmp_path / "precious.json"
    ck.write_text(content)
    rc, err = kltrans(capsys, "optimize", kernel, "--workload", GELU, "--backend", "cpu",
                      "--budget", "1", "-q", "--checkpoint", ck, "-o", tmp_path / "o.cu")
    assert rc == 2 and "not a kltrans checkpoint" in err and str(ck) in err
    assert ck.read_text() == content and not (tmp_path / "o.cu").exists()


def test_optimize_size_limit_that_keeps_no_size_is_a_usage_error(kernel, capsys):
    rc, err = kltrans(capsys, "optimize", kernel, "--workload", GELU, "--backend", "cpu",
                      "--budget", "1", "-q", "--size-limit", "0")
    assert rc == 2 and "--size-limit 0 keeps none of the test sizes" in err


def test_output_directories_that_are_files(tmp_path, capsys):
    f = tmp_path / "file.cu"
    f.write_text("keep")
    corpus = os.path.join(ROOT, "corpus")
    for argv, flag in ((["bench-corpus", corpus, "--only", "histogram", "--backend", "cpu",
                         "--out", f], "--out is a file"),
                       (["lineage", os.path.join(corpus, "reduce-sum"), "--backend", "cpu",
                         "--out", f], "--out is a file"),
                       (["skills", "extract", os.path.join(corpus, "reduce-sum", "lineage"),
                         "-o", f], "-o is a file"),
                       (["experiment", corpus, "--backend", "cpu", "--budget", "1", "-q",
                         "--out", f], "--out is a file"),
                       (["experiment", corpus, "--backend", "cpu", "--budget", "1", "-q",
                         "--results", tmp_path], "--results is a directory")):
        rc, err = kltrans(capsys, *argv)
        assert rc == 2 and flag in err, (argv, err)
        assert f.read_text() == "keep"


def test_bench_corpus_reads_every_spec_and_name_first(tmp_path, capsys):
    corpus = tmp_path / "c"
    shutil.copytree(os.path.join(ROOT, "corpus", "histogram"), corpus / "histogram")
    shutil.copytree(os.path.join(ROOT, "corpus", "histogram"), corpus / "bad")
    with open(corpus / "bad" / "workload.yaml", "a") as f:
        f.write("x: [\n")
    rc, err = kltrans(capsys, "bench-corpus", corpus, "--only", "bad", "--backend", "cpu")
    assert rc == 2 and "bad/workload.yaml: line" in err and "not valid YAML" in err
    rc, err = kltrans(capsys, "bench-corpus", corpus, "--only", "nosuch", "--backend", "cpu")
    assert rc == 2 and "--only nosuch: no such workload" in err and "histogram" in err


def test_workload_spec_not_utf8_or_with_a_tolerance_that_is_not_a_number(tmp_path, kernel,
                                                                         capsys):
    for name, edit, what in (
            ("enc", lambda t: t + b"description2: \xff\n", "not UTF-8 text"),
            ("tol", lambda t: re.sub(rb"rtol: [-+0-9.eE]+", b"rtol: tight", t, count=1),
             "tolerance.y.rtol: must be a number")):
        wl = tmp_path / name
        shutil.copytree(GELU, wl)
        spec = wl / "workload.yaml"
        spec.write_bytes(edit(spec.read_bytes()))
        rc, err = kltrans(capsys, "gate", kernel, "--workload", wl, "--backend", "cpu")
        assert rc == 2 and f"{spec}" in err and what in err, err


def test_gate_input_errors_are_usage_errors(tmp_path, kernel, capsys):
    """What the user gave wrong is exit 2 before any check runs, not a failed check: no
    launch contract, a malformed one, a reference that is not Python, an input
    distribution with a parameter that is not a number, no stage, a timeout of 0, a
    negative size."""
    text = kernel.read_text()
    nohdr = tmp_path / "nohdr.cu"
    nohdr.write_text("".join(ln for ln in text.splitlines(True) if "kltrans: launch" not in ln))
    bad = tmp_path / "badhdr.cu"
    bad.write_text(text.replace("grid=", "grod=", 1))
    ref = tmp_path / "ref"
    shutil.copytree(GELU, ref)
    with open(ref / "reference.py", "a") as f:
        f.write("def broken(:\n")
    dist = tmp_path / "dist"
    shutil.copytree(GELU, dist)
    spec = (dist / "workload.yaml").read_text()
    assert "std: 2.0}" in spec
    (dist / "workload.yaml").write_text(spec.replace("std: 2.0}", "std: wide}"))
    cpu = ["--backend", "cpu"]
    for argv, what in (
            ([nohdr, "--workload", GELU], "no launch contract for gelu_naive"),
            ([bad, "--workload", GELU], f"{bad}:1:1: unknown key 'grod'"),
            ([kernel, "--workload", ref], f"{ref / 'reference.py'}:"),
            ([kernel, "--workload", dist], "inputs.x.std: must be a number"),
            ([kernel, "--workload", GELU, "--stages", ""], "--stages names no stage"),
            ([kernel, "--workload", GELU, "--timeout", "0"], "--timeout must be more than 0"),
            ([kernel, "--workload", GELU, "--sizes", "n=-5"], "n=-5: a size is 0 or more")):
        rc, err = kltrans(capsys, "gate", *argv, *cpu)
        assert rc == 2 and what in err, (argv, err)
    assert kernel.read_text() == text


def test_search_and_walk_numbers_out_of_range(kernel, capsys):
    base = ["optimize", kernel, "--workload", GELU, "--backend", "cpu", "--budget", "1", "-q"]
    for extra, what in ((["--time-budget", "-5"], "--time-budget must be more than 0"),
                        (["--trial-ms", "-5"], "--trial-ms more than 0"),
                        (["--strategy", "memory", "--corpus", "no-such-dir"],
                         "no-such-dir: no such corpus folder")):
        rc, err = kltrans(capsys, *base, *extra)
        assert rc == 2 and what in err, (extra, err)
    rc, err = kltrans(capsys, "lineage", os.path.join(ROOT, "corpus", "reduce-sum"),
                      "--backend", "cpu", "--probes", "-1", "--out", kernel.parent / "L")
    assert rc == 2 and "--probes >= 0" in err
    assert not (kernel.parent / "L").exists()
