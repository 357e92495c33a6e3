"""Pass options: dataclass fields with declared domains.

    @dataclass(frozen=True)
    class Unroll(Pass):
        factor: int | str = option(4, OneOf(IntRange(2, 64), Choice("full")),
                                   "how many iterations per unrolled step, or full")

``unroll{factor=8}`` in a pipeline string sets field ``factor``; an option name with
dashes maps to the field with underscores (``max-regs`` -> ``max_regs``). A value outside
the domain is an error that lists what is allowed.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any


class DomainError(ValueError):
    """A value outside an option's domain."""


class Domain:
    def parse(self, text: str) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def contains(self, value: Any) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def values(self) -> list:
        """The values an explorer should try, in order (may be a sample of a large domain)."""
        return []

    def check(self, value: Any) -> Any:
        if not self.contains(value):
            raise DomainError(f"{value!r} is not in {self.describe()}")
        return value


@dataclass(frozen=True)
class IntRange(Domain):
    lo: int
    hi: int
    step_values: tuple = ()  # suggested values for exploration (default: powers of two)

    def parse(self, text: str) -> int:
        try:
            v = int(text, 0)
        except ValueError:
            raise DomainError(f"{text!r} is not an integer; expected {self.describe()}") from None
        return self.check(v)

    def contains(self, value) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and self.lo <= value <= self.hi

    def describe(self) -> str:
        return f"an integer in [{self.lo}, {self.hi}]"

    def values(self) -> list:
        if self.step_values:
            return list(self.step_values)
        out, v = [], 1
        while v <= self.hi:
            if v >= self.lo:
                out.append(v)
            v *= 2
        return out or [self.lo]


@dataclass(frozen=True)
class Choice(Domain):
    options: tuple

    def __init__(self, *options):
        object.__setattr__(self, "options", tuple(options))

    def parse(self, text: str):
        for o in self.options:  # exact first: some choices differ only in case (spellings)
            if str(o) == text:
                return o
        for o in self.options:
            if str(o).lower() == text.lower():
                return o
        raise DomainError(f"{text!r} is not {self.describe()}")

    def contains(self, value) -> bool:
        return value in self.options

    def describe(self) -> str:
        return "one of " + ", ".join(str(o) for o in self.options)

    def values(self) -> list:
        return list(self.options)


@dataclass(frozen=True)
class Bool(Domain):
    def parse(self, text: str) -> bool:
        t = text.lower()
        if t in ("true", "1", "yes", "on"):
            return True
        if t in ("false", "0", "no", "off"):
            return False
        raise DomainError(f"{text!r} is not a boolean (true or false)")

    def contains(self, value) -> bool:
        return isinstance(value, bool)

    def describe(self) -> str:
        return "true or false"

    def values(self) -> list:
        return [True, False]


@dataclass(frozen=True)
class OneOf(Domain):
    """The union of several domains (e.g. an integer range or the word ``full``)."""

    parts: tuple

    def __init__(self, *parts):
        object.__setattr__(self, "parts", tuple(parts))

    def parse(self, text: str):
        for p in self.parts:
            try:
                return p.parse(text)
            except DomainError:
                continue
        raise DomainError(f"{text!r} is not {self.describe()}")

    def contains(self, value) -> bool:
        return any(p.contains(value) for p in self.parts)

    def describe(self) -> str:
        return " or ".join(p.describe() for p in self.parts)

    def values(self) -> list:
        out = []
        for p in self.parts:
            out.extend(p.values())
        return out


@dataclass(frozen=True)
class Identifier(Domain):
    """A C identifier, or one of the listed special words (default: ``auto``)."""

    words: tuple = ("auto",)

    def parse(self, text: str) -> str:
        return self.check(text)

    def contains(self, value) -> bool:
        import re

        return isinstance(value, str) and (value in self.words or bool(
            re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value)))

    def describe(self) -> str:
        return "a C identifier" + (f" or {', '.join(self.words)}" if self.words else "")

    def values(self) -> list:
        return list(self.words)


@dataclass(frozen=True)
class NameList(Domain):
    """``all``, or C identifiers joined by ``+`` (``x+y``): a subset of named things."""

    def parse(self, text: str) -> str:
        return self.check(text)

    def contains(self, value) -> bool:
        import re

        return isinstance(value, str) and (value == "all" or bool(
            re.fullmatch(r"[A-Za-z_]\w*(\+[A-Za-z_]\w*)*", value)))

    def describe(self) -> str:
        return "all, or names joined by + (x+y)"

    def values(self) -> list:
        return ["all"]

    @staticmethod
    def names(value: str) -> set | None:
        """The set of names, or None for all."""
        return None if value == "all" else set(value.split("+"))


def option(default: Any, domain: Domain, doc: str = "", tune: bool = False):
    """A dataclass field that is a pass option.

    ``tune``: the option is a performance parameter (a factor, a tile, a cap, a hint) that
    a search may vary. The others only choose how the code is spelled (a name, a form,
    braces) so that the inverse of a simplification gives back the expert's text; varying
    them gives the same program, so a search keeps them at their evidence or default."""
    domain.check(default)
    return field(default=default, metadata={"domain": domain, "doc": doc, "tune": tune})


@dataclass(frozen=True)
class OptionSpec:
    name: str  # as written in pipelines (dashes)
    field: str
    domain: Domain
    default: Any
    doc: str
    tune: bool = False

    def to_json(self) -> dict:
        return {"name": self.name, "domain": self.domain.describe(), "default": self.default,
                "doc": self.doc, "tune": self.tune}


def option_specs(cls) -> list[OptionSpec]:
    out = []
    for f in fields(cls):
        if "domain" not in f.metadata:
            continue
        default = f.default if f.default is not MISSING else None
        out.append(OptionSpec(f.name.replace("_", "-"), f.name, f.metadata["domain"], default,
                              f.metadata.get("doc", ""), f.metadata.get("tune", False)))
    return out
