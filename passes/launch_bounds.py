"""Launch bounds: ``add-launch-bounds`` (optimize) and its inverse ``drop-launch-bounds``
(simplify).

``__launch_bounds__(N, M)`` promises the compiler that the kernel is never launched with
more than ``N`` threads per block, and asks for at least ``M`` resident blocks per
multiprocessor; ptxas then budgets registers for that occupancy. A launch with a block
larger than ``N`` fails at run time ("too many resources requested for launch"), so the
block size must be known from the kernel's launch contract (a ``// kltrans: launch``
header line or a host launcher ``k<<<g, b>>>`` in the same file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Choice, Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.passes.facts import arch_number
from kltrans.passes.options import Domain, DomainError
from kltrans.syntax import Edit
from kltrans.passes.launch_facts import expr_values as _values

MAX_THREADS_PER_BLOCK = 1024  # every architecture since sm_20
REGISTERS_PER_SM = 65536  # sm_50 .. sm_120
MAX_REGISTERS_PER_THREAD = 255
MIN_REGISTER_BUDGET = 32  # below this, ptxas spills for almost any real kernel
# compute capability -> (max resident threads per SM, max resident blocks per SM),
# from the CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"
SM_LIMITS = {70: (2048, 32), 75: (1024, 16), 80: (2048, 32), 86: (1536, 16),
             89: (1536, 24), 90: (2048, 32)}
PLACES = ("before-name", "before-type", "before-global")
_INT = re.compile(r"^(0[xX][0-9a-fA-F]+|\d+)[uU]?$")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_ATOM = r"(?:[A-Za-z_]\w*|\d+[uU]?)"
_EXPR = re.compile(rf"^[\s(]*{_ATOM}[\s)]*(?:[-+*/][\s(]*{_ATOM}[\s)]*)+$")


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


@dataclass(frozen=True)
class Expression(Domain):
    """An arithmetic expression of names and integer literals joined by ``+ - * /``
    (parentheses allowed, no calls): ``TR_BX * TR_BY``, ``WARPS*32``. It is written into
    the attribute as given, so ``drop-launch-bounds`` can hand back the exact spelling."""

    def parse(self, text: str) -> str:
        return self.check(text.strip())

    def contains(self, value) -> bool:
        return isinstance(value, str) and bool(_EXPR.match(value)) and _balanced(value) \
            and not re.search(r"[A-Za-z_]\w*\s*\(", value)

    def describe(self) -> str:
        return "an expression of names and integers joined by + - * / (TR_BX*TR_BY)"

    def values(self) -> list:
        return []


def _expressible(text: str) -> bool:
    try:
        Expression().check(text)
    except DomainError:
        return False
    return True


# ----------------------------------------------------------------------- helpers
def _lb_node(site):
    """The ``launch_bounds`` node of the kernel, or None."""
    return next((c for c in site.function.node.children if c.type == "launch_bounds"), None)


def _int(text: str) -> int | None:
    m = _INT.match(text.strip())
    return int(m.group(1), 0) if m else None


def _contract(site):
    """(contract, error): the kernel's launch contract."""
    from kltrans.syntax.contract import ContractError, contracts

    try:
        found = contracts(site.unit)
    except ContractError as e:
        return None, f"the launch contract does not read: {e}"
    return found.get(site.function.name), ""


def _block_expr(dims) -> str:
    """The block size (threads per block) of launch dimensions, as one expression."""
    dims = [d.strip() for d in dims]
    kept = [d for d in dims if d not in ("1", "")] or ["1"]
    return " * ".join(f"({d})" if len(dims) > 1 and not _IDENT.match(d) and _int(d) is None
                      else d for d in kept)


def _launch_blocks(site):
    """([(block expression, launch or None for the header)], source, why when empty)."""
    from kltrans.syntax.contract import launch_dims

    c, err = _contract(site)
    if c is None:
        return [], "", err or (f"{site.function.name} has no launch contract: add a "
                               f"'// kltrans: launch {site.function.name} grid=... "
                               f"block=...' header or a host launcher to the file")
    if c.source == "header":
        return [(_block_expr(c.block), None)], "header", ""
    out = [(_block_expr(launch_dims(site.unit, L, L.block)), L)
           for L in site.unit.launches() if L.kernel == site.function.name]
    return out, "launcher", ""


def _tparam_name(site, expr: str, launch) -> bool:
    """``expr`` is a value template parameter of the kernel (and a launch passes that very
    name as that template argument)."""
    fn = site.function
    pos = next((i for i, t in enumerate(fn.template_params)
                if t.kind == "value" and t.name == expr), None)
    if pos is None:
        return False
    if launch is None:
        return True
    return pos < len(launch.template_args) and launch.template_args[pos].strip() == expr


def _block(site, ctx):
    """What is known of the kernel's block size, over every launch in the contract:
    (expressions, values or None, why values are None, symbolic name or None).

    The symbolic name is set when every launch's block is the same template parameter of
    the kernel (``block=BLOCK``): then ``__launch_bounds__(BLOCK)`` fits every
    instantiation whatever its value."""
    blocks, source, why = _launch_blocks(site)
    if not blocks:
        return [], None, why, None
    exprs = [e for e, _ in blocks]
    symbolic = exprs[0] if all(e == exprs[0] and _tparam_name(site, e, L)
                               for e, L in blocks) else None
    vals: set = set()
    for e, _ in blocks:
        got, missing = _values(site, ctx, e)
        if got is None:
            return exprs, None, (f"the block size {e} ({source}) is not a constant: {missing} "
                                 f"has no known value (pass --assume {missing}==N)"), symbolic
        vals |= set(got)
    return exprs, sorted(vals), "", symbolic


def _max_threads(site, ctx):
    """(text written in __launch_bounds__, values or None, reason)."""
    p = site.pass_
    if p.max_threads == "auto":
        exprs, vals, why, symbolic = _block(site, ctx)
        if symbolic is not None:
            return symbolic, vals, why
        if vals is None:
            return None, None, why
        # one macro or constant naming every launch's block is written by name
        if len(set(exprs)) == 1 and _IDENT.match(exprs[0]):
            return exprs[0], vals, ""
        return str(max(vals)), [max(vals)], ""
    if isinstance(p.max_threads, int):
        return str(p.max_threads), [p.max_threads], ""
    vals, missing = _values(site, ctx, p.max_threads)
    return p.max_threads, vals, "" if vals is not None else (
        f"max_threads={p.max_threads} has no known value ({missing})")


def _fmt(vals) -> str:
    return str(vals[0]) if len(vals) == 1 else "{" + ", ".join(map(str, vals)) + "}"


# ------------------------------------------------------------------ preconditions
def _no_bounds(site, ctx) -> Verdict:
    lb = _lb_node(site)
    if lb is not None:
        return Verdict.no(f"{site.function.name} already has {site.unit.text(lb)}")
    return Verdict.yes(f"{site.function.name} has no __launch_bounds__")


def _block_known(site, ctx) -> Verdict:
    exprs, vals, why, symbolic = _block(site, ctx)
    if not exprs:
        return Verdict.unknown(why)
    if vals is None:
        if symbolic is not None:
            return Verdict.yes(f"the block size is the template parameter {symbolic}")
        return Verdict.unknown(why)
    src = ", ".join(sorted(set(exprs)))
    return Verdict.yes(f"block size {_fmt(vals)} from the launch contract ({src})")


def _block_fits(site, ctx) -> Verdict:
    exprs, bvals, why, symbolic = _block(site, ctx)
    text, mvals, mwhy = _max_threads(site, ctx)
    if symbolic is not None and text == symbolic:
        return Verdict.yes(f"max_threads is the block size itself ({text})")
    if bvals is None or mvals is None:
        return Verdict.unknown(why or mwhy or "the block size is not known")
    if max(bvals) > min(mvals):
        return Verdict.no(f"a block of {max(bvals)} threads exceeds max_threads={min(mvals)}: "
                          f"the launch would fail at run time (too many resources requested)")
    if max(bvals) < min(mvals):
        return Verdict.yes(f"block {_fmt(bvals)} <= max_threads {_fmt(mvals)} (registers are "
                           f"budgeted for more threads than the launch uses)")
    return Verdict.yes(f"block {_fmt(bvals)} == max_threads")


def _thread_limit(site, ctx) -> Verdict:
    text, vals, why = _max_threads(site, ctx)
    if vals is None:
        return Verdict.unknown(why or "max_threads has no known value")
    if max(vals) > MAX_THREADS_PER_BLOCK:
        return Verdict.no(f"max_threads {max(vals)} exceeds the hardware limit of "
                          f"{MAX_THREADS_PER_BLOCK} threads per block")
    return Verdict.yes(f"max_threads {_fmt(vals)} <= {MAX_THREADS_PER_BLOCK}")


def _occupancy(site, ctx) -> Verdict:
    m = site.pass_.min_blocks
    if m == 0:
        return Verdict.yes("no minimum of resident blocks requested")
    text, vals, why = _max_threads(site, ctx)
    if vals is None:
        return Verdict.unknown(why or "max_threads has no known value")
    n = max(vals)
    threads = m * n
    budget = min(MAX_REGISTERS_PER_THREAD, REGISTERS_PER_SM // threads)
    regs = "" if budget >= MIN_REGISTER_BUDGET else \
        f" and would leave {budget} registers per thread (< {MIN_REGISTER_BUDGET}: ptxas spills)"
    a = arch_number(ctx.arch)
    if a is not None:
        if a not in SM_LIMITS:
            return Verdict.unknown(f"no per-SM limits known for {ctx.arch}")
        tmax, bmax = SM_LIMITS[a]
        if threads > tmax:
            return Verdict.no(f"{m} blocks of {n} threads = {threads} threads per SM, more "
                              f"than the {tmax} an {ctx.arch} SM holds{regs}")
        if m > bmax:
            return Verdict.no(f"{m} blocks per SM, more than the {bmax} an {ctx.arch} SM holds")
        if regs:
            return Verdict.no(f"{m} blocks of {n} threads{regs}")
        return Verdict.yes(f"{m} x {n} threads fit an {ctx.arch} SM ({tmax} threads, "
                           f"{bmax} blocks); {budget} registers per thread")
    t_lo = min(t for t, _ in SM_LIMITS.values())
    t_hi = max(t for t, _ in SM_LIMITS.values())
    b_lo = min(b for _, b in SM_LIMITS.values())
    b_hi = max(b for _, b in SM_LIMITS.values())
    if threads > t_hi or m > b_hi:
        return Verdict.no(f"{m} blocks of {n} threads ({threads} threads) fit no SM "
                          f"(at most {t_hi} threads and {b_hi} blocks per SM){regs}")
    if regs:
        return Verdict.no(f"{m} blocks of {n} threads{regs}")
    if threads > t_lo or m > b_lo:
        fits = sorted(f"sm_{k}" for k, (t, b) in SM_LIMITS.items() if threads <= t and m <= b)
        return Verdict.unknown(f"{m} blocks of {n} threads fit {', '.join(fits)} but not every "
                               f"architecture: pass --arch")
    return Verdict.yes(f"{m} x {n} threads fit an SM of every architecture sm_70..sm_90; "
                       f"{budget} registers per thread")


# ------------------------------------------------------------------------ passes
@dataclass(frozen=True)
class AddLaunchBounds(Pass):
    """Add ``__launch_bounds__(max_threads[, min_blocks])`` to a kernel.

    Before::

        // kltrans: launch scale grid=ceil_div(n, 256) block=256
        __global__ void scale(const float* x, float* y, float a, int n) { ... }

    After ``add-launch-bounds`` (``max_threads=auto`` reads 256 from the contract)::

        __global__ void __launch_bounds__(256) scale(const float* x, float* y, float a, int n) { ... }

    ``max_threads=auto`` takes the block size of the kernel's launch contract: the header
    line, or else every host launch of the kernel in the file (the largest block among
    them); a two- or three-dimensional block is the product of its dimensions. A block
    given by one template parameter of the kernel (``block=BLOCK``, or launches
    ``k<BLOCK><<<g, BLOCK>>>``) or by one macro is written by name, so every
    instantiation gets its own bound.

    Preconditions: no-launch-bounds (pipeline: the kernel has none yet),
    block-size-known (pipeline: the launch contract gives a constant block size:
    literals, macros, file-scope constants, ``--assume b==N``, template parameters over
    the file's explicit instantiations and launches, or the kernel's own template
    parameter), block-fits (pipeline: no launch's block exceeds ``max_threads``: a larger
    launch fails at run time), max-threads-limit (hardware: ``max_threads <= 1024``, the
    hardware limit per block), occupancy-fits (hardware: ``min_blocks`` blocks of
    ``max_threads`` threads fit one SM of the target (``--arch``; without it, of every
    architecture sm_70..sm_90: a request that fits only some is unknown), leaving at
    least 32 of the 64K registers per thread).

    Options: ``max-threads`` (``auto``, 1..2048, a name such as a template parameter
    or macro, or an expression of names and integers joined by ``+ - * /`` such as
    ``TR_BX*TR_BY``, written as given; default ``auto``), ``min-blocks`` (0..32, default 0: omitted),
    ``place`` (where the attribute goes: ``before-name`` ``__global__ void
    __launch_bounds__(N) k``, ``before-type`` ``__global__ __launch_bounds__(N) void k``,
    or ``before-global`` ``__launch_bounds__(N) __global__ void k``; default
    ``before-name``).

    Round trip: ``drop-launch-bounds`` removes exactly the attribute added.
    """

    name = "add-launch-bounds"
    kind = "optimize"
    inverse = "drop-launch-bounds"
    anchor = Rule(kind="function_definition")
    preconditions = (
        Precondition("no-launch-bounds", "pipeline",
                     "the kernel has no __launch_bounds__ yet", _no_bounds),
        Precondition("block-size-known", "pipeline",
                     "the launch contract gives a constant block size", _block_known),
        Precondition("block-fits", "pipeline",
                     "the launched block does not exceed max_threads", _block_fits),
        Precondition("max-threads-limit", "hardware",
                     "max_threads <= 1024 threads per block", _thread_limit),
        Precondition("occupancy-fits", "hardware",
                     "min_blocks blocks of max_threads threads fit one SM with a plausible "
                     "register budget", _occupancy),
    )

    max_threads: int | str = option("auto", OneOf(IntRange(1, 2048, (128, 256, 512, 1024)),
                                                   Choice("auto"), Identifier(words=()),
                                                   Expression()),
                                    "threads per block promised to the compiler (auto: the "
                                    "contract's block size; a name or an expression of names "
                                    "and integers is written as given)", tune=True)
    min_blocks: int = option(0, IntRange(0, 32, (0, 1, 2, 4)),
                             "minimum resident blocks per SM (0: omitted)", tune=True)
    place: str = option("before-name", Choice(*PLACES), "where the attribute is written")

    def rewrite(self, site, ctx):
        text, _, _ = _max_threads(site, ctx)
        args = text if self.min_blocks == 0 else f"{text}, {self.min_blocks}"
        attr = f"__launch_bounds__({args})"
        fn = site.function.node
        if self.place == "before-global":
            g = next(c for c in fn.children if c.type == "__global__")
            return [Edit.insert(g.start_byte, attr + " ")]
        if self.place == "before-type":
            return [Edit.insert(fn.child_by_field_name("type").start_byte, attr + " ")]
        return [Edit.insert(fn.child_by_field_name("declarator").start_byte, attr + " ")]

    def inverse_for(self, site, ctx):
        return DropLaunchBounds()


# ----------------------------------------------------------------------- inverse
def _has_bounds(site, ctx) -> Verdict:
    lb = _lb_node(site)
    if lb is None:
        return Verdict.no(f"{site.function.name} has no __launch_bounds__")
    return Verdict.yes(site.unit.text(lb))


def _restorable(site, ctx) -> Verdict:
    args = site.function.launch_bounds or ()
    if len(args) > 2:
        return Verdict.no(f"__launch_bounds__ with {len(args)} arguments (a cluster bound): "
                          f"add-launch-bounds could not put it back")
    if args:
        n = _int(args[0])
        if not ((n is not None and 1 <= n <= 2048) or _IDENT.match(args[0])
                or _expressible(args[0])):
            return Verdict.no(f"max threads '{args[0]}' is neither an integer literal, a name "
                              f"nor an expression of them joined by + - * /: "
                              f"add-launch-bounds could not write it back")
    if len(args) == 2:
        m = _int(args[1])
        if m is None or not 1 <= m <= 32:
            return Verdict.no(f"min blocks '{args[1]}' is not an integer literal in 1..32: "
                              f"add-launch-bounds could not write it back")
    return Verdict.yes("the bounds are literals, names or expressions of them")


def _place_of(site) -> str:
    fn = site.function.node
    lb = _lb_node(site)
    g = next((c for c in fn.children if c.type == "__global__"), None)
    ty = fn.child_by_field_name("type")
    if g is not None and lb.start_byte < g.start_byte:
        return "before-global"
    if ty is not None and lb.start_byte < ty.start_byte:
        return "before-type"
    return "before-name"


@dataclass(frozen=True)
class DropLaunchBounds(Pass):
    """Remove ``__launch_bounds__`` from a kernel.

    Before::

        __global__ void __launch_bounds__(256, 2) scale(const float* x, float* y, int n) { ... }

    After ``drop-launch-bounds``::

        __global__ void scale(const float* x, float* y, int n) { ... }

    Without the attribute ptxas budgets registers for the 1024 threads a block may have
    at most; the kernel computes the same values.

    Preconditions: has-launch-bounds (pipeline: the kernel has the attribute),
    restorable (pipeline: one or two arguments, the first an integer literal, a name or
    an expression of them joined by ``+ - * /`` (``TR_BX * TR_BY``), the second an
    integer literal, so ``add-launch-bounds`` can write the same attribute back; a
    three-argument cluster bound, a call or a shift cannot be).

    Options: none (``inverse_for`` gives ``add-launch-bounds`` with the removed
    arguments and placement).

    Whitespace: an attribute alone on its line is removed with the line; at the end of a
    line, the line break stays.
    """

    name = "drop-launch-bounds"
    kind = "simplify"
    inverse = "add-launch-bounds"
    anchor = Rule(kind="function_definition")
    preconditions = (
        Precondition("has-launch-bounds", "pipeline", "the kernel has __launch_bounds__",
                     _has_bounds),
        Precondition("restorable", "pipeline",
                     "the bounds are literals or names add-launch-bounds can restore",
                     _restorable),
    )

    def rewrite(self, site, ctx):
        lb = _lb_node(site)
        src = site.unit.source
        start, end = lb.start_byte, lb.end_byte
        while end < len(src) and src[end:end + 1] in (b" ", b"\t"):
            end += 1
        if end < len(src) and src[end:end + 1] not in (b"\n", b"\r"):
            return [Edit.delete(start, end)]  # mid-line: the attribute and the blanks after it
        line_start = src.rfind(b"\n", 0, start) + 1
        if src[line_start:start].strip() == b"":  # alone on its line: the whole line
            nl = src.find(b"\n", end)
            return [Edit.delete(line_start, nl + 1 if nl >= 0 else len(src))]
        while start > line_start and src[start - 1:start] in (b" ", b"\t"):
            start -= 1
        return [Edit.delete(start, end)]  # at a line's end: keep the line break

    def inverse_for(self, site, ctx):
        args = site.function.launch_bounds or ()
        n = _int(args[0]) if args else None
        m = _int(args[1]) if len(args) > 1 else 0
        return AddLaunchBounds(max_threads=n if n is not None else re.sub(r"\s+", "", args[0]),
                               min_blocks=m or 0, place=_place_of(site))
