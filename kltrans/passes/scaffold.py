"""``kltrans new-pass NAME``: write a pass-pair module, register it, create its fixtures.

The skeleton is a working pass pair (not a stub): the optimize side rewrites a float
division by a power-of-two literal into a multiplication by its exact reciprocal
(``x / 4.0f`` -> ``x * 0.25f``), the simplify side does the reverse. It shows every part
of a pass — anchor with a constraint, a precondition with a reason, a jinja2 template,
options with a domain, ``inverse_for`` — so a newcomer edits a pass that already passes
its fixtures. ``docs/authoring-passes.md`` walks through it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil

from kltrans.syntax.files import atomic_write

_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


class ScaffoldError(ValueError):
    pass


def names_for(name: str, inverse: str | None) -> dict:
    if not _NAME.match(name):
        raise ScaffoldError(f"pass name {name!r} must be kebab-case (e.g. hoist-loads)")
    inverse = inverse or f"un{name}"
    if not _NAME.match(inverse):
        raise ScaffoldError(f"inverse name {inverse!r} must be kebab-case")
    if inverse == name:
        raise ScaffoldError("a pass and its inverse need different names")

    def camel(n):
        return "".join(p.capitalize() for p in n.split("-"))

    return {"name": name, "inverse": inverse, "module": name.replace("-", "_"),
            "cls": camel(name), "inv_cls": camel(inverse)}


MODULE = '''"""{name} (optimize) and {inverse} (simplify). Written by `kltrans new-pass`: edit me."""

from __future__ import annotations

import math
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Choice, Pass, Precondition, option
from kltrans.syntax import Edit

FLOAT = r"^[0-9]+\\.[0-9]*[fF]?$"


def _value(text: str) -> float:
    return float(text.rstrip("fF"))


def _power_of_two(site, ctx) -> Verdict:
    c = _value(site.text("C"))
    if c > 0 and (c == 2.0 ** round(math.log2(c))):
        return Verdict.yes(f"{{site.text('C')}} is a power of two: its reciprocal is exact")
    return Verdict.no(f"{{site.text('C')}} is not a power of two: x * (1/c) would round "
                      f"differently from x / c")


@dataclass(frozen=True)
class {cls}(Pass):
    """Replace a float division by a power-of-two literal with an exact multiplication.

    Before::

        y[i] = x[i] / 4.0f;

    After ``{name}``::

        y[i] = x[i] * 0.25f;

    Preconditions: power-of-two (the divisor is a power of two, so its reciprocal is
    exact and the result is bit-identical).

    Options: ``suffix`` (``f`` or ``none``: how to write the reciprocal literal).
    """

    name = "{name}"
    kind = "optimize"
    inverse = "{inverse}"
    anchor = Rule(pattern="$A / $C", constraints={{"C": {{"regex": FLOAT}}}})
    preconditions = (
        Precondition("power-of-two", "dtype",
                     "the divisor is a power of two (exact reciprocal)", _power_of_two),
    )
    templates = {{"mul": "{{{{ A }}}} * {{{{ RECIP }}}}"}}
    template_vars = ("RECIP",)

    suffix: str = option("f", Choice("f", "none"), "literal suffix of the reciprocal")

    def rewrite(self, site, ctx):
        recip = repr(1.0 / _value(site.text("C")))
        if self.suffix == "f":
            recip += "f"
        return [Edit.replace(site.node, self.render("mul", site, RECIP=recip))]

    def inverse_for(self, site, ctx):
        return {inv_cls}()


def _reciprocal_of_power_of_two(site, ctx) -> Verdict:
    c = _value(site.text("C"))
    if 0 < c < 1 and (1.0 / c) == 2.0 ** round(math.log2(1.0 / c)):
        return Verdict.yes(f"{{site.text('C')}} is 1/2^k")
    return Verdict.no(f"{{site.text('C')}} is not the reciprocal of a power of two")


@dataclass(frozen=True)
class {inv_cls}(Pass):
    """Turn a multiplication by 1/2^k back into a division by 2^k.

    Before::

        y[i] = x[i] * 0.25f;

    After ``{inverse}``::

        y[i] = x[i] / 4.0f;

    Preconditions: reciprocal (the factor is 1/2^k, below 1).

    Options: none.
    """

    name = "{inverse}"
    kind = "simplify"
    inverse = "{name}"
    anchor = Rule(pattern="$A * $C", constraints={{"C": {{"regex": FLOAT}}}})
    preconditions = (
        Precondition("reciprocal", "dtype", "the factor is 1/2^k", _reciprocal_of_power_of_two),
    )
    templates = {{"div": "{{{{ A }}}} / {{{{ DIV }}}}"}}
    template_vars = ("DIV",)

    def rewrite(self, site, ctx):
        div = repr(1.0 / _value(site.text("C")))
        if site.text("C").endswith(("f", "F")):
            div += "f"
        return [Edit.replace(site.node, self.render("div", site, DIV=div))]

    def inverse_for(self, site, ctx):
        return {cls}(suffix="f" if site.text("C").endswith(("f", "F")) else "none")
'''

POSITIVE = """// RUN: kltrans opt -p '{name}'
// A power-of-two divisor: the multiplication by 0.25f is bit-identical.
__global__ void scale(const float* x, float* y, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] / 4.0f;
}}
"""

NEGATIVE = """// RUN: kltrans opt -p '{name}'
// CHECK-SKIP: power-of-two: not a power of two
// 3.0f is not a power of two: x * (1/3) rounds differently from x / 3, so no rewrite.
__global__ void third(const float* x, float* y, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] / 3.0f;
}}
"""

INVERSE = """// RUN: kltrans opt -p '{inverse}'
// A multiplication by 1/4 becomes a division by 4 again.
__global__ void scale(const float* x, float* y, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * 0.25f;
}}
"""

INVERSE_NEGATIVE = """// RUN: kltrans opt -p '{inverse}'
// CHECK-SKIP: reciprocal: not the reciprocal
// 3.0f is a plain factor, not 1/2^k: it stays a multiplication.
__global__ void triple(const float* x, float* y, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * 3.0f;
}}
"""


def new_pass(name: str, inverse: str | None = None, root: str | None = None) -> list[str]:
    """Create the module, register both names, create fixtures; return the paths written."""
    from kltrans.passes.fixtures import fixtures_dir, repo_root

    n = names_for(name, inverse)
    root = root or repo_root()
    pkg = os.path.join(root, "passes")
    init = os.path.join(pkg, "__init__.py")
    module_path = os.path.join(pkg, n["module"] + ".py")
    fdir = os.path.join(fixtures_dir(root), n["module"])
    if not os.path.isfile(init):
        raise ScaffoldError(f"{init} not found: run from a kltrans checkout (or pass --root)")
    with open(init, encoding="utf-8") as f:
        table = f.read()
    for nm in (n["name"], n["inverse"]):
        if re.search(rf'^\s*"{re.escape(nm)}"\s*:', table, re.MULTILINE):
            raise ScaffoldError(f"pass {nm!r} is already registered in {init}")
    if os.path.exists(module_path):
        raise ScaffoldError(f"{module_path} exists already")
    if os.path.exists(fdir):
        raise ScaffoldError(f"{fdir} exists already")
    m = re.search(r"^CATALOGUE\s*=\s*\{\n(.*?)^\}", table, re.MULTILINE | re.DOTALL)
    if not m:
        raise ScaffoldError(f"cannot find the CATALOGUE table in {init}")
    lines = [ln for ln in m.group(1).splitlines() if ln.strip()]
    lines.append(f'    "{n["name"]}": "passes.{n["module"]}:{n["cls"]}",')
    lines.append(f'    "{n["inverse"]}": "passes.{n["module"]}:{n["inv_cls"]}",')
    lines.sort(key=lambda ln: ln.strip())
    new_table = table[:m.start(1)] + "\n".join(lines) + "\n" + table[m.end(1):]
    written = []
    atomic_write(module_path, MODULE.format(**n))
    written.append(module_path)
    os.makedirs(fdir)
    for case, text in (("divide_by_four", POSITIVE), ("divide_by_three", NEGATIVE),
                       ("multiply_by_quarter", INVERSE), ("multiply_by_three", INVERSE_NEGATIVE)):
        p = os.path.join(fdir, f"{case}.cu")
        atomic_write(p, text.format(**n))
        written.append(p)
    atomic_write(init, new_table)
    written.append(init)
    # write the goldens by running the new cases once (the -U of test-passes), with the
    # passes of ``root``; if that fails, the checkout is left as it was
    from kltrans.passes.fixtures import discover, run_case

    try:
        with _passes_of(root):
            for case in discover([n["name"], n["inverse"]], root):
                out = run_case(case, update=True)
                if not out.ok:
                    raise ScaffoldError(f"the skeleton's case {case.name} fails: "
                                        f"{out.messages}")
                written.append(case.expected_path)
    except BaseException:
        atomic_write(init, table)
        os.remove(module_path)
        shutil.rmtree(fdir, ignore_errors=True)
        raise
    return written


@contextlib.contextmanager
def _passes_of(root: str):
    """The pass registry reads the ``passes`` package of ``root`` inside the block: the
    one just edited, which is not the one imported when ``--root`` names another
    checkout."""
    import importlib
    import sys

    from kltrans.passes import registry

    from kltrans.passes.fixtures import repo_root

    root = os.path.abspath(root)

    def drop():
        for k in [k for k in sys.modules if k == "passes" or k.startswith("passes.")]:
            del sys.modules[k]

    if os.path.abspath(repo_root()) == root:  # the imported package: read its table again
        importlib.reload(sys.modules["passes"])
        registry.reset()
        yield
        return
    drop()
    sys.path.insert(0, root)
    registry.reset()
    try:
        yield
    finally:
        sys.path.remove(root)
        drop()
        registry.reset()
