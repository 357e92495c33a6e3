"""The built-in parameter filler: deterministic, evidence first, then the declared domain.

Round one offers every menu entry (best evidence first) with the option values its card's
evidence used (an option never seen in evidence keeps its default). Round two varies one
performance option (``tune``) at a time through the values the menu offers for it; an
option that only chooses spelling (a name, a form, braces) is never varied, since every
value gives the same program and would spend a gate evaluation on a duplicate. Nothing is
tried twice in the same kernel state; when everything has been tried the filler says so
(``None``). A pick that an earlier kernel state already found no faster (same card,
options and site text: ``lost``) waits until every fresh pick of both rounds has been
tried: the accepted step in between rarely changes that verdict, and re-trying the same
losers after each accepted step is what used to spend most of a budget.
"""

from __future__ import annotations

import json

from kltrans.optimize.menu import Offer, Pick, lost_key


def pick_key(card: str, site: int, options: dict) -> tuple:
    return (card, site, json.dumps(options, sort_keys=True, default=str))


def full_options(offer: Offer, options: dict) -> dict:
    """The pick's options completed with the offer's defaults."""
    return {o.name: options.get(o.name, o.default) for o in offer.options}


class BuiltinFiller:
    name = "builtin"

    def candidates(self, offer: Offer):
        """The option assignments for one offer, in the order they are tried."""
        base = {o.name: o.default for o in offer.options}
        yield dict(base)
        for o in offer.options:
            if not o.tune:
                continue
            for v in o.values:
                if v != base[o.name] or type(v) is not type(base[o.name]):
                    yield {**base, o.name: v}

    def pick(self, kernel: str, menu: list[Offer], tried: list[dict],
             lost: frozenset = frozenset()) -> Pick | None:
        done = {pick_key(t["card"], t["site"], t["options"]) for t in tried}
        later = []  # picks an earlier state found no faster: last

        def fresh(offer, opts, why, rnd):
            if pick_key(offer.card, offer.site, opts) in done:
                return None
            if lost_key(offer.card, full_options(offer, opts), offer.snippet) in lost:
                later.append(Pick(offer.id, opts, why + "; no faster in an earlier state", 3))
                return None
            return Pick(offer.id, opts, why, rnd)

        gens = [(offer, self.candidates(offer)) for offer in menu]
        # round one: each offer's evidence values; then one option varied at a time
        for offer, gen in gens:
            p = fresh(offer, next(gen), "evidence values", 1)
            if p is not None:
                return p
        for offer, gen in gens:
            for opts in gen:
                p = fresh(offer, opts, "one option varied from the evidence values", 2)
                if p is not None:
                    return p
        return later[0] if later else None
