"""Compiler-style diagnostics.

A diagnostic renders like clang's::

    k.cu:12:5: error: expected ';'
        for (int i = 0; i < n; i++)
        ^
    hint: ...

Columns are 1-based and count characters, not bytes. Colors are used only when the
stream is a terminal and ``NO_COLOR`` is unset.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TextIO

SEVERITIES = ("error", "warning", "note")

_COLORS = {"error": "\x1b[1;31m", "warning": "\x1b[1;35m", "note": "\x1b[1;36m"}
_BOLD = "\x1b[1m"
_GREEN = "\x1b[1;32m"
_RESET = "\x1b[0m"


@dataclass(frozen=True)
class Location:
    """A position in a file: 1-based line and column (characters)."""

    path: str
    line: int = 0
    column: int = 0
    source_line: str | None = None  # the text of that line, for the caret display
    length: int = 1  # how many characters the caret range covers

    def __str__(self) -> str:
        if self.line <= 0:
            return self.path
        return f"{self.path}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    """One message about the input, with an optional hint."""

    severity: str
    message: str
    location: Location
    hint: str | None = None
    code: str | None = None  # a short machine-readable kind, e.g. "parse-error"
    notes: tuple["Diagnostic", ...] = field(default=())

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")

    def render(self, color: bool = False) -> str:
        sev = self.severity
        if color:
            head = f"{_BOLD}{self.location}:{_RESET} {_COLORS[sev]}{sev}:{_RESET} {_BOLD}{self.message}{_RESET}"
        else:
            head = f"{self.location}: {sev}: {self.message}"
        lines = [head]
        loc = self.location
        if loc.source_line is not None and loc.line > 0:
            text = loc.source_line.rstrip("\r\n").expandtabs(1)
            lines.append("    " + text)
            col = max(loc.column, 1)
            width = max(1, min(loc.length, max(1, len(text) - col + 1)))
            caret = " " * (col - 1) + "^" + "~" * (width - 1)
            lines.append("    " + (f"{_GREEN}{caret}{_RESET}" if color else caret))
        if self.hint:
            lines.append(("hint: " if not color else f"{_BOLD}hint:{_RESET} ") + self.hint)
        for note in self.notes:
            lines.append(note.render(color))
        return "\n".join(lines)

    def to_json(self) -> dict:
        out = {
            "severity": self.severity,
            "message": self.message,
            "path": self.location.path,
            "line": self.location.line,
            "column": self.location.column,
        }
        if self.hint:
            out["hint"] = self.hint
        if self.code:
            out["code"] = self.code
        return out

    def __str__(self) -> str:
        return self.render(False)


class UsageError(Exception):
    """Bad command-line usage: printed as ``kltrans: error: ...`` with exit code 2."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.hint = hint


class InputError(Exception):
    """A user-facing problem with the input (missing file, bad encoding, ...).

    The CLI turns it into a rendered diagnostic and exit code 2, never a traceback.
    """

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic

    @classmethod
    def at(cls, path: str, message: str, hint: str | None = None, line: int = 0,
           column: int = 0, source_line: str | None = None, code: str | None = None) -> "InputError":
        loc = Location(path, line, column, source_line)
        return cls(Diagnostic("error", message, loc, hint=hint, code=code))


def use_color(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def emit(diags, stream: TextIO | None = None) -> None:
    """Render diagnostics to ``stream`` (stderr by default)."""
    stream = stream or sys.stderr
    color = use_color(stream)
    for d in diags:
        print(d.render(color), file=stream)
