"""Writing files safely: every output is written to a temporary file in the same
directory and moved into place with ``os.replace``, so a reader never sees a partial file
and a crash never leaves a truncated one."""

from __future__ import annotations

import errno
import os
import stat
import tempfile


def atomic_write(path: str, data: str | bytes, mode: int | None = None,
                 durable: bool = True) -> None:
    """Write ``data`` to ``path`` atomically; ``durable=False`` skips the fsync (caches).

    A symbolic link is written through (its target is replaced, the link stays); a file
    its owner may not write is an error (``PermissionError``), as for any editor; the file's
    permissions are kept."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if os.path.islink(path):
        path = os.path.realpath(path)
    if os.path.exists(path) and not (os.stat(path).st_mode & stat.S_IWUSR):
        # the owner's write bit, not os.access: as root every file is writable
        raise PermissionError(errno.EACCES, "is read-only (not rewritten)", path)
    directory = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".kltrans-", suffix=".tmp", dir=directory)
    except OSError as e:  # the error names the file asked for, not the temporary one
        raise type(e)(e.errno, f"cannot write a file in {directory} ({e.strerror})",
                      path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        if mode is None and os.path.exists(path):
            mode = os.stat(path).st_mode & 0o7777
        os.chmod(tmp, mode if mode is not None else 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def output_problem(path: str, inputs=(), parents: bool = False) -> str | None:
    """Why ``path`` cannot take an output file, or None: it is a directory, one of the
    ``inputs`` (paths, or (path, what it is) pairs; the same file under another name too),
    a path below a file, or (unless ``parents``: a file in an output folder that
    :func:`atomic_write` makes) a path in a directory that does not exist -- like a
    compiler's ``-o``, a mistyped directory is an error, not a tree made silently."""
    a = os.path.abspath(path)
    if os.path.isdir(a):
        return "is a directory; name a file"
    for i in inputs:  # a path, or (path, what it is)
        i, what = i if isinstance(i, tuple) else (i, i)
        if i is None:
            continue
        same = os.path.abspath(i) == a
        if not same and os.path.exists(a) and os.path.exists(i):
            same = os.path.samefile(a, i)
        if same:
            return f"would overwrite {what}; name another file"
    up = os.path.dirname(a)
    while up and not os.path.exists(up):
        up = os.path.dirname(up)
    if up and not os.path.isdir(up):
        return f"{up} is a file, not a directory"
    if not parents and not os.path.isdir(os.path.dirname(a)):
        return f"no such directory {os.path.dirname(path) or '.'}"
    return None
