"""A lineage on disk, as the walk keeps it: the format (:mod:`kltrans.workload.lineage_store`,
below both the walk that writes it and the skills that read it, re-exported here) and
:func:`save`, which also renders ``lineage.md`` and ``time.svg`` after every step."""

import os

from kltrans.syntax.files import atomic_write
from kltrans.workload.lineage_store import (LINEAGE_SCHEMA, LineageError, clear_states,
                                            content_hash, load, mark_naive, read_doc,
                                            read_state, save_doc, shape_problem, state_entry,
                                            state_file)

__all__ = ["LINEAGE_SCHEMA", "LineageError", "clear_states", "content_hash", "load",
           "mark_naive", "read_doc", "read_state", "save", "save_doc", "shape_problem",
           "state_entry", "state_file"]


def save(out: str, doc: dict, new_states: dict) -> None:
    """Write the new states, ``lineage.json``, ``lineage.md`` and ``time.svg``."""
    from kltrans.lineage.render import render_markdown, render_svg

    os.makedirs(os.path.join(out, "states"), exist_ok=True)
    for idx, src in new_states.items():
        st = doc["states"][idx]
        atomic_write(os.path.join(out, st["file"]), src)
    save_doc(out, doc)
    atomic_write(os.path.join(out, "lineage.md"), render_markdown(out, doc).encode())
    atomic_write(os.path.join(out, "time.svg"), render_svg(doc).encode())
