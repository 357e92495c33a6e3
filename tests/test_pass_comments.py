"""Property: a pass never deletes or moves a comment outside the code it rewrites.

For every registered pass, its first fixture that applies it is taken with a comment
written after every statement and every opening brace (``/*kc17*/``); the pass runs on
that. Every comment that lies outside the rewritten spans (the edits of the rewrite, and
what the engine removes after it: dead declarations, orphaned pragmas) must still be in
the output, in the same order as before (code a pass copies, into a second version of a
loop say, may take copies of its comments along). A pass that no longer applies once
comments are there passes trivially (what matters here is what applying does).
"""

import re
import sys

import pytest

from kltrans.passes import manager
from kltrans.passes.fixtures import discover, pipeline_names
from kltrans.passes.pipeline import parse_pipeline
from kltrans.passes.registry import names
from kltrans.syntax import parse

COMMENT = re.compile(rb"/\*kc(\d+)\*/")


def _first_cases() -> dict:
    """pass name -> its first positive single-pass fixture."""
    out: dict = {}
    for case in discover():
        ps = pipeline_names(case.pipeline)
        if case.negative or len(ps) != 1 or case.site is not None or case.force:
            continue
        out.setdefault(ps[0], case)
    return out


CASES = _first_cases()


def _commented(src: bytes) -> bytes:
    """``src`` with a numbered comment after each ``;`` or ``{`` that ends a line (not
    in preprocessor lines)."""
    out, k = [], 0
    for line in src.split(b"\n"):
        if not line.lstrip().startswith(b"#") and line.rstrip().endswith((b";", b"{")) \
                and b"//" not in line:
            line = line.rstrip() + b" /*kc%d*/" % k
            k += 1
        out.append(line)
    return b"\n".join(out)


def test_every_pass_has_a_case():
    missing = sorted(set(names()) - set(CASES))
    assert len(missing) < len(names()) // 4, missing  # nearly all: inverse-only folders


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_pass_keeps_the_comments_it_does_not_rewrite(name, monkeypatch):
    case = CASES[name]
    src = _commented(open(case.path, "rb").read())
    unit = parse(src, case.path)
    passes = parse_pipeline(case.pipeline)  # imports the pass module before patching
    rounds = []  # (source the edits apply to, [(start, end)]): the engine's and the
    # passes' own (a pass may rewrite in steps)
    real = manager.apply_edits

    def recording(u, edits):
        rounds.append((u.source, [(e.start, e.end) for e in edits]))
        return real(u, edits)

    for mod in list(sys.modules.values()):  # wherever a module bound the function
        if getattr(mod, "apply_edits", None) is real:
            monkeypatch.setattr(mod, "apply_edits", recording)
    res = manager.run_pipeline(unit, passes, case.context())
    out = res.unit.source
    if not rounds:
        pytest.skip(f"{name} does not apply to {case.name} with comments in it")
    exempt = set()  # comments inside a span some round of edits rewrote
    for text, spans in rounds:
        for m in COMMENT.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in spans):
                exempt.add(m.group(1))
    before = [m.group(1) for m in COMMENT.finditer(src) if m.group(1) not in exempt]
    after = [m.group(1) for m in COMMENT.finditer(out) if m.group(1) not in exempt]
    lost = [c for c in before if c not in after]
    assert not lost, f"{name}: comments lost outside the rewrite: {lost[:5]}"
    # in their order: ``before`` is a subsequence of ``after`` (code a rewrite copies,
    # a version of a loop, keeps its comments: a copy may add occurrences)
    rest = iter(after)
    assert all(c in rest for c in before), f"{name}: comments outside the rewrite moved"
