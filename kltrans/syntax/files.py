"""Writing files safely: every output is written to a temporary file in the same
directory and moved into place with ``os.replace``, so a reader never sees a partial file
and a crash never leaves a truncated one."""

from __future__ import annotations

import os
import tempfile


def atomic_write(path: str, data: str | bytes, mode: int | None = None,
                 durable: bool = True) -> None:
    """Write ``data`` to ``path`` atomically; ``durable=False`` skips the fsync (caches)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    directory = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".kltrans-", suffix=".tmp", dir=directory)
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
