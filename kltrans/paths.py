"""Where kltrans finds the data it ships with, and where its defaults write.

- **Defaults never write into the repository.** A command given no output folder writes
  under ``kltrans-out/`` in the current directory (``default_out``); committed data (a
  corpus lineage, the skill cards, ``bench/results``) is written only when a flag names it.
- **Bundled data is found from anywhere.** The skill library and the corpus are looked up
  in the current directory first, then next to the installed package (``bundled``), so
  ``kltrans skills list`` works outside the checkout; when neither has them the error
  names the flag that gives the folder.
"""

from __future__ import annotations

import os

OUT_ROOT = "kltrans-out"
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_out(*parts: str) -> str:
    """The default output folder ``kltrans-out/<parts...>`` (relative to the current
    directory, so it is printed as the user would type it)."""
    return os.path.join(OUT_ROOT, *parts)


def lineage_out(workload: str) -> str:
    """Where ``kltrans lineage WORKLOAD`` walks, measures and composes by default: a folder
    of its own per workload (resumed when walked again with the same inputs); the committed
    ``WORKLOAD/lineage`` is read or extended only when named with ``--out``."""
    name = os.path.basename(os.path.normpath(workload)) or "workload"
    return default_out("lineage", name)


class MissingData(Exception):
    """A bundled folder that is neither here nor next to the package."""


def bundled(name: str, given: str | None, flag: str, required: bool = True) -> str | None:
    """The folder ``given`` by ``flag``, or the bundled ``name`` folder (``skills``,
    ``corpus``): in the current directory, else next to the package; None when it is
    neither there nor ``required``."""
    if given is not None:
        return given
    for cand in (name, os.path.join(PACKAGE_ROOT, name)):
        if os.path.isdir(cand):
            return cand
    if not required:
        return None
    raise MissingData(f"{name}: not in the current directory, and kltrans is installed "
                      f"without it ({PACKAGE_ROOT}); name the folder with {flag} DIR")
