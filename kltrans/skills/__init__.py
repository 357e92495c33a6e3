"""Skill cards: each accepted lineage step, reversed.

A step of a backward walk removed a mechanism with a simplify pass; its inverse, the
optimize pass that gave the previous state back, is the skill. ``extract`` turns every
step of every lineage into evidence on the card of that optimize pass (one card per
optimization, several pieces of evidence when several lineages took it), with the
preconditions that held, the measured effect (GPU walks), the failures its probes found
without its conditions, and where it came from. Cards are YAML, validated against
``CARD_SCHEMA`` (JSON Schema, checked with the ``jsonschema`` package), each with a
rendered Markdown view.
"""

from kltrans.skills.cards import (  # noqa: F401
    CARD_SCHEMA, CardError, extract, load_cards, render_card, render_index, validate_card,
    write_cards,
)
