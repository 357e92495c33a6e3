"""On-disk, content-addressed cache of compile results.

An entry is two files under ``<root>/nvrtc/<key[:2]>/``:

``<key>.json``
    the record: format version, key, ok, arch, log, ptx, lowered names, the seconds the
    original compile took, and the size and sha256 of the cubin (or ``null``);
``<key>.cubin``
    the cubin bytes, when the compile produced one.

The root is :func:`kltrans.cachedir.cache_root` (``$KLTRANS_CACHE_DIR``, else
``$XDG_CACHE_HOME/kltrans``, else ``~/.cache/kltrans``), read from the environment on every
call, so a test can point it at a temporary directory; a store keeps the cache under its
size bound (:func:`kltrans.cachedir.maybe_prune`).

Every file is written to a temporary file in the same directory and moved into place
with :func:`os.replace`, so a reader sees either the old file, the new one or none,
never a partial one. The cubin is written before the record, and the record names the
cubin's sha256: a record whose cubin is missing, truncated or from another writer is a
miss, as is any record that does not parse. Two processes that compile the same key
both write complete entries; the last ``os.replace`` wins and either is valid. A miss
caused by a bad entry is healed when the caller stores the recompiled result.
"""

from __future__ import annotations

import hashlib
import json
import os

from kltrans.cachedir import cache_root, maybe_prune
from kltrans.syntax.files import atomic_write

FORMAT = 1  # bump when the record layout changes; older records become misses


def entry_paths(key: str, root: str | None = None) -> tuple[str, str]:
    """(record path, cubin path) for ``key``."""
    if len(key) < 3 or not all(c in "0123456789abcdef" for c in key):
        raise ValueError(f"bad cache key {key!r}")
    d = os.path.join(root or cache_root(), "nvrtc", key[:2])
    return os.path.join(d, key + ".json"), os.path.join(d, key + ".cubin")


def load(key: str, root: str | None = None) -> tuple[dict, bytes | None] | None:
    """The record and cubin stored under ``key``, or None (missing or damaged entry)."""
    jpath, cpath = entry_paths(key, root)
    try:
        with open(jpath, "rb") as f:
            record = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT or record.get("key") != key:
        return None
    digest = record.get("cubin_sha256")
    if digest is None:
        return record, None
    try:
        with open(cpath, "rb") as f:
            cubin = f.read()
    except OSError:
        return None
    if len(cubin) != record.get("cubin_size") or hashlib.sha256(cubin).hexdigest() != digest:
        return None
    return record, cubin


def store(key: str, record: dict, cubin: bytes | None, root: str | None = None) -> bool:
    """Write an entry; returns False (and leaves the cache as it was) on an OS error."""
    jpath, cpath = entry_paths(key, root)
    rec = dict(record)
    rec["format"] = FORMAT
    rec["key"] = key
    if cubin is not None:
        rec["cubin_size"] = len(cubin)
        rec["cubin_sha256"] = hashlib.sha256(cubin).hexdigest()
    else:
        rec["cubin_size"] = 0
        rec["cubin_sha256"] = None
    data = json.dumps(rec, sort_keys=True).encode("utf-8")
    try:
        if cubin is not None:
            atomic_write(cpath, cubin, durable=False)
        atomic_write(jpath, data, durable=False)
    except OSError:
        return False
    maybe_prune()
    return True
