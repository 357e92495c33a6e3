"""Where a name must be a compile-time constant.

A template parameter (``template <unsigned int blockSize>``) may be read as a value
(``tid < blockSize / 2``) or where C++ needs a constant expression: an array's size, a
template argument, ``static_assert``, a ``case`` label, ``if constexpr``, ``alignas``,
``__launch_bounds__``, an unroll pragma's count, a ``constexpr`` initializer. Only the
first kind of read can become a run-time value (``blockDim.x``). Locals declared
``const`` from such a name are constants too (``const int w = blockSize / 32;`` sizes
``float s[w]``), so they are followed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.unit import Unit

#: node kinds under which every name read must be a constant (the kind, what it is)
_CONSTANT = {"template_argument_list": "a template argument",
             "static_assert_declaration": "static_assert",
             "case_statement": "a case label",
             "alignas_qualifier": "alignas",
             "enumerator": "an enumerator",
             "bitfield_clause": "a bit-field width"}


def name_reads(unit: "Unit", scope: "Node", name: str) -> list["Node"]:
    """The nodes of ``scope`` that read ``name`` (identifiers, and the type identifiers a
    template argument list parses a bare name as)."""
    return [n for n in unit.walk(scope)
            if n.type in ("identifier", "type_identifier") and unit.text(n) == name]


def declares(unit: "Unit", scope: "Node", name: str) -> "Node | None":
    """A declaration in ``scope`` of a local or parameter called ``name`` (it would
    shadow a template parameter of that name), or None."""
    for n in unit.walk(scope):
        if n.type in ("init_declarator", "declaration", "parameter_declaration",
                      "array_declarator", "pointer_declarator", "reference_declarator"):
            d = n.child_by_field_name("declarator")
            if d is not None and d.type == "identifier" and unit.text(d) == name:
                return n
    return None


def constant_context(unit: "Unit", node: "Node", stop: "Node") -> str | None:
    """What needs ``node`` (a name read) to be a constant, looking up to ``stop``: an
    array size, a template argument, ...; None for a read as a value."""
    child, p = node, node.parent
    while p is not None and p != stop:
        if p.type == "array_declarator" and child == p.child_by_field_name("size"):
            return "an array size"
        if p.type == "if_statement" and any(c.type == "constexpr" for c in p.children) and \
                child == p.child_by_field_name("condition"):
            return "an if constexpr condition"
        if p.type == "declaration" and any(unit.text(c) == "constexpr" for c in p.children
                                           if c.type in ("type_qualifier", "constexpr")):
            return "a constexpr initializer"
        if p.type in _CONSTANT:
            return _CONSTANT[p.type]
        child, p = p, p.parent
    return None


def constant_names(unit: "Unit", scope: "Node", name: str) -> set[str]:
    """``name`` and the ``const`` locals of ``scope`` initialized from it, transitively."""
    names, grew = {name}, True
    while grew:
        grew = False
        for d in unit.walk(scope):
            if d.type != "declaration" or not any(
                    unit.text(c) in ("const", "constexpr") for c in d.children
                    if c.type == "type_qualifier"):
                continue
            for init in d.named_children:
                if init.type != "init_declarator":
                    continue
                ident = init.child_by_field_name("declarator")
                value = init.child_by_field_name("value")
                if ident is None or ident.type != "identifier" or value is None:
                    continue
                local = unit.text(ident)
                if local not in names and any(unit.text(n) in names for n in unit.walk(value)
                                              if n.type == "identifier"):
                    names.add(local)
                    grew = True
    return names


def constant_uses(unit: "Unit", fn, name: str, allowed=()) -> list[tuple["Node", str]]:
    """Where function ``fn`` (a :class:`kltrans.syntax.cuda.Function`) needs ``name``, or a
    ``const`` local made from it, as a constant: (the read, what needs it). ``allowed``:
    reads to leave out (template arguments the caller rewrites itself)."""
    out = []
    names = constant_names(unit, fn.node, name) if fn.body is not None else {name}
    for n in unit.walk(fn.node):
        if n.type not in ("identifier", "type_identifier") or unit.text(n) not in names or \
                n in allowed:
            continue
        what = constant_context(unit, n, fn.outer.parent)
        if what is not None:
            out.append((n, what))
    for bound in fn.launch_bounds or ():
        if any(re.search(rf"\b{re.escape(x)}\b", bound) for x in names):
            out.append((fn.node, "__launch_bounds__"))
    for n in unit.walk(fn.node):
        if n.type.startswith("preproc") and unit.text(n).lstrip().startswith("#pragma") and \
                any(re.search(rf"\b{re.escape(x)}\b", unit.text(n)) for x in names):
            out.append((n, "a pragma"))
    return out


__all__ = ["constant_context", "constant_names", "constant_uses", "declares", "name_reads"]
