"""A lineage on disk: ``lineage.json`` and ``states/NN-NAME.cu`` (the walk,
:mod:`kltrans.lineage.store`, also renders ``lineage.md`` and ``time.svg``).

The format lives here, below both the walk that writes it and the skills that read it.
Every file is written atomically, after every step, so that an interrupted walk leaves a
consistent lineage that ``kltrans lineage`` resumes from.
"""

from __future__ import annotations

import hashlib
import json
import os

from kltrans.syntax.files import atomic_write


def content_hash(src: bytes) -> str:
    """The short content hash that names a state (and a kernel) in lineages and logs."""
    return hashlib.sha256(src).hexdigest()[:16]


def state_file(index: int, name: str) -> str:
    return os.path.join("states", f"{index:02d}-{name}.cu")


def state_entry(index: int, name: str, src: bytes, h: str, gate: dict) -> dict:
    return {"index": index, "name": name, "hash": h, "file": state_file(index, name),
            "gate": {"ok": gate["ok"], "stages": gate["stages"], "resources": gate.get("resources")}}


def clear_states(out: str) -> None:
    """Remove the state files a walk wrote there before (only ``NN-NAME.cu`` files)."""
    d = os.path.join(out, "states")
    if not os.path.isdir(d):
        return
    for f in os.listdir(d):
        if len(f) > 3 and f[:2].isdigit() and f[2] == "-" and f.endswith(".cu"):
            os.remove(os.path.join(d, f))


class LineageError(ValueError):
    """A ``lineage.json`` (or a state file it names) that cannot be read or is not a
    kltrans lineage. The message names the file (``FILE:LINE:COL`` where known); the
    callers turn it into their own error (WalkError, MeasureError, CardError)."""


def read_doc(path: str) -> dict:
    """``lineage.json`` at ``path``, parsed and checked to have a lineage's shape.

    Raises :class:`LineageError` naming the file (with the line and column of a JSON or
    UTF-8 error) for a file that cannot be read, is empty, truncated, not UTF-8, not JSON,
    or JSON of another shape. The file is never changed."""
    from kltrans.syntax.diagnostics import InputError
    from kltrans.syntax.unit import read_failure, read_source

    try:
        text = read_source(path)
    except InputError as e:
        where, why = read_failure(e)
        raise LineageError(f"{where}: error: not a kltrans lineage: {why}") from None
    if not text.strip():
        raise LineageError(f"{path}: error: not a kltrans lineage: the file is empty")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise LineageError(f"{path}:{e.lineno}:{e.colno}: error: not a kltrans lineage: "
                           f"not valid JSON ({e.msg}; truncated?)") from None
    except (ValueError, RecursionError) as e:
        raise LineageError(f"{path}: error: not a kltrans lineage: not valid JSON ({e})") from None
    problem = shape_problem(doc)
    if problem:
        raise LineageError(f"{path}: error: not a kltrans lineage: {problem}")
    return doc


_NAME = {"type": "string", "minLength": 1}
# what a resumed walk, --measure, --composite and skills extract read from lineage.json
LINEAGE_SCHEMA = {
    "type": "object",
    "required": ["config", "states", "transitions"],
    "properties": {
        "config": {"type": "object", "required": ["workload", "expert", "kernel"],
                   "properties": {"workload": {"type": "string"},
                                  "expert": {"type": "string"},
                                  "kernel": {"type": "string"}}},
        "states": {"type": "array", "minItems": 1,
                   "items": {"type": "object", "required": ["file", "hash"],
                             "properties": {"file": _NAME, "hash": _NAME}}},
        "transitions": {"type": "array",
                        "items": {"type": "object", "required": ["step", "before", "after"],
                                  "properties": {"step": {"type": "integer"},
                                                 "before": {"type": "string"},
                                                 "after": {"type": "string"}}}},
        "termination": {"type": ["object", "null"], "required": ["kind"],
                        "properties": {"kind": {"type": "string"}}}}}


def shape_problem(doc) -> str | None:
    """What keeps ``doc`` from having a lineage's shape (:data:`LINEAGE_SCHEMA`, and every
    step going from one recorded state to another), or None."""
    from kltrans.syntax.records import schema_problem

    why = schema_problem(LINEAGE_SCHEMA, doc)
    if why:
        return why
    hashes = {st["hash"] for st in doc["states"]}
    for i, t in enumerate(doc["transitions"]):
        for k in ("before", "after"):
            if t[k] not in hashes:
                return f"transitions[{i}].{k}: {t[k]!r} names none of the states"
    return None


def load(out: str) -> dict | None:
    """The lineage in ``out`` to resume from; None when there is none (no lineage.json).

    A lineage.json that cannot be read, or a state file it names that is missing or not
    the recorded content, raises :class:`LineageError`: the walk there is the user's, and
    is neither resumed from a guess nor thrown away (``--restart`` starts over)."""
    path = os.path.join(out, "lineage.json")
    if not os.path.lexists(path):
        return None
    doc = read_doc(path)
    # every state it names must be there, with the recorded content
    for st in doc["states"]:
        p = os.path.join(out, st["file"])
        try:
            with open(p, "rb") as f:
                h = content_hash(f.read())
        except OSError as e:
            raise LineageError(f"{p}: error: a state file {path} names cannot be read: "
                               f"{e.strerror or e}") from None
        if h != st["hash"]:
            raise LineageError(f"{p}: error: not the state {path} recorded (content hash "
                               f"{h}, recorded {st['hash']}): edited, or from another walk")
    return doc


def read_state(out: str, st: dict) -> bytes:
    with open(os.path.join(out, st["file"]), "rb") as f:
        return f.read()


def save_doc(out: str, doc: dict) -> None:
    """Write ``lineage.json`` alone (its renderings are written by :func:`save`)."""
    atomic_write(os.path.join(out, "lineage.json"),
                 (json.dumps(doc, indent=1, sort_keys=False) + "\n").encode())


def mark_naive(out: str, doc: dict) -> str | None:
    """Name the last state of a walk that ends at ``naive`` ``NN-naive.cu``.

    Writes the new file and returns the old one, which the caller removes once the
    lineage that no longer names it has been saved."""
    st = doc["states"][-1]
    if st["name"] == "naive" or len(doc["states"]) == 1:
        return None
    src = read_state(out, st)
    old = os.path.join(out, st["file"])
    st["name"] = "naive"
    st["file"] = state_file(st["index"], "naive")
    atomic_write(os.path.join(out, st["file"]), src)
    return old
