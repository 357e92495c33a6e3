"""The rewrite toolkit: the structured edits passes build their rewrites from.

A pass computes :class:`~kltrans.syntax.Edit` objects against one unit; these helpers
make the common ones the same way everywhere, so that no pass scans bytes for line breaks
or invents a name on its own:

- :func:`indent_of`, :func:`line_start` — the indentation and start of a line;
- :func:`remove` — a statement (or a pragma) with its whole line when it stands alone,
  else just its text;
- :func:`insert_lines_before` — lines (several, from a template) at a statement's
  indentation, before it;
- :func:`brace` — an unbraced body of ``for``/``while``/``do``/``if``/``else`` wrapped in
  braces, on one line or around its own lines;
- :func:`fresh_name` — a name no identifier of the function (or the file) uses yet;
- :func:`render` — a jinja2 template rendered and indented by the engine: the template is
  written at column 0, every line after the first gets the indentation of the place it
  goes to;
- text of nodes: :func:`splice` (byte ranges of a node replaced), :func:`rename`
  (an identifier renamed inside a node), :func:`shift`/:func:`unshift` (lines re-indented),
  :func:`norm` (blanks collapsed), :func:`indent_step`;
- names and statements: :func:`statements` of a block, :func:`inside`,
  :func:`declared_names`, :func:`declarator_ident`, :func:`used_names`,
  :func:`fresh_numbered` (a name, numbered when every candidate is taken);
- launch contracts: :func:`contract_of` (the site's 1-D header contract, or why not),
  :func:`call_parts`, :func:`header_expr`, :func:`int_text` for its expressions.

Layering: the pass engine (imports :mod:`kltrans.syntax` and jinja2).
"""

from __future__ import annotations

import ast
import functools
import re
from typing import TYPE_CHECKING, Iterable

from kltrans.match.predicates import pure
from kltrans.model.block import GROUP_MAKERS, accessors
from kltrans.model.effects import misparsed_declaration
from kltrans.syntax import Edit

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax import Unit

_NAME_CANDIDATES = ("i", "j", "k", "u", "v", "w", "ii", "jj")


def line_start(unit: "Unit", offset: int) -> int:
    """The byte offset where the line holding ``offset`` starts."""
    return unit.source.rfind(b"\n", 0, offset) + 1


def indent_of(unit: "Unit", offset: int) -> str:
    """The blanks that start the line holding ``offset``."""
    start = line_start(unit, offset)
    line = unit.source[start:offset].decode("utf-8", "replace")
    return line[:len(line) - len(line.lstrip(" \t"))]


def alone_on_line(unit: "Unit", start: int, end: int) -> bool:
    """Only blanks before ``start`` on its line and a line break right after ``end``."""
    src = unit.source
    return src[line_start(unit, start):start].strip() == b"" and src[end:end + 1] == b"\n"


def remove(unit: "Unit", start: int, end: int) -> Edit:
    """Delete ``[start, end)``: its whole line when it stands alone there."""
    if alone_on_line(unit, start, end):
        return Edit.delete(line_start(unit, start), end + 1)
    return Edit.delete(start, end)


def remove_node(unit: "Unit", node: "Node") -> Edit:
    return remove(unit, node.start_byte, node.end_byte)


def remove_described(unit: "Unit", node: "Node") -> Edit:
    """Delete statement ``node`` with the comments right above it (:func:`comments_above`)
    when it stands alone on its lines; else just the node."""
    if not alone_on_line(unit, node.start_byte, node.end_byte):
        return remove_node(unit, node)
    start = comments_above(unit, node, line_start(unit, node.start_byte))
    return Edit.delete(start, node.end_byte + 1)


_DIRECTIVE = re.compile(r"^//\s*(kltrans:|[A-Z][A-Z-]*:)")


def comments_above(unit: "Unit", node: "Node", start: int) -> int:
    """``start`` moved up over the comments right above ``node`` (each on its own lines,
    no blank line between them and the node): they describe it and go with it. Never
    over a directive (``// kltrans: launch ...``, ``// RUN: ...``) or the comments that
    open the file."""
    prev = node.prev_sibling
    while prev is not None and prev.type == "comment" and prev.prev_named_sibling is not None \
            and not _DIRECTIVE.match(unit.text(prev)) and \
            unit.source[prev.end_byte:start].count(b"\n") <= 1 and \
            unit.source[line_start(unit, prev.start_byte):prev.start_byte].strip() == b"":
        start = line_start(unit, prev.start_byte)
        prev = prev.prev_sibling
    return start


def unused_definitions(unit: "Unit", gone: list, keep: set = frozenset()) -> list:
    """Top-level ``__device__`` functions, structs, unions, classes (with their ``template``
    heads) and ``constexpr`` constants that code outside the byte ranges ``gone`` no longer names, though code inside
    them did: what a rewrite that removes ``gone`` leaves dead. Kernels stay, and so do the
    definitions named in ``keep`` (what the rewrite's new code calls)."""
    def outside(n) -> bool:
        return not any(a <= n.start_byte < b for a, b in gone)

    keep = set(keep) | _contract_names(unit)  # a launch header reads its constants

    tops = []
    for top in unit.root.named_children:
        inner = top
        while inner.type == "template_declaration":
            kids = [c for c in inner.named_children if c.type in (
                "function_definition", "struct_specifier", "class_specifier",
                "union_specifier", "template_declaration", "declaration")]
            if not kids:
                break
            inner = kids[-1]
        if inner.type == "declaration":
            inner = next((c for c in inner.named_children if c.type in (
                "struct_specifier", "class_specifier", "union_specifier")), inner)
        if inner.type == "function_definition":
            if "__global__" in unit.text(inner).split("(")[0]:
                continue
            d = inner.child_by_field_name("declarator")
            while d is not None and d.type not in ("identifier", "field_identifier",
                                                   "qualified_identifier", "operator_name"):
                d = d.child_by_field_name("declarator")
            name = unit.text(d) if d is not None else None
        elif inner.type in ("struct_specifier", "class_specifier", "union_specifier"):
            nm = inner.child_by_field_name("name")
            name = unit.text(nm) if nm is not None else None
        elif inner.type == "declaration" and top.type == "declaration" and \
                "constexpr" in unit.text(inner).split("=")[0].split() and \
                len(inner.children_by_field_name("declarator")) == 1:
            d = declarator_ident(inner.children_by_field_name("declarator")[0])
            name = unit.text(d) if d is not None else None  # a constexpr constant
        else:
            continue
        if name and name not in keep:
            tops.append((top, name))
    names = {name for _, name in tops}
    dead: list = []
    changed = True
    while changed:
        changed = False
        for top, name in tops:
            if top in dead:
                continue
            uses = [n for n in unit.walk(unit.root)
                    if n.type in ("identifier", "type_identifier") and unit.text(n) == name
                    and not top.start_byte <= n.start_byte < top.end_byte]
            live = [n for n in uses if outside(n) and
                    not any(t.start_byte <= n.start_byte < t.end_byte for t in dead)]
            if uses and not live and name in names:
                dead.append(top)
                changed = True
    return dead


def _contract_names(unit: "Unit") -> set:
    from kltrans.syntax.contract import contracts

    try:
        found = contracts(unit)
    except Exception:
        return set()
    out = set()
    for c in found.values():
        for e in (*c.grid, *c.block, str(getattr(c, "smem", "") or "")):
            out |= set(re.findall(r"[A-Za-z_]\w*", str(e)))
    return out


def drop_unused_definitions(unit: "Unit", gone: list, keep: set = frozenset()) -> list:
    """Edits deleting what :func:`unused_definitions` finds dead once the byte ranges
    ``gone`` are removed, each with the comments right above it."""
    src, edits = unit.source, []
    for top in unused_definitions(unit, gone, keep):
        start = comments_above(unit, top, line_start(unit, top.start_byte))
        end = top.end_byte
        if top.next_sibling is not None and top.next_sibling.type == ";":  # struct S {...};
            end = top.next_sibling.end_byte
        end += src[end:end + 1] == b"\n"
        if (start == 0 or src[max(0, start - 2):start] == b"\n\n") and src[end:end + 1] == b"\n":
            end += 1  # between blank lines: one of them goes too
        edits.append(Edit.delete(start, end))
    return edits


def dead_declarations(unit, fn, gone: list, keep: set) -> list:
    """Declarations of ``fn``'s body whose names code in ``gone`` (byte ranges being
    removed) reads and nothing else but themselves does, none of them in ``keep`` (the
    names the new code reads), and whose initializers have no effect (pure expressions,
    lambdas, cooperative groups, shared-memory accessors): what the rewrite leaves dead (a
    declaration dead before it stays). A declaration with a template type that the parser
    reads as comparisons (``cg::thread_block_tile<32> t = ...;``) counts as one."""
    decls = {}
    for s in fn.body.named_children:
        if any(a <= s.start_byte < b for a, b in gone):
            continue
        if s.type == "declaration":
            decls[s] = ({n for n, _ in declared_names(unit, s)},
                        [d.child_by_field_name("value") for d in
                         s.children_by_field_name("declarator") if d.type == "init_declarator"])
        elif s.type == "expression_statement":
            got = misparsed_declaration(unit, s, {})
            if got is not None:
                decls[s] = ({got[0]}, [got[1]])
    dead: list = []
    changed = True
    while changed:
        changed = False
        for d, (names, values) in decls.items():
            if d in dead or not all(no_effect(unit, v) for v in values):
                continue
            if names & keep:
                continue
            removed = gone + [(x.start_byte, x.end_byte) for x in dead]
            uses = [n for n in unit.walk(fn.body) if n.type == "identifier" and
                    unit.text(n) in names and not d.start_byte <= n.start_byte < d.end_byte]
            # made dead by the rewrite: read by what goes, and by nothing that stays
            # (a declaration dead before it is not the rewrite's to remove)
            if uses and all(any(a <= n.start_byte < b for a, b in removed) for n in uses):
                dead.append(d)
                changed = True
    return dead


def made_dead(old: "Unit", new: "Unit") -> list[Edit]:
    """Edits of ``new`` that remove the local declarations a rewrite of ``old`` left dead:
    declared in a kernel's body at any depth, with initializers that have no effect
    (:func:`no_effect`), read nowhere in ``new`` but read in ``old`` (a declaration that
    was dead before stays). Declarations are matched by kernel, name and text. Run again on
    the result for a chain (``n4`` read only by ``x4``'s initializer)."""
    def decls(unit):
        """{(kernel, names, text): (declaration, names, {name: identifier offsets})}"""
        out = {}
        for fn in unit.kernels():
            if fn.body is None:
                continue
            uses: dict[str, list[int]] = {}
            found = []
            for n in unit.walk(fn.body):  # one walk per kernel: its identifiers and declarations
                if n.type == "identifier":
                    uses.setdefault(unit.text(n), []).append(n.start_byte)
                elif n.type == "declaration":
                    found.append(n)
            for d in found:
                names = [unit.text(i) for i in (declarator_ident(x) for x in
                                                d.children_by_field_name("declarator")) if i]
                if names:
                    out[(fn.name, tuple(names), norm(unit.text(d)))] = (d, names, uses)
        return out

    def read(d, names, uses) -> bool:
        return any(not d.start_byte <= at < d.end_byte for nm in names for at in uses.get(nm, ()))

    before = decls(old)
    edits = []
    for key, (d, names, uses) in decls(new).items():
        if key not in before or read(d, names, uses) or not read(*before[key]):
            continue
        values = [x.child_by_field_name("value") for x in d.children_by_field_name("declarator")
                  if x.type == "init_declarator"]
        if all(no_effect(new, v) for v in values):
            edits.append(remove_described(new, d))
    return edits


def no_effect(unit, value) -> bool:
    """Whether evaluating the initializer ``value`` has no effect: a pure expression, a
    lambda, a cooperative group, a group's index or size, or a shared-memory accessor
    (:mod:`kltrans.model.block`)."""
    if value is None or pure(unit, value):
        return True
    call = value
    while call.type == "parenthesized_expression" and call.named_children:
        call = call.named_children[-1]
    f = call.child_by_field_name("function") if call.type == "call_expression" else None
    if f is not None and f.type == "template_function":
        f = f.child_by_field_name("name")
    name = unit.text(f).split("<")[0].split("::")[-1].strip() if f is not None else ""
    if name in GROUP_MAKERS or name in accessors(unit):
        return True
    # a group's index or size (``block.thread_rank()``, ``tile.size()``): reads only
    from kltrans.model.ops import operations

    return any(o.node.id == call.id and o.name.split(".")[0] in ("index", "size")
               for o in operations(unit))


def insert_lines_before(unit: "Unit", stmt: "Node", text: str) -> Edit:
    """``text`` (one or more lines, written at column 0) before statement ``stmt``, at its
    indentation; on the same line when ``stmt`` does not start its line."""
    indent = indent_of(unit, stmt.start_byte)
    lines = [indent + ln if ln else ln for ln in text.rstrip("\n").split("\n")]
    if unit.source[line_start(unit, stmt.start_byte):stmt.start_byte].strip() == b"":
        return Edit.insert(line_start(unit, stmt.start_byte), "\n".join(lines) + "\n")
    return Edit.insert(stmt.start_byte, " ".join(ln.strip() for ln in lines) + " ")


def brace(unit: "Unit", body: "Node") -> list[Edit]:
    """Wrap the unbraced body ``body`` in braces: ``{ stmt; }`` when it is on its header's
    line, else an opening brace at the end of the header and a closing one on its own line
    at the header's indentation."""
    prev = body.prev_sibling
    if prev is None:
        raise ValueError("a body follows its statement's header")
    if b"\n" in unit.source[prev.end_byte:body.start_byte]:
        close = "\n" + indent_of(unit, prev.end_byte) + "}"
        return [Edit.insert(prev.end_byte, " {"), Edit.insert(body.end_byte, close)]
    return [Edit.insert(body.start_byte, "{ "), Edit.insert(body.end_byte, " }")]


def fresh_name(unit: "Unit", scope: "Node | None", candidates: Iterable[str] = (),
               taken: Iterable[str] = ()) -> str:
    """The first of ``candidates`` (then ``i, j, k, ...``, then ``r0, r1, ...``) that no
    identifier in ``scope`` (a function node; None: the whole unit) nor ``taken`` uses."""
    node = scope if scope is not None else unit.root
    used = {unit.text(n) for n in unit.walk(node)
            if n.type in ("identifier", "type_identifier", "field_identifier")}
    used |= set(taken)
    for cand in (*candidates, *_NAME_CANDIDATES):
        if cand not in used:
            return cand
    n = 0
    while f"r{n}" in used:
        n += 1
    return f"r{n}"


@functools.lru_cache(maxsize=256)
def _compiled(text: str):
    import jinja2

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False,
                             trim_blocks=True, lstrip_blocks=True, autoescape=False)
    return env.from_string(text)


def render(template: str, indent: str = "", **env) -> str:
    """``template`` (jinja2, written at column 0) rendered with ``env``, every line after
    the first indented by ``indent`` (the first goes where the caller puts it)."""
    text = _compiled(template).render(**env)
    lines = text.split("\n")
    return "\n".join([lines[0]] + [indent + ln if ln.strip() else "" for ln in lines[1:]])


# --------------------------------------------------------------------- text of nodes
_LEX = re.compile(r'"(?:[^"\\\n]|\\.)*"|#\s*\w+|[A-Za-z_]\w*|\d[\w.]*|::|<=|>=|==|!=|&&|'
                  r'\|\||<<=|>>=|<<|>>|->|\+\+|--|\+=|-=|\S')
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def lex(text: str) -> list[str]:
    """The C tokens of ``text``, comments included as text (drop them first with
    :func:`token_text`): a string literal is one token, ``#define`` (blanks allowed after
    ``#``) one, operators of two or three characters one."""
    return _LEX.findall(text)


def token_text(text: str) -> str:
    """The tokens of ``text`` without its comments, joined by single spaces: spellings that
    differ only in blanks, line breaks and comments give the same text."""
    return " ".join(lex(_COMMENT.sub(" ", text)))


def norm(text: str) -> str:
    """``text`` with every run of blanks one space."""
    return " ".join(text.split())


def indent_step(unit: "Unit", stmt: "Node") -> str:
    """One level of indentation: the indentation of a top-level statement of the kernel."""
    ind = indent_of(unit, stmt.start_byte)
    return ind if ind else "  "


def shift(text: str, by: str) -> str:
    """``text`` with every line after the first indented by ``by`` more."""
    lines = text.split("\n")
    return "\n".join([lines[0]] + [(by + ln) if ln.strip() else ln for ln in lines[1:]])


def unshift(text: str, by: str) -> str:
    """The inverse of :func:`shift` (lines that do not start with ``by`` are kept)."""
    lines = text.split("\n")
    return "\n".join([lines[0]] + [ln[len(by):] if ln.startswith(by) else ln for ln in lines[1:]])


def splice(unit: "Unit", node: "Node", replacements: list[tuple[int, int, str]]) -> str:
    """The text of ``node`` with byte ranges replaced."""
    out, pos = [], node.start_byte
    for s, e, t in sorted(replacements):
        out.append(unit.source[pos:s].decode("utf-8"))
        out.append(t)
        pos = e
    out.append(unit.source[pos:node.end_byte].decode("utf-8"))
    return "".join(out)


def rename(unit: "Unit", node: "Node", old: str, new: str) -> str:
    """The text of ``node`` with every identifier ``old`` replaced by ``new``."""
    reps = [(n.start_byte, n.end_byte, new) for n in unit.walk(node)
            if n.type == "identifier" and unit.text(n) == old]
    return splice(unit, node, reps)


# --------------------------------------------------------------- names, statements
def statements(block) -> list:
    """The statements of a compound statement (comments left out); a single statement
    is a list of itself."""
    if block is None:
        return []
    if block.type != "compound_statement":
        return [block]
    return [c for c in block.named_children if c.type != "comment"]


def inside(node, container) -> bool:
    """``node`` lies within ``container``'s bytes."""
    return container is not None and container.start_byte <= node.start_byte and \
        node.end_byte <= container.end_byte


def declarator_ident(d):
    """The identifier a declarator declares (through init, pointer, array, reference and
    parenthesized declarators), else None."""
    while d is not None and d.type != "identifier":
        if d.type in ("init_declarator", "pointer_declarator", "array_declarator",
                      "reference_declarator", "parenthesized_declarator"):
            nxt = d.child_by_field_name("declarator")
            if nxt is None:
                named = [c for c in d.named_children if c.type != "type_qualifier"]
                nxt = named[0] if named else None
            d = nxt
        else:
            return None
    return d


def declared_names(unit: "Unit", node: "Node") -> list[tuple[str, "Node"]]:
    """(name, identifier) of every variable declared under ``node`` (parameters too)."""
    out = []
    for n in unit.walk(node):
        if n.type not in ("declaration", "parameter_declaration"):
            continue
        for d in n.children_by_field_name("declarator"):
            ident = declarator_ident(d)
            if ident is not None:
                out.append((unit.text(ident), ident))
    return out


def used_names(unit: "Unit", fn) -> set:
    """Every identifier and type name used in function ``fn``."""
    return {unit.text(n) for n in unit.walk(fn.node)
            if n.type in ("identifier", "type_identifier")}


def fresh_numbered(unit: "Unit", fn, candidates, taken=()) -> str:
    """The first of ``candidates`` no identifier of ``fn`` nor ``taken`` uses, else the
    first candidate numbered (``acc0``, ``acc1``, ...)."""
    used = {unit.text(n) for n in unit.walk(fn.node) if n.type == "identifier"} | set(taken)
    for c in candidates:
        if c not in used:
            return c
    k = 0
    while f"{candidates[0]}{k}" in used:
        k += 1
    return f"{candidates[0]}{k}"


# ----------------------------------------------------------------- launch contracts
def header_edit(unit: "Unit", contract, new) -> Edit:
    """The edit that writes launch contract ``new`` over header line ``contract``."""
    from kltrans.syntax.contract import format_contract

    line = unit.text((contract.start, contract.end))
    indent = line[:len(line) - len(line.lstrip())]
    return Edit(contract.start, contract.end, format_contract(new, indent))


def rewritten_unit(site, ctx) -> "Unit":
    """The unit with the site's pass applied at this one site: its rewrite and its launch
    header update, as the pass manager writes them; for a precondition that runs the
    result on the block or grid machine. ``rewrite`` may raise ``SkipSite``."""
    from kltrans.syntax.contract import contracts
    from kltrans.syntax.edits import apply_edits

    p, unit = site.pass_, site.unit
    edits = list(p.rewrite(site, ctx))
    c = contracts(unit).get(site.function.name) if site.function is not None else None
    if c is not None and c.source == "header":
        new = p.update_contract(c, site, ctx)
        if new != c:
            edits.append(header_edit(unit, c, new))
    return apply_edits(unit, edits)


def contract_of(site):
    """(contract, None) or (None, why) for the site's kernel: a 1-D ``// kltrans: launch``
    header contract, the only kind a pass that changes the grid can rewrite."""
    from kltrans.syntax.contract import contracts

    fn = site.function
    c = contracts(site.unit).get(fn.name)
    if c is None:
        return None, (f"{fn.name} has no launch contract: add the header line "
                      f"`// kltrans: launch {fn.name} grid=... block=...`")
    if c.source != "header":
        return None, (f"the launch of {fn.name} is read from a host launcher; the pass changes "
                      f"the grid, which it can only do in a `// kltrans: launch` header line")
    if len(c.grid) != 1 or len(c.block) != 1:
        return None, (f"the launch of {fn.name} is not 1-D (grid={c.grid}, block={c.block}): "
                      "the element index covers blockIdx.x and threadIdx.x only")
    return c, None


def header_block(site) -> tuple:
    """(the site's kernel's ``// kltrans: launch`` header contract, its block's extents as
    integers) or (None, why): what a pass that rewrites the header's block or
    instantiation reads first."""
    from kltrans.syntax.contract import ContractError, contracts, evaluate

    fn = site.function
    try:
        c = contracts(site.unit).get(fn.name)
    except ContractError as e:
        return None, f"the launch contract cannot be read: {e}"
    if c is None or c.source != "header":
        return None, f"{fn.name} has no `// kltrans: launch` header line to rewrite"
    try:
        return c, tuple(evaluate(e, dict(c.constants)) for e in c.block)
    except (ContractError, ValueError, ZeroDivisionError):
        return None, f"the block {', '.join(c.block)} has no constant value"


def call_parts(expr: str, names=("ceil_div", "CEIL_DIV")):
    """(function name, [argument texts]) when ``expr`` is a call of one of ``names``."""
    s = expr.strip()
    try:
        tree = ast.parse(s, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and \
            tree.func.id in names and not tree.keywords:
        return tree.func.id, [ast.get_source_segment(s, a) for a in tree.args]
    return None


def header_expr(text: str) -> str:
    """``text`` as a header value: parenthesized when it has blanks outside parentheses
    (a launch header separates its key=value items by blanks)."""
    depth = 0
    for ch in text.strip():
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and ch.isspace():
            return f"({text.strip()})"
    return text.strip()


def unwrap(text: str) -> str:
    """``text`` without the parentheses around all of it (``((a + b))`` -> ``a + b``;
    ``(a) + (b)`` is left as it is)."""
    t = text.strip()
    while t.startswith("(") and t.endswith(")"):
        depth = 0
        for k, ch in enumerate(t):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and k < len(t) - 1:
                return t
        t = t[1:-1].strip()
    return t


def int_text(text: str) -> int | None:
    """The integer a literal (``256``, ``4u``) spells, else None."""
    m = re.fullmatch(r"\s*(\d+)[uUlL]*\s*", text)
    return int(m.group(1)) if m else None
