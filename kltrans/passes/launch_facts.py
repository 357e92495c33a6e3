"""What passes read of a kernel's launch and of the file's integer constants.

- :func:`define_value`, :func:`const_value` — an integer ``#define``/``constexpr``, and a
  contract or array expression with those and the context's ``--assume NAME==v`` values
  substituted; :func:`contract_block` — the 1-D block size of the site's launch contract
  (these were ``passes/block_reduce_atomic.py``'s);
- :data:`STATIC_SMEM` — the static ``__shared__`` bytes a block may declare;
  :func:`int_env` — the values of the file's integer macros and file-scope constants;
  :func:`block_dims` — the block (x, y, z) of a kernel's launch contract (these were
  ``passes/pad_smem.py``'s);
- :func:`device_sites` — a pass's anchor matches in the code a launch of ``ctx.kernel``
  runs: the kernel and the device functions it calls (:func:`reachable_from_kernel`;
  these were ``passes/swizzle_blocks.py``'s);
- :func:`expr_values` — every value a contract expression can take, template parameters
  over their instantiations (:func:`template_values`), the other names from
  :func:`contract_env` (these were ``passes/launch_bounds.py``'s);
- :data:`GROUP_GRID` — the grid of a row-group launch, ``ceil_div(rows, max(1, R /
  ceil_div(cols, W)))`` without blanks (``passes/row_per_warp.py``'s);
- :func:`value_of` — an integer expression's value with the file's object-like macros
  (:func:`macro_env`) and given names (``passes/stage_transpose.py``'s);

They were defined by the catalogue modules named above and imported from there by
others; the engine holds them so that passes do not import each other.

Layering: the pass engine (imports :mod:`kltrans.syntax` and :mod:`kltrans.analysis`).
"""

from __future__ import annotations

import re
from itertools import product

from kltrans.analysis.affine import unit_info
from kltrans.passes.base import Site


# ========================================================== constants (block_reduce_atomic)
def define_value(unit, name: str) -> int | None:
    """The integer value of ``#define NAME v`` / ``constexpr int NAME = v`` in the unit."""
    src = unit.source.decode("utf-8", "replace")
    for pat in (rf"^[ \t]*#[ \t]*define[ \t]+{re.escape(name)}[ \t]+\(?\s*(\d+)[uUlL]*\s*\)?[ \t]*$",
                rf"\b(?:constexpr|const)\s+(?:static\s+)?(?:unsigned\s+)?(?:int|size_t|unsigned)\s+"
                rf"{re.escape(name)}\s*=\s*(\d+)[uUlL]*\s*;"):
        m = re.search(pat, src, re.MULTILINE)
        if m:
            return int(m.group(1))
    return None


def const_value(unit, expr: str, ctx) -> int | None:
    """An integer contract/array expression with macros, constexpr constants and
    ``--assume NAME==v`` values substituted; None when something stays unknown."""
    from kltrans.syntax.contract import evaluate

    env = dict(ctx.sizes)
    for name in set(re.findall(r"[A-Za-z_]\w*", expr)):
        if name in env or name in ("ceil_div", "min", "max"):
            continue
        v = define_value(unit, name)
        if v is None:
            return None
        env[name] = v
    try:
        return evaluate(expr.replace("/", "//") if "//" not in expr else expr, env)
    except Exception:
        return None


def contract_block(site, ctx):
    """(block size as int, text, why) from the kernel's launch contract."""
    from kltrans.syntax.contract import contracts

    fn = site.function
    try:
        c = contracts(site.unit).get(fn.name)
    except Exception as e:  # a malformed header
        return None, None, str(e)
    if c is None:
        return None, None, (f"{fn.name} has no launch contract (`// kltrans: launch {fn.name} "
                            "grid=... block=...`): the block size is unknown")
    if len(c.block) != 1 and any(b.strip() != "1" for b in c.block[1:]):
        return None, None, (f"the block of {fn.name} is ({', '.join(c.block)}): the pass "
                            "indexes threads by threadIdx.x and needs a 1-D block")
    v = const_value(site.unit, c.block[0], ctx)
    return v, c.block[0], ("" if v is not None else
                           f"block={c.block[0]} is not a known constant (give --assume "
                           f"'{c.block[0]}==N' or --assume full_warp)")


# ==================================================== block and shared memory (pad_smem)
STATIC_SMEM = 48 * 1024  # static __shared__ bytes per block, every arch


def int_env(unit) -> dict:
    """Values of object-like macros and file-scope constants that are integer expressions."""
    from kltrans.syntax.contract import ContractError, evaluate

    env: dict = {}
    info = unit_info(unit)
    for _ in range(3):  # macros defined in terms of each other
        for name, defs in info.macros.items():
            if name in env or len(defs) != 1 or defs[0].params is not None or not defs[0].body:
                continue
            try:
                env[name] = evaluate(defs[0].body, env)
            except (ContractError, RecursionError, ValueError, SyntaxError, TypeError):
                pass
        for name, decls in info.globals.items():
            if name in env or len(decls) != 1 or decls[0][2] is None:
                continue
            try:
                env[name] = evaluate(unit.text(decls[0][2]), env)
            except (ContractError, RecursionError, ValueError, SyntaxError, TypeError):
                pass
    return env


def block_dims(unit, fn, ctx=None) -> "tuple[tuple[int, int, int] | None, str]":
    """The kernel's block (x, y, z) from its launch contract, or (None, why)."""
    from kltrans.syntax.contract import ContractError, contracts, evaluate

    try:
        c = contracts(unit).get(fn.name)
    except ContractError as e:
        return None, f"the launch contract does not read: {e}"
    if c is None:
        return None, (f"{fn.name} has no launch contract (`// kltrans: launch {fn.name} "
                      "grid=... block=...`): the thread indices cannot be bounded")
    env = int_env(unit)
    env.update(getattr(ctx, "sizes", {}) or {})
    dims = []
    for e in c.block:
        try:
            dims.append(evaluate(e, env))
        except (ContractError, RecursionError, ValueError, SyntaxError, TypeError):
            return None, (f"block dimension `{e}` of {fn.name}'s launch contract is not a "
                          "constant (a template parameter without a known value?)")
    dims += [1] * (3 - len(dims))
    return (dims[0], dims[1], dims[2]), ""


# ====================================== code a launch of the kernel runs (swizzle_blocks)
def reachable_from_kernel(unit, fn, kernel) -> bool:
    """``fn`` is the kernel named ``kernel`` or a device function it calls (transitively).

    ``Pass.sites`` keeps only sites inside ``ctx.kernel`` itself; hand-written kernels
    (corpus/sgemm/expert.cu) put their body in a ``__device__`` template the kernel calls.
    """
    if not kernel or fn is None:
        return fn is not None or not kernel
    if fn.name == kernel:
        return True
    funcs = {f.name: f for f in unit.kernels() + unit.device_functions()}
    seen, todo = set(), [kernel]
    while todo:
        k = todo.pop()
        if k in seen or k not in funcs:
            continue
        seen.add(k)
        for c in unit.nodes_of_type("call_expression", within=funcs[k].node):
            f = c.child_by_field_name("function")
            name = unit.text(f).split("<")[0].strip()
            if name == fn.name:
                return True
            todo.append(name)
    return False


def device_sites(p, unit, ctx) -> list:
    """The anchor's matches in device code, in ``ctx.kernel`` or the functions it calls."""
    from kltrans.syntax.cuda import enclosing_function

    out = []
    for m in p.anchor.find_all(unit):
        fn = enclosing_function(unit, m.node)
        if fn is None or not (fn.is_kernel or fn.is_device):
            continue
        if not reachable_from_kernel(unit, fn, ctx.kernel):
            continue
        out.append(Site(unit, m, fn, len(out) + 1, p))
    return out


# ============================================ values of contract expressions (launch_bounds)
def contract_env(site, sizes) -> dict:
    """Integer values the contract expressions may name: --assume n==v, object-like
    macros and file-scope constants that are integer literals (or expressions of them)."""
    from kltrans.analysis.affine import unit_info
    from kltrans.syntax.contract import ContractError, evaluate

    env: dict = {}
    info = unit_info(site.unit)
    for name, defs in info.macros.items():
        if len(defs) == 1 and defs[0].params is None and defs[0].body:
            try:
                env[name] = evaluate(defs[0].body, {})
            except (ContractError, RecursionError, ValueError):
                pass
    for name, decls in info.globals.items():
        if len(decls) == 1 and decls[0][2] is not None:
            try:
                env[name] = evaluate(site.unit.text(decls[0][2]), env)
            except (ContractError, RecursionError, ValueError):
                pass
    env.update(sizes)
    return env


def template_values(site, name: str) -> list[int]:
    """Values of the kernel's template parameter ``name`` in the unit's explicit
    instantiations (``template __global__ void k<float, 256>(...)``) and launches
    (``k<float, 256><<<g, b>>>(...)``)."""
    from kltrans.syntax.contract import ContractError, evaluate

    fn = site.function
    pos = next((i for i, t in enumerate(fn.template_params) if t.name == name), None)
    if pos is None:
        return []
    unit = site.unit
    env = contract_env(site, {})
    out = []
    for n in unit.nodes_of_type("template_function"):
        if fn.node.start_byte <= n.start_byte < fn.node.end_byte:
            continue
        nm = n.child_by_field_name("name")
        args = n.child_by_field_name("arguments")
        if nm is None or args is None or unit.text(nm).split("::")[-1] != fn.name:
            continue
        al = [a for a in args.named_children if a.type != "comment"]
        if pos < len(al):
            try:
                out.append(evaluate(unit.text(al[pos]), env))
            except (ContractError, RecursionError, ValueError):
                pass
    return sorted(set(out))


def expr_values(site, ctx, expr: str) -> tuple[list[int] | None, str]:
    """Every value ``expr`` can take (template parameters over their instantiations),
    or (None, why) when some name in it has no known value."""
    from kltrans.syntax.contract import ContractError, evaluate

    env = contract_env(site, ctx.sizes)
    names = sorted(set(re.findall(r"[A-Za-z_]\w*", expr)) - {"ceil_div", "CEIL_DIV", "min", "max"}
                   - set(env))
    choices = []
    for nm in names:
        vals = template_values(site, nm)
        if not vals:
            return None, nm
        choices.append(vals)
    out = set()
    for combo in product(*choices):
        try:
            out.add(evaluate(expr, {**env, **dict(zip(names, combo))}))
        except (ContractError, RecursionError, ValueError) as e:
            return None, str(e)
    return sorted(out), ""


# ==================================================== the grid of row groups (row_per_warp)
GROUP_GRID = re.compile(r"ceil_div\((\w+),max\(1,(\d+)/ceil_div\((\w+),(\w+)\)\)\)")


# ================================================ integer expressions (stage_transpose)
def macro_env(unit) -> dict:
    """Object-like macros and file-scope constants with integer values."""
    from kltrans.analysis.affine import unit_info
    from kltrans.syntax.contract import ContractError, evaluate

    env: dict = {}
    info = unit_info(unit)
    for name, defs in info.macros.items():
        if len(defs) == 1 and defs[0].params is None and defs[0].body:
            try:
                env[name] = evaluate(defs[0].body, env)
            except (ContractError, RecursionError, ValueError, SyntaxError):
                pass
    return env


def value_of(unit, text: str, extra: dict | None = None) -> int | None:
    """The value of the integer expression ``text`` (macros and ``extra`` substituted), or
    None."""
    from kltrans.syntax.contract import ContractError, evaluate

    try:
        return evaluate(text.strip(), {**macro_env(unit), **(extra or {})})
    except (ContractError, RecursionError, ValueError, SyntaxError):
        return None
