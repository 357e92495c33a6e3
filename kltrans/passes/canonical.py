"""Canonicalization: many spellings of one thing brought to one form, before matching.

``kltrans opt -p canonicalize`` rewrites a unit with the rules of ``canonical.yaml``, in
the order written, round after round until none applies: unbraced bodies get braces,
multi-declarations are split, increments and compound assignments take one form, and
cooperative-groups calls on a 32-thread tile become the intrinsics they stand for
(``tile.shfl_down(v, o)`` → ``__shfl_down_sync(0xffffffffu, v, o)``, ``tile.sync()`` →
``__syncwarp()``), found through the
kernel model (:mod:`kltrans.model`) in every spelling it knows. The equivalences are data,
as Coccinelle's isomorphisms are: a pattern rule is a list of kltrans.match patterns and
a jinja2 template; an operation rule names an operation of ``spellings.yaml``, the
cooperative group it must act on, and a template over its operands.

Every rule is semantics-preserving and meant to be performance-neutral; with
``check=same-code`` (the default) the result must compile (NVRTC) to the cubin of the
input; when it does not, the rules are run again one at a time and each rule whose rewrite
changes the machine code is undone and reported. Every rewrite is reported as a step (rule,
line and column in the unit it was made on, before → after).

Canonicalization is an engine pass (kind ``canonicalize``): it is not in the catalogue's
table, has no inverse to walk back, and is neither a simplification nor an optimization.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING


from kltrans.syntax import yamldoc
from kltrans.match import Pattern, Rule
from kltrans.passes.base import Pass
from kltrans.passes.manager import PassReport, SiteReport
from kltrans.passes.options import Choice, Domain, DomainError, option
from kltrans.passes.rewrite import brace, indent_of, line_start, norm
from kltrans.syntax import Edit, EditError, apply_edits

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.passes.facts import Context
    from kltrans.syntax import Unit

MAX_ROUNDS = 8
_BODY_FIELDS = {"for_statement": "body", "for_range_loop": "body", "while_statement": "body",
                "do_statement": "body", "if_statement": "consequence"}
_SPLIT_PARENTS = ("compound_statement", "translation_unit", "declaration_list")


class CanonicalError(ValueError):
    """canonical.yaml is not of the documented shape."""


@dataclass(frozen=True)
class CanonicalRule:
    name: str
    doc: str
    builtin: str | None = None
    patterns: tuple = ()  # of (Pattern, to template text)
    where: tuple = ()  # (metavariable, (node kinds...))
    standalone: bool = False
    op: str | None = None
    group: tuple = ()  # (kind, width or None)
    to: str = ""


@dataclass(frozen=True)
class Step:
    """One rewrite: ``rule`` at ``line:column`` (of the unit it was made on, in ``round``)."""

    rule: str
    line: int
    column: int
    before: str
    after: str
    round: int


# ------------------------------------------------------------------------------ rules
@functools.lru_cache(maxsize=1)
def rules() -> dict[str, CanonicalRule]:
    """The rules of ``canonical.yaml``, checked, in order."""
    text = resources.files("kltrans.passes").joinpath("canonical.yaml").read_text("utf-8")
    return parse_rules(yamldoc.safe_load(text))


def parse_rules(raw) -> dict[str, CanonicalRule]:
    """A table of the shape of ``canonical.yaml`` as rules; :class:`CanonicalError` when not."""
    from kltrans.match import PatternError
    from kltrans.model import definitions

    if not isinstance(raw, dict) or raw.get("schema") != 1 or not isinstance(raw.get("rules"), dict):
        raise CanonicalError("canonical rules: a mapping with schema: 1 and rules: {name: rule}")
    out = {}
    for name, d in raw["rules"].items():
        if not isinstance(d, dict) or not d.get("doc"):
            raise CanonicalError(f"{name}: a rule is a mapping with a doc")
        kinds = [k for k in ("builtin", "from", "op") if k in d]
        if len(kinds) != 1:
            raise CanonicalError(f"{name}: give exactly one of builtin, from, op")
        if "builtin" in d:
            if d["builtin"] not in BUILTINS:
                raise CanonicalError(f"{name}: unknown builtin {d['builtin']!r} "
                                     f"({', '.join(sorted(BUILTINS))})")
            out[name] = CanonicalRule(name, d["doc"], builtin=d["builtin"])
            continue
        if not isinstance(d.get("to"), str):
            raise CanonicalError(f"{name}: needs a template 'to'")
        if "op" in d:
            if d["op"] not in definitions():
                raise CanonicalError(f"{name}: {d['op']!r} is not an operation of spellings.yaml")
            g = d.get("group") or {}
            out[name] = CanonicalRule(name, d["doc"], op=d["op"], to=d["to"],
                                      group=(g.get("kind"), g.get("width")) if g else ())
            continue
        pats = []
        for op in d.get("ops") or [None]:
            for p in d["from"]:
                text = p.replace("{op}", op) if op else p
                to = d["to"].replace("{op}", op) if op else d["to"]
                try:
                    pats.append((Pattern.compile(text), to))
                except PatternError as e:
                    raise CanonicalError(f"{name}: pattern {text!r}: {e}") from None
        where = tuple((k, tuple(v)) for k, v in (d.get("where") or {}).items())
        out[name] = CanonicalRule(name, d["doc"], patterns=tuple(pats), where=where,
                                  standalone=bool(d.get("standalone")), to=d["to"])
    return out


@functools.lru_cache(maxsize=None)
def _template(text: str):
    import jinja2

    return jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False).from_string(text)


# -------------------------------------------------------------------------- builtins
def _is_standalone(node: "Node") -> bool:
    """The value of ``node`` is not used: a whole expression statement or a for update."""
    parent = node.parent
    while parent is not None and parent.type == "comma_expression":
        node, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type == "expression_statement":
        return True
    return parent.type == "for_statement" and parent.child_by_field_name("update") == node


def _unbraced_bodies(unit: "Unit") -> list["Node"]:
    out = []
    for kind, fld in _BODY_FIELDS.items():
        for st in unit.nodes_of_type(kind):
            out.append(st.child_by_field_name(fld))
    for ec in unit.nodes_of_type("else_clause"):
        body = ec.named_children[-1] if ec.named_child_count else None
        if body is not None and body.type != "if_statement":  # else if stays
            out.append(body)
    return [b for b in out if b is not None and b.type != "compound_statement"
            and not b.type.startswith("preproc") and not b.has_error]


def brace_bodies(unit: "Unit") -> list[tuple["Node", list[Edit], str]]:
    """Each unbraced body wrapped in braces (innermost ones in a later round)."""
    found = []
    for body in sorted(_unbraced_bodies(unit), key=lambda b: b.start_byte):
        if any(b.start_byte <= body.start_byte and body.end_byte <= b.end_byte for b, _, _ in found):
            continue
        if body.prev_sibling is None:
            continue
        edits = brace(unit, body)
        after = "{ " + unit.text(body) + " }" if edits[0].start == body.start_byte else "{ ... }"
        found.append((body, edits, after))
    return found


def split_declarations(unit: "Unit") -> list[tuple["Node", list[Edit], str]]:
    """``T a = 0, *b;`` as ``T a = 0;`` and ``T *b;`` (not in a for initializer)."""
    out = []
    for decl in unit.nodes_of_type("declaration"):
        parent = decl.parent
        if parent is None or parent.type not in _SPLIT_PARENTS or decl.has_error:
            continue
        ds = decl.children_by_field_name("declarator")
        if len(ds) < 2 or any(c.type == "comment" for c in decl.children):
            continue
        head = unit.text((decl.start_byte, ds[0].start_byte))
        alone = unit.source[line_start(unit, decl.start_byte):decl.start_byte].strip() == b""
        sep = "\n" + indent_of(unit, decl.start_byte) if alone else " "
        text = sep.join(f"{head}{unit.text(d)};" for d in ds)
        out.append((decl, [Edit.replace(decl, text)], text))
    return out


BUILTINS = {"brace_bodies": brace_bodies, "split_declarations": split_declarations}


# ---------------------------------------------------------------------- rule sites
def _declared_names(unit: "Unit") -> set[str]:
    def compute(u):
        names = set()
        for kind in ("init_declarator", "parameter_declaration", "declaration"):
            for n in u.nodes_of_type(kind):
                d = n.child_by_field_name("declarator")
                if d is not None and d.type == "identifier":
                    names.add(u.text(d))
        for n in u.nodes_of_type("preproc_def"):
            nm = n.child_by_field_name("name")
            if nm is not None:
                names.add(u.text(nm))
        return frozenset(names)
    return unit.memo("canonical.declared", compute)


def _pattern_sites(unit: "Unit", rule: CanonicalRule) -> list[tuple["Node", list[Edit], str]]:
    out = []
    kinds = dict(rule.where)
    for pat, to in rule.patterns:
        for m in pat.find_all(unit):
            if rule.standalone and not _is_standalone(m.node):
                continue
            if any(not isinstance(m.get(v), tuple) and m.get(v) is not None
                   and m.get(v).type not in ks for v, ks in kinds.items()):
                continue
            if m.node.type == "identifier" and unit.text(m.node) in _declared_names(unit):
                continue  # a user's own variable or macro of a builtin's name
            text = _template(to).render(**{k: m.text(k) for k in m.bindings})
            out.append((m.node, [Edit.replace(m.node, text)], text))
    return out


def _op_sites(unit: "Unit", rule: CanonicalRule) -> list[tuple["Node", list[Edit], str]]:
    from kltrans.model import operations

    kind, width = rule.group if rule.group else (None, None)
    out = []
    for op in operations(unit):
        if op.name != rule.op or op.group is None:
            continue
        if kind is not None and op.group.kind != kind or width is not None and op.group.width != width:
            continue
        env = {k: unit.text(v) for k, v in op.operands.items() if not isinstance(v, tuple)}
        try:
            text = _template(rule.to).render(**env)
        except Exception:  # an operand the template needs is not bound in this spelling
            continue
        out.append((op.node, [Edit.replace(op.node, text)], text))
    return out


def rule_sites(unit: "Unit", rule: CanonicalRule) -> list[tuple["Node", list[Edit], str]]:
    """(node, edits, text after) for each place ``rule`` rewrites, not overlapping."""
    if rule.builtin:
        found = BUILTINS[rule.builtin](unit)
    elif rule.op:
        found = _op_sites(unit, rule)
    else:
        found = _pattern_sites(unit, rule)
    out, taken = [], []
    for node, edits, after in sorted(found, key=lambda t: t[0].start_byte):
        if any(node.start_byte < e and s < node.end_byte for s, e in taken):
            continue  # nested in an earlier site: the next round
        taken.append((node.start_byte, node.end_byte))
        out.append((node, edits, after))
    return out


# --------------------------------------------------------------------------- driver
def instantiations(unit: "Unit") -> list[str]:
    """The name expressions of the template kernels the unit's launch contracts launch
    (``reduce<float>``): NVRTC compiles a template kernel only when asked for one."""
    from kltrans.syntax.contract import ContractError, contracts

    try:
        found = contracts(unit).values()
    except ContractError:
        return []
    return [f"{c.kernel}<{', '.join(c.template_args)}>" for c in found if c.template_args]


def machine_code(unit: "Unit", arch: str | None) -> tuple[str | None, str]:
    """(a hash of the cubin NVRTC makes of ``unit``, or None; why when None)."""
    from kltrans.gate.compile import CompileError, compile_unit, cubin_functions

    try:
        r = compile_unit(unit, arch=arch or "sm_90", name_expressions=instantiations(unit))
    except (CompileError, ValueError) as e:
        return None, f"NVRTC cannot be used ({e})"
    if not r.ok or not r.cubin:
        return None, "the unit does not compile"
    if not cubin_functions(r.cubin):
        return None, "no code to compare (no kernel is instantiated)"
    return hashlib.sha256(r.cubin).hexdigest(), ""


def same_program(a: "Unit", b: "Unit", arch: str | None) -> tuple[bool, str]:
    """Whether two units are one program: they launch alike
    (:func:`kltrans.model.launch.same_launch`) and NVRTC compiles them to the same kernels
    (:func:`kltrans.gate.compile.same_kernel_code`: comments, names the compiler drops and
    unused file-scope constants may differ; template kernels as their contracts
    instantiate them)."""
    from kltrans.gate.compile import CompileError, compile_unit, same_kernel_code
    from kltrans.model.launch import same_launch

    ok, why = same_launch(a, b)
    if not ok:
        return False, why
    bounds = [{f.name: tuple(norm(x) for x in f.launch_bounds or ()) for f in u.kernels()}
              for u in (a, b)]
    if bounds[0] != bounds[1]:
        return False, f"the launch bounds differ ({bounds[0]} and {bounds[1]})"
    cubins = []
    for u in (a, b):
        try:
            r = compile_unit(u, arch=arch or "sm_90", name_expressions=instantiations(u))
        except (CompileError, ValueError) as e:
            return False, f"not compared: NVRTC cannot be used ({e})"
        if not r.ok or not r.cubin:
            return False, f"{u.path} does not compile"
        cubins.append(r.cubin)
    if same_kernel_code(*cubins):
        return True, "the same kernels and launches"
    return False, "other machine code"


def canonicalize(unit: "Unit", only: set[str] | None = None, check: bool = True,
                 arch: str | None = None, table: dict | None = None
                 ) -> tuple["Unit", list[Step], list[str]]:
    """``unit`` in canonical form, the steps taken, and notes (rules undone, checks not made).

    ``table``: rules as :func:`parse_rules` gives them (default: ``canonical.yaml``). With
    ``check``, the result is compiled once against the input; only when its machine code
    differs is the run made again rule by rule, undoing each rule that changes it."""
    table = rules() if table is None else table
    if not check:
        return _run(unit, only, None, arch, table)
    code, why = machine_code(unit, arch)
    if code is None:
        new, steps, notes = _run(unit, only, None, arch, table)
        return new, steps, [f"same-code check not made: {why}"] + notes
    new, steps, notes = _run(unit, only, None, arch, table)
    if not steps or machine_code(new, arch)[0] == code:
        return new, steps, notes
    return _run(unit, only, code, arch, table)


def _run(unit: "Unit", only: set[str] | None, code: str | None, arch: str | None,
         table: dict) -> tuple["Unit", list[Step], list[str]]:
    """Rules round after round until none applies; with ``code``, a rule whose rewrite
    compiles to other machine code is undone and left out from then on."""
    steps: list[Step] = []
    notes: list[str] = []
    undone: set[str] = set()
    for rnd in range(1, MAX_ROUNDS + 1):
        changed = False
        for rule in table.values():
            if only is not None and rule.name not in only or rule.name in undone:
                continue
            sites = rule_sites(unit, rule)
            if not sites:
                continue
            try:
                new = apply_edits(unit, [e for _, es, _ in sites for e in es])
            except EditError as e:
                notes.append(f"{rule.name}: rewrite refused: {e}")
                undone.add(rule.name)
                continue
            if code is not None:
                after, why = machine_code(new, arch)
                if after != code:
                    notes.append(f"{rule.name}: undone, the machine code changed"
                                 + (f" ({why})" if why else ""))
                    undone.add(rule.name)
                    continue
            for node, _, text in sites:
                loc = unit.location(node.start_byte)
                steps.append(Step(rule.name, loc.line, loc.column, unit.text(node), text, rnd))
            unit, changed = new, True
        if not changed:
            break
    return unit, steps, notes


class RuleList(Domain):
    """``all``, or rule names of canonical.yaml joined by ``+``."""

    def parse(self, text: str) -> str:
        return self.check(text)

    def contains(self, value) -> bool:
        return isinstance(value, str) and (value == "all" or all(
            n in rules() for n in value.split("+")))

    def check(self, value):
        if not self.contains(value):
            raise DomainError(f"{value!r}: not {self.describe()}")
        return value

    def describe(self) -> str:
        return "all, or rules joined by + (" + ", ".join(rules()) + ")"

    def values(self) -> list:
        return ["all"]


@dataclass(frozen=True)
class Canonicalize(Pass):
    """Bring common spellings to one canonical form (rules in ``canonical.yaml``).

    Before::

        for (int i = tid; i < n; i += 1) acc = acc + x[i];
        tile.sync();

    After::

        for (int i = tid; i < n; i++) { acc += x[i]; }
        __syncwarp();

    Preconditions: none; each rule matches only where its equivalence holds (an increment
    whose value is unused, a group the model knows to be a block or a 32-thread tile), and
    with ``check=same-code`` a rule is undone when NVRTC compiles its result to a different
    cubin.

    Options: ``rules`` (all, or names joined by ``+``), ``check`` (``same-code`` or
    ``none``).
    """

    name = "canonicalize"
    kind = "canonicalize"
    inverse = "canonicalize"
    anchor = Rule(kind="translation_unit")
    scope = "any"

    rules: str = option("all", RuleList(), "the rules to apply")
    check: str = option("same-code", Choice("same-code", "none"),
                        "undo a rule whose rewrite changes the machine code")

    def run_unit(self, unit: "Unit", ctx: "Context", dry_run: bool = False):
        """The whole pipeline element: (unit after, report with one site per step)."""
        only = None if self.rules == "all" else set(self.rules.split("+"))
        new, steps, notes = canonicalize(unit, only, self.check == "same-code", ctx.arch)
        report = PassReport(self.spec())
        status = "would-apply" if dry_run else "applied"
        for i, st in enumerate(steps, 1):
            before = " ".join(st.before.split())
            report.sites.append(SiteReport(i, unit.path, st.line, st.column, None, status,
                                           f"{st.rule}: {_short(before)} -> {_short(st.after)}"
                                           + (f" (round {st.round})" if st.round > 1 else "")))
        for n in notes:
            report.sites.append(SiteReport(len(report.sites) + 1, unit.path, 1, 1, None,
                                           "skipped", n))
        return (unit if dry_run else new), report


def _short(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 3] + "..."
