"""Verdicts: the answer of a static check, with its reason.

A check never answers with a bare bool. It says whether the fact *holds*, *fails*, or is
*unknown* from the source alone, and why, so that a pass that refuses to rewrite can say
where and why (``file:line:col: ... because <reason>``).
"""

from __future__ import annotations

from dataclasses import dataclass

STATUSES = ("holds", "fails", "unknown")


@dataclass(frozen=True)
class Verdict:
    """The result of a check: ``status`` is ``"holds"``, ``"fails"`` or ``"unknown"``."""

    status: str
    reason: str

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"verdict status must be one of {STATUSES}, not {self.status!r}")

    # ---------------------------------------------------------------- constructors
    @classmethod
    def yes(cls, reason: str) -> "Verdict":
        """A verdict that the fact holds."""
        return cls("holds", reason)

    @classmethod
    def no(cls, reason: str) -> "Verdict":
        """A verdict that the fact fails."""
        return cls("fails", reason)

    @classmethod
    def unknown(cls, reason: str) -> "Verdict":
        """A verdict that the source alone does not decide the fact."""
        return cls("unknown", reason)

    # ------------------------------------------------------------------- queries
    @property
    def holds(self) -> bool:
        """True only when the fact is known to hold."""
        return self.status == "holds"

    @property
    def fails(self) -> bool:
        """True only when the fact is known to fail."""
        return self.status == "fails"

    @property
    def is_unknown(self) -> bool:
        """True when the source alone does not decide the fact."""
        return self.status == "unknown"

    def __str__(self) -> str:
        return f"{self.status}: {self.reason}"

    def to_json(self) -> dict:
        """``{"status": ..., "reason": ...}``."""
        return {"status": self.status, "reason": self.reason}


def all_of(verdicts, holds_reason: str | None = None) -> Verdict:
    """Combine verdicts with AND: the first failure, else the first unknown, else holds."""
    verdicts = list(verdicts)
    for v in verdicts:
        if v.fails:
            return v
    for v in verdicts:
        if v.is_unknown:
            return v
    if holds_reason is None:
        holds_reason = "; ".join(v.reason for v in verdicts) or "nothing to check"
    return Verdict.yes(holds_reason)
