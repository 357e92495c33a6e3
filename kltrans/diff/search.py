"""Explaining a difference as a sequence of registered passes.

``explain(a, b, depth=2)`` searches for passes (with their sites and options) that turn A
into B, comparing units by their diff signature (:func:`kltrans.diff.tree.signature`:
leaf tokens, comments and formatting aside, pragmas and ``// kltrans:`` lines included).

The search is bidirectional breadth-first: *forward* moves apply a pass to a state
reached from A; *backward* moves apply a pass to a state reached from B (so "B gives A
under simplify pass S" is found at depth 1). A forward chain and a backward chain meet at
a common state; the backward chain is then turned around with each pass's
``inverse_for(site)`` (the optimize pass configured from the site: that is how option
values such as an unroll factor are recovered from B), and the whole pipeline is run from
A and must give B (a pipeline that has not been run is never reported). A move is
tried:

- for every registered pass whose anchor has sites (``Pass.sites``) that touch the
  difference between the state and the goal (tokens of a token-level diff, so a pass at a
  site the two versions share is never tried), and whose preconditions hold there;
- at all of its sites (what ``kltrans opt -p PASS`` does) and at each site alone
  (``--site N``);
- with default options; then, when a level finds nothing, with each option set in turn to
  each value of its declared domain (``Domain.values()``) at the moves from A and from B;
  a pass whose ``goal_options`` reads its values off the goal (a block size) tries those
  alone, at every level.

When no sequence of at most ``depth`` passes gives B, the explanation is the forward
chain that comes closest, and the residual diff (hunks no pass explains).
"""

from __future__ import annotations

import bisect
import difflib
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kltrans.diff.tree import lower, signature
from kltrans.model.values import time_budget

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.diff.core import Diff
    from kltrans.passes.base import Pass
    from kltrans.passes.facts import Context
    from kltrans.syntax import Unit

MAX_VARIANTS = 24  # option variants tried per pass


@dataclass
class Step:
    """One pass of an explanation: ``spec`` at ``site`` (None: every site)."""

    spec: str
    site: int | None
    line: int = 0
    column: int = 0
    function: str | None = None

    def to_json(self) -> dict:
        return {"pass": self.spec, "site": self.site, "line": self.line,
                "column": self.column, "function": self.function}

    def describe(self) -> str:
        if self.site is None:
            return f"{self.spec} (every site)"
        fn = f" in {self.function}" if self.function else ""
        return f"{self.spec} at site {self.site} (line {self.line}{fn})"


@dataclass
class Explanation:
    a_path: str
    b_path: str
    exact: bool
    direction: str  # equal | forward | inverse | mixed | none
    steps: list[Step]  # applied to A, they give B (verified by running them)
    inverse_steps: list[Step] = field(default_factory=list)  # applied to B, they give A
    residual: "Diff | None" = None  # what the steps leave unexplained (None when exact)
    alternatives: list[list[Step]] = field(default_factory=list)
    depth: int = 0
    seconds: float = 0.0
    tried: int = 0  # pass applications
    assume: tuple = ()
    arch: str | None = None
    kernel: str | None = None
    # with canonical=True: the canonicalization steps on each side ({"a": n, "b": m,
    # "notes": [...]}); the steps then turn canonical A into canonical B
    canonical: dict | None = None
    # how the result equals the goal: "tokens" (kltrans diff finds no difference),
    # "machine code" (it compiles to the goal's cubin and launches alike: comments,
    # names the compiler drops, unused macros may differ) or "model" (the same launches,
    # kinds of mechanism and effects as the kernel model runs them: kltrans.model.
    # equivalence; ``note`` says how)
    equal: str = "tokens"
    note: str | None = None
    # the kernel of A that B names otherwise, (A's name, B's name): the search ran on A
    # with the kernel renamed (a name is not a mechanism); None when the names agree
    renamed: tuple | None = None

    @property
    def pipeline(self) -> str:
        return ",".join(s.spec for s in self.steps)

    def commands(self, a_path: str | None = None, out: str | None = None) -> list[str]:
        """``kltrans opt`` command lines that turn A into B: one line when every step runs
        at every site or all steps at the same site, else one line per group of steps
        (each writing a file the next reads)."""
        import shlex

        path = a_path or self.a_path
        if not self.steps:
            return []
        groups: list[tuple[int | None, list[Step]]] = []
        for s in self.steps:
            if groups and groups[-1][0] == s.site:
                groups[-1][1].append(s)
            else:
                groups.append((s.site, [s]))
        common = []
        if self.kernel:
            common += ["--kernel", self.kernel]
        if self.arch:
            common += ["--arch", self.arch]
        for f in self.assume:
            common += ["--assume", f]
        suffix = "." + path.rsplit(".", 1)[-1] if "." in path.rsplit("/", 1)[-1] else ".cu"
        lines = []
        src = path
        for i, (site, steps) in enumerate(groups):
            argv = ["kltrans", "opt", "-p", ",".join(s.spec for s in steps)]
            if site is not None:
                argv += ["--site", str(site)]
            argv += common + [src]
            last = i == len(groups) - 1
            if not last or out:
                dst = out if last else f"kltrans-explain-{i + 1}{suffix}"
                argv += ["-o", dst]
                src = dst
            lines.append(" ".join(shlex.quote(x) for x in argv))
        return lines

    def to_json(self) -> dict:
        d = {"a": self.a_path, "b": self.b_path, "exact": self.exact,
             "direction": self.direction, "pipeline": self.pipeline,
             "steps": [s.to_json() for s in self.steps],
             "inverse_steps": [s.to_json() for s in self.inverse_steps],
             "commands": self.commands(), "depth": self.depth,
             "seconds": round(self.seconds, 3), "tried": self.tried,
             "alternatives": [",".join(s.spec for s in alt) + "".join(
                 f" [site {s.site}]" for s in alt if s.site is not None) for alt in self.alternatives],
             "residual": None}
        if self.canonical is not None:
            d["canonical"] = self.canonical
        if self.exact:
            d["equal"] = self.equal
            if self.note:
                d["equal_note"] = self.note
        if self.renamed:
            d["renamed"] = {"a": self.renamed[0], "b": self.renamed[1]}
        if self.residual is not None:
            r = self.residual.to_json()
            d["residual"] = {"actions": r["actions"], "hunks": r["hunks"], "stat": r["stat"]}
        return d


# ------------------------------------------------------------------------ search
@dataclass
class _Move:
    pass_: "Pass"
    site: int | None
    site_obj: object  # the Site (of the state the move was applied to)
    line: int
    column: int
    function: str | None

    def step(self) -> Step:
        return Step(self.pass_.spec(), self.site, self.line, self.column, self.function)

    def undoes(self, chain: list) -> bool:
        """Whether this move is the inverse pass of the chain's last move: the pair gives
        the state before back in another spelling at best, and explains nothing."""
        if not chain:
            return False
        last = chain[-1][0].pass_
        return self.pass_.name == getattr(last, "inverse", None) or \
            last.name == getattr(self.pass_, "inverse", None)


@dataclass
class _State:
    unit: "Unit"
    chain: list  # [(_Move, the unit the move was applied to)]


class _Search:
    def __init__(self, ctx: "Context", passes: list, deadline: float | None):
        self.ctx = ctx
        self.classes = passes
        self.tried = 0
        self.deadline = deadline

    # -- the difference between a state and a goal, as byte ranges in the state
    def changed_ranges(self, unit: "Unit", goal: "Unit") -> list[tuple[int, int]]:
        ta = _leaves(unit)
        tb = _leaves(goal)
        ka = [(n.type, n.label) for n in ta]
        kb = [(n.type, n.label) for n in tb]
        out = []
        sm = difflib.SequenceMatcher(None, ka, kb, autojunk=False)
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag == "equal":
                continue
            if i1 < i2:
                out.append((ta[i1].start, ta[i2 - 1].end))
            else:
                lo = ta[i1 - 1].end if i1 > 0 else 0
                hi = ta[i1].start if i1 < len(ta) else len(unit.source)
                out.append((lo, hi))
        return out

    @staticmethod
    def _touches(unit: "Unit", node, ranges) -> bool:
        leaves = _leaves(unit)
        starts = unit._cache.setdefault("diff-leaf-starts", [n.start for n in leaves])
        i = bisect.bisect_left(starts, node.start_byte)
        lo = leaves[i - 1].end if i > 0 else 0
        j = bisect.bisect_left(starts, node.end_byte)
        hi = leaves[j].start if j < len(leaves) else len(unit.source)
        return any(s <= hi and lo <= e for s, e in ranges)

    def expired(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    def moves(self, unit: "Unit", goal: "Unit", variants: bool):
        """(move, new unit) for every pass and site that touches the difference."""
        from kltrans.passes.manager import run_pass

        ranges = self.changed_ranges(unit, goal)
        for cls in self.classes:
            if self.deadline is not None and time.perf_counter() > self.deadline:
                return
            base = cls()
            try:
                sites = base.sites(unit, self.ctx)
            except Exception:
                continue
            near = [s for s in sites if self._touches(unit, s.node, ranges)]
            if not near:
                continue
            wanted = cls.goal_options(goal)
            if wanted is not None:  # the goal says which values: those alone
                configs = []
                for o in wanted:
                    try:
                        configs.append(cls(**o))
                    except Exception:
                        continue
            else:
                configs = [base] + (_variants(cls, base) if variants else [])
            for p in configs:
                yield from self._apply(unit, p, sites, near, run_pass)

    def _apply(self, unit, p, sites, near, run_pass):
        ctx = self.ctx
        ok = []
        for s in near:
            try:
                if all(v.holds for _, v in p.check(s, ctx)) or ctx.force:
                    ok.append(s)
            except Exception:
                continue
        if not ok:
            return
        first = ok[0]
        loc = first.location()
        fn = first.function.name if first.function else None
        try:
            self.tried += 1
            new, rep = run_pass(unit, p, ctx)
        except Exception:
            new, rep = unit, None
        applied = [r for r in rep.sites if r.status == "applied"] if rep else []
        if applied:
            yield _Move(p, None, first, loc.line, loc.column, fn), new
        if len(applied) <= 1 and len(sites) == 1:
            return
        for s in ok:
            try:
                self.tried += 1
                new1, rep1 = run_pass(unit, p, ctx, only_site=s.index)
            except Exception:
                continue
            if not rep1.applied or (applied and len(applied) == 1 and new1.source == new.source):
                continue
            l1 = s.location()
            yield _Move(p, s.index, s, l1.line, l1.column,
                        s.function.name if s.function else None), new1


def _leaves(unit: "Unit"):
    got = unit._cache.get("diff-leaves")
    if got is None:
        got = [n for n in lower(unit).nodes if not n.children]
        unit._cache["diff-leaves"] = got
    return got


def _variants(cls, base) -> list:
    out = []
    for spec in cls.options():
        try:
            values = spec.domain.values()
        except Exception:
            continue
        for v in values:
            if v == spec.default:
                continue
            try:
                out.append(cls(**{spec.field: v}))
            except Exception:
                continue
            if len(out) >= MAX_VARIANTS:
                return out
    return out


def _as_unit(x, path: str) -> "Unit":
    from kltrans.syntax import Unit, parse

    if isinstance(x, Unit):
        return x
    return parse(x, path)


def _pass_classes(names: list[str] | None):
    from kltrans.passes.registry import get_pass, names as all_names

    wanted = names or all_names()
    return [get_pass(n) for n in wanted]


def _invert(move: _Move, before: "Unit", after: "Unit", ctx, run_pass) -> tuple | None:
    """The step that turns ``after`` (a move's result) back into ``before``: the move's
    pass's ``inverse_for`` the site, at every site, else at one site."""
    try:
        inv = move.pass_.inverse_for(move.site_obj, ctx)
    except Exception:
        return None
    want = signature(before)
    try:
        back, rep = run_pass(after, inv, ctx)
    except Exception:
        rep = None
    if rep is not None and rep.applied and signature(back) == want:
        s = next(r for r in rep.sites if r.status == "applied")
        return Step(inv.spec(), None, s.line, s.column, s.function), back
    try:
        sites = inv.sites(after, ctx)
    except Exception:
        return None
    for s in sites:
        try:
            back, rep = run_pass(after, inv, ctx, only_site=s.index)
        except Exception:
            continue
        if rep.applied and signature(back) == want:
            loc = s.location()
            return Step(inv.spec(), s.index, loc.line, loc.column,
                        s.function.name if s.function else None), back
    return None


def _replay(a: "Unit", steps: list[Step], passes: list, ctx, run_pass) -> "Unit | None":
    """Run the steps from A (as ``kltrans opt`` would)."""
    unit = a
    for st, p in zip(steps, passes):
        try:
            unit, rep = run_pass(unit, p, ctx, only_site=st.site)
        except Exception:
            return None
        if not rep.applied:
            return None
    return unit


def _explain(a_src, b_src, depth: int = 2, assume: tuple = (), arch: str | None = None,
            kernel: str | None = None, passes: list[str] | None = None,
            a_path: str = "A.cu", b_path: str = "B.cu", time_limit: float | None = None,
            variants: bool = True, canonical: bool = False, code: bool = True,
            model: bool = True) -> Explanation:
    """Search for a pass sequence of at most ``depth`` passes that turns A into B.

    ``a_src``/``b_src``: source text or :class:`~kltrans.syntax.Unit`. ``assume``, ``arch``,
    ``kernel``: as for ``kltrans opt`` (facts the code does not state). ``passes``: the
    pass names to use (default: the whole registry). ``canonical``: both sides are
    canonicalized first (:mod:`kltrans.passes.canonical`, checked to keep the machine
    code); the explanation then holds up to canonical form, and its pipeline starts with
    ``canonicalize`` when A was not canonical. ``code``: when no sequence gives B token
    for token, a state of the search that compiles to B's machine code (or, backwards,
    to A's) with the same launches counts (``equal`` says "machine code"): the passes
    then give B's program, spelled another way (comments, an unused macro, names the
    compiler drops). ``model``: failing that, a state with the goal's launches, kinds of
    mechanism and effects as the kernel model runs them counts (``equal`` says "model",
    ``note`` how: :func:`kltrans.model.equivalence.same_model`): a human-written version
    spells the mechanisms the passes write in its own way.
    """
    from kltrans.passes.facts import Context
    from kltrans.passes.manager import run_pass

    t0 = time.perf_counter()
    a = _as_unit(a_src, a_path)
    b = _as_unit(b_src, b_path)
    ctx = Context.from_strings(tuple(assume), arch, False, kernel)
    canon = None
    if canonical:
        from kltrans.passes.canonical import canonicalize

        a, a_steps, a_notes = canonicalize(a, arch=arch)
        b, b_steps, b_notes = canonicalize(b, arch=arch)
        canon = {"a": len(a_steps), "b": len(b_steps), "notes": a_notes + b_notes}
    a, renamed = _rename_kernel(a, b)
    deadline = t0 + time_limit if time_limit else None
    search = _Search(ctx, _pass_classes(passes), deadline)
    common = dict(assume=tuple(assume), arch=arch, kernel=kernel, a_path=a_path, b_path=b_path,
                  canonical=canon, renamed=renamed)
    lead = [Step("canonicalize", None, 1, 1)] if canon and canon["a"] else []
    sa, sb = signature(a), signature(b)
    if sa == sb:
        return Explanation(exact=True, direction="equal", steps=lead, depth=0,
                           seconds=time.perf_counter() - t0, **common)
    fwd = {sa: _State(a, [])}
    bwd = {sb: _State(b, [])}
    front_f, front_b = [fwd[sa]], [bwd[sb]]
    df = db = 0
    found: list[tuple[list[Step], list[Step], str]] = []
    while df + db < depth and not found and (front_f or front_b):
        forward = (df <= db and bool(front_f)) or not front_b
        frontier = front_f if forward else front_b
        own, other = (fwd, bwd) if forward else (bwd, fwd)
        goal = b if forward else a
        new_front = []
        meets = []
        for use_variants in ((False, True) if variants else (False,)):
            for st in frontier:
                if use_variants and st.chain:  # option variants only from A and from B
                    continue
                for mv, unit in search.moves(st.unit, goal, use_variants):
                    s = signature(unit)
                    if s in own or mv.undoes(st.chain):
                        continue
                    ns = _State(unit, st.chain + [(mv, st.unit)])
                    own[s] = ns
                    new_front.append(ns)
                    if s in other:
                        meets.append((ns, other[s]) if forward else (other[s], ns))
            found = _build(meets, a, b, ctx, run_pass)
            if found:
                break
        if forward:
            df += 1
            front_f = new_front
        else:
            db += 1
            front_b = new_front
    equal, note = "tokens", None
    am, bm = a, b   # the sides as the model compares them (idle pragmas dropped)
    if not found and model:
        am, bm = _idle_pragmas_dropped(a, arch), _idle_pragmas_dropped(b, arch)
    if found and not any(f[0] for f in found):
        # "B gives A under a simplify pass" names no pass that gives B from A: a forward
        # state with B's program spelled otherwise is preferred (forward states only)
        for kind in ("machine code", "model"):
            if kind == "machine code" and not code or kind == "model" and not model:
                continue
            got, why = (_same_program(a, b, fwd, {}, arch, deadline), None) \
                if kind == "machine code" else _same_model(a, b, fwd, {}, ctx, kernel, deadline,
                                                           (am, bm))
            if got:
                found, equal, note = got, kind, why
                break
    if not found and code:
        found = _same_program(a, b, fwd, bwd, arch, deadline)
        equal = "machine code"
    if not found and model:
        found, note = _same_model(a, b, fwd, bwd, ctx, kernel, deadline, (am, bm))
        equal = "model"
    if not found and model:
        found, note = _mixed_model(a, b, fwd, bwd, ctx, kernel, deadline, run_pass, (am, bm))
    # a chain of simplifications alone may take the whole depth (an expert step that adds
    # two mechanisms, each peeled by its own simplify pass): when nothing above meets, B is
    # peeled further by backward moves alone, and only A itself (its tokens, its machine
    # code or its program as the model reads it) can meet what is found
    while not found and front_b and db < depth and not search.expired():
        new_front, meets, fresh = [], [], {}
        for st in front_b:
            for mv, unit in search.moves(st.unit, a, False):
                s = signature(unit)
                if s in bwd or mv.undoes(st.chain):
                    continue
                ns = _State(unit, st.chain + [(mv, st.unit)])
                bwd[s] = fresh[s] = ns
                new_front.append(ns)
                if s == sa:
                    meets.append((fwd[sa], ns))
        found, equal = _build(meets, a, b, ctx, run_pass), "tokens"
        if not found and code:
            found, equal = _same_program(a, b, {}, fresh, arch, deadline), "machine code"
        if not found and model:
            (found, note), equal = _same_model(a, b, {}, fresh, ctx, kernel, deadline,
                                               (am, bm)), "model"
        db += 1
        front_b = new_front
    secs = time.perf_counter() - t0
    if found:
        steps, inv_steps, direction = found[0]
        alts = [f[0] for f in found[1:6] if f[0]]
        return Explanation(exact=True, direction=direction, steps=lead + steps,
                           inverse_steps=inv_steps, alternatives=alts,
                           depth=max(len(steps), len(inv_steps)), seconds=secs,
                           tried=search.tried, equal=equal, note=note, **common)
    # the closest forward state, and what is left
    from kltrans.diff.core import diff_units

    kb = [(n.type, n.label) for n in _leaves(b)]
    best, best_r = fwd[sa], difflib.SequenceMatcher(
        None, [(n.type, n.label) for n in _leaves(a)], kb, autojunk=False).ratio()
    for s, st in fwd.items():
        if not st.chain:
            continue
        r = difflib.SequenceMatcher(None, [(n.type, n.label) for n in _leaves(st.unit)], kb,
                                    autojunk=False).ratio()
        if r > best_r + 1e-9:
            best, best_r = st, r
    steps = lead + [mv.step() for mv, _ in best.chain]
    residual = diff_units(best.unit, b)
    return Explanation(exact=False, direction="none" if len(steps) == len(lead) else "forward",
                       steps=steps, residual=residual, depth=depth,
                       seconds=time.perf_counter() - t0, tried=search.tried, **common)



def explain(a_src, b_src, depth: int = 2, assume: tuple = (), arch: str | None = None,
            kernel: str | None = None, passes: list[str] | None = None,
            a_path: str = "A.cu", b_path: str = "B.cu", time_limit: float | None = None,
            variants: bool = True, canonical: bool = False, code: bool = True,
            model: bool = True) -> Explanation:
    # the time limit holds inside the model's runs too (a precondition or an equality
    # check on the block machine stops at the deadline, Unsupported: not checked)
    deadline = time.perf_counter() + time_limit if time_limit else None
    with time_budget(deadline):
        return _explain(a_src, b_src, depth, assume, arch, kernel, passes, a_path, b_path,
                        time_limit, variants, canonical, code, model)


explain.__doc__ = _explain.__doc__

def _build(meets, a, b, ctx, run_pass) -> list[tuple[list[Step], list[Step], str]]:
    """Verified pipelines from the meeting points, best first."""
    out = []
    seen = set()
    for fs, bs in meets:
        f_steps = [mv.step() for mv, _ in fs.chain]
        f_passes = [mv.pass_ for mv, _ in fs.chain]
        inv_steps = [mv.step() for mv, _ in bs.chain]  # applied to B, towards A
        # turn the backward chain around: the last backward move is undone first
        cur = fs.unit
        tail_steps, tail_passes, ok = [], [], True
        for mv, before in reversed(bs.chain):
            got = _invert(mv, before, cur, ctx, run_pass)
            if got is None:
                ok = False
                break
            st, cur = got
            tail_steps.append(st)
            tail_passes.append(_pass_of(st.spec))
        if not ok:
            if not fs.chain:  # B gives A under the backward chain: report it as such
                out.append(([], inv_steps, "inverse"))
            continue
        steps = f_steps + tail_steps
        key = tuple((s.spec, s.site) for s in steps)
        if key in seen:
            continue
        final = _replay(a, steps, f_passes + tail_passes, ctx, run_pass)
        if final is None or signature(final) != signature(b):
            continue
        seen.add(key)
        direction = "forward" if not bs.chain else ("inverse" if not fs.chain else "mixed")
        out.append((steps, inv_steps, direction))
    rank = {"forward": 0, "inverse": 1, "mixed": 2}
    # a pipeline that needs no --site, then default options, first
    out.sort(key=lambda x: (not x[0], rank.get(x[2], 3), _groups(x[0]),
                            sum(s.site is not None for s in x[0]), len(x[0])))
    return out


def _rename_kernel(a: "Unit", b: "Unit") -> tuple["Unit", tuple | None]:
    """A with its kernel renamed to B's when exactly one kernel of each has no namesake in
    the other (histories often name each version's kernel anew): every identifier of that
    name and its launch header. A unit where B's name is already taken is left alone."""
    from kltrans.passes.rewrite import rename
    from kltrans.syntax.unit import parse

    ka, kb = {f.name for f in a.kernels()}, {f.name for f in b.kernels()}
    gone, new = ka - kb, kb - ka
    if len(gone) != 1 or len(new) != 1:
        return a, None
    old, nw = gone.pop(), new.pop()
    if any(n.type == "identifier" and a.text(n) == nw for n in a.walk(a.root)):
        return a, None
    text = rename(a, a.root, old, nw)
    text = re.sub(rf"^([ \t]*//[ \t]*kltrans:[ \t]*launch[ \t]+){re.escape(old)}\b",
                  lambda m: m.group(1) + nw, text, flags=re.MULTILINE)
    return parse(text, a.path), (old, nw)


CODE_CANDIDATES = 4  # states per side compiled for the machine-code comparison
CODE_MIN_RATIO = 0.5  # ... each at least this similar to the goal in tokens


def _same_program(a, b, fwd, bwd, arch, deadline) -> list[tuple[list[Step], list[Step], str]]:
    """A forward state with B's program, or a backward state with A's (the closest few
    of each side by their tokens, compiled with NVRTC): as :func:`_build` gives them."""
    from kltrans.passes.canonical import same_program

    def closest(states, goal):
        key = [(n.type, n.label) for n in _leaves(goal)]
        scored = [(difflib.SequenceMatcher(None, [(n.type, n.label) for n in _leaves(st.unit)],
                                           key, autojunk=False).ratio(), i, st)
                  for i, st in enumerate(states.values()) if st.chain]
        # a state far from the goal in tokens is not its program spelled otherwise
        ranked = sorted((x for x in scored if x[0] >= CODE_MIN_RATIO), key=lambda x: (-x[0], x[1]))
        return [st for _, _, st in ranked[:CODE_CANDIDATES]]

    for states, goal, forward in ((fwd, b, True), (bwd, a, False)):
        for st in closest(states, goal):
            if deadline is not None and time.perf_counter() > deadline:
                return []
            if same_program(st.unit, goal, arch)[0]:
                steps = [mv.step() for mv, _ in st.chain]
                return [(steps, [], "forward")] if forward else [([], steps, "inverse")]
    return []


def _idle_pragmas_dropped(unit: "Unit", arch: str | None) -> "Unit":
    """``unit`` without its full ``#pragma unroll`` lines when NVRTC compiles it to the same
    machine code without them (a loop of a few constant trips the compiler unrolls anyway:
    the pragma is no mechanism there), else ``unit``. The kernel model compares kinds of
    mechanism, and an idle pragma would set two spellings of one program apart."""
    from kltrans.model.mechanisms import mechanism_kinds
    from kltrans.passes.canonical import same_program
    from kltrans.syntax.unit import parse

    if "unroll pragma" not in mechanism_kinds(unit):
        return unit
    text = unit.source.decode("utf-8", "replace")
    bare = re.sub(r"^[ \t]*#[ \t]*pragma[ \t]+unroll[ \t]*(//[^\n]*)?\n", "", text,
                  flags=re.MULTILINE)
    if bare == text:
        return unit
    out = parse(bare, unit.path)
    try:
        return out if same_program(out, unit, arch or "sm_90")[0] else unit
    except Exception:  # no compiler answer: the pragmas stay
        return unit


MODEL_CANDIDATES = 4  # states per side run on the kernel model


def _same_model(a, b, fwd, bwd, ctx, kernel, deadline, alt=None
                ) -> tuple[list[tuple[list[Step], list[Step], str]], str | None]:
    """A forward state that is B's program as the kernel model reads it, or a backward
    state that is A's (:func:`kltrans.model.equivalence.same_model`, mechanisms compared:
    of the states with the goal's kinds of mechanism, the closest few by their tokens);
    as :func:`_build` gives them, with the equivalence's note."""
    from kltrans.model.equivalence import same_model
    from kltrans.model.mechanisms import mechanism_kinds

    # A and B that the model already reads as one program: any state near either side
    # would "meet" the other, so the model explains nothing here
    names = [f.name for f in b.kernels()]
    name = kernel if kernel in names else names[0] if len(names) == 1 else None
    if name is not None and same_model(a, b, name, ctx.sizes, mechanisms=True,
                                          binds=ctx.bindings)[0]:
        return [], None

    alt_a, alt_b = alt or (a, b)
    for states, goal, other, forward in ((fwd, b, alt_b, True), (bwd, a, alt_a, False)):
        names = [f.name for f in goal.kernels()]
        name = kernel if kernel in names else names[0] if len(names) == 1 else None
        if name is None:
            continue
        wants = {mechanism_kinds(goal): goal, mechanism_kinds(other): other}
        key = [(n.type, n.label) for n in _leaves(goal)]
        scored = sorted(
            ((-difflib.SequenceMatcher(None, [(n.type, n.label) for n in _leaves(st.unit)],
                                       key, autojunk=False).ratio(), i, st)
             for i, st in enumerate(states.values())
             if st.chain and mechanism_kinds(st.unit) in wants), key=lambda x: x[:2])
        for _, _, st in scored[:MODEL_CANDIDATES]:
            if deadline is not None and time.perf_counter() > deadline:
                return [], None
            ok, why = same_model(st.unit, wants[mechanism_kinds(st.unit)], name, ctx.sizes,
                                 mechanisms=True, binds=ctx.bindings)
            if ok:
                steps = [mv.step() for mv, _ in st.chain]
                return ([(steps, [], "forward")] if forward else [([], steps, "inverse")]), why
    return [], None


MIXED_CANDIDATES = 6  # (forward, backward) pairs of states run on the kernel model


def _mixed_model(a, b, fwd, bwd, ctx, kernel, deadline, run_pass, alt=None
                 ) -> tuple[list[tuple[list[Step], list[Step], str]], str | None]:
    """A forward state and a backward state that are one program as the kernel model reads
    it (the closest few pairs with the same kinds of mechanism, by their tokens): the
    forward chain, then the backward chain turned around on the forward state (each
    move's ``inverse_for`` its site), must give a unit that is B's program as the model
    reads it. Two human-written versions that each peel back to one simpler kernel in
    their own spelling (a warp per row and a block per row, both back to a thread per
    row) are explained so, where tokens never meet."""
    from collections import Counter

    from kltrans.model.equivalence import same_model
    from kltrans.model.mechanisms import mechanism_kinds

    names = [f.name for f in b.kernels()]
    name = kernel if kernel in names else names[0] if len(names) == 1 else None
    if name is None or same_model(a, b, name, ctx.sizes, mechanisms=True,
                                  binds=ctx.bindings)[0]:
        return [], None
    fs = [st for st in fwd.values() if st.chain]
    bs = [st for st in bwd.values() if st.chain]
    bags = {id(st): Counter((n.type, n.label) for n in _leaves(st.unit)) for st in fs + bs}
    kinds = {id(st): mechanism_kinds(st.unit) for st in fs + bs}
    pairs = []
    for f in fs:
        for k in bs:
            if kinds[id(f)] != kinds[id(k)]:
                continue
            bf, bk = bags[id(f)], bags[id(k)]
            common = sum((bf & bk).values())
            pairs.append((-2 * common / max(1, sum(bf.values()) + sum(bk.values())),
                          len(f.chain) + len(k.chain), f, k))
    pairs.sort(key=lambda x: x[:2])
    for _, _, f, k in pairs[:MIXED_CANDIDATES]:
        if deadline is not None and time.perf_counter() > deadline:
            break
        if not same_model(f.unit, k.unit, name, ctx.sizes, mechanisms=True,
                          binds=ctx.bindings)[0]:
            continue
        cur, tail = f.unit, []
        for mv, _ in reversed(k.chain):
            got = _apply_inverse(mv, cur, ctx, run_pass)
            if got is None:
                break
            step, cur = got
            tail.append(step)
        else:
            ok, why = same_model(cur, b, name, ctx.sizes, mechanisms=True, binds=ctx.bindings)
            if not ok and alt is not None and alt[1] is not b:
                ok, why = same_model(cur, alt[1], name, ctx.sizes, mechanisms=True,
                                     binds=ctx.bindings)
            if ok:
                return [([mv.step() for mv, _ in f.chain] + tail,
                         [mv.step() for mv, _ in k.chain], "mixed")], why
    return [], None


def _apply_inverse(move: _Move, unit: "Unit", ctx, run_pass) -> tuple | None:
    """The move's pass's ``inverse_for`` its site, run on ``unit`` (every site): the step
    and its result, or None when it does not apply."""
    try:
        inv = move.pass_.inverse_for(move.site_obj, ctx)
        out, rep = run_pass(unit, inv, ctx)
    except Exception:
        return None
    if not rep.applied:
        return None
    s = next(r for r in rep.sites if r.status == "applied")
    return Step(inv.spec(), None, s.line, s.column, s.function), out


def _groups(steps: list[Step]) -> int:
    """How many ``kltrans opt`` calls the steps need (consecutive steps at one site share
    one)."""
    n, last = 0, object()
    for s in steps:
        if s.site != last:
            n, last = n + 1, s.site
    return n


def _pass_of(spec: str):
    from kltrans.passes.pipeline import parse_pipeline

    return parse_pipeline(spec)[0]
