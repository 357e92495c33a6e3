"""The on-disk cache: where it is, what it holds, and a bound on its size.

The root is ``$KLTRANS_CACHE_DIR``, else ``$XDG_CACHE_HOME/kltrans``, else
``~/.cache/kltrans``, read from the environment on every call. It holds

- ``nvrtc/``: compile results (``gate.cache``), content-addressed entries
  ``<key>.json`` + ``<key>.cubin``;
- ``cpu/mod/``: the CPU backend's kernel modules (``gate.cpu.build``), entries
  ``<key>.json`` + ``<key>.so``; ``cpu/rt/`` and ``cpu/pch/``: its runtime library and
  precompiled header, one per compiler and runtime version;
- ``devices.json``: measured device bandwidths.

Every entry is a cache: deleting one costs a recompile, never a wrong answer (a reader
that finds half an entry treats it as a miss). :func:`prune` keeps the entries under a
size bound (``$KLTRANS_CACHE_MAX_MB``, default 512; 0: none), the least recently written
first; :func:`maybe_prune` runs it after a store, at most once a minute (the mark is the
modification time of ``<root>/.pruned``).
``kltrans cache info`` and ``kltrans cache clean`` show and empty it.

Layering: the standard library only.
"""

from __future__ import annotations

import os
import shutil
import time

#: folders of content-addressed entries (``<key>.<ext>`` files in ``<key[:2]>/``)
ENTRY_AREAS = ("nvrtc", os.path.join("cpu", "mod"))
#: folders of builds kept per tool version
BUILD_AREAS = (os.path.join("cpu", "rt"), os.path.join("cpu", "pch"))
DEFAULT_MAX_MB = 512


def cache_root() -> str:
    """The cache root for this process, from the environment."""
    root = os.environ.get("KLTRANS_CACHE_DIR")
    if root:
        return os.path.abspath(os.path.expanduser(root))
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return os.path.join(os.path.abspath(os.path.expanduser(xdg)), "kltrans")
    return os.path.join(os.path.expanduser("~"), ".cache", "kltrans")


def max_bytes() -> int:
    """The size bound on the entries in bytes (0: none), from ``$KLTRANS_CACHE_MAX_MB``."""
    text = os.environ.get("KLTRANS_CACHE_MAX_MB", "")
    try:
        mb = float(text) if text.strip() else DEFAULT_MAX_MB
    except ValueError:
        mb = DEFAULT_MAX_MB
    return max(0, int(mb * (1 << 20)))


def _files(folder: str):
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(dirpath, name)
            try:
                st = os.stat(path)
            except OSError:  # removed meanwhile
                continue
            yield path, st.st_size, st.st_mtime


def usage(root: str | None = None) -> dict:
    """``{area: {"files": n, "bytes": b}}`` for every area and ``other`` (the rest), from
    one walk of the root."""
    root = root or cache_root()
    areas = ENTRY_AREAS + BUILD_AREAS
    out = {a.replace(os.sep, "/"): {"files": 0, "bytes": 0} for a in areas + ("other",)}
    for path, size, _ in _files(root):
        rel = os.path.relpath(path, root)
        area = next((a for a in areas if rel.startswith(a + os.sep)), "other")
        got = out[area.replace(os.sep, "/")]
        got["files"] += 1
        got["bytes"] += size
    return out


def clean(root: str | None = None, builds: bool = False) -> tuple[int, int]:
    """Delete every entry (and with ``builds`` everything else too); (files, bytes) gone."""
    root = root or cache_root()
    n = size = 0
    targets = [os.path.join(root, a) for a in ENTRY_AREAS]
    if builds:
        targets = [root]
    for t in targets:
        for path, s, _ in list(_files(t)):
            try:
                os.unlink(path)
            except OSError:
                continue
            n, size = n + 1, size + s
        if builds and os.path.isdir(t):
            for name in os.listdir(t):
                shutil.rmtree(os.path.join(t, name), ignore_errors=True)
    return n, size


def prune(root: str | None = None, limit: int | None = None) -> tuple[int, int]:
    """Delete whole entries, the least recently written first, until the entries take at
    most nine tenths of ``limit`` bytes (default :func:`max_bytes`; 0: nothing is deleted).
    Returns (files, bytes) deleted."""
    root = root or cache_root()
    limit = max_bytes() if limit is None else limit
    if limit <= 0:
        return 0, 0
    entries: dict = {}
    for area in ENTRY_AREAS:
        for path, s, mtime in _files(os.path.join(root, area)):
            stem = os.path.splitext(path)[0]
            paths, size, newest = entries.get(stem, ([], 0, 0.0))
            entries[stem] = (paths + [path], size + s, max(newest, mtime))
    total = sum(e[1] for e in entries.values())
    if total <= limit:
        return 0, 0
    n = gone = 0
    for paths, size, _ in sorted(entries.values(), key=lambda e: e[2]):
        if total - gone <= limit * 9 // 10:
            break
        for p in paths:
            try:
                os.unlink(p)
                n += 1
            except OSError:
                pass
        gone += size
    return n, gone


def maybe_prune(every: float = 60.0) -> None:
    """:func:`prune`, at most once per ``every`` seconds across processes: the time of the
    last prune is the modification time of ``<root>/.pruned``."""
    root = cache_root()
    mark = os.path.join(root, ".pruned")
    try:
        if time.time() - os.stat(mark).st_mtime < every:
            return
    except OSError:
        pass
    try:
        os.makedirs(root, exist_ok=True)
        with open(mark, "a"):
            os.utime(mark)
        prune(root)
    except OSError:  # a cache that cannot be pruned is still a cache
        pass


__all__ = ["cache_root", "clean", "max_bytes", "maybe_prune", "prune", "usage"]
