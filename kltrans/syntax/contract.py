"""Launch contracts: grid, block and dynamic shared memory as expressions of sizes.

A kernel's launch contract lives in a structured comment line of its file, one per
kernel::

    // kltrans: launch saxpy grid=ceil_div(n, 256) block=256 smem=0
    // kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 8)

A template kernel names the instantiation it is launched as after its name (``// kltrans:
launch rmsNorm<float, 256> grid=rows block=256``), so that the kernel model can bind the
template parameters (``T`` to ``float``, ``blockSize`` to 256) from the file alone.

Keys: ``grid`` and ``block`` (an expression, or a tuple of up to three), ``smem``
(dynamic shared-memory bytes, default 0). Expressions use the kernel's size parameters
and template parameters, integers, ``+ - * // / %`` (``/`` is integer division, as in
C++), parentheses and the functions ``ceil_div``, ``min``, ``max``. Where no header
exists, the contract is read from a host launcher in the same file (``k<<<g, b, s>>>``),
with the expressions as written (host variables resolved when they are defined by a
single declaration in the launching function). Where a kernel has both, they must agree:
the launcher's grid and block, its arguments read as the kernel's parameters and its
template arguments as the header's template parameters, are compared with the header's
at a few assignments of the sizes, and a disagreement is a :class:`ContractError` (a
launcher expression that is not a plain integer expression is not compared).

Passes that change the work per thread or per block (coarsening, vectorization) update
the header with :func:`format_contract` through an ordinary :class:`~kltrans.syntax.Edit`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.syntax.unit import Unit

HEADER = re.compile(r"^(?P<indent>[ \t]*)//[ \t]*kltrans:[ \t]*launch[ \t]+(?P<kernel>[A-Za-z_]\w*)"
                    r"(?:<(?P<targs>[^<>\n]*)>)?(?P<rest>[^\n]*)$", re.MULTILINE)
KEYS = ("grid", "block", "smem")


class ContractError(ValueError):
    """A malformed contract header or an expression that cannot be evaluated."""


@dataclass(frozen=True)
class LaunchContract:
    kernel: str
    grid: tuple[str, ...]
    block: tuple[str, ...]
    smem: str = "0"
    source: str = "header"  # "header" | "launcher"
    start: int = -1  # byte span of the header line (for rewriting it)
    end: int = -1
    # what the file defines: integer object-like macros and constexprs (names in the
    # contract may use them), and the kernel's __launch_bounds__ maximum, evaluated
    constants: tuple = field(default=(), compare=False, repr=False)
    max_threads: int | None = field(default=None, compare=False, repr=False)
    # the instantiation a template kernel is launched as (``k<float, 256>``: the header's
    # ``launch k<float, 256>`` or the launcher's template arguments), as written
    template_args: tuple[str, ...] = ()

    def evaluate(self, sizes: dict[str, int]) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
        """(grid, block, smem) as integers for the given size/template values.

        A block larger than the kernel's ``__launch_bounds__`` maximum is an error, as
        the launch itself fails on a GPU (too many resources requested)."""
        env = {**dict(self.constants), **sizes}
        g = tuple(evaluate(e, env) for e in self.grid) + (1,) * (3 - len(self.grid))
        b = tuple(evaluate(e, env) for e in self.block) + (1,) * (3 - len(self.block))
        s = evaluate(self.smem, env)
        for v in (*g, *b):
            if v <= 0:
                raise ContractError(f"launch of {self.kernel}: non-positive dimension {v}")
        if self.max_threads is not None and b[0] * b[1] * b[2] > self.max_threads:
            raise ContractError(f"launch of {self.kernel}: a block of {b[0] * b[1] * b[2]} "
                                f"threads exceeds __launch_bounds__({self.max_threads}): the "
                                f"launch fails (too many resources requested)")
        return g, b, s  # type: ignore[return-value]

    def with_(self, **kw) -> "LaunchContract":
        return replace(self, **kw)


def _split_top(text: str, sep: str) -> list[str]:
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if depth == 0 and (ch == sep or (sep == " " and ch.isspace())):
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [o.strip() for o in out if o.strip()]


def split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets, the parts stripped, empty ones left out."""
    return _split_top(text, sep)


def _dims(value: str) -> tuple[str, ...]:
    v = value.strip()
    if v.startswith("(") and v.endswith(")") and _balanced(v[1:-1]):
        parts = _split_top(v[1:-1], ",")
        if 1 <= len(parts) <= 3 and "," in v:
            return tuple(parts)
    return (v,)


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth < 0:
            return False
    return depth == 0


def parse_header_line(line: str) -> LaunchContract:
    m = HEADER.match(line)
    if not m:
        raise ContractError("not a kltrans launch header")
    fields = {}
    for item in _split_top(m.group("rest"), " "):
        # re-join `key = value` written with spaces
        fields_item = item
        if "=" not in fields_item:
            raise ContractError(f"expected key=value, got {item!r}")
        k, v = fields_item.split("=", 1)
        k = k.strip()
        if k not in KEYS:
            raise ContractError(f"unknown key {k!r} (allowed: {', '.join(KEYS)})")
        fields[k] = v.strip()
    for k in ("grid", "block"):
        if k not in fields:
            raise ContractError(f"launch header for {m.group('kernel')} needs {k}=...")
    targs = tuple(_split_top(m.group("targs"), ",")) if m.group("targs") is not None else ()
    if m.group("targs") is not None and not targs:
        raise ContractError(f"launch header for {m.group('kernel')}: empty template arguments")
    c = LaunchContract(m.group("kernel"), _dims(fields["grid"]), _dims(fields["block"]),
                       fields.get("smem", "0"), template_args=targs)
    for e in (*c.grid, *c.block, c.smem):
        _check_expr(e)
    return c


def format_contract(c: LaunchContract, indent: str = "") -> str:
    def dims(d):
        return d[0] if len(d) == 1 else "(" + ", ".join(d) + ")"

    name = c.kernel + (f"<{', '.join(c.template_args)}>" if c.template_args else "")
    s = f"{indent}// kltrans: launch {name} grid={dims(c.grid)} block={dims(c.block)}"
    if c.smem not in ("0", ""):
        s += f" smem={c.smem}"
    return s


def contracts(unit: "Unit") -> dict[str, LaunchContract]:
    """Contracts by kernel name: header lines first, then host launchers."""
    out: dict[str, LaunchContract] = {}
    text = unit.source.decode("utf-8", errors="replace")
    for m in HEADER.finditer(text):
        start = len(text[:m.start()].encode("utf-8"))
        end = start + len(m.group(0).encode("utf-8"))
        try:
            c = parse_header_line(m.group(0).strip())
        except ContractError as e:
            line, col = unit.line_col(start)
            raise ContractError(f"{unit.path}:{line}:{col}: {e}") from None
        out[c.kernel] = replace(c, start=start, end=end)
    consts = None
    for launch in unit.launches():
        if launch.kernel in out:
            if out[launch.kernel].source != "header":
                continue  # another launcher of it came first (launchers may differ)
            consts = file_constants(unit) if consts is None else consts
            why = _disagreement(unit, out[launch.kernel], launch, consts)
            if why:
                line, col = unit.line_col(out[launch.kernel].start)
                raise ContractError(f"{unit.path}:{line}:{col}: the launch header of "
                                    f"{launch.kernel} disagrees with its host launcher at line "
                                    f"{launch.line}: {why}")
            continue
        grid = launch_dims(unit, launch, launch.grid)
        block = launch_dims(unit, launch, launch.block)
        out[launch.kernel] = LaunchContract(launch.kernel, grid, block,
                                            launch.shared_bytes or "0", "launcher",
                                            template_args=tuple(launch.template_args))
    if out:
        consts = file_constants(unit) if consts is None else consts
        bounds = {}
        for f in unit.kernels():
            if f.launch_bounds:
                try:
                    bounds[f.name] = evaluate(f.launch_bounds[0], consts)
                except ContractError:
                    pass  # a template parameter or an expression we cannot read
        env = tuple(sorted(consts.items()))
        out = {k: replace(c, constants=env, max_threads=bounds.get(k)) for k, c in out.items()}
    return out


def _disagreement(unit: "Unit", header: LaunchContract, launch, consts: dict) -> str | None:
    """How a header contract and a host launcher of the same kernel launch differently
    (compared at a few assignments of the sizes, the launcher's arguments read as the
    kernel's parameters they are passed to); None when they agree or cannot be compared
    (a launcher expression that is not a plain integer expression of the arguments)."""
    fn = next((f for f in unit.kernels() if f.name == launch.kernel), None)
    if fn is None:
        return None
    rename = {a.strip(): p.name for a, p in zip(launch.args, fn.params)
              if p.name and re.fullmatch(r"[A-Za-z_]\w*", a.strip())}
    # the header may name the kernel's template parameters: the launch's arguments
    targs = {t.name: f"({a})" for t, a in zip(fn.template_params, launch.template_args)
             if t.name}

    def as_params(e: str) -> str:
        return re.sub(r"[A-Za-z_]\w*", lambda m: rename.get(m.group(0), m.group(0)), e)

    if header.template_args and launch.template_args and \
            [a.replace(" ", "") for a in header.template_args] != \
            [a.replace(" ", "") for a in launch.template_args]:
        return (f"template arguments <{', '.join(header.template_args)}> and "
                f"<{', '.join(launch.template_args)}> (the header's first, the launcher's second)")
    pairs = [("grid", header.grid, launch_dims(unit, launch, launch.grid)),
             ("block", header.block, launch_dims(unit, launch, launch.block))]
    for what, h, l in pairs:
        l = tuple(as_params(e) for e in l)
        h = tuple(re.sub(r"[A-Za-z_]\w*", lambda m: targs.get(m.group(0), m.group(0)), e)
                  for e in h)
        try:
            why = differ(h, l, consts, consts)
        except ContractError:
            return None  # the launcher's expression is host code this reader does not know
        if why:
            return f"{what}={why} (the header's first, the launcher's second)"
    return None


def differ(a: tuple, b: tuple, consts_a: dict, consts_b: dict, trials: int = 3) -> str | None:
    """How two launch dimensions (tuples of expressions; a missing one is 1) differ as
    functions of the sizes: evaluated at ``trials`` assignments of every name neither
    side's constants give, each side with its own constants; None when they agree. A
    :class:`ContractError` when an expression cannot be read or evaluated."""
    import random

    n = max(len(a), len(b))
    a, b = tuple(a) + ("1",) * (n - len(a)), tuple(b) + ("1",) * (n - len(b))
    names = sorted({x.id for e in a + b for x in ast.walk(_check_expr(e))
                    if isinstance(x, ast.Name)} - set(_FUNCS) - set(consts_a) - set(consts_b))
    for t in range(trials):
        rng = random.Random(t)
        top = 1 << (12, 20, 28, 31)[t % 4]  # small and large sizes (a cap shows only above it)
        env = {k: rng.randrange(1, top) for k in names}
        va = [evaluate(e, {**consts_a, **env}) for e in a]
        vb = [evaluate(e, {**consts_b, **env}) for e in b]
        if va != vb:
            return (f"({', '.join(a)}) and ({', '.join(b)}) differ: {va} and {vb} at "
                    f"{', '.join(f'{k}={env[k]}' for k in names) or 'any size'}")
    return None


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]*?)[ \t]*(?://[^\n]*)?$",
                     re.MULTILINE)
_CONSTEXPR = re.compile(r"\b(?:static\s+)?(?:constexpr|const)\s+(?:unsigned\s+|signed\s+)?"
                        r"(?:int|long|size_t|unsigned)\s+([A-Za-z_]\w*)\s*=\s*([^;{}]+);")


def file_constants(unit: "Unit") -> dict[str, int]:
    """Integer constants the file defines: ``#define N <expr>`` (object-like; the first
    definition of a name) and ``constexpr/const int N = <expr>;``, evaluated in order
    (one may use an earlier one). Others (strings, floats, function-like macros) are left out."""
    text = unit.source.decode("utf-8", errors="replace")
    found = [(m.start(), m.group(1), m.group(2)) for m in _DEFINE.finditer(text)]
    found += [(m.start(), m.group(1), m.group(2)) for m in _CONSTEXPR.finditer(text)]
    env: dict[str, int] = {}
    for _, name, expr in sorted(found):
        if name in env:
            continue
        e = re.sub(r"\b(\d+)(?:[uU][lL]{0,2}|[lL]{1,2}[uU]?)\b", r"\1", expr.strip())
        e = e.replace("/*", " ").replace("*/", " ")
        try:
            env[name] = evaluate(e, env)
        except (ContractError, RecursionError):
            continue
    return env


def launch_dims(unit: "Unit", launch, expr: str) -> tuple[str, ...]:
    """Dims of a launch config expression, substituting `dim3 g(...)`/`int g = ...`."""
    e = expr.strip()
    m = re.fullmatch(r"dim3\s*[({](.*)[)}]", e, re.DOTALL)
    if m:
        return tuple(_split_top(m.group(1), ","))
    if re.fullmatch(r"[A-Za-z_]\w*", e):
        fn = launch.node
        while fn is not None and fn.type != "function_definition":
            fn = fn.parent
        if fn is not None:
            body = unit.text(fn)
            d = re.search(rf"\bdim3\s+{e}\s*[({{](.*?)[)}}]\s*;", body, re.DOTALL)
            if d:
                return tuple(_split_top(d.group(1), ","))
            d = re.search(rf"\b(?:const\s+)?(?:int|unsigned|size_t|auto)\s+{e}\s*=\s*([^;]+);", body)
            if d:
                return (d.group(1).strip(),)
    return (e,)


# ---------------------------------------------------------------------- expressions
_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Call,
            ast.Load, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.USub,
            ast.UAdd, ast.LShift, ast.RShift)
_FUNCS = {"ceil_div": lambda a, b: -(-a // b), "min": min, "max": max,
          "CEIL_DIV": lambda a, b: -(-a // b)}


def _check_expr(expr: str) -> ast.Expression:
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError:
        raise ContractError(f"cannot parse expression {expr!r}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise ContractError(f"{type(node).__name__} not allowed in {expr!r}")
        if isinstance(node, ast.Call) and (not isinstance(node.func, ast.Name)
                                           or node.func.id not in _FUNCS):
            raise ContractError(f"unknown function in {expr!r} (allowed: ceil_div, min, max)")
    return tree


LIMIT = 1 << 64  # values are C++ integers: anything past 64 bits is a mistake, not a size


def _bounded(v: int, expr: str) -> int:
    if not -LIMIT < v < LIMIT:
        raise ContractError(f"{expr!r} leaves the 64-bit integer range")
    return v


def _div(a: int, b: int) -> int:
    """C++ integer division: truncated toward zero."""
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _binop(op, a: int, b: int, expr: str) -> int:
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, (ast.Div, ast.FloorDiv, ast.Mod)):
        if b == 0:
            raise ContractError(f"division by zero in {expr!r}")
        return _div(a, b) if not isinstance(op, ast.Mod) else a - b * _div(a, b)
    if isinstance(op, (ast.LShift, ast.RShift)):
        if not 0 <= b < 64:
            raise ContractError(f"shift by {b} in {expr!r} (a shift is 0 to 63 bits)")
        return a << b if isinstance(op, ast.LShift) else a >> b
    raise ContractError(f"operator not allowed in {expr!r}")


def evaluate(expr: str, env: dict[str, int]) -> int:
    """Evaluate a contract expression with C++ integer semantics."""
    tree = _check_expr(expr)

    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant):
            if not isinstance(n.value, int):
                raise ContractError(f"non-integer constant in {expr!r}")
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in env:
                raise ContractError(f"{n.id!r} in {expr!r} has no value (known: "
                                    f"{', '.join(sorted(env)) or 'none'})")
            return int(env[n.id])
        if isinstance(n, ast.UnaryOp):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.Call):
            args = [ev(a) for a in n.args]
            if n.func.id in ("ceil_div", "CEIL_DIV") and len(args) == 2 and args[1] == 0:
                raise ContractError(f"division by zero in {expr!r}")
            try:
                return _bounded(int(_FUNCS[n.func.id](*args)), expr)
            except TypeError:
                raise ContractError(f"wrong number of arguments in {expr!r}") from None
        a, b = ev(n.left), ev(n.right)
        return _bounded(_binop(n.op, a, b, expr), expr)

    return ev(tree)
