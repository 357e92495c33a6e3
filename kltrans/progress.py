"""Progress of a long command on standard error, with counts.

Each finished item is one line, ``kltrans CMD: [k/N] what (elapsed s, about S s left)``,
the estimate from the mean time per item so far; on a terminal, a rich progress bar
instead (it leaves no lines behind). ``quiet`` says nothing. Used by ``generality``,
``bench-corpus`` and ``experiment``.

Layering: none (rich, on a terminal).
"""

from __future__ import annotations

import sys
import time


class Progress:
    """``[k/N] what (elapsed, estimate)`` on stderr per :meth:`step`; a rich bar on a
    terminal; nothing when ``quiet``."""

    def __init__(self, command: str, total: int, quiet: bool = False):
        self.command, self.total, self.done = command, total, 0
        self.t0 = time.monotonic()
        self.quiet = quiet
        self.bar = None
        if not quiet and sys.stderr.isatty():
            from rich.progress import (BarColumn, MofNCompleteColumn, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)
            from rich.progress import Progress as Bar

            self.bar = Bar(TextColumn(command), BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), TimeRemainingColumn(),
                           TextColumn("{task.description}"), transient=True)
            self.task = self.bar.add_task("", total=total)
            self.bar.start()

    def line(self, what: str) -> str:
        """The line of the item just finished (the count already advanced)."""
        el = time.monotonic() - self.t0
        eta = el / max(1, self.done) * (self.total - self.done)
        return (f"kltrans {self.command}: [{self.done}/{self.total}] {what} ({el:.0f} s, "
                f"about {eta:.0f} s left)")

    def step(self, what: str) -> None:
        self.done += 1
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=what)
            return
        print(self.line(what), file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["Progress"]
