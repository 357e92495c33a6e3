"""Pass fixtures, in the style of LLVM's lit tests and ast-grep's snapshots.

Each pass module ``passes/NAME.py`` has a folder ``tests/passes/NAME/`` of cases. A case
is ``CASE.cu`` and its golden output ``CASE.expected.cu``. Directives are comments at the
top of ``CASE.cu``::

    // RUN: kltrans opt -p 'unroll{factor=4}' --assume 'n%4==0'
    // CHECK-SKIP: not-unrolled: already has        (negative case: a site is skipped
    //                                               by this precondition, reason substring)
    // ROUNDTRIP: none: const added to x stays      (opt out of the round-trip check, why)
    // ROUNDTRIP: model: the pass writes its own names  (the round trip holds up to model
    //                                               equivalence, not token for token)
    // GATE: corpus/reduce-sum                       (a workload folder, from the repository
    //                                               root: input and output of the case are
    //                                               gated against it, tests/test_pass_semantics.py)

A positive case may also hold refused sites, each after a comment ``// ok: PRECONDITION:
reason`` (semgrep's ``ok:``): the site on the next code line must be skipped by that
precondition, with the reason in its message, while the others apply.

A positive case must apply at least one site; a negative case (with ``CHECK-SKIP``) must
apply none, and its golden output must equal its input. Goldens are written by
``kltrans test-passes -U``, never by hand. pytest collects the same cases
(``tests/test_pass_fixtures.py``).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

from kltrans.passes.facts import Context
from kltrans.passes.manager import run_pipeline
from kltrans.passes.pipeline import parse_pipeline
from kltrans.passes.registry import RegistryError, UnknownPass
from kltrans.syntax import parse
from kltrans.syntax.files import atomic_write

_RUN = re.compile(r"^\s*//\s*RUN:\s*(.*)$", re.MULTILINE)
_SKIP = re.compile(r"^\s*//\s*CHECK-SKIP:\s*(.*?)\s*$", re.MULTILINE)
_RT = re.compile(r"^\s*//\s*ROUNDTRIP:\s*(.*?)\s*$", re.MULTILINE)
_GATE = re.compile(r"^\s*//\s*GATE:\s*(\S+)\s*$", re.MULTILINE)
_OK = re.compile(r"^\s*//\s*ok:\s*([a-z][a-z0-9\-]*)\s*:\s*(.*?)\s*$")


def refused_lines(text: str) -> list[tuple[int, str, str]]:
    """(line of the code the mark is for, precondition, reason) of each ``// ok:`` mark."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = _OK.match(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or lines[j].strip().startswith("//")):
            j += 1
        out.append((j + 1, m.group(1), m.group(2)))
    return out


def repo_root() -> str:
    """The checkout holding the catalogue (the folder above the ``passes`` package)."""
    import passes

    return os.path.dirname(os.path.dirname(os.path.abspath(passes.__file__)))


def fixtures_dir(root: str | None = None) -> str:
    return os.path.join(root or repo_root(), "tests", "passes")


class FixtureError(ValueError):
    pass


@dataclass
class Case:
    path: str  # CASE.cu
    pipeline: str
    assume: tuple = ()
    arch: str | None = None
    kernel: str | None = None
    site: int | None = None
    force: bool = False
    check_skip: tuple = ()
    roundtrip: str = "exact"
    gate: str | None = None  # workload folder, relative to the repository root

    @property
    def name(self) -> str:
        return os.path.basename(self.path)[: -len(".cu")]

    @property
    def roundtrip_mode(self) -> str:
        """``exact``, ``model`` or ``none``: the ROUNDTRIP directive's first word."""
        return self.roundtrip.split(":")[0].strip()

    @property
    def expected_path(self) -> str:
        return self.path[: -len(".cu")] + ".expected.cu"

    @property
    def negative(self) -> bool:
        return bool(self.check_skip)

    def context(self) -> Context:
        return Context.from_strings(self.assume, self.arch, self.force, self.kernel)


def read_case(path: str) -> Case:
    from kltrans.syntax.diagnostics import InputError
    from kltrans.syntax.unit import read_failure, read_source

    try:
        text = read_source(path)
    except InputError as e:
        where, why = read_failure(e)
        raise FixtureError(f"{where}: {why}") from None
    runs = _RUN.findall(text)
    if len(runs) != 1:
        raise FixtureError(f"{path}: needs exactly one '// RUN: kltrans opt -p ...' line")
    argv = shlex.split(runs[0])
    if argv[:2] != ["kltrans", "opt"]:
        raise FixtureError(f"{path}: RUN must start with 'kltrans opt'")
    case = Case(path, "")
    assume = []
    i = 2
    while i < len(argv):
        a = argv[i]
        val = argv[i + 1] if i + 1 < len(argv) else None
        if a in ("-p", "--passes"):
            case.pipeline = val
        elif a == "--assume":
            assume.append(val)
        elif a == "--arch":
            case.arch = val
        elif a == "--kernel":
            case.kernel = val
        elif a == "--site":
            try:
                case.site = int(val)
            except (TypeError, ValueError):
                raise FixtureError(f"{path}: RUN: --site takes a number, not {val!r}") from None
        elif a == "--force":
            case.force = True
            i += 1
            continue
        else:
            raise FixtureError(f"{path}: RUN option {a!r} is not supported in fixtures")
        if val is None:
            raise FixtureError(f"{path}: RUN option {a} needs a value")
        i += 2
    if not case.pipeline:
        raise FixtureError(f"{path}: RUN line has no -p PIPELINE")
    case.assume = tuple(assume)
    case.check_skip = tuple(_SKIP.findall(text))
    rts = _RT.findall(text)
    if rts:
        case.roundtrip = rts[0]
    gates = _GATE.findall(text)
    if len(gates) > 1:
        raise FixtureError(f"{path}: at most one '// GATE: WORKLOAD' line")
    if gates:
        case.gate = gates[0]
    return case


def discover(names: list[str] | None = None, root: str | None = None) -> list[Case]:
    """Every case; or, given pass names, the cases of their modules' folders (a pass and
    its inverse share one) plus any other case whose pipeline uses one of them."""
    base = fixtures_dir(root)
    out = []
    folders = set()
    if names:
        from kltrans.passes.registry import UnknownPass, get_pass

        for n in names:
            try:
                folders.add(get_pass(n).__module__.rsplit(".", 1)[-1])
            except UnknownPass:
                pass
    if not os.path.isdir(base):
        return out
    for folder in sorted(os.listdir(base)):
        d = os.path.join(base, folder)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith(".cu") and not f.endswith(".expected.cu"):
                case = read_case(os.path.join(d, f))
                if names and folder not in folders and \
                        not (set(pipeline_names(case.pipeline)) & set(names)):
                    continue
                out.append(case)
    return out


def pipeline_names(pipeline: str) -> list[str]:
    from kltrans.passes.pipeline import parse_pipeline_text

    return [e.name for e in parse_pipeline_text(pipeline)]


@dataclass
class Outcome:
    case: Case
    ok: bool
    messages: list = field(default_factory=list)
    output: bytes = b""
    updated: bool = False
    applied: int = 0
    remarks: list = field(default_factory=list)


def run_case(case: Case, update: bool = False) -> Outcome:
    with open(case.path, "rb") as f:
        src = f.read()
    unit = parse(src, case.path)
    out = Outcome(case, True)
    if unit.has_errors:
        out.ok = False
        out.messages.append("the input does not parse: " + str(unit.parse_diagnostics()[0]))
        return out
    try:  # a RUN line the pipeline or the facts refuse: this fixture fails, with why
        passes = parse_pipeline(case.pipeline)
        ctx = case.context()
    except (ValueError, UnknownPass, RegistryError) as e:
        out.ok = False
        out.messages.append(f"{case.path}: the RUN line is refused: {e}")
        return out
    res = run_pipeline(unit, passes, ctx, only_site=case.site)
    out.output = res.unit.source
    out.applied = sum(r.applied for r in res.reports)
    for rep in res.reports:
        name = rep.pass_spec.split("{")[0]
        for s in rep.sites:
            out.remarks.append(s.remark(name))
    if case.negative:
        if out.applied:
            out.ok = False
            out.messages.append(f"negative case applied {out.applied} site(s)")
        skipped = []
        for r in res.reports:
            for s in r.sites:
                if s.status == "skipped":
                    reason = s.reason
                    for st in ("fails: ", "unknown: "):
                        if reason.startswith(st):
                            reason = reason[len(st):]
                    skipped.append(f"{s.precondition}: {reason}")
        for want in case.check_skip:
            pre, _, needle = want.partition(":")
            needle = needle.strip()
            if not any(got.startswith(pre.strip() + ": ") and needle in got for got in skipped):
                out.ok = False
                out.messages.append(f"no skip matching {want!r}; skips: {skipped or 'none'}")
        if out.output != src:
            out.ok = False
            out.messages.append("negative case changed the source")
    elif not out.applied:
        out.ok = False
        out.messages.append("positive case applied no site: " + "; ".join(out.remarks))
    else:
        skips = [(s.line, s.precondition, s.reason) for r in res.reports for s in r.sites
                 if s.status == "skipped"]
        for line, pre, needle in refused_lines(src.decode("utf-8", "replace")):
            if not any(ln == line and p == pre and needle in why for ln, p, why in skips):
                out.ok = False
                out.messages.append(f"line {line}: no site skipped by {pre} with {needle!r}; "
                                    f"skips: {skips or 'none'}")
    if not out.ok:
        return out
    if update:
        if not os.path.exists(case.expected_path) or open(case.expected_path, "rb").read() != out.output:
            atomic_write(case.expected_path, out.output)
            out.updated = True
        return out
    if not os.path.exists(case.expected_path):
        out.ok = False
        out.messages.append(f"no golden {os.path.basename(case.expected_path)}; run "
                            f"'kltrans test-passes -U' to create it")
        return out
    with open(case.expected_path, "rb") as f:
        expected = f.read()
    if expected != out.output:
        import difflib

        diff = difflib.unified_diff(expected.decode().splitlines(), out.output.decode().splitlines(),
                                    "expected", "got", lineterm="", n=2)
        out.ok = False
        out.messages.append("output differs from the golden:\n" + "\n".join(diff))
    return out


def roundtrip(case: Case) -> tuple[bool, str]:
    """Apply the case's single pass, then its inverse at each applied site.

    Returns (ok, message). The result must equal the input token for token (comments
    and whitespace may differ, as each pass documents); with ``ROUNDTRIP: model``, or
    else each kernel must be one program as the kernel model reads it
    (:func:`kltrans.model.equivalence.same_model`: the same launches and effects).
    """
    from kltrans.match.pattern import tokens
    from kltrans.passes.manager import run_pass

    with open(case.path, "rb") as f:
        src = f.read()
    unit = parse(src, case.path)
    [p] = parse_pipeline(case.pipeline)
    ctx = case.context()
    sites = p.sites(unit, ctx)
    if case.site is not None:
        sites = [s for s in sites if s.index == case.site]
    inverses = []
    for s in sites:
        if all(v.holds for _, v in p.check(s, ctx)) or ctx.force:
            inverses.append(p.inverse_for(s, ctx))
    after, rep = run_pass(unit, p, ctx, case.site)
    if not rep.applied:
        return False, "the pass applied nowhere"
    specs = {inv.spec() for inv in inverses}
    if len(specs) != 1:
        return False, f"sites need different inverses: {sorted(specs)}"
    inv = inverses[0]
    back, rep2 = run_pass(after, inv, ctx)
    if not rep2.applied:
        return False, f"{inv.spec()} applied nowhere on the output"
    a, b = tokens(unit, unit.root), tokens(back, back.root)
    if a != b and case.roundtrip_mode == "model":
        from kltrans.model.equivalence import same_model

        for fn in unit.kernels():
            ok, why = same_model(unit, back, fn.name)
            if not ok:
                return False, f"round trip differs in the model ({fn.name}): {why}"
        return True, (f"{p.spec()} then {inv.spec()} gives the original back as the kernel "
                      "model reads it")
    if a != b:
        import difflib

        diff = difflib.unified_diff(src.decode().splitlines(), back.source.decode().splitlines(),
                                    "original", f"after {p.spec()} then {inv.spec()}",
                                    lineterm="", n=1)
        return False, "round trip differs:\n" + "\n".join(diff)
    return True, f"{p.spec()} then {inv.spec()} gives the original back"
