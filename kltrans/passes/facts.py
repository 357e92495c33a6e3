"""Facts, preconditions and the context that supplies dynamic facts.

A *precondition* is a named, machine-checkable predicate of a pass at a site, in one of
five categories: ``dtype`` (data types), ``layout``, ``storage``,
``pipeline`` and ``hardware``. Checking one gives a :class:`Verdict` — holds, fails or
unknown — with a reason. Static facts come from :mod:`kltrans.analysis`; dynamic facts
(sizes, alignment, aliasing, the architecture) come from a :class:`Context` that the CLI
(``--assume n%4==0``, ``--arch sm_90``) or the gate supplies. Unknown is not holds: a
pass applies only where every precondition holds, unless the context says ``force``.

Assumption syntax (``--assume``):

=====================  ==============================================
``n%4==0``             ``divisible(n, 4)``
``n>=1024``            a bound (``<``, ``<=``, ``>``, ``>=``, ``==``)
``aligned(x,16)``      the pointer ``x`` is 16-byte aligned
``no_alias(x,y)``      ``x`` and ``y`` never overlap; ``no_alias(*)``: no two pointer
                       parameters overlap
``full_warp``          every block is a whole number of warps
``binds(p,size)``      the kernel parameter ``p`` carries the workload size ``size`` (a
                       launch contract's name); ``lineage`` adds these from the workload
``name(args...)``      any other named fact, checked by name
=====================  ==============================================
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from kltrans.analysis.verdict import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.passes.base import Site

CATEGORIES = ("dtype", "layout", "storage", "pipeline", "hardware")


class AssumptionError(ValueError):
    """An ``--assume`` fact that does not parse."""


@dataclass(frozen=True)
class Fact:
    """A named fact with arguments, e.g. ``divisible(n, 4)`` or ``ge(n, 1024)``."""

    name: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.name}({', '.join(self.args)})" if self.args else self.name


_CALL = re.compile(r"^\s*([A-Za-z_][\w\-]*)\s*(?:\((.*)\))?\s*$")
_MOD = re.compile(r"^\s*(.+?)\s*%\s*(\d+)\s*==\s*0\s*$")
_CMP = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(>=|<=|==|<|>)\s*(-?\d+)\s*$")
_CMP_NAMES = {">=": "ge", "<=": "le", "==": "eq", "<": "lt", ">": "gt"}


def parse_assumption(text: str) -> Fact:
    """Parse one ``--assume`` string into a :class:`Fact`."""
    m = _MOD.match(text)
    if m:
        return Fact("divisible", (re.sub(r"\s+", "", m.group(1)), m.group(2)))
    m = _CMP.match(text)
    if m:
        return Fact(_CMP_NAMES[m.group(2)], (m.group(1), m.group(3)))
    m = _CALL.match(text)
    if m:
        args = tuple(a.strip() for a in m.group(2).split(",")) if m.group(2) else ()
        if any(a == "" for a in args):
            raise AssumptionError(f"empty argument in {text!r}")
        return Fact(m.group(1).replace("-", "_"), args)
    raise AssumptionError(
        f"cannot read the assumption {text!r}; write it as n%4==0, n>=1024, "
        f"aligned(x,16), no_alias(x,y), no_alias(*) or full_warp")


_ARCH = re.compile(r"^(?:sm_|compute_)?(\d+)([a-z]?)$")


def arch_number(arch: str | None) -> int | None:
    """``sm_90a`` -> 90."""
    if not arch:
        return None
    m = _ARCH.match(arch.strip())
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class Context:
    """What the caller knows that the code does not say."""

    arch: str | None = None
    assumptions: tuple[Fact, ...] = ()
    force: bool = False
    kernel: str | None = None
    sizes: dict = field(default_factory=dict)  # known values of size/template parameters

    @classmethod
    def from_strings(cls, assumptions=(), arch=None, force=False, kernel=None) -> "Context":
        if arch is not None and arch_number(arch) is None:
            raise AssumptionError(f"--arch: cannot read the architecture {arch!r}; write sm_80, "
                                  f"sm_90, sm_90a...")
        facts = tuple(parse_assumption(a) for a in assumptions)
        sizes = {f.args[0]: int(f.args[1]) for f in facts if f.name == "eq" and len(f.args) == 2}
        return cls(arch=arch, assumptions=facts, force=force, kernel=kernel, sizes=sizes)

    @property
    def bindings(self) -> dict[str, str]:
        """``{parameter: size}`` of the ``binds(p,size)`` facts: the workload size each
        kernel parameter of another name carries (launch contracts name the sizes)."""
        return {f.args[0]: f.args[1] for f in self.assumptions
                if f.name == "binds" and len(f.args) == 2}

    def assumed(self, name: str, *args: str) -> bool:
        for f in self.assumptions:
            if f.name != name:
                continue
            if not args or f.args == tuple(args):
                return True
            if name == "no_alias" and f.args in (("*",), ()):
                return True
            if name == "no_alias" and len(args) == 2 and f.args == (args[1], args[0]):
                return True
        return False

    def tolerance(self) -> tuple[float | None, str]:
        """The relative tolerance the context grants (``--assume 'tolerance(1e-5)'``, or
        ``rtol(...)``; ``exact`` is 0.0): (value, "") or (None, "") when none is given, or
        (None, why) when the fact cannot be read."""
        for f in self.assumptions:
            if f.name in ("tolerance", "rtol") and len(f.args) == 1:
                a = f.args[0].strip().lower()
                if a in ("exact", "0", "0.0"):
                    return 0.0, ""
                try:
                    v = float(a)
                except ValueError:
                    return None, f"cannot read tolerance({f.args[0]}): write a number like 1e-5"
                if v < 0 or math.isnan(v):
                    return None, f"tolerance({f.args[0]}) is not a non-negative number"
                return v, ""
        return None, ""

    def aligned(self, pointer: str, nbytes: int) -> bool:
        """Whether the context says ``pointer`` (or every pointer: ``*``) is aligned to a
        multiple of ``nbytes`` bytes."""
        for f in self.assumptions:
            if f.name == "aligned" and len(f.args) == 2 and f.args[0] in (pointer, "*"):
                try:
                    if int(f.args[1]) % nbytes == 0:
                        return True
                except ValueError:
                    continue
        return False

    def divisible(self, expr: str, k: int) -> bool:
        e = re.sub(r"\s+", "", expr)
        for f in self.assumptions:
            if f.name == "divisible" and f.args[0] == e and int(f.args[1]) % k == 0:
                return True
        if e in self.sizes:
            return self.sizes[e] % k == 0
        return False

    def arch_at_least(self, n: int) -> Verdict:
        a = arch_number(self.arch)
        if a is None:
            return Verdict.unknown(f"needs sm_{n} or newer; no --arch given")
        if a >= n:
            return Verdict.yes(f"{self.arch} >= sm_{n}")
        return Verdict.no(f"{self.arch} is older than sm_{n}")


@dataclass(frozen=True)
class Precondition:
    """A named predicate of a pass at a site.

    ``check(site, ctx) -> Verdict``. ``doc`` says, in one line, what must hold and why
    (it is what ``kltrans pass-info`` prints and what a skill card records). ``needs``
    names earlier preconditions of the pass without which this one is not worth checking
    (a model run whose premise another precondition refutes): where one of them does not
    hold, this one is unknown, "not checked", and costs nothing.
    """

    name: str
    category: str
    doc: str
    check: Callable[["Site", Context], Verdict] = field(compare=False, repr=False)
    needs: tuple[str, ...] = ()

    def __post_init__(self):
        if self.category not in CATEGORIES:
            raise ValueError(f"precondition {self.name}: category must be one of {CATEGORIES}")
        if not re.fullmatch(r"[a-z][a-z0-9\-]*", self.name):
            raise ValueError(f"precondition name {self.name!r} must be kebab-case")

    def evaluate(self, site: "Site", ctx: Context) -> Verdict:
        try:
            v = self.check(site, ctx)
        except Exception as e:  # an analysis that cannot decide must not crash the pass
            return Verdict.unknown(f"could not check ({type(e).__name__}: {e})")
        if not isinstance(v, Verdict):
            raise TypeError(f"precondition {self.name} returned {type(v).__name__}, not a Verdict")
        return v

    def to_json(self) -> dict:
        return {"name": self.name, "category": self.category, "doc": self.doc}
