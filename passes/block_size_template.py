"""Compile-time block size: ``template-block-size`` (optimize) and its inverse
``runtime-block-size`` (simplify).

A kernel always launched with one block size can take that size as a template parameter
and read it where it read ``blockDim.x``. Every bound, stride and guard made of the block
size becomes a constant the compiler folds: a tree reduction's ``for (s = blockSize / 2;
s > 32; s >>= 1)`` is unrolled, the rounds a block of that size does not need vanish,
``i + blockSize`` is an add of an immediate (the "completely unrolled" reduction of the
CUDA samples writes the rounds out behind ``if (blockSize >= 512)``, which the compiler
decides the same way). The launch header's instantiation gains the size (``reduce<float>``
becomes ``reduce<float, 256>``), so the program is the same one.

- ``template-block-size{param}``: a kernel whose launch header has a constant block gets
  ``unsigned int param`` as its last template parameter (``template <unsigned int param>``
  when it had none) and reads it for every ``blockDim.x``. A kernel with C linkage cannot
  be a template and is refused.
- ``runtime-block-size{param}``: a template kernel whose launch instantiates a value
  parameter with its block's x extent reads ``blockDim.x`` there instead, and loses the
  parameter. A ``__device__`` template helper it passes the parameter to
  (``warpReduce<T, blockSize>(...)``) loses it too. Refused where the parameter, or a
  ``const`` local made from it, must be a constant (an array size, another template's
  argument, ``static_assert``, ``if constexpr``, ``__launch_bounds__``, a pragma):
  :mod:`kltrans.analysis.consts`.
"""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis.consts import constant_uses, declares, name_reads
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Identifier, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import fresh_name, header_block
from kltrans.syntax import Edit
from kltrans.syntax.contract import ContractError, evaluate

KERNEL = Rule(kind="function_definition", regex=r"\b__global__\b")
NAMES = ("blockSize", "BLOCK_SIZE", "kBlockSize")


# ------------------------------------------------------------------- the reading
def _contract(site):
    """(the header contract, its block's x extent) or (None, why)."""
    fn = site.function
    c, block = header_block(site)
    if c is None:
        return None, block
    if len(c.template_args) != len(fn.template_params):
        return None, (f"the launch names {len(c.template_args)} of {fn.name}'s "
                      f"{len(fn.template_params)} template arguments (defaults are not read)")
    return c, block[0]


def _named_elsewhere(site) -> str | None:
    """Why the kernel's instantiation cannot change: code that names the kernel (a host
    launch, a function pointer) would still name the old one."""
    fn = site.function
    for n in site.unit.walk(site.unit.root):
        if n.type == "identifier" and site.unit.text(n) == fn.name and \
                not (fn.outer.start_byte <= n.start_byte < fn.outer.end_byte):
            line, col = site.unit.line_col(n.start_byte)
            return f"{fn.name} is named at {line}:{col} (a launch or a pointer to it)"
    return None


def _blockdim_reads(site) -> list:
    u = site.unit
    body = site.function.body
    return [n for n in u.walk(body) if n.type == "field_expression" and
            u.text(n).replace(" ", "") == "blockDim.x"] if body is not None else []


def _param(site) -> tuple[int | None, str]:
    """runtime: (the index of the value template parameter the launch gives the block's x
    extent, its name) or (None, why)."""
    c, x = _contract(site)
    if c is None:
        return None, x
    fn, want = site.function, site.pass_.param
    for k, (tp, arg) in enumerate(zip(fn.template_params, c.template_args)):
        if tp.kind != "value" or not tp.name or (want != "auto" and tp.name != want):
            continue
        try:
            if evaluate(arg, dict(c.constants)) == x:
                return k, tp.name
        except ContractError:
            continue
    return None, (f"no value template parameter of {fn.name}"
                  f"{'' if want == 'auto' else ' named ' + want} is launched as the block's "
                  f"{x} threads")


def _helpers(site, name: str) -> tuple[list | None, str]:
    """runtime: [(helper, index of its parameter, the call's template argument list, the
    argument, the name read)] for each call that passes ``name`` to a helper, or (None,
    why)."""
    u, fn = site.unit, site.function
    out = []
    funcs = {f.name: f for f in u.device_functions()}
    for n in name_reads(u, fn.body, name) if fn.body is not None else ():
        arg = n.parent if n.type == "type_identifier" else n
        targs = arg.parent
        if targs is None or targs.type != "template_argument_list" or \
                targs.parent.type != "template_function":
            continue
        callee = u.text(targs.parent.child_by_field_name("name"))
        h = funcs.get(callee)
        args = [a for a in targs.named_children if a.type != "comment"]
        k = args.index(arg)
        if h is None or k >= len(h.template_params) or h.template_params[k].kind != "value":
            return None, f"{callee}<...> is not a __device__ template of this file taking {name}"
        out.append((h, k, targs, arg, n))
    for h in {id(x[0]): x[0] for x in out}.values():
        calls = [t for t in u.walk(u.root) if t.type == "template_function" and
                 u.text(t.child_by_field_name("name")) == h.name]
        mine = [x[2].parent for x in out if x[0] is h]
        if len(calls) != len(mine) or len({x[1] for x in out if x[0] is h}) != 1:
            return None, f"{h.name} is also called otherwise than with {fn.name}'s {name}"
    return out, ""


def _drop_param(u, f, k: int) -> Edit:
    """``f``'s template parameter list without parameter ``k``; the whole ``template <...>``
    head when it was the only one."""
    plist = f.template_node.child_by_field_name("parameters")
    keep = [u.text(p) for i, p in enumerate(x for x in plist.named_children
                                            if x.type != "comment") if i != k]
    if keep:
        return Edit(plist.start_byte, plist.end_byte, "<" + ", ".join(keep) + ">")
    return Edit(f.template_node.start_byte, f.node.start_byte, "")


def _without_arg(u, targs, arg) -> Edit:
    keep = [u.text(a) for a in targs.named_children if a.type != "comment" and a != arg]
    return Edit(targs.start_byte, targs.end_byte, "<" + ", ".join(keep) + ">" if keep else "")


# ------------------------------------------------------------------ preconditions
def _launch(site, ctx) -> Verdict:
    c, x = _contract(site)
    if c is None:
        return Verdict.no(x)
    elsewhere = _named_elsewhere(site)
    if elsewhere:
        return Verdict.no(elsewhere)
    if site.pass_.kind == "simplify":
        k, name = _param(site)
        return Verdict.yes(f"{name} is launched as {x}") if k is not None else Verdict.no(name)
    if not _blockdim_reads(site):
        return Verdict.no(f"{site.function.name} never reads blockDim.x")
    return Verdict.yes(f"a constant block of {x} threads in x")


def _linkage(site, ctx) -> Verdict:
    if site.function.extern_c:
        return Verdict.no(f'{site.function.name} has C linkage (extern "C"): a template '
                          f"cannot")
    return Verdict.yes("C++ linkage: the kernel may be a template")


def _fresh(site, ctx) -> Verdict:
    name = site.pass_.name_for(site)
    if any(site.unit.text(n) == name for n in site.unit.walk(site.unit.root)
           if n.type in ("identifier", "type_identifier")):
        return Verdict.no(f"the name {name} is already used in this file")
    return Verdict.yes(f"{name} is a new name")


def _value_reads(site, ctx) -> Verdict:
    k, name = _param(site)
    helpers, why = _helpers(site, name)
    if helpers is None:
        return Verdict.no(why)
    passed = [x[4] for x in helpers]
    for f, pname in [(site.function, name)] + [(h, h.template_params[i].name)
                                               for h, i, *_ in helpers]:
        if f.body is not None and declares(site.unit, f.node, pname) is not None:
            return Verdict.no(f"a local of {f.name} is also called {pname}")
        uses = constant_uses(site.unit, f, pname, allowed=passed)
        if uses:
            node, what = uses[0]
            line, col = site.unit.line_col(node.start_byte)
            read = site.unit.text(node) if node.type.endswith("identifier") else pname
            made = "" if read == pname else f" (a const made from {pname})"
            return Verdict.no(f"{read}{made} is read as {what} at {line}:{col}: blockDim.x "
                              f"is not a constant")
    return Verdict.yes(f"{name} is read only as a value"
                       + (f", and by {', '.join(sorted({h.name for h, *_ in helpers}))}"
                          if helpers else ""))


LAUNCH = Precondition("launch", "layout",
                      "a launch header with a constant block, the kernel named nowhere else "
                      "(template: a kernel that reads blockDim.x; runtime: a value template "
                      "parameter launched as the block's x extent)", _launch)
LINKAGE = Precondition("linkage", "pipeline", "C++ linkage (a template cannot have C linkage)",
                       _linkage)
FRESH = Precondition("fresh-name", "pipeline", "the template parameter's name is unused",
                     _fresh)
VALUES = Precondition("value-reads", "pipeline",
                      "the parameter (and const locals made from it) is read only as a "
                      "value, in the kernel and in the helpers it is passed to", _value_reads,
                      needs=("launch",))


@dataclass(frozen=True)
class TemplateBlockSize(Pass):
    """The block size as a template parameter, read where ``blockDim.x`` was.

    Before::

        // kltrans: launch reduce<float> grid=ceil_div(n, 512) block=256
        template <class T> __global__ void reduce(const T* x, T* out, unsigned int n)
        ...  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1)

    After ``template-block-size``::

        // kltrans: launch reduce<float, 256> grid=ceil_div(n, 512) block=256
        template <class T, unsigned int blockSize> __global__ void reduce(...)
        ...  for (unsigned int s = blockSize / 2; s > 32; s >>= 1)

    Preconditions: launch (layout), linkage (pipeline), fresh-name (pipeline).

    Options: ``param`` (the parameter's name; auto: the first unused of blockSize,
    BLOCK_SIZE, kBlockSize).
    """

    name = "template-block-size"
    kind = "optimize"
    inverse = "runtime-block-size"
    anchor = KERNEL
    preconditions = (LAUNCH, LINKAGE, FRESH)

    param: str = option("auto", Identifier(), "the template parameter's name")

    def name_for(self, site) -> str:
        return fresh_name(site.unit, None, NAMES) if self.param == "auto" else self.param

    def rewrite(self, site, ctx):
        u, fn = site.unit, site.function
        c, why = _contract(site)
        if c is None or fn.extern_c:  # (forced past launch or linkage)
            raise SkipSite(why if c is None else "a kernel with C linkage cannot be a template")
        name = self.name_for(site)
        edits = [Edit(n.start_byte, n.end_byte, name) for n in _blockdim_reads(site)]
        if fn.template_node is not None:
            plist = fn.template_node.child_by_field_name("parameters")
            params = [u.text(p) for p in plist.named_children if p.type != "comment"]
            edits.append(Edit(plist.start_byte, plist.end_byte,
                              "<" + ", ".join(params + [f"unsigned int {name}"]) + ">"))
        else:
            edits.append(Edit.insert(fn.outer.start_byte, f"template <unsigned int {name}>\n"))
        return edits

    def update_contract(self, contract, site, ctx):
        c, x = _contract(site)
        if c is None:
            return contract
        return contract.with_(template_args=tuple(contract.template_args) + (str(x),))

    def inverse_for(self, site, ctx):
        return RuntimeBlockSize(param=self.name_for(site))


@dataclass(frozen=True)
class RuntimeBlockSize(Pass):
    """A template parameter launched as the block size read as ``blockDim.x`` again.

    Before::

        // kltrans: launch reduce<float, 256> grid=ceil_div(n, 512) block=256
        template <class T, unsigned int blockSize> __global__ void reduce(...)
        ...  if (blockSize >= 512) { ... }  warpReduce<T, blockSize>(sdata, tid);

    After ``runtime-block-size``::

        // kltrans: launch reduce<float> grid=ceil_div(n, 512) block=256
        template <class T> __global__ void reduce(...)
        ...  if (blockDim.x >= 512) { ... }  warpReduce<T>(sdata, tid);

    Preconditions: launch (layout), value-reads (pipeline).

    Options: ``param`` (which value parameter; auto: the first launched as the block's x
    extent).
    """

    name = "runtime-block-size"
    kind = "simplify"
    inverse = "template-block-size"
    anchor = KERNEL
    preconditions = (LAUNCH, VALUES)

    param: str = option("auto", Identifier(), "the template parameter to read at run time")

    def rewrite(self, site, ctx):
        u, fn = site.unit, site.function
        k, name = _param(site)
        helpers, why = _helpers(site, name) if k is not None else (None, name)
        if helpers is None:
            raise SkipSite(why)
        edits = [_drop_param(u, fn, k)]
        passed = {x[4].id for x in helpers}
        edits += [Edit(n.start_byte, n.end_byte, "blockDim.x")
                  for n in name_reads(u, fn.body, name) if n.id not in passed]
        edits += [_without_arg(u, targs, arg) for _, _, targs, arg, _ in helpers]
        for h, i in {(x[0].name, x[1]): (x[0], x[1]) for x in helpers}.values():
            edits.append(_drop_param(u, h, i))
            edits += [Edit(n.start_byte, n.end_byte, "blockDim.x")
                      for n in name_reads(u, h.body, h.template_params[i].name)]
        return edits

    def update_contract(self, contract, site, ctx):
        k, _ = _param(site)
        if k is None:
            return contract
        args = tuple(a for i, a in enumerate(contract.template_args) if i != k)
        return contract.with_(template_args=args)

    def inverse_for(self, site, ctx):
        return TemplateBlockSize(param=_param(site)[1])
