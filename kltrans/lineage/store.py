"""A lineage on disk: ``lineage.json``, ``states/NN-NAME.cu`` and the rendered ``lineage.md``.

Every file is written atomically, after every step, so that an interrupted walk leaves a
consistent lineage that ``kltrans lineage`` resumes from.
"""

from __future__ import annotations

import json
import os

from kltrans.syntax.files import atomic_write


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


def load(out: str) -> dict | None:
    path = os.path.join(out, "lineage.json")
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    # every state it names must be there, with the recorded content
    from kltrans.lineage.walk import content_hash

    for st in doc.get("states", []):
        p = os.path.join(out, st["file"])
        if not os.path.isfile(p) or content_hash(open(p, "rb").read()) != st["hash"]:
            return None
    return doc


def read_state(out: str, st: dict) -> bytes:
    with open(os.path.join(out, st["file"]), "rb") as f:
        return f.read()


def save_doc(out: str, doc: dict) -> None:
    """Write ``lineage.json`` alone (its renderings are written by :func:`save`)."""
    atomic_write(os.path.join(out, "lineage.json"),
                 (json.dumps(doc, indent=1, sort_keys=False) + "\n").encode())


def save(out: str, doc: dict, new_states: dict) -> None:
    os.makedirs(os.path.join(out, "states"), exist_ok=True)
    for idx, src in new_states.items():
        st = doc["states"][idx]
        atomic_write(os.path.join(out, st["file"]), src)
    save_doc(out, doc)
    from kltrans.lineage.render import render_markdown, render_svg

    atomic_write(os.path.join(out, "lineage.md"), render_markdown(out, doc).encode())
    atomic_write(os.path.join(out, "time.svg"), render_svg(doc).encode())


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
