"""Every pass, on fixtures written for other passes, either refuses (a skipped site, with
its reason) or makes code that still compiles with NVRTC: the property that makes
"exit 0 with code that does not compile" hard to ship.

The sweep is sampled, deterministically: each registered pass runs on the inputs of the
fixture folders of SAMPLE (1) other pass (chosen by a stable hash of the two names), with the
facts of each fixture's RUN line. The whole cross product (every pass on every fixture of
every other) is ``KLTRANS_PROPERTY_FULL=1``.
"""

from __future__ import annotations

import hashlib
import os

import pytest

from kltrans.passes.fixtures import discover
from kltrans.passes.registry import get_pass, names

SAMPLE = 1
FULL = os.environ.get("KLTRANS_PROPERTY_FULL") == "1"

INPUTS: dict[str, list] = {}
for _case in discover():
    _folder = os.path.basename(os.path.dirname(_case.path))
    INPUTS.setdefault(_folder, []).append(_case)


def _module_folder(name: str) -> str:
    return get_pass(name).__module__.rsplit(".", 1)[-1]


def _others(name: str) -> list[str]:
    own = _module_folder(name)
    folders = sorted(f for f in INPUTS if f != own)
    if FULL:
        return folders
    rank = sorted(folders, key=lambda f: hashlib.sha256(f"{name}|{f}".encode()).hexdigest())
    return rank[:SAMPLE]


@pytest.mark.slow
@pytest.mark.parametrize("name", names())
def test_a_pass_refuses_or_compiles_on_other_passes_fixtures(name):
    from kltrans.gate.compile import compile_unit
    from kltrans.passes.facts import Context
    from kltrans.passes.manager import run_pass
    from kltrans.syntax.unit import load

    cls = get_pass(name)
    bad = []
    for folder in _others(name):
        for case in INPUTS[folder]:
            [unit] = load(case.path)
            before = compile_unit(unit, arch="sm_90")
            if not before.ok:
                continue  # an input that does not compile proves nothing about the pass
            ctx = Context.from_strings(case.assume, case.arch, False, case.kernel)  # no --force
            new, rep = run_pass(unit, cls(), ctx, skip_unforceable=True)
            for s in rep.sites:
                assert s.status in ("applied", "skipped", "failed"), (case.path, s)
                assert s.status == "applied" or s.reason, (case.path, s)  # refused: why
            if new is unit:
                continue
            r = compile_unit(new, arch="sm_90")
            if not r.ok:
                first = r.errors[0].message if r.errors else r.log[-300:]
                bad.append(f"{case.path}: {first}")
    assert not bad, f"{name} made code that does not compile:\n" + "\n".join(bad)
