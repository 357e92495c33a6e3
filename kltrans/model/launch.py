"""Launch geometry: what each dimension of a launch contract's grid covers, and its cap.

A pass that changes the work of a thread (grid-stride loops, coarsening, vectorization,
first add during load) must know the *shape* of the grid the contract gives, not how it
is spelled. :func:`grid_dim` reads one dimension of a contract's grid
(:mod:`kltrans.syntax.contract`) as

    count covered, elements per block, and a cap

in every spelling public launch code uses:

=================================================  =========  ==========  =========
grid                                               count      per block   cap
=================================================  =========  ==========  =========
``ceil_div(n, 256)``, ``CEIL_DIV(n, 256)``         ``n``      256         none
``(n + 255) / 256``, ``(n + 256 - 1) // 256``      ``n``      256         none
``(n + BLOCK - 1) / BLOCK``                        ``n``      ``BLOCK``   none
``min(ceil_div(n, 4 * BLOCK), MAX_BLOCKS)``        ``n``      4·BLOCK     MAX_BLOCKS
``min(1024, (n + 255) / 256)``                     ``n``      256         1024
=================================================  =========  ==========  =========

Numbers are resolved through the file's integer macros and ``constexpr`` constants (the
contract's ``constants``), so ``BLOCK_SIZE`` and ``256`` are one block when the file
defines ``#define BLOCK_SIZE 256``; a template parameter stays a name with no value.
A dimension that is none of these (a plain size, ``max(1, ...)``, a product of two
sizes) has no count, and :attr:`GridDim.reason` says so.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kltrans.syntax.contract import ContractError, contracts, differ, evaluate, split_top

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.syntax.contract import LaunchContract
    from kltrans.syntax.unit import Unit

_CEIL = ("ceil_div", "CEIL_DIV")


@dataclass(frozen=True)
class Extent:
    """A number of a launch: its text as written and its value (None: not a constant of
    the file, e.g. a template parameter or a size)."""

    text: str
    value: int | None

    def same(self, other: "Extent") -> bool:
        if self.value is not None and other.value is not None:
            return self.value == other.value
        return _key(self.text) == _key(other.text)


@dataclass(frozen=True)
class GridDim:
    """One grid dimension read as ``min(ceil_div(count, per_block), cap)``."""

    text: str
    count: str | None = None  # the size covered, as written (None: not a covering grid)
    per_block: Extent | None = None
    cap: Extent | None = None
    covering_text: str | None = None  # the uncapped part, as written
    reason: str = ""

    @property
    def covers(self) -> bool:
        return self.count is not None

    def per_thread(self, block: Extent) -> int | None:
        """Elements each thread of a ``block``-thread block was sized for: per_block /
        block when both are known and it divides; 1 when both are the same name."""
        if self.per_block is None:
            return None
        if self.per_block.same(block):
            return 1
        pb, b = self.per_block.value, block.value
        if pb is None or b is None or b <= 0 or pb % b:
            return None
        return pb // b

    def counts(self, size: str) -> bool:
        """Whether the grid covers ``size`` (compared without spaces and outer parentheses)."""
        return self.count is not None and _key(self.count) == _key(size)


def _key(text: str) -> str:
    t = "".join(text.split())
    while t.startswith("(") and t.endswith(")") and _balanced(t[1:-1]):
        t = t[1:-1]
    return t


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _value(node: ast.AST, env: dict[str, int]) -> int | None:
    try:
        return evaluate(ast.unparse(node), env)
    except (ContractError, RecursionError, ValueError):
        return None


def _terms(node: ast.AST, sign: int = 1) -> list[tuple[int, ast.AST]]:
    """A sum as signed terms: ``n + B - 1`` -> [(+1, n), (+1, B), (-1, 1)]."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        right = sign if isinstance(node.op, ast.Add) else -sign
        return _terms(node.left, sign) + _terms(node.right, right)
    return [(sign, node)]


def _round_up(num: ast.AST, div: ast.AST, env: dict[str, int], src: str) -> str | None:
    """The count of ``(count + div - 1) / div`` (``num`` the numerator), as written, or None."""
    terms = _terms(num)
    d = _value(div, env)
    consts = [(s, t) for s, t in terms if _value(t, {}) is not None]  # literal numbers
    rest = [(s, t) for s, t in terms if (s, t) not in consts]
    # the divisor written as a term of its own: n + B - 1
    for k, (s, t) in enumerate(rest):
        if s == 1 and _key(ast.unparse(t)) == _key(ast.unparse(div)):
            others = rest[:k] + rest[k + 1:]
            if sum(s2 * _value(t2, {}) for s2, t2 in consts) == -1:
                return _count_text(others, src)
    if d is not None:  # or the divisor minus one folded into a number: n + 255
        lit = sum(s * _value(t, {}) for s, t in consts)
        named = [(s, t) for s, t in rest if _value(t, env) is not None]
        extra = sum(s * _value(t, env) for s, t in named)
        if lit + extra == d - 1:
            return _count_text([x for x in rest if x not in named], src)
    return None


def _count_text(terms: list[tuple[int, ast.AST]], src: str) -> str | None:
    if len(terms) != 1 or terms[0][0] != 1:
        return None
    return ast.get_source_segment(src, terms[0][1]) or ast.unparse(terms[0][1])


def _covering(node: ast.AST, env: dict[str, int], src: str
              ) -> tuple[str, ast.AST] | None:
    """(count, per-block node) of ``ceil_div(count, d)`` or ``(count + d - 1) / d``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id in _CEIL and len(node.args) == 2:
        return ast.get_source_segment(src, node.args[0]) or ast.unparse(node.args[0]), \
            node.args[1]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv)):
        count = _round_up(node.left, node.right, env, src)
        if count is not None:
            return count, node.right
    return None


def read_grid(text: str, constants: dict[str, int]) -> GridDim:
    """One grid dimension's expression read as count, per block and cap."""
    src = text.strip()
    try:
        tree = ast.parse(src, mode="eval").body
    except SyntaxError:
        return GridDim(text, reason=f"grid={text} is not an expression kltrans reads")

    def extent(node: ast.AST) -> Extent:
        return Extent(ast.get_source_segment(src, node) or ast.unparse(node),
                      _value(node, constants))

    cap = None
    inner = tree
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and \
            tree.func.id == "min" and len(tree.args) == 2:
        a, b = tree.args
        fixed = [x for x in (a, b) if _value(x, constants) is not None]
        cov = [x for x in (a, b) if _covering(x, constants, src) is not None]
        if len(fixed) == 1 and len(cov) == 1 and fixed[0] is not cov[0]:
            cap, inner = extent(fixed[0]), cov[0]
        elif len(cov) == 1 and len(fixed) == 2:  # min(ceil_div(4096, 256), 1024): both numbers
            inner = cov[0]
            cap = extent(b if inner is a else a)
        else:
            return GridDim(text, reason=f"grid={text}: min() of two grids, but neither is a "
                                        f"cap (a constant) over a covering grid")
    got = _covering(inner, constants, src)
    if got is None:
        what = "the uncapped part " + ast.unparse(inner) if cap is not None else "it"
        return GridDim(text, cap=cap, reason=(
            f"grid={text}: {what} is neither ceil_div(n, d) nor (n + d - 1) / d, so no count "
            f"of elements it covers is known"))
    count, per = got
    return GridDim(text, count=count, per_block=extent(per), cap=cap,
                   covering_text=ast.get_source_segment(src, inner) or ast.unparse(inner))


def grid_dim(contract: "LaunchContract", k: int = 0) -> GridDim:
    """Dimension ``k`` (0 = x) of ``contract``'s grid (a missing dimension is ``1``)."""
    text = contract.grid[k] if k < len(contract.grid) else "1"
    return read_grid(text, dict(contract.constants))


def regrid(contract: "LaunchContract", count: str, factor: int, divide: bool = False
           ) -> "LaunchContract | None":
    """``contract`` with its x grid, which covers ``count``, sized for ``factor`` times as
    many elements per block (``ceil_div(n, B)`` becomes ``ceil_div(n, 4 * B)``), or for
    ``factor`` times fewer with ``divide`` (``ceil_div(n, 4 * B * T)`` becomes
    ``ceil_div(n, B * T)``); a cap stays. None when the grid is not read so, or (dividing)
    its elements per block are not ``factor * ...`` as written."""
    g = grid_dim(contract)
    if not g.covers or not g.counts(count) or g.covering_text is None or \
            g.covering_text not in g.text or g.per_block is None:
        return None
    per = g.per_block.text.strip()
    if divide:
        m = re.fullmatch(rf"{factor}\s*\*\s*(.+)", per)
        if m is None:
            return None
        per = m.group(1)
    else:
        per = f"{factor} * {per}" if re.fullmatch(r"[\w\s*]+", per) else f"{factor} * ({per})"
    fn = "CEIL_DIV" if "CEIL_DIV(" in g.covering_text else "ceil_div"
    new = g.text.replace(g.covering_text, f"{fn}({g.count}, {per})", 1)
    return contract.with_(grid=(new,) + tuple(contract.grid[1:]))


@dataclass(frozen=True)
class BlockItems:
    """A grid of one block per item: ``count`` items (as written), at most ``cap`` blocks
    (its text, None when uncapped); ``count`` None and ``reason`` when not read so."""

    text: str
    count: str | None = None
    cap: str | None = None
    reason: str = ""


def block_items(contract: "LaunchContract") -> BlockItems:
    """The x grid of ``contract`` read as one block per item: ``N`` or ``min(N, cap)`` (in
    either order) with N not a number and the cap a number or a constant of the file."""
    if len(contract.grid) != 1:
        return BlockItems(" x ".join(contract.grid), reason="the grid is not 1-D")
    text = contract.grid[0].strip()
    consts = dict(contract.constants)
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return BlockItems(text, reason=f"grid={text} is not an expression kltrans reads")
    cap = None
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and \
            tree.func.id == "min" and len(tree.args) == 2:
        fixed = [a for a in tree.args if _value(a, consts) is not None]
        if len(fixed) != 1:
            return BlockItems(text, reason=f"grid={text}: min() of two grids, neither a "
                                           f"constant cap")
        cap = ast.get_source_segment(text, fixed[0])
        tree = next(a for a in tree.args if a is not fixed[0])
    if _value(tree, consts) is not None:
        return BlockItems(text, reason=f"grid={text} is a fixed number of blocks")
    if _covering(tree, consts, text) is not None:
        return BlockItems(text, reason=f"grid={text} covers elements by blocks of threads, "
                                       f"not a block per item")
    return BlockItems(text, count=ast.get_source_segment(text, tree), cap=cap)


def block_dim(contract: "LaunchContract", k: int = 0) -> Extent:
    """Dimension ``k`` of ``contract``'s block, with its value when constants give one."""
    text = (contract.block[k] if k < len(contract.block) else "1").strip()
    try:
        value = evaluate(text, dict(contract.constants))
    except ContractError:
        value = None
    return Extent(text, value)


def same_launch(a: "Unit", b: "Unit") -> tuple[bool, str]:
    """Whether two units launch their kernels alike: the same kernels, and grids, blocks
    and dynamic shared memory that are the same function of the sizes
    (:func:`kltrans.syntax.contract.differ`, each side with its own file constants:
    ``ceil_div(n, BLOCK_SIZE)`` and ``(n + 255) / 256`` with ``BLOCK_SIZE`` 256 agree).
    The dynamic shared memory is compared only where both units declare some (``extern
    __shared__``): a kernel that declares none never reads the bytes its launch reserves,
    so that size does not change what it computes."""
    ca, cb = contracts(a), contracts(b)
    if set(ca) != set(cb):
        return False, f"kernels {sorted(ca)} and {sorted(cb)} differ"
    dynamic = all(any(d.extern for d in u.shared_decls()) for u in (a, b))
    for k in sorted(ca):
        x, y = ca[k], cb[k]
        for what, dx, dy in (("grid", x.grid, y.grid), ("block", x.block, y.block),
                             ("smem", (x.smem,), (y.smem,))):
            if what == "smem" and not dynamic:
                continue
            try:
                why = differ(dx, dy, dict(x.constants), dict(y.constants), trials=4)
            except ContractError as e:
                return False, f"{k}: {what} cannot be compared ({e})"
            if why:
                return False, f"{k}: {what} {why}"
    return True, "the same launches"


def template_bindings(unit: "Unit", fn) -> dict[str, str]:
    """``fn``'s template parameters bound by its launch contract (``// kltrans: launch
    k<float, 256> ...`` or a launcher ``k<float, 256><<<...>>>``): ``{"T": "float",
    "blockSize": "256"}``, the arguments as written; empty when the contract names no
    instantiation or cannot be read."""
    if not fn.template_params:
        return {}
    try:
        c = contracts(unit).get(fn.name)
    except ContractError:
        return {}
    if c is None or not c.template_args:
        return {}
    return {tp.name: a.strip() for tp, a in zip(fn.template_params, c.template_args)
            if tp.name}


def template_values(fn, name_expression: str | None) -> dict[str, int]:
    """The integer and ``bool`` template arguments that ``name_expression`` (``k<float,
    256, false>``, the gate's name of the instantiation it runs) gives ``fn``'s value
    template parameters: ``{"blockSize": 256, "nIsPow2": 0}``; others are left out."""
    if not name_expression or "<" not in name_expression or not name_expression.endswith(">"):
        return {}
    args = split_top(name_expression[name_expression.index("<") + 1:-1], ",")
    out = {}
    for tp, a in zip(fn.template_params, args):
        a = a.strip()
        if tp.kind != "value" or not tp.name:
            continue
        if a in ("true", "false"):
            out[tp.name] = int(a == "true")
        elif re.fullmatch(r"-?\d+[uUlL]*", a):
            out[tp.name] = int(a.rstrip("uUlL"))
    return out

