"""Retrieval: which skill cards apply to a kernel, where, and how strongly they are backed.

A card is offered at a site when the card's optimize pass anchors there, the features the
card ``requires`` are present in the kernel and those it ``conflicts`` with are absent,
and every precondition holds at the site under the context's facts (workload facts, the
workload's tolerances, the caller's ``--assume``). No gate time is spent on a site that
fails a precondition. Offers are ranked by the card's evidence (see :func:`score`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from kltrans.optimize.menu import Offer, OptionChoice


class LibraryError(ValueError):
    """A skill library that cannot be used (missing, unreadable, invalid card)."""


@dataclass
class Card:
    id: str
    path: str
    data: dict
    workloads: list = field(default_factory=list)  # where its evidence comes from

    @property
    def pass_name(self) -> str:
        return self.data["pass"]


def load_library(skills_dir: str, exclude_workloads=()) -> list[Card]:
    """The cards of ``skills_dir``; cards backed only by ``exclude_workloads`` are dropped,
    and evidence from those workloads is removed from the rest (``--exclude-own``)."""
    from kltrans.passes.registry import UnknownPass, get_pass
    from kltrans.skills.cards import CardError, load_cards, validate_card

    try:
        raw = load_cards(skills_dir)
    except CardError as e:
        raise LibraryError(str(e)) from None
    excl = set(exclude_workloads)
    out = []
    for cid, (path, data) in sorted(raw.items()):
        errs = validate_card(data)
        if errs:
            raise LibraryError(f"{path}:1:1: error: not a valid skill card: {errs[0]}")
        try:
            get_pass(data["pass"])
        except UnknownPass as e:
            raise LibraryError(f"{path}:1:1: error: {e}") from None
        if excl:
            data = _without(data, excl)
            if not data["provenance"]:
                continue
        wls = sorted({p["workload"] for p in data["provenance"]})
        out.append(Card(cid, path, data, wls))
    return out


def _without(card: dict, excl: set) -> dict:
    """A copy of ``card`` without the evidence of the excluded workloads."""
    import copy

    c = copy.deepcopy(card)
    for key in ("effect", "provenance", "verification"):
        c[key] = [e for e in c.get(key) or [] if e.get("workload") not in excl]
    c["failures_avoided"]["items"] = [i for i in c["failures_avoided"].get("items") or []
                                      if i.get("workload") not in excl]
    c["anchor"]["examples"] = [e for e in c["anchor"].get("examples") or []
                               if e.get("workload") not in excl]
    for p in c.get("preconditions") or []:
        p["seen"] = [s for s in p.get("seen") or [] if s.get("workload") not in excl]
    # option values seen only in excluded workloads' lineages are not evidence any more;
    # the card keeps its declared domain and default
    if not c["provenance"]:
        for o in c["options"].values():
            o["seen"] = []
    return c


# ------------------------------------------------------------------ workload features
def workload_profile(wl) -> dict:
    """What similarity compares: dtypes, ranks, and the workload class."""
    ins = [a for a in wl.arguments if a.role in ("in", "inout")]
    outs = [a for a in wl.arguments if a.role in ("out", "inout")]
    dtypes = sorted({a.dtype for a in ins + outs if a.dtype})
    rank_in = max((len(a.shape or ()) for a in ins), default=0)
    rank_out = max((len(a.shape or ()) for a in outs), default=0)
    env = dict(wl.bench_size)
    try:
        n_in = sum(_numel(a, wl, env) for a in ins)
        n_out = sum(_numel(a, wl, env) for a in outs)
    except Exception:
        n_in = n_out = 0
    if n_in and n_out and n_out * 8 < n_in:
        cls = "reduction"
    elif n_in and n_out and n_out > n_in * 2:
        cls = "expansion"
    else:
        cls = "map"
    if len([a for a in ins if len(a.shape or ()) == 2]) >= 2 and rank_out == 2:
        cls = "contraction"
    return {"dtypes": dtypes, "rank_in": rank_in, "rank_out": rank_out, "class": cls}


def _numel(arg, wl, env) -> int:
    n = 1
    for d in wl.shape(arg, env):
        n *= int(d)
    return n


def similarity(a: dict, b: dict) -> float:
    """In [0, 1]: shared dtypes (Jaccard), same class, same ranks."""
    da, db = set(a["dtypes"]), set(b["dtypes"])
    dt = len(da & db) / len(da | db) if da | db else 1.0
    return (0.4 * dt + 0.4 * (a["class"] == b["class"])
            + 0.1 * (a["rank_in"] == b["rank_in"]) + 0.1 * (a["rank_out"] == b["rank_out"]))


def corpus_profiles(corpus_root: str | None) -> dict[str, dict]:
    """Profiles of the corpus workloads (by name, each with its folder ``path``), for
    similarity to card evidence and for finding their lineages."""
    from kltrans.workload.spec import SpecError, load_workload

    out = {}
    if not corpus_root or not os.path.isdir(corpus_root):
        return out
    for d in sorted(os.listdir(corpus_root)):
        p = os.path.join(corpus_root, d)
        if d == "heldout" or not os.path.isfile(os.path.join(p, "workload.yaml")):
            continue
        try:
            wl = load_workload(p)
        except (SpecError, OSError):
            continue
        out[wl.name] = {**workload_profile(wl), "path": p}
    return out


def score(card: Card, target: dict, profiles: dict[str, dict]) -> tuple[float, dict]:
    """Rank of a card for a target workload, with its parts.

    effect: log of the geometric-mean measured speedup (0 when never measured, so measured
    gains rank first); agreement: how many workloads' lineages took the step; similarity:
    the best similarity of an evidence workload to the target; failures: a card that knows
    what fails ranks a little higher (its conditions are tested).
    """
    sps = [e["speedup"] for e in card.data.get("effect") or [] if e.get("measured")
           and e.get("speedup")]
    effect = sum(math.log(max(s, 1e-3)) for s in sps) / len(sps) if sps else 0.0
    agreement = len(card.workloads)
    sim = max((similarity(profiles[w], target) for w in card.workloads if w in profiles),
              default=0.0)
    fails = len(card.data["failures_avoided"].get("items") or [])
    total = 2.0 * effect + 0.5 * math.log1p(agreement) + 1.0 * sim + 0.1 * math.log1p(fails)
    return total, {"effect": round(effect, 4), "agreement": agreement, "similarity": round(sim, 3),
                   "failures": fails}


# --tune-last: a card whose measured steps alone were typically a tie is a tuning card
SMALL_EFFECT = 1.02


def small_effect(card: dict) -> bool:
    """A tuning card (``--tune-last``): measured, never as part of a composite whose gain
    came with later steps (``together``), and the median of its measured speedups alone
    within 2% of 1 (a tie, as the reports count one). unroll, restrict-pointers,
    stream-hints, fast-math and add-launch-bounds are such cards in the committed
    library; a card without evidence (the catalogue tail) is not."""
    import statistics

    effects = [e for e in card.get("effect") or [] if e.get("measured") and e.get("speedup")]
    if not effects or any(e.get("together") for e in effects):
        return False
    med = statistics.median(e["speedup"] for e in effects)
    return 1 / SMALL_EFFECT <= med <= SMALL_EFFECT


# ------------------------------------------------------------------ features
def kernel_features(unit) -> set[str]:
    """Mechanism names present in the kernel (for a card's requires / conflicts)."""
    from kltrans.lineage.naive import residual_mechanisms

    return {m for m, _ in residual_mechanisms(unit)}


def _feature_ok(card: Card, feats: set[str]) -> str | None:
    for f in card.data.get("requires") or []:
        if f.get("name") not in feats:
            return f"requires {f.get('name')}, which the kernel does not have"
    for f in card.data.get("conflicts") or []:
        if f.get("name") in feats:
            return f"conflicts with {f.get('name')}, which the kernel has"
    return None


# ------------------------------------------------------------------ the menu
def option_choices(cls, card: dict | None, limit: int = 6,
                   source: bytes | None = None) -> tuple[OptionChoice, ...]:
    """Values per option: the card's evidence first, then the default, then a sample of
    the declared domain (at most ``limit`` values per option). With the target's
    ``source``, an evidence value that names something (a macro, a constant) the target
    does not have is dropped: it was the evidence kernel's name, not a choice."""
    import re

    out = []
    words = set(re.findall(rb"[A-Za-z_]\w*", source)) if source is not None else None
    for o in cls.options():
        vals: list = []
        seen = ((card or {}).get("options") or {}).get(o.name, {}).get("seen") or []
        if words is not None:
            declared = {v for v in o.domain.values() if isinstance(v, str)}
            seen = [v for v in seen if not (isinstance(v, str) and v not in declared and any(
                w.encode() not in words for w in re.findall(r"[A-Za-z_]\w*", v)))]
        for v in list(seen) + [o.default] + list(o.domain.values()):
            if o.domain.contains(v) and v not in vals and not (isinstance(v, bool) and any(
                    x is v for x in vals)):
                vals.append(v)
            if len(vals) >= limit:
                break
        out.append(OptionChoice(o.name, tuple(vals), vals[0] if vals else o.default, o.doc,
                                o.domain.describe(), o.tune))
    return tuple(out)


def _first(c: OptionChoice, value) -> OptionChoice:
    """``c`` with ``value`` offered first and as its default."""
    import dataclasses

    vals = (value,) + tuple(v for v in c.values if not (v == value and type(v) is type(value)))
    return dataclasses.replace(c, values=vals, default=value)


def configured(cls, values: dict):
    """An instance of pass class ``cls`` with option ``values`` (by option name)."""
    fields = {o.name: o.field for o in cls.options()}
    return cls(**{fields[k]: v for k, v in values.items() if k in fields})


CATALOGUE = "catalogue:"  # the card id prefix of an offer no card backs


def catalogue_cards(cards: list[Card]) -> list[Card]:
    """A stand-in card, without evidence, for every optimize pass no card of ``cards``
    names (the catalogue tail of the skills strategy), in the catalogue's order."""
    from kltrans.passes.registry import get_pass, names

    have = {c.pass_name for c in cards}
    out = []
    for n in names("optimize"):
        if n in have:
            continue
        doc = (get_pass(n).__doc__ or "").strip().splitlines()
        out.append(Card(CATALOGUE + n, "", {
            "pass": n, "intent": doc[0] if doc else n, "options": {}, "effect": [],
            "failures_avoided": {"items": []}, "provenance": [], "requires": [],
            "conflicts": []}))
    return out


def _near_miss(failing: list, unproven: bool) -> bool:
    """Every precondition holds but one, which is unknown (and near misses are offered)."""
    return unproven and len(failing) == 1 and failing[0][1].is_unknown


def _checked_as(q, s, ctx):
    """Site ``s`` as pass instance ``q`` sees it, and the preconditions failing there."""
    s_q = s.__class__(s.unit, s.match, s.function, s.index, q)
    return s_q, [(pre, v) for pre, v in q.check(s_q, ctx) if not v.holds]


def _other_form(cls, base, p, s, failing, choices, ctx, unproven):
    """The first configuration that differs from ``p`` in one option, among the values
    offered for it, under which every precondition at the site holds (or, where ``p`` is
    no near miss, all but one unknown); ``p``'s own when none. The checks read only the
    kernel, so trying a value costs no gate evaluation."""
    now = p.option_values()
    for c in base:
        for v in c.values:
            if v == now[c.name] and type(v) is type(now[c.name]):
                continue
            q = configured(cls, {**now, c.name: v})
            try:
                s_q, f_q = _checked_as(q, s, ctx)
            except Exception:  # a value the analysis cannot read is no form to offer
                continue
            if not f_q or (_near_miss(f_q, unproven) and not _near_miss(failing, unproven)):
                vals = q.option_values()
                return q, s_q, f_q, tuple(_first(x, vals[x.name]) for x in choices)
    return p, s, failing, choices


def build_menu(unit, ctx, cards: list[Card], target: dict, profiles: dict,
               rejected: list | None = None, catalogue: bool = False,
               unproven: bool = False) -> list[Offer]:
    """Offers for every (card, site) that applies, best evidence first. Sites ruled out by
    a precondition are appended to ``rejected`` (card, site, precondition, reason), and so
    are cards ruled out before any site: a feature they require or conflict with, no site
    (site None).

    ``catalogue``: also offer, after every card, the optimize passes no card covers, under
    the same precondition checks (each pass's own "when"), in the catalogue's order; they
    carry no evidence (no effect, no option values seen, no failures avoided).

    ``unproven``: a near miss -- a site where every precondition holds but one that is
    *unknown* (the analysis can neither prove nor refute it: a non-affine offset, a
    tolerance, an alignment it cannot see) -- is offered too, after every proven offer,
    with that precondition named in ``Offer.unproven``; it is applied with it unchecked
    and the gate decides. A site where a precondition fails, or where several are open, is
    never offered."""
    from kltrans.passes.registry import get_pass

    feats = kernel_features(unit)
    offers = []
    tail = catalogue_cards(cards) if catalogue else []
    for k, card in enumerate(list(cards) + tail):
        cls = get_pass(card.pass_name)
        why = _feature_ok(card, feats)
        if why:
            if rejected is not None:
                rejected.append({"card": card.id, "site": None, "reason": why})
            continue
        base = option_choices(cls, card.data, source=unit.source)
        p = configured(cls, {c.name: c.default for c in base})
        try:
            sites = p.sites(unit, ctx)
        except Exception as e:  # a broken pass must not stop the search
            if rejected is not None:
                rejected.append({"card": card.id, "site": None,
                                 "reason": f"anchor: {type(e).__name__}: {e}"})
            continue
        if not sites:
            if rejected is not None:
                anchor = cls.anchor.describe()
                if len(anchor) > 100:
                    anchor = anchor[:97] + "..."
                rejected.append({"card": card.id, "site": None,
                                 "reason": f"no site in the kernel (anchor: {anchor})"})
            continue
        if card.id.startswith(CATALOGUE):  # below every card, in the catalogue's order
            rank, parts = -1000.0 - k, {"catalogue": True}
        else:
            rank, parts = score(card, target, profiles)
        tuning = small_effect(card.data)  # the card's, whatever the site
        # preconditions may read options (a named array, a width): where the evidence
        # values fail at a site, the pass's declared defaults are tried before giving up
        alt = configured(cls, {})
        for s in sites:
            p, choices = configured(cls, {c.name: c.default for c in base}), base
            failing = [(pre, v) for pre, v in p.check(s, ctx) if not v.holds]
            if failing and alt.option_values() != p.option_values():
                s_alt, f_alt = _checked_as(alt, s, ctx)
                if not f_alt or (_near_miss(f_alt, unproven)
                                 and not _near_miss(failing, unproven)):
                    p, s, failing = alt, s_alt, f_alt
                    dflt = alt.option_values()
                    choices = tuple(_first(c, dflt[c.name]) for c in base)
            if failing:
                # a form the site needs may be another value of an option (row-per-warp's
                # run-time group=cols rather than a fixed 32): each other value offered is
                # tried, one option at a time, under the same checks
                p, s, failing, choices = _other_form(cls, base, p, s, failing, choices, ctx,
                                                     unproven)
            loc = s.location()
            where = f"{loc.path}:{loc.line}:{loc.column}"
            open_ = ()
            if _near_miss(failing, unproven):
                open_, failing = (failing[0][0].name,), []
            if failing:
                if rejected is not None:
                    pre, v = failing[0]
                    rejected.append({"card": card.id, "site": s.index, "location": where,
                                     "precondition": pre.name, "category": pre.category,
                                     "reason": f"{v.status}: {v.reason}"})
                continue
            snippet = "\n".join(unit.text(s.node).splitlines()[:8])
            d = card.data
            summary = {"intent": d.get("intent", ""),
                       "preconditions": [{"name": pre.name, "reason": v.reason}
                                         for pre, v in p.check(s, ctx)],
                       "effect": [{k: e[k] for k in ("workload", "measured", "speedup")
                                   if k in e} for e in d.get("effect") or []],
                       "failures_avoided": [
                           {k: i[k] for k in ("workload", "precondition", "stage", "evidence")
                            if k in i} for i in (d["failures_avoided"].get("items") or [])[:6]],
                       "rank": parts}
            if open_:
                summary["unproven"] = list(open_)
            if tuning:
                summary["small_effect"] = True
            offers.append(Offer("", card.id, card.pass_name, s.index, where, snippet,
                                choices, rank - 10000.0 if open_ else rank, summary, open_))
    offers.sort(key=lambda o: (-o.score, o.card, o.site))
    import dataclasses

    return [dataclasses.replace(o, id=f"o{i + 1}") for i, o in enumerate(offers)]
