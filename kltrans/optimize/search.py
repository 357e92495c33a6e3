"""The forward search: propose a rewrite, gate it, keep it only when it is correct and faster.

Three strategies propose candidates under the same gate budget:

- ``skills``: the menu of cards that apply (anchor, requires/conflicts, preconditions at
  the site) and a parameter filler (``builtin`` or ``llm``) that picks one entry and its
  option values;
- ``blind``: a random optimize pass whose anchor matches, at a random site, with random
  option values, preconditions ignored (forced);
- ``memory``: the pass sequences that took the corpus workloads from their naive roots to
  their experts (their lineages, replayed forward), the most similar workload's first,
  preconditions ignored.

A candidate that the pass does not produce, or that repeats a kernel already seen, costs
nothing. Every gated candidate costs one evaluation (the budget): compile, correct at every
test size and seed, and on a GPU a paired timing against the current best; it is kept
only when it passes and (on a GPU) is faster in every paired trial. Without a GPU only
correctness decides (the result is then unmeasured, and says so).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

from kltrans.optimize.perfmodel import fill, judge

SCHEMA = 1


class OptimizeError(ValueError):
    """A user-level problem (bad input, unusable library): a diagnostic, exit 2."""


@dataclass
class OptimizeOptions:
    kernel: str
    workload: str
    skills: str = "skills"
    canonicalize: bool = False  # start from the kernel's canonical form (kltrans.passes.canonical)
    corpus: str | None = "corpus"
    budget: int = 30
    time_budget: float | None = None
    strategy: str = "skills"
    filler: str = "builtin"
    backend: str = "auto"
    kernel_name: str | None = None
    exclude_own: bool = False
    seed: int = 0
    arch: str | None = None
    assume: tuple = ()
    size_limit: int | None = None
    trials: int = 5
    trial_ms: float = 100.0  # GPU time per side of a paired trial (slow kernels: fewer reps)
    # GPU: a candidate faster in every trial is kept only if its median paired speedup is
    # at least this (1.0: the rule, any gain; 1.01: gains within 1% are noise)
    min_gain: float = 1.0
    # skills, GPU: "first" moves to the first candidate kept (the search); "best"
    # times the rest of the state's first round (each offer with its evidence values) too,
    # and moves to the fastest of those kept (the others are "outranked"). None: "best"
    # for the skills strategy with the builtin filler on a GPU (adopted by the rule of
    # bench/results/select_best_plan.txt), else "first" (the only rule without timings)
    select: str | None = None
    # skills, GPU: a correct candidate not faster alone (median at least ENABLER_FLOOR)
    # whose rewrite makes a new card apply is timed again with that card's first offer on
    # top; the pair is kept as one step when faster (a valley the walk crossed: grid-stride
    # before vectorize-bytes). None: on for the skills strategy with the builtin filler on
    # a GPU (adopted by the rule of bench/results/enablers_plan.txt), else off
    enablers: bool | None = None
    # stop when this many evaluations in a row have kept no candidate (none faster in
    # every trial since the last one kept, or since the start): "patience". None: the
    # budget alone ends the search. Measured, not adopted (bench/results/patience_plan.txt)
    patience: int | None = None
    # skills: in one kernel state, an offer (a card at a site) gated this many times
    # without being kept leaves the menu; when every offer has left, the search ends
    # ("exhausted"). 0: no limit, the filler explores each offer's domain until the budget
    # ends. None: 1 for the skills strategy with the builtin filler on a GPU (adopted by
    # the rule of bench/results/offer_tries_plan.txt), else no limit
    offer_tries: int | None = None
    # skills: tuning cards last. Offers of a card whose measured steps alone were
    # typically a tie (retrieve.small_effect: unroll, restrict-pointers, stream-hints,
    # fast-math, add-launch-bounds, ...) are held back until no other offer is left; from
    # then on only those are offered, each (card, site text) gated once in the whole run,
    # and the first one faster is kept (no round to outrank it, no enablers). None: off
    # (measured under the rule of bench/results/tune_last_plan.txt)
    tune_last: bool | None = None
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_timeout: float = 60.0
    llm_retries: int = 3
    fallback: str | None = None
    catalogue: bool = True  # skills: after the cards, the passes no card covers
    unproven: bool = True  # skills: then the sites whose preconditions are only unknown
    timeout_s: float = 300.0
    bench_size: dict | None = None  # paired timings' size (default: see run())
    progress: bool = True
    executor: object = None  # a kltrans.gate.executor.Executor, when one is given
    checkpoint: str | None = None  # keep every gate verdict here; a rerun replays them


# --enablers: how much slower alone a step may be and still be tried under another
ENABLER_FLOOR = 0.9
# --enablers: how many of the cards a step makes apply are tried on top of it
ENABLER_TRIES = 3


def content_hash(src: bytes) -> str:
    return hashlib.sha256(src).hexdigest()[:16]


@dataclass
class Proposal:
    pass_obj: object
    site: int | None
    forced: bool
    meta: dict = field(default_factory=dict)


# ------------------------------------------------------------------ strategies
class SkillsProposer:
    """Menu of applicable cards (then, with ``catalogue``, the passes no card covers, their
    preconditions checked all the same); the filler chooses."""

    def __init__(self, cards, target, profiles, filler, fallback=None, catalogue=False,
                 unproven=False, offer_tries=None, tune_last=False):
        self.cards, self.target, self.profiles = cards, target, profiles
        self.filler, self.fallback, self.catalogue = filler, fallback, catalogue
        self.unproven, self.offer_tries = unproven, offer_tries
        self.tune_last = tune_last
        self.tuning = False  # --tune-last: the search has reached the tuning cards
        self.retired = 0  # offers the last proposal's menu left out (--offer-tries)
        self.events: list[dict] = []
        self._menus: dict[str, tuple] = {}

    def menu(self, unit, ctx, state: str):
        from kltrans.optimize.retrieve import build_menu

        if state not in self._menus:
            rejected: list = []
            self._menus[state] = (build_menu(unit, ctx, self.cards, self.target, self.profiles,
                                             rejected, self.catalogue, self.unproven),
                                  rejected)
        return self._menus[state]

    def propose(self, unit, ctx, state, tried):
        from kltrans.optimize.fillers import full_options
        from kltrans.optimize.menu import check_pick
        from kltrans.optimize.retrieve import configured
        from kltrans.passes.registry import get_pass

        from kltrans.optimize.menu import lost_key

        menu, _ = self.menu(unit, ctx, state)
        mine = [t for t in tried if t.get("state") == state and "card" in t]
        self.retired = 0
        if self.offer_tries and menu:
            spent = Counter((t["card"], t["site"]) for t in mine
                            if t.get("verdict") == "rejected" and "enabled_by" not in t)
            full = len(menu)
            menu = [o for o in menu if spent[(o.card, o.site)] < self.offer_tries]
            self.retired = full - len(menu)
        if self.tune_last:
            menu = self._tier(menu, mine, tried)
        if not menu:
            return None
        lost = frozenset(lost_key(t["card"], t["options"], t["snippet"]) for t in tried
                         if t.get("state") != state and "snippet" in t
                         and (t.get("verdict") == "same-code" or
                              (t.get("verdict") == "rejected" and t.get("stage") == "profile")))
        for _attempt in range(4):
            try:
                pick = self.filler.pick(unit.source.decode("utf-8", "replace"), menu, mine,
                                        lost)
            except Exception as e:
                if not _is_llm_failure(e):
                    raise
                self.events.append({"kind": "filler-failed", "filler": self.filler.name,
                                    "error": type(e).__name__, "reason": str(e)})
                if self.fallback is None:
                    raise
                from kltrans.optimize.fillers import BuiltinFiller

                self.events.append({"kind": "fallback", "to": "builtin"})
                self.filler, self.fallback = BuiltinFiller(), None
                continue
            if pick is None:
                if self.tune_last and not self.tuning and not self._round_open(mine):
                    self._begin_tuning(tried)  # the other cards' offers are spent here
                    return self.propose(unit, ctx, state, tried)
                return None
            why = check_pick(pick, menu)
            if why:  # fillers validate their own picks; this guards the gate budget
                self.events.append({"kind": "off-menu", "filler": self.filler.name, "reason": why})
                continue
            offer = next(o for o in menu if o.id == pick.offer)
            opts = full_options(offer, pick.options)
            from kltrans.optimize.fillers import pick_key

            if any(pick_key(t["card"], t["site"], t["options"]) ==
                   pick_key(offer.card, offer.site, opts) for t in mine):
                self.events.append({"kind": "repeat", "filler": self.filler.name,
                                    "offer": offer.id})
                continue
            p = configured(get_pass(offer.pass_name), opts)
            meta = {"unproven": list(offer.unproven)} if offer.unproven else {}
            if self.tuning:
                meta["phase"] = "tuning"
            return Proposal(p, offer.site, bool(offer.unproven),
                            {"card": offer.card, "site": offer.site, "options": opts, **meta,
                             "location": offer.location, "snippet": offer.snippet,
                             "offer": offer.id, "round": pick.round,
                             "rationale": pick.rationale, "filler": self.filler.name,
                             "rank": offer.summary.get("rank")})
        return None

    def _tier(self, menu, mine, tried):
        """--tune-last: the offers of this proposal. Before the tuning phase, the offers
        of other cards; when the filler has none left to pick in this state (propose) and
        no candidate kept in its round waits to be moved to, the phase begins and lasts to
        the end of the search: the tuning cards' offers, less every (card, site text)
        already gated in the phase, in any state."""
        if not self.tuning:
            main = [o for o in menu if not o.summary.get("small_effect")]
            if main:
                return main
            if self._round_open(mine):
                return []  # the round's best is moved to first, then the phase begins
            self._begin_tuning(tried)
        done = {(t["card"], t["snippet"]) for t in tried
                if t.get("phase") == "tuning" and t.get("evaluation") is not None}
        return [o for o in menu if o.summary.get("small_effect")
                and (o.card, o.snippet) not in done]

    def _begin_tuning(self, tried):
        self.tuning = True
        self.events.append({"kind": "tuning-phase", "after": sum(
            1 for t in tried if t.get("evaluation") is not None),
            "reason": "no offer of a card with a measured effect beyond a tie is left in "
                      "this kernel state; the tuning cards follow, each tried once"})

    @staticmethod
    def _round_open(mine) -> bool:
        """A candidate kept in this state's round waits to be moved to (--select best)."""
        return any(t.get("verdict") == "kept" for t in mine)


def _is_llm_failure(e: Exception) -> bool:
    return type(e).__name__ in ("LLMUnavailable", "LLMReplyError")


class BlindProposer:
    """A random optimize pass whose anchor matches, at a random site, random options."""

    def __init__(self, seed: int):
        from kltrans.passes.registry import get_pass, names

        self.rng = random.Random(seed)
        self.classes = [get_pass(n) for n in names("optimize")]

    def propose(self, unit, ctx, state, tried):
        from kltrans.optimize.retrieve import configured, option_choices

        done = {(t["spec"], t["site"]) for t in tried if t.get("state") == state}
        applicable = []
        for cls in self.classes:
            try:
                n = len(cls().sites(unit, ctx))
            except Exception:
                continue
            if n:
                applicable.append((cls, n))
        if not applicable:
            return None
        for _ in range(200):
            cls, n = self.rng.choice(applicable)
            vals = {o.name: self.rng.choice(list(o.values) or [o.default])
                    for o in option_choices(cls, None)}
            try:
                p = configured(cls, vals)
            except Exception:
                continue
            site = self.rng.randint(1, n)
            if (p.spec(), site) not in done:
                return Proposal(p, site, True, {"pass": cls.name, "options": vals})
        return None


class MemoryProposer:
    """Replay corpus lineages, naive to expert, forced: the most similar workload's first,
    then the next most similar, and so on while the budget lasts, as a memory-based
    optimizer retrieves its nearest remembered (slow, fast) pairs in turn. Each lineage's
    sequence is replayed at site 1, then at site 2, then at site 3.

    Replaying only the nearest lineage (as this baseline first did) stops after a few
    evaluations, and a baseline that leaves most of the budget unspent is neither the same
    budget nor what such optimizers do."""

    def __init__(self, corpus: str | None, target_name: str, target_profile: dict):
        from kltrans.optimize.retrieve import corpus_profiles, similarity
        from kltrans.passes.pipeline import parse_pipeline

        found = []
        for name, prof in corpus_profiles(corpus).items():
            if name == target_name:
                continue
            path = os.path.join(prof["path"], "lineage", "lineage.json")
            try:
                doc = json.load(open(path, encoding="utf-8"))
            except (OSError, ValueError):
                continue
            specs = [t["roundtrip"]["inverse"] for t in reversed(doc.get("transitions") or [])
                     if (t.get("roundtrip") or {}).get("ok")]
            if specs:
                found.append((-similarity(prof, target_profile), name, specs))
        found.sort(key=lambda f: (f[0], f[1]))  # most similar first; ties by name
        self.sources = [(name, -neg, [parse_pipeline(x)[0] for x in specs])
                        for neg, name, specs in found]
        self.source = self.sources[0][0] if self.sources else None
        self.similarity = self.sources[0][1] if self.sources else None
        self.sequence = self.sources[0][2] if self.sources else []
        self.plan = [(p, site, name) for name, _, seq in self.sources
                     for site in (1, 2, 3) for p in seq]

    def propose(self, unit, ctx, state, tried):
        if not self.plan:
            return None
        p, site, name = self.plan.pop(0)
        return Proposal(p, site, True, {"pass": p.name, "replay_of": name,
                                        "replay_site": site})


# ------------------------------------------------------------------ gating
def _gate(src: bytes, name: str, wl, kernel: str, ne, sizes, backend, opts,
          stages=("compile", "correct")) -> dict:
    """The requested gate stages on one source (:func:`kltrans.gate.tasks.gate_task`);
    ``ok`` when every one of them ran and passed."""
    from kltrans.gate.run import state_instantiation
    from kltrans.gate.tasks import gate_task

    r = gate_task({"source": src.decode("utf-8"), "name": name, "workload": wl.path,
                   "kernel": kernel, "name_expression": state_instantiation(src, kernel, ne),
                   "backend": backend,
                   "stages": list(stages), "arch": opts.arch, "sizes": sizes,
                   "seeds": list(wl.seeds), "timeout_s": opts.timeout_s})
    ok = r["fail"] is None and all(any(d["stage"] == st and d["status"] == "pass"
                                       for d in r["stages"]) for st in stages)
    for d in r["stages"]:
        d["reason"] = d["reason"][:500]
    return {"ok": ok, "stages": r["stages"], "code": r.get("code"),
            "warnings": r.get("warnings") or [], "resources": r.get("resources"),
            "fail": None if r["fail"] is None else [r["fail"][0], r["fail"][1][:2000]]}


def _paired(a_src: bytes, b_src: bytes, name: str, wl, opts, check=None) -> dict:
    """B against A, paired (:func:`kltrans.gate.tasks.bench_task`); ``check=(sizes,
    seeds)`` runs B's correct stage first in the same worker (then ``correct`` holds that
    stage's result)."""
    from kltrans.gate.run import stage_results
    from kltrans.gate.tasks import bench_task

    # the gate's file name for both: the program name is part of the compile cache's key
    r = bench_task({"a_source": a_src.decode("utf-8"), "a_name": name,
                    "b_source": b_src.decode("utf-8"), "b_name": name,
                    "workload": wl.path, "timeout_s": opts.timeout_s, "trials": opts.trials,
                    "check_b": check, "side_ms": opts.trial_ms, "bench_size": opts.bench_size,
                    # a candidate is kept only if faster in every trial: after the first
                    # trial it loses, the others cannot change that
                    "stop_when_slower": True, "min_reps": 3})
    correct = None
    passed = (r.get("correct") or {}).get("ok")
    if check is not None and passed:  # a failure after it (the timing's) is not correct's
        correct = {"stage": "correct", "status": "pass",
                   "reason": f"{r['correct'].get('checks')} checks", "seconds": 0.0}
    elif check is not None and (r.get("correct") or r.get("verdict")):
        st = stage_results(r, ["correct"])[0]
        correct = {"stage": "correct", "status": st.status, "reason": st.reason[:2000],
                   "seconds": round(st.seconds, 3)}
        if st.status != "pass":
            return {"ok": False, "correct": correct, "phases": r.get("phases"),
                    **({"traceback": r["traceback"][-1500:]} if r.get("traceback") else {})}
    if not r.get("ok"):
        return {"ok": False, "reason": f"{r.get('verdict')}: {r.get('reason')}",
                "phases": r.get("phases"),
                **({"traceback": r["traceback"][-1500:]} if r.get("traceback") else {}),
                **({"correct": correct} if correct is not None else {})}
    return _effect(r, correct)


def _effect(r: dict, correct: dict | None = None) -> dict:
    """A passed paired timing ``r`` as a candidate's ``effect`` in the trajectory. The
    ratios are kept as measured, not rounded: the verdicts are decided on them (faster in
    every trial, ``--min-gain``) and the record must show why; a ratio of 1.00003 is a
    trial won, and rounded to 1.0 it would read as one lost."""
    p = r["paired"]
    return {"ok": True, "best_ms": p["a"]["ms"], "candidate_ms": p["b"]["ms"],
            "speedup_trials": list(p["ratios"]),
            "speedup_median": p["ratio_median"], "faster": bool(p["b_faster"]),
            "reps": p.get("reps"), "device": r.get("device"), "phases": r.get("phases"),
            **({"correct": correct} if correct is not None else {})}


# ------------------------------------------------------------------ checkpoints
class _Checkpoint:
    """Every gate verdict of a search, kept in a JSON file as it is reached, so that a run
    cut short (a device call's time limit) resumes where it was: run again with the same
    inputs, the search proposes the same candidates in the same order (it is deterministic
    given its verdicts) and takes each verdict it already has from the file instead of the
    gate. Only the verdicts are kept, keyed by (state, candidate) content hashes; a file
    made for other inputs (kernel, workload, strategy, seed, budget, backend, library) is
    not replayed, and is replaced."""

    def __init__(self, path: str | None, identity: dict):
        self.path = path
        self.key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
        self.verdicts: dict = {}
        self.replay: dict = {}
        self.replayed = 0
        self.other = False  # the file holds another run's verdicts
        if path and os.path.exists(path):
            try:
                with open(path, encoding="utf-8") as f:
                    doc = json.load(f)
            except (OSError, ValueError):
                doc = None
            if not (isinstance(doc, dict) and isinstance(doc.get("key"), str)
                    and isinstance(doc.get("verdicts"), dict)):
                # not one of ours: replacing it would lose a file the user meant to keep
                raise OptimizeError(f"{path}: --checkpoint names a file that is not a "
                                    f"kltrans checkpoint (a JSON object with 'key' and "
                                    f"'verdicts'); remove it or name another file")
            if doc.get("key") == self.key:
                self.replay = dict(doc.get("verdicts") or {})
            else:
                self.other = True

    def get(self, key: str):
        """The verdict kept for ``key`` (a dict), or None; a replayed one is kept again."""
        v = self.replay.get(key)
        if v is not None:
            self.verdicts[key] = v
            self.replayed += 1
        return copy.deepcopy(v)

    @staticmethod
    def _durable(verdict: dict) -> bool:
        """False for a worker that crashed or timed out: the call that ends a run early
        interrupts its gate workers too, so such a verdict is gated again on resume."""
        reasons = [d.get("reason") or "" for d in (verdict.get("gate") or verdict).get(
            "stages") or []]
        m = verdict.get("paired") or {}
        reasons += [m.get("reason") or "", ((m.get("correct") or {}).get("reason") or "")]
        return not any(r.startswith(("crash:", "timeout:")) for r in reasons)

    def put(self, key: str, verdict: dict) -> None:
        if not self._durable(verdict):
            return
        self.verdicts[key] = copy.deepcopy(verdict)
        if self.path:
            from kltrans.syntax.files import atomic_write

            atomic_write(self.path, json.dumps({"key": self.key,
                                                "verdicts": self.verdicts}) + "\n")


# ------------------------------------------------------------------ the loop
def search_context(opts: OptimizeOptions, wl, kernel: str | None):
    """The facts and the precondition context of a search: the workload's facts and
    tolerances, the caller's ``--assume``, and the architecture the gate compiles for
    (sm_90 unless ``--arch`` says otherwise), so that a hardware precondition is checked
    rather than left unknown."""
    from kltrans.lineage.walk import WORKLOAD_FACTS, tolerance_facts
    from kltrans.passes.facts import Context

    facts = list(WORKLOAD_FACTS) + tolerance_facts(wl) + list(opts.assume)
    try:
        return facts, Context.from_strings(tuple(facts), opts.arch or "sm_90", False, kernel)
    except ValueError as e:  # the architecture's message names it; a fact's does not
        raise OptimizeError(str(e) if "architecture" in str(e) else f"--assume: {e}") from None


def _start(opts: OptimizeOptions):
    """(workload, source, parsed unit, kernel name, name expression, canonicalization or
    None) of the kernel to optimize, each input's error as an OptimizeError."""
    from kltrans.gate.run import GateUsageError, pick_kernel
    from kltrans.syntax import parse
    from kltrans.workload.spec import SpecError, load_workload

    try:
        wl = load_workload(opts.workload)
    except (SpecError, OSError) as e:
        raise OptimizeError(str(e)) from None
    try:
        src = open(opts.kernel, "rb").read()
    except OSError as e:
        raise OptimizeError(f"{opts.kernel}: cannot read: {e.strerror}") from None
    unit = parse(src, opts.kernel)
    if unit.has_errors:
        raise OptimizeError(str(unit.parse_diagnostics()[0]))
    canonical = None
    if opts.canonicalize:  # the search starts from the kernel's canonical form
        from kltrans.passes.canonical import canonicalize

        unit, steps, notes = canonicalize(unit, arch=opts.arch)
        src = unit.source
        canonical = {"steps": len(steps), "rules": sorted({s.rule for s in steps}),
                     "notes": notes}
    try:
        kernel, ne = pick_kernel(wl, opts.kernel, unit, opts.kernel_name)
    except GateUsageError as e:  # the gate's words, in optimize's option
        raise OptimizeError(str(e).replace("with --kernel", "with --kernel-name")) from None
    return wl, src, unit, kernel, ne, canonical


def menu_report(opts: OptimizeOptions) -> dict:
    """The skills strategy's menu for ``opts.kernel``, and every card or catalogue pass it
    leaves out with the reason (the feature, anchor or precondition that ruled it out), as
    the search would build it before its first evaluation. Nothing is compiled or gated."""
    from kltrans.optimize.retrieve import LibraryError, build_menu, corpus_profiles, \
        load_library, workload_profile

    if opts.strategy != "skills":
        raise OptimizeError("--menu shows the skills strategy's menu (blind and memory have "
                            "none)")
    wl, _src, unit, kernel, _ne, _canonical = _start(opts)
    facts, ctx = search_context(opts, wl, kernel)
    try:
        cards = load_library(opts.skills, [wl.name] if opts.exclude_own else ())
    except LibraryError as e:
        raise OptimizeError(str(e)) from None
    refused: list[dict] = []
    menu = build_menu(unit, ctx, cards, workload_profile(wl), corpus_profiles(opts.corpus),
                      refused, opts.catalogue, opts.unproven)
    offers = []
    for o in menu:
        kind = "near-miss" if o.unproven else \
            "catalogue" if o.summary.get("rank", {}).get("catalogue") else "card"
        offers.append({"id": o.id, "card": o.card, "pass": o.pass_name, "site": o.site,
                       "location": o.location, "kind": kind, "score": round(o.score, 4),
                       "unproven": list(o.unproven), "effect": o.summary.get("effect", []),
                       "tuning": bool(o.summary.get("small_effect")),
                       "options": {c.name: {"values": list(c.values), "default": c.default,
                                            "tune": c.tune} for c in o.options}})
    return {"kernel": opts.kernel, "kernel_name": kernel, "workload": wl.name,
            "facts": facts, "arch": opts.arch or "sm_90",
            "library": {"dir": opts.skills, "cards": len(cards),
                        "excluded_workloads": [wl.name] if opts.exclude_own else [],
                        "catalogue": opts.catalogue, "unproven": opts.unproven},
            "offers": offers, "refused": refused}


def run(opts: OptimizeOptions) -> dict:
    """Optimize ``opts.kernel``; returns the trajectory document."""
    from kltrans import __version__
    from kltrans.gate.backends import resolve_backend
    from kltrans.lineage.walk import gate_sizes
    from kltrans.optimize.retrieve import LibraryError, corpus_profiles, load_library, \
        workload_profile
    from kltrans.passes.manager import run_pass
    from kltrans.syntax import parse

    if opts.strategy not in ("skills", "blind", "memory"):
        raise OptimizeError(f"unknown strategy {opts.strategy!r} (skills, blind or memory)")
    if opts.filler not in ("builtin", "llm"):
        raise OptimizeError(f"unknown filler {opts.filler!r} (builtin or llm)")
    if opts.budget < 0:
        raise OptimizeError("--budget must be 0 or more")
    if opts.time_budget is not None and not opts.time_budget > 0:
        raise OptimizeError("--time-budget must be more than 0 seconds")
    if not opts.trials >= 1 or not opts.trial_ms > 0:
        raise OptimizeError("--trials must be 1 or more and --trial-ms more than 0")
    if opts.strategy == "memory" and opts.corpus and not os.path.isdir(opts.corpus):
        raise OptimizeError(f"{opts.corpus}: no such corpus folder (--corpus; the memory "
                            f"strategy replays its lineages)")
    why = variant_value_error(opts.min_gain, opts.patience, opts.offer_tries)
    if why:
        raise OptimizeError(why)
    if opts.select not in (None, "first", "best"):
        raise OptimizeError(f"unknown --select {opts.select!r} (first or best)")
    if opts.offer_tries and opts.strategy != "skills":
        raise OptimizeError("--offer-tries needs the skills strategy (it reads the cards' menu)")
    if opts.enablers and opts.strategy != "skills":
        raise OptimizeError("--enablers needs the skills strategy (it reads the cards' menu)")
    if opts.tune_last and opts.strategy != "skills":
        raise OptimizeError("--tune-last needs the skills strategy (it reads the cards' "
                            "evidence)")
    if opts.select == "best" and (opts.strategy != "skills" or opts.filler != "builtin"):
        raise OptimizeError("--select best needs the skills strategy with the builtin filler "
                            "(it reads the filler's rounds)")
    wl, src, unit, kernel, ne, canonical = _start(opts)
    try:
        backend = resolve_backend(opts.backend)
    except ValueError as e:
        raise OptimizeError(str(e)) from None
    facts, ctx = search_context(opts, wl, kernel)
    import dataclasses

    opts = dataclasses.replace(opts, **resolve_variants(
        opts.strategy, opts.filler, backend, opts.select, opts.enablers, opts.offer_tries,
        opts.tune_last))

    if opts.bench_size is None:
        from kltrans.gate.run import variant_bench_size

        # a start that is a variant with its own bench size (an O(n^2) naive kernel) is
        # timed there, and so is everything derived from it
        opts = dataclasses.replace(opts, bench_size=variant_bench_size(wl, opts.kernel))
    forced_ctx = dataclasses.replace(ctx, force=True)
    target = workload_profile(wl)
    profiles = corpus_profiles(opts.corpus)
    sizes = gate_sizes(wl, opts.size_limit)
    name = os.path.basename(opts.kernel)

    filler_name = opts.filler
    if opts.strategy == "skills":
        try:
            cards = load_library(opts.skills, [wl.name] if opts.exclude_own else ())
        except LibraryError as e:
            raise OptimizeError(str(e)) from None
        filler = _make_filler(opts)
        proposer = SkillsProposer(cards, target, profiles, filler,
                                  "builtin" if opts.fallback == "builtin" else None,
                                  opts.catalogue, opts.unproven, opts.offer_tries,
                                  bool(opts.tune_last))
        library = {"dir": opts.skills, "cards": [c.id for c in cards],
                   "excluded_workloads": [wl.name] if opts.exclude_own else [],
                   "catalogue": opts.catalogue, "unproven": opts.unproven}
    elif opts.strategy == "blind":
        proposer = BlindProposer(opts.seed)
        library = None
    else:
        proposer = MemoryProposer(opts.corpus, wl.name, target)
        library = {"replay_of": proposer.source,
                   "sequence": [p.spec() for p in proposer.sequence],
                   "then": [{"replay_of": n, "similarity": round(sim, 4)}
                            for n, sim, _ in proposer.sources[1:]]}

    doc = {"schema": SCHEMA, "tool": f"kltrans {__version__}",
           "config": {"kernel": opts.kernel, "kernel_name": kernel, "workload": wl.name,
                      "workload_path": wl.path, "strategy": opts.strategy,
                      "filler": filler_name if opts.strategy == "skills" else None,
                      "budget": opts.budget, "time_budget": opts.time_budget,
                      "backend": backend, "arch": opts.arch or "sm_90", "facts": facts,
                      "sizes": sizes, "seeds": list(wl.seeds), "seed": opts.seed,
                      "exclude_own": opts.exclude_own, "min_gain": opts.min_gain,
                      "select": opts.select, "enablers": opts.enablers,
                      "patience": opts.patience, "offer_tries": opts.offer_tries,
                      "tune_last": bool(opts.tune_last)},
           "library": library, "start": {"hash": content_hash(src)}, "candidates": [],
           "accepted": [], "events": [], "termination": None}
    if canonical is not None:
        doc["start"]["canonicalized"] = canonical
    t0 = time.perf_counter()
    ck = _Checkpoint(opts.checkpoint, {
        "kernel": content_hash(src), "workload": wl.name, "strategy": opts.strategy,
        "filler": doc["config"]["filler"], "seed": opts.seed, "budget": opts.budget,
        "backend": backend, "library": library, "exclude_own": opts.exclude_own,
        "sizes": sizes, "bench_size": opts.bench_size, "trials": opts.trials,
        "trial_ms": opts.trial_ms, "arch": opts.arch, "assume": list(opts.assume),
        **({"min_gain": opts.min_gain} if opts.min_gain != 1.0 else {}),
        **({"select": opts.select} if opts.select != "first" else {}),
        **({"enablers": True} if opts.enablers else {}),
        **({"patience": opts.patience} if opts.patience else {}),
        **({"offer_tries": opts.offer_tries} if opts.offer_tries else {}),
        **({"tune_last": True} if opts.tune_last else {})})
    if opts.progress and ck.replay:
        print(f"kltrans optimize: {opts.checkpoint}: resuming, {len(ck.replay)} gate "
              f"verdict(s) kept there", file=sys.stderr)
    elif opts.progress and ck.other:
        print(f"kltrans optimize: {opts.checkpoint}: made for other inputs; not replayed, "
              f"and replaced by this run's", file=sys.stderr)
    first = ck.get("start")
    if first is None:
        first = _gate(src, name, wl, kernel, ne, sizes, backend, opts)
        ck.put("start", first)
    doc["start"]["gate"] = first["stages"]
    if not first["ok"]:
        raise OptimizeError(f"{opts.kernel}: the starting kernel does not pass the gate: "
                            f"{first['fail'][0]}: {first['fail'][1]}")
    cur, cur_hash = src, content_hash(src)
    cur_code = first.get("code")  # the current kernel's machine code (its cubin's hash)
    cur_warnings = set(first.get("warnings") or [])  # NVRTC's, by message
    cur_resources = first.get("resources")  # NVRTC's register and memory report
    seen = {cur_hash}
    tried: list[dict] = []
    evals = 0
    last_kept = 0  # the evaluation of the last candidate kept (--patience)
    speedup = 1.0
    idle = 0
    bar = _Progress(opts.progress, opts.budget, f"{opts.strategy} {wl.name}")
    # --select best: the candidates kept in this state's first round, each timed against
    # the current kernel; the search moves to the fastest when the round ends
    contenders: list[tuple[float, dict, object, str, dict, dict | None]] = []

    def accept(entry, after, h, g, gain, enabler=None, **why):
        """Move the search to candidate ``entry`` (``gain``: its median paired speedup
        over the current kernel; None without a GPU); ``enabler``: the step under it,
        not faster alone (``--enablers``), recorded first."""
        nonlocal cur, cur_hash, unit, cur_code, cur_warnings, cur_resources, speedup
        if gain is not None:
            speedup *= gain
        entry.update(verdict="accepted", **why,
                     speedup_vs_start=round(speedup, 4) if gain is not None else None)
        if enabler is not None:
            enabler.update(verdict="enabler", reason=f"not faster alone ({enabler['reason']}); "
                           f"kept with {entry['spec']} on top (evaluation "
                           f"{entry['evaluation']})")
            doc["accepted"].append({"evaluation": evals, "found_at": enabler["evaluation"],
                                    "spec": enabler["spec"], "site": enabler["site"],
                                    "card": enabler.get("card"), "hash": enabler["after"],
                                    "speedup_vs_start": None, "enabler": True})
        doc["accepted"].append({"evaluation": evals,
                                **({"found_at": entry["evaluation"]} if why else {}),
                                "spec": entry["spec"], "site": entry["site"],
                                "card": entry.get("card"), "hash": h,
                                "speedup_vs_start": entry["speedup_vs_start"]})
        cur, cur_hash, unit = after.source, h, parse(after.source, opts.kernel)
        cur_code = g.get("code")
        cur_warnings = set(g.get("warnings") or [])
        cur_resources = g.get("resources")
        bar.step(evals, f"accepted {entry['pass']}")

    def move_to_best():
        if not contenders:
            return
        best = max(contenders, key=lambda c: c[0])  # ties: the first found
        gain, entry, after, h, g, enabler = best
        for c in contenders:
            if c is not best:
                c[1].update(verdict="outranked", stage="profile",
                            reason=f"faster in every trial (median {c[0]}), but "
                                   f"{entry['spec']} at site {entry['site']} was faster "
                                   f"(median {gain})")
        n = len(contenders)
        contenders.clear()
        accept(entry, after, h, g, gain, enabler=enabler,
               reason=f"the fastest of the {n} candidate(s) this round kept; the search "
                      f"moved to it after evaluation {evals}")

    def consider(entry, base, p, site, pctx, enabler=None):
        """Rewrite ``base`` with ``p`` at ``site`` and gate the result against the current
        kernel (``enabler``: the entry whose rewrite ``base`` is, not faster alone). None
        when no evaluation was spent (not applied, a kernel already seen, the same machine
        code); else the outcome: ("slower", median, after) for a correct candidate not
        faster in every trial, ("rejected",), ("kept",) or ("accepted",)."""
        nonlocal evals, last_kept
        try:
            after, rep = run_pass(base, p, pctx, only_site=site)
        except Exception as e:
            entry.update(verdict="not-applied", reason=f"{type(e).__name__}: {e}")
            return None
        if not rep.applied:
            entry.update(verdict="not-applied", reason=next(
                (r.reason for r in rep.sites if r.index == site), "no site"))
            return None
        h = content_hash(after.source)
        if h in seen:
            entry.update(verdict="duplicate", reason="gives a kernel already seen", after=h)
            return None
        seen.add(h)
        kept = ck.get(f"{cur_hash}>{h}")
        if kept is None:
            # the machine code first: a rewrite that compiles to the current kernel's
            # cubin (a pragma the compiler had applied already, a qualifier it did not
            # need) cannot change its results or its speed; it is no evaluation
            cg = _gate(after.source, name, wl, kernel, ne, sizes, backend, opts,
                       ("compile",))
            if cg["ok"] and cg.get("code") and cg["code"] == cur_code:
                entry.update(verdict="same-code", after=h,
                             reason="compiles to the machine code of the current kernel")
                return None
        evals += 1
        entry["evaluation"] = evals
        entry["after"] = h
        if kept is not None:
            entry["replayed"] = True
            g, kept_m = kept["gate"], kept.get("paired")
        else:
            # on a GPU the correct stage runs in the timing's worker (one CUDA start-up);
            # the compile is the one just made (the CPU backend's is a cache hit)
            g = cg if backend == "cuda" else _gate(after.source, name, wl, kernel, ne,
                                                   sizes, backend, opts,
                                                   ("compile", "correct"))
            added = sorted(set(cg.get("warnings") or []) - cur_warnings)
            if added:  # a pragma NVRTC ignores, a narrowing it reports: not what was meant
                g = {**g, "ok": False, "fail": ["compile", "adds an NVRTC warning: " +
                                                "; ".join(added)[:1500]]}
            kept_m = None
            if not g["ok"] or backend != "cuda":
                ck.put(f"{cur_hash}>{h}", {"gate": g})
        entry["gate"] = g["stages"]
        entry["seconds"] = round(time.perf_counter() - t0, 3)
        if not g["ok"]:
            entry.update(verdict="rejected", stage=g["fail"][0], reason=g["fail"][1])
            bar.step(evals, f"rejected ({g['fail'][0]})")
            return ("rejected",)
        if backend != "cuda":
            # no timing without a GPU: the performance model refuses what is plainly
            # harmful at the bench size (kltrans.optimize.perfmodel); its verdict is marked
            # as modelled, never as measured
            now, why_now = fill(unit, kernel, wl, cur_resources, opts.arch)
            new, why_new = fill(after, kernel, wl, g.get("resources"), opts.arch)
            if now is not None and new is not None:
                ok, why = judge(now, new)
                entry["model"] = {"ok": ok, "reason": why, "fill": round(new.fraction, 4)}
                if not ok:
                    entry.update(verdict="rejected", stage="model", reason="modelled: " + why)
                    bar.step(evals, "rejected (model)")
                    return ("rejected",)
            else:
                entry["model"] = {"ok": None, "reason": "not modelled: " + (why_now or why_new)}
            last_kept = evals
            accept(entry, after, h, g, None, enabler=enabler)
            return ("accepted",)
        m = kept_m
        if m is None:
            m = _paired(cur, after.source, name, wl, opts, check=(sizes, list(wl.seeds)))
            ck.put(f"{cur_hash}>{h}", {"gate": g, "paired": m})
        entry["seconds"] = round(time.perf_counter() - t0, 3)
        entry["phases"] = m.pop("phases", None)  # the timing worker's, in seconds
        if m.get("traceback"):  # the worker raised: where, for the log
            entry["traceback"] = m.pop("traceback")
        if m.get("correct"):
            entry["gate"].append(m.pop("correct"))
            if entry["gate"][-1]["status"] != "pass":
                entry.update(verdict="rejected", stage="correct",
                             reason=entry["gate"][-1]["reason"])
                bar.step(evals, "rejected (correct)")
                return ("rejected",)
        entry["effect"] = m
        if not m["ok"] or not m["faster"]:
            entry.update(verdict="rejected", stage="profile",
                         reason=m.get("reason") or
                         "not faster in every trial (speedups "
                         f"{', '.join(f'{x:.6g}' for x in m['speedup_trials'])})")
            bar.step(evals, "not faster")
            return ("slower", m["speedup_median"], after) if m["ok"] else ("rejected",)
        if m["speedup_median"] < opts.min_gain:
            entry.update(verdict="rejected", stage="profile",
                         reason=f"faster in every trial, by less than --min-gain "
                                f"{opts.min_gain:g} (median {m['speedup_median']:.6g})")
            bar.step(evals, "below the minimum gain")
            return ("rejected",)
        last_kept = evals
        if opts.select == "best" and entry.get("phase") != "tuning":
            entry.update(verdict="kept", reason="faster in every trial; the round goes on")
            contenders.append((m["speedup_median"], entry, after, h, g, enabler))
            bar.step(evals, "kept, the round goes on")
            return ("kept",)
        accept(entry, after, h, g, m["speedup_median"], enabler=enabler)
        return ("accepted",)

    def enabled(entry, base, after):
        """--enablers: ``entry`` was correct but not faster alone; when its rewrite makes
        cards apply that apply nowhere in the current kernel, their first offers (evidence
        values; at most ENABLER_TRIES, in menu order) are tried on top of it in turn, each
        pair gated and timed against the current kernel as one candidate (one evaluation
        each), until one is kept."""
        from kltrans.optimize.fillers import full_options
        from kltrans.optimize.retrieve import configured
        from kltrans.passes.registry import get_pass

        au = parse(after.source, opts.kernel)
        here = {o.card for o in proposer.menu(base, ctx, cur_hash)[0]}
        new = [o for o in proposer.menu(au, ctx, entry["after"])[0]
               if o.card not in here and o.card != entry.get("card") and not o.unproven]
        for o in new[:ENABLER_TRIES]:
            if evals >= opts.budget:
                return
            opts2 = full_options(o, {})
            p2 = configured(get_pass(o.pass_name), opts2)
            entry2 = {"n": len(tried) + 1, "state": cur_hash, "spec": p2.spec(),
                      "pass": p2.name, "site": o.site, "forced": False, "card": o.card,
                      "options": opts2, "location": o.location, "snippet": o.snippet,
                      "offer": o.id, "round": entry.get("round"),
                      "rank": o.summary.get("rank"), "enabled_by": entry["evaluation"],
                      "via": entry["after"],
                      "rationale": f"applies only after {entry['spec']} (evaluation "
                                   f"{entry['evaluation']}, not faster alone): timed with it"}
            tried.append(entry2)
            out = consider(entry2, au, p2, o.site, ctx, enabler=entry)
            if out is not None and out[0] in ("kept", "accepted"):
                return

    try:
        while True:
            if evals >= opts.budget:
                move_to_best()
                doc["termination"] = {"kind": "budget", "evaluations": evals}
                break
            if opts.time_budget is not None and time.perf_counter() - t0 >= opts.time_budget:
                move_to_best()
                doc["termination"] = {"kind": "time-budget", "evaluations": evals}
                break
            if opts.patience and evals - last_kept >= opts.patience:
                move_to_best()
                doc["termination"] = {"kind": "patience", "evaluations": evals,
                                      "reason": f"{opts.patience} evaluations in a row kept "
                                                "no candidate"}
                break
            if idle >= 500:  # proposals that never reach the gate: stop, do not spin
                move_to_best()
                doc["termination"] = {"kind": "exhausted", "evaluations": evals,
                                      "reason": "500 proposals in a row produced no new kernel"}
                break
            try:
                prop = proposer.propose(unit, ctx, cur_hash, tried)
            except Exception as e:
                if type(e).__name__ == "LLMConfigError":  # key or model refused mid-run
                    raise OptimizeError(str(e)) from None
                if _is_llm_failure(e):
                    doc["termination"] = {"kind": "llm-unavailable", "evaluations": evals,
                                          "reason": str(e)}
                    break
                raise
            if contenders and (prop is None or prop.meta.get("round") != 1):
                move_to_best()  # the round is over: the next proposal is for the new state
                continue
            if prop is None:
                why = "the strategy has nothing more to propose"
                if getattr(proposer, "retired", 0):
                    why += (f" ({proposer.retired} offer(s) of this kernel state left the "
                            f"menu after {opts.offer_tries} evaluation(s) that kept nothing)")
                if getattr(proposer, "tuning", False):
                    why += " (--tune-last: each tuning card's offer was tried once)"
                doc["termination"] = {"kind": "exhausted", "evaluations": evals,
                                      "reason": why}
                break
            p = prop.pass_obj
            entry = {"n": len(tried) + 1, "state": cur_hash, "spec": p.spec(), "pass": p.name,
                     "site": prop.site, "forced": prop.forced, **prop.meta}
            tried.append(entry)
            base = unit
            out = consider(entry, base, p, prop.site, forced_ctx if prop.forced else ctx)
            idle = idle + 1 if out is None else 0
            if out is not None and out[0] == "slower" and opts.enablers and \
                    evals < opts.budget and out[1] >= ENABLER_FLOOR and \
                    entry.get("phase") != "tuning":
                enabled(entry, base, out[2])
    finally:
        bar.close()
    doc["candidates"] = tried
    doc["events"] = list(getattr(proposer, "events", []))
    filler = getattr(proposer, "filler", None)
    if filler is not None and getattr(filler, "events", None):
        doc["events"].extend({"filler": filler.name, **e} for e in filler.events)
    doc["final"] = {"hash": cur_hash, "source": cur.decode("utf-8"),
                    "evaluations": evals, "accepted": len(doc["accepted"]),
                    "rejected": sum(1 for t in tried if t.get("verdict") == "rejected"),
                    "outranked": sum(1 for t in tried if t.get("verdict") == "outranked"),
                    "same_code": sum(1 for t in tried if t.get("verdict") == "same-code"),
                    "speedup_vs_start": round(speedup, 4) if backend == "cuda" else None,
                    "measured": backend == "cuda", "seconds": round(time.perf_counter() - t0, 3)}
    if ck.replayed:  # a resumed run: these verdicts came from its checkpoint, not this call
        doc["final"]["replayed"] = ck.replayed
    return doc


def search_defaults(strategy: str, filler: str, backend: str) -> dict:
    """The skills search's variants when none is asked for. Each was adopted for the
    skills strategy with the builtin filler on a GPU, where it was measured, by a rule
    written down before its runs: ``select="best"`` (bench/results/select_best_plan.txt),
    ``enablers`` (enablers_plan.txt) and ``offer_tries=1`` (offer_tries_plan.txt), the
    three together measured on the corpus too (experiment_enablers_t1_corpus.txt).
    Elsewhere the search is the issue's: the first candidate kept, no enablers, no limit
    per offer (without a GPU nothing is timed; blind and memory keep their rule)."""
    on = (strategy, filler, backend) == ("skills", "builtin", "cuda")
    return {"select": "best" if on else "first", "enablers": on,
            "offer_tries": 1 if on else None, "tune_last": False}


def resolve_variants(strategy: str, filler: str, backend: str, select=None, enablers=None,
                     offer_tries=None, tune_last=None) -> dict:
    """``select``, ``enablers``, ``offer_tries`` and ``tune_last`` as the search runs
    them: each one not asked for (None) from :func:`search_defaults`; ``offer_tries=0``
    (no limit) as None."""
    d = search_defaults(strategy, filler, backend)
    tries = d["offer_tries"] if offer_tries is None else offer_tries
    return {"select": select or d["select"],
            "enablers": d["enablers"] if enablers is None else enablers,
            "offer_tries": tries or None,
            "tune_last": d["tune_last"] if tune_last is None else tune_last}


def variant_value_error(min_gain=1.0, patience=None, offer_tries=None) -> str | None:
    """What is wrong with the variants' values (None: nothing), in the options' words."""
    if not min_gain >= 1.0:
        return "--min-gain must be 1 or more (a speedup: 1.01 asks for 1%)"
    if patience is not None and patience < 1:
        return "--patience must be 1 or more (evaluations in a row)"
    if offer_tries is not None and offer_tries < 0:
        return "--offer-tries must be 0 (no limit) or more (evaluations of one offer)"
    return None


def _make_filler(opts: OptimizeOptions):
    from kltrans.optimize.fillers import BuiltinFiller

    if opts.filler == "builtin":
        return BuiltinFiller()
    from kltrans.optimize.llm import LLMConfigError, LLMFiller

    try:
        return LLMFiller(base_url=opts.llm_base_url, model=opts.llm_model,
                         timeout_s=opts.llm_timeout, max_retries=opts.llm_retries)
    except LLMConfigError as e:
        raise OptimizeError(str(e)) from None


class _Progress:
    """A rich progress bar on stderr (plain lines when stderr is not a terminal)."""

    def __init__(self, on: bool, total: int, label: str):
        self.on, self.label, self.total = on, label, total
        self.p = None
        if on and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self.p = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                              TextColumn("{task.fields[last]}"), console=Console(stderr=True))
            self.task = self.p.add_task(label, total=total, last="")
            self.p.start()

    def step(self, n: int, what: str) -> None:
        if self.p is not None:
            self.p.update(self.task, completed=n, last=what)
        elif self.on:
            print(f"kltrans optimize: [{n}/{self.total}] {what}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.p is not None:
            self.p.stop()
