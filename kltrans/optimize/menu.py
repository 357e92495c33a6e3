"""The menu a parameter filler chooses from, and the filler's answer.

An :class:`Offer` is one (card, site) whose anchor matched and whose preconditions hold,
with a finite list of values for each option. A filler answers with a :class:`Pick`: an
offer id and a value for some of the options (the rest keep the offer's defaults). A pick
that names an offer not on the menu, or a value not offered, is not spent on the gate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class OptionChoice:
    """One option of an offer: the values offered, in the order a filler should try them."""

    name: str
    values: tuple          # finite, plain JSON scalars (int, str, bool, None)
    default: Any           # the value used when a pick leaves the option out
    doc: str = ""
    domain: str = ""       # the declared domain, in words (Option.domain.describe())
    tune: bool = False     # a performance parameter (the others only choose spelling)


@dataclass(frozen=True)
class Offer:
    """One applicable (card, site): what a filler may choose."""

    id: str                # "o1", "o2", ... unique in one menu
    card: str              # the skill card's id (= its optimize pass name)
    pass_name: str         # the optimize pass to run
    site: int              # the site index given to the pass (run_pass only_site)
    location: str          # "file:line:col" of the anchor site
    snippet: str           # the source text at the site (a few lines)
    options: tuple[OptionChoice, ...] = ()
    score: float = 0.0     # retrieval rank: larger is stronger evidence
    summary: dict = field(default_factory=dict)  # intent, preconditions, effect, failures avoided
    # preconditions the analysis could neither prove nor refute at this site (an "unproven"
    # offer: offered after every proven one, applied with them unchecked, the gate decides)
    unproven: tuple = ()

    def option(self, name: str) -> OptionChoice | None:
        return next((o for o in self.options if o.name == name), None)


@dataclass(frozen=True)
class Pick:
    """A filler's answer: an offer and option values (the rest keep their defaults)."""

    offer: str
    options: dict = field(default_factory=dict)
    rationale: str = ""
    # the builtin filler's round: 1 each offer with its evidence values, 2 one option varied,
    # 3 a pick an earlier state found no faster; 0 where the filler has no rounds (an LLM)
    round: int = 0


def check_pick(pick: Pick, menu: list[Offer]) -> str | None:
    """Why ``pick`` is not on ``menu`` (None when it is)."""
    offer = next((o for o in menu if o.id == pick.offer), None)
    if offer is None:
        return f"offer {pick.offer!r} is not on the menu ({', '.join(o.id for o in menu)})"
    for name, value in pick.options.items():
        oc = offer.option(name)
        if oc is None:
            return f"offer {offer.id} ({offer.card}) has no option {name!r}"
        # the same value and the same JSON type: 4.0 is not the integer 4, true is not 1
        if not any(type(value) is type(v) and value == v for v in oc.values):
            return (f"option {name}={value!r} of offer {offer.id} ({offer.card}) is not one of "
                    f"the values offered {list(oc.values)!r}")
    return None


def lost_key(card: str, options: dict, snippet: str) -> tuple:
    """What identifies a pick across kernel states: site numbers change when the kernel
    does, the text at the site mostly does not."""
    import hashlib
    import json

    return (card, json.dumps(options, sort_keys=True, default=str),
            hashlib.sha256(snippet.encode("utf-8")).hexdigest()[:16])


class Filler(Protocol):
    """Chooses the next candidate; ``tried`` lists the picks made in this kernel state with
    their verdicts; ``lost`` holds the :func:`lost_key` of every pick that an earlier state
    gated and found no faster (the same card, options and site text)."""

    name: str

    def pick(self, kernel: str, menu: list[Offer], tried: list[dict],
             lost: frozenset = frozenset()) -> Pick | None:
        """The next pick, or None when the filler has nothing more to offer."""
        ...
