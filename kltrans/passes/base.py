"""The pass base class.

A pass is a frozen dataclass (xDSL style): class attributes say what it is, fields are
its options::

    @dataclass(frozen=True)
    class RestrictPointers(Pass):
        \"\"\"Add ``const __restrict__`` to pointer parameters ... (docstring per
        summary, before/after, preconditions, options)\"\"\"

        name = "restrict-pointers"
        kind = "optimize"
        inverse = "unrestrict-pointers"
        anchor = Rule(kind="parameter_declaration", inside_kernel=True)
        preconditions = (Precondition("no-alias", "storage", "...", check=...),)
        templates = {"decl": "{{ TYPE }} __restrict__ {{ NAME }}"}

        def rewrite(self, site, ctx) -> list[Edit]: ...

Everything a pass declares is checked when its class is defined: the name is kebab-case,
the kind is ``simplify`` or ``optimize``, the anchor's patterns parse, and every variable
a jinja2 template uses is a metavariable of the anchor, an option, or a name listed in
``template_vars`` — a template that uses an unbound metavariable is an error at load
time, not at run time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from kltrans.analysis.verdict import Verdict
from kltrans.match import Match, Rule
from kltrans.passes.facts import Context, Precondition
from kltrans.passes.options import option_specs

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.syntax import Edit, Unit
    from kltrans.syntax.contract import LaunchContract
    from kltrans.syntax.cuda import Function

KINDS = ("simplify", "optimize", "canonicalize")
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


class PassDefinitionError(TypeError):
    """A pass class that is malformed (raised when its module is imported)."""


@dataclass(frozen=True)
class Site:
    """One place where a pass's anchor matched."""

    unit: "Unit"
    match: Match
    function: "Function | None"
    index: int  # 1-based position among this pass's sites in the unit
    pass_: "Pass | None" = None  # the configured pass (preconditions read its options)

    @property
    def node(self):
        return self.match.node

    def text(self, name: str) -> str:
        return self.match.text(name)

    def location(self):
        return self.unit.location(self.match.node.start_byte)

    def describe(self) -> str:
        loc = self.location()
        fn = f" in {self.function.name}" if self.function else ""
        return f"{loc}{fn}"


@dataclass(frozen=True)
class Pass:
    """Base class of every pass; see the module docstring."""

    name: ClassVar[str] = ""
    kind: ClassVar[str] = ""
    inverse: ClassVar[str] = ""
    anchor: ClassVar[Rule | None] = None
    preconditions: ClassVar[tuple[Precondition, ...]] = ()
    templates: ClassVar[dict[str, str]] = {}
    template_vars: ClassVar[tuple[str, ...]] = ()
    scope: ClassVar[str] = "kernel"  # sites in: "kernel" (__global__), "device" (device code), "any"
    # whether a lineage walk takes this simplification: False for one that changes a
    # tuning choice and no mechanism (a block size), which almost every kernel admits and
    # which would end every walk; pipelines and diff --explain still use it
    walked: ClassVar[bool] = True
    _compiled_templates: ClassVar[dict] = {}

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.__dict__.get("abstract", False):
            return
        where = f"{cls.__module__}.{cls.__qualname__}"
        if not _NAME.match(cls.name or ""):
            raise PassDefinitionError(f"{where}: name {cls.name!r} must be kebab-case")
        if cls.scope not in ("kernel", "device", "any"):
            raise PassDefinitionError(f"{where}: scope must be kernel, device or any")
        if cls.kind not in KINDS:
            raise PassDefinitionError(f"{where}: kind must be 'simplify' or 'optimize' "
                                      f"('canonicalize' is the engine's), not {cls.kind!r}")
        if not _NAME.match(cls.inverse or ""):
            raise PassDefinitionError(f"{where}: inverse must name the paired pass")
        if not isinstance(cls.anchor, Rule):
            raise PassDefinitionError(f"{where}: anchor must be a kltrans.match.Rule")
        if not (cls.__doc__ or "").strip():
            raise PassDefinitionError(f"{where}: a pass needs a docstring (summary, Before::, "
                                      f"After::, preconditions, options: "
                                      f"docs/authoring-passes.md)")
        earlier: set = set()
        for p in cls.preconditions:
            if not isinstance(p, Precondition):
                raise PassDefinitionError(f"{where}: preconditions must be Precondition objects")
            for n in p.needs:
                if n not in earlier:
                    raise PassDefinitionError(f"{where}: precondition {p.name} needs {n!r}, "
                                              f"which is not one of the preconditions before it")
            earlier.add(p.name)
        cls._compiled_templates = _compile_templates(cls, where)

    # ------------------------------------------------------------------ metadata
    @classmethod
    def summary(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0].strip()

    @classmethod
    def options(cls):
        return option_specs(cls)

    def option_values(self) -> dict:
        return {o.name: getattr(self, o.field) for o in self.options()}

    def spec(self) -> str:
        """This pass with its options as a pipeline element: ``unroll{factor=4}``."""
        opts = self.options()
        if not opts:
            return self.name
        vals = ",".join(f"{o.name}={format_value(getattr(self, o.field))}" for o in opts)
        return f"{self.name}{{{vals}}}"

    # ------------------------------------------------------------------- running
    def sites(self, unit: "Unit", ctx: Context) -> list[Site]:
        """Where the anchor matches, within the pass's ``scope``; with ``ctx.kernel``, only
        in that kernel, the functions it calls, and (for passes whose scope allows it)
        file scope."""
        from kltrans.syntax.cuda import enclosing_function, reachable_functions

        out = []
        reach = reachable_functions(unit, ctx.kernel) if ctx.kernel else set()
        for m in self.anchor.find_all(unit):
            fn = enclosing_function(unit, m.node)
            if m.node.type == "function_definition":
                fn = next((f for f in unit.kernels() + unit.device_functions()
                           if f.node.id == m.node.id), fn)
            if self.scope == "kernel" and (fn is None or not fn.is_kernel):
                continue
            if self.scope == "device" and (fn is None or not (fn.is_kernel or fn.is_device)):
                continue
            if ctx.kernel and fn is not None and fn.name not in reach:
                continue
            out.append(Site(unit, m, fn, len(out) + 1, self))
        return out

    def check(self, site: Site, ctx: Context) -> list[tuple[Precondition, Verdict]]:
        """Each precondition with its verdict at ``site``, in order; one whose ``needs``
        include a precondition that does not hold is not evaluated (unknown)."""
        out: list[tuple[Precondition, Verdict]] = []
        seen: dict[str, Verdict] = {}
        for p in self.preconditions:
            missing = [n for n in p.needs if n in seen and not seen[n].holds]
            v = Verdict.unknown(f"not checked: {missing[0]} does not hold") if missing \
                else p.evaluate(site, ctx)
            seen[p.name] = v
            out.append((p, v))
        return out

    def rewrite(self, site: Site, ctx: Context) -> list["Edit"]:  # pragma: no cover
        raise NotImplementedError

    def update_contract(self, contract: "LaunchContract", site: Site,
                        ctx: Context) -> "LaunchContract":
        """The launch contract after this rewrite (default: unchanged)."""
        return contract

    @classmethod
    def goal_options(cls, goal: "Unit") -> "list[dict] | None":
        """The option values a search toward ``goal`` (``diff --explain``) tries, where the
        goal itself says them (a block size: the goal's), or None: the default and the
        domains' values. A pass whose every try is costly says so to spare the search."""
        return None

    def inverse_pass(self) -> "Pass":
        """The paired pass, with the options that undo this one (default: its defaults)."""
        from kltrans.passes.registry import get_pass

        return get_pass(self.inverse)()

    def inverse_for(self, site: Site, ctx: Context) -> "Pass":
        """The paired pass configured to undo this pass's rewrite at ``site``.

        ``site`` is a site of *this* pass, before the rewrite. Passes whose inverse
        options depend on the site (e.g. ``reroll`` of ``#pragma unroll 4``) override it.
        """
        return self.inverse_pass()

    def render(self, template: str, site: Site, **extra) -> str:
        """Render one of ``templates`` with the site's bindings, options and ``extra``."""
        env = {name: site.match.text(name) for name in site.match.bindings}
        env.update({o.field: getattr(self, o.field) for o in self.options()})
        env.update(extra)
        return self._compiled_templates[template].render(**env)


_BARE = re.compile(r"[A-Za-z0-9_.+\-*/%]+")


def format_value(v) -> str:
    """An option value as a pipeline string writes it: bare when it can be, else quoted,
    so that every spec parses back (kltrans.passes.pipeline)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    s = str(v)
    if _BARE.fullmatch(s):
        return s
    return f"'{s}'" if "'" not in s else f'"{s}"'


def _compile_templates(cls, where: str) -> dict:
    if not cls.templates:
        return {}
    import jinja2
    from jinja2 import meta

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             autoescape=False)
    # the @dataclass decorator has not run yet: options are the annotated names
    annotated = set()
    for klass in cls.__mro__:
        annotated |= set(getattr(klass, "__annotations__", {}))
    allowed = set(cls.anchor.metavars()) | annotated | set(cls.template_vars)
    compiled = {}
    for key, text in cls.templates.items():
        try:
            ast = env.parse(text)
        except jinja2.TemplateSyntaxError as e:
            raise PassDefinitionError(f"{where}: template {key!r} line {e.lineno}: {e.message}") from None
        used = meta.find_undeclared_variables(ast)
        unbound = used - allowed
        if unbound:
            raise PassDefinitionError(
                f"{where}: template {key!r} uses unbound metavariable(s) "
                f"{', '.join('$' + u for u in sorted(unbound))}; the anchor binds "
                f"{', '.join('$' + m for m in sorted(cls.anchor.metavars())) or 'nothing'}")
        compiled[key] = env.from_string(text)
    return compiled
