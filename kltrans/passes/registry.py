"""The pass registry: names to lazily imported pass classes.

The engine never imports a catalogue pass by name. Passes are found through the
entry-point group ``kltrans.passes``: an entry point may load either a pass class or a
*table* — a dict mapping pass names to ``"module:Class"`` strings, imported only when the
pass is used. kltrans's own catalogue is the table ``CATALOGUE`` in the top-level
``passes`` package (one line per pass); third-party packages add their own entry points.
"""

from __future__ import annotations

import difflib
import functools
import importlib
from importlib import metadata

GROUP = "kltrans.passes"
# passes of the engine itself: found by name (``kltrans opt -p canonicalize``) but not
# listed by :func:`names`, which is the catalogue the walk, explain and optimize search
ENGINE = {"canonicalize": "kltrans.passes.canonical:Canonicalize"}


class UnknownPass(KeyError):
    def __init__(self, name: str, known: list[str]):
        near = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        msg = f"unknown pass {name!r}"
        if near:
            msg += f"; did you mean {', '.join(near)}?"
        super().__init__(msg)
        self.name = name
        self.near = near
        self.known = known

    def __str__(self) -> str:
        return self.args[0]


class RegistryError(RuntimeError):
    """A registered pass that cannot be loaded (bad table entry, broken module)."""


@functools.lru_cache(maxsize=1)
def table() -> dict[str, object]:
    """Pass name -> "module:Class" string or an already loaded class."""
    out: dict[str, object] = {}
    for ep in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
        try:
            obj = ep.load()
        except Exception as e:
            raise RegistryError(f"entry point {ep.name} = {ep.value} does not load: {e}") from e
        if isinstance(obj, dict):
            for name, target in obj.items():
                out[name] = target
        elif isinstance(obj, type):
            out[getattr(obj, "name", ep.name)] = obj
        else:
            raise RegistryError(f"entry point {ep.name} must be a pass class or a table")
    if not out:
        # running from a source checkout that is not installed (PYTHONPATH=checkout, as
        # on the GPU machine): no entry points, so read the in-tree catalogue directly
        try:
            import passes
        except ImportError:
            return out
        out.update(getattr(passes, "CATALOGUE", {}))
    return out


def names(kind: str | None = None) -> list[str]:
    if kind is None:
        return sorted(table())
    return sorted(n for n in table() if get_pass(n).kind == kind)


@functools.lru_cache(maxsize=None)
def get_pass(name: str):
    """The pass class registered as ``name`` (imported now)."""
    t = {**table(), **ENGINE}
    if name not in t:
        raise UnknownPass(name, sorted(t))
    target = t[name]
    if isinstance(target, type):
        cls = target
    else:
        mod_name, _, attr = str(target).partition(":")
        try:
            mod = importlib.import_module(mod_name)
        except Exception as e:
            raise RegistryError(f"pass {name}: cannot import {mod_name}: {e}") from e
        cls = getattr(mod, attr, None)
        if cls is None:
            raise RegistryError(f"pass {name}: {mod_name} has no {attr}")
    if getattr(cls, "name", None) != name:
        raise RegistryError(f"pass {name}: {target} declares name {getattr(cls, 'name', None)!r}")
    return cls


def reset() -> None:
    """Forget loaded tables (after ``kltrans new-pass`` edits the catalogue)."""
    table.cache_clear()
    get_pass.cache_clear()
    importlib.invalidate_caches()
