"""Defaults write to a new folder, and bundled data is found from anywhere.

A new user's first hour: the README's ``kltrans lineage corpus/reduce-sum ...`` failed on
a fresh clone (the committed H200 walk is "a walk made with other inputs"), and its hint,
``--restart``, would have overwritten that walk; ``skills extract``/``render`` wrote into
the committed ``skills/``; outside the checkout ``skills list`` said "skills: not a
directory". Every command here runs in a scratch directory, as a user outside the
checkout would, and the repository is compared before and after."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _digest(*dirs: str) -> str:
    h = hashlib.sha256()
    for d in dirs:
        for dp, dns, fs in sorted(os.walk(d)):
            dns.sort()
            for f in sorted(fs):
                p = os.path.join(dp, f)
                h.update(p.encode() + b"\0" + open(p, "rb").read())
    return h.hexdigest()


def _kltrans(cwd, *argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kltrans", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def _readme_command(prefix: str) -> list[str]:
    """The README's ``$ kltrans PREFIX ...`` example, split as the shell would."""
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    m = re.search(r"^\$ (kltrans " + re.escape(prefix) + r".*)$", text, re.M)
    assert m, f"the README has no '$ kltrans {prefix}' example"
    return shlex.split(m.group(1))[1:]


@pytest.mark.skipif(shutil.which("g++") is None, reason="the CPU emulator needs g++")
def test_the_readme_lineage_example_walks_into_a_new_folder(tmp_path):
    argv = _readme_command("lineage corpus/reduce-sum")
    # as written, from outside the checkout: the workload named where it is, and two
    # steps (the failure was at the start: the committed walk was in the way)
    argv = [os.path.join(ROOT, a) if a.startswith("corpus/") else a for a in argv]
    committed = os.path.join(ROOT, "corpus", "reduce-sum")
    before = _digest(committed)
    r = _kltrans(tmp_path, *argv, "--max-steps", "2", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "reduce-sum: 2 step(s)" in r.stdout
    assert (tmp_path / "kltrans-out" / "lineage" / "reduce-sum" / "lineage.json").is_file()
    assert _digest(committed) == before
    # walked again: resumed from its own folder, not refused
    r = _kltrans(tmp_path, *argv, "--max-steps", "2", "--quiet")
    assert r.returncode == 0 and "reduce-sum: 2 step(s)" in r.stdout, r.stderr


def test_skills_extract_and_render_default_to_a_new_folder(tmp_path):
    lineages = [os.path.join(ROOT, "corpus", w, "lineage") for w in ("reduce-sum", "histogram")]
    before = _digest(os.path.join(ROOT, "skills"))
    r = _kltrans(tmp_path, "skills", "extract", *lineages)
    assert r.returncode == 0, r.stderr
    cards = tmp_path / "kltrans-out" / "skills"
    assert f"written to {os.path.join('kltrans-out', 'skills')}" in r.stdout
    assert any(p.suffix == ".yaml" for p in cards.iterdir())
    extracted = _digest(str(cards))
    r = _kltrans(tmp_path, "skills", "render", "--dir", str(cards), "-o", str(tmp_path / "views"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "views" / "README.md").is_file()
    assert _digest(str(cards)) == extracted  # the cards' folder as it was
    assert _digest(os.path.join(ROOT, "skills")) == before


def test_the_shipped_library_is_found_outside_the_checkout(tmp_path):
    r = _kltrans(tmp_path, "skills", "list")
    assert r.returncode == 0, r.stderr
    assert "unroll" in r.stdout
    before = _digest(os.path.join(ROOT, "skills"))
    r = _kltrans(tmp_path, "skills", "render")  # the shipped library, viewed here
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "kltrans-out" / "skills" / "README.md").is_file()
    assert _digest(os.path.join(ROOT, "skills")) == before


def test_a_missing_library_names_the_flag(tmp_path):
    r = _kltrans(tmp_path, "skills", "list", "--dir", str(tmp_path / "none"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    from kltrans.paths import MissingData, bundled

    assert bundled("skills", None, "--dir", required=False) is not None  # shipped here
    with pytest.raises(MissingData, match="name the folder with --dir DIR"):
        bundled("no-such-folder", None, "--dir")
