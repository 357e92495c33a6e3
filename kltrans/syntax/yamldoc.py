"""YAML documents (skill cards, workload specs, rule tables, suite histories), read with
libyaml's C loader where pyyaml was built with it and the pure-Python loader otherwise:
the same safe subset either way, the C one about ten times faster (a search reads every
card of its library)."""

from __future__ import annotations

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str):
    """``yaml.safe_load(text)``, through the C loader when there is one."""
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader either way


__all__ = ["safe_load"]
