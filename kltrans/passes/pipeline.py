"""Pipeline strings: ``'unroll{factor=4},restrict-pointers'``.

Grammar::

    pipeline := element ("," element)*
    element  := NAME ("{" [option ("," option)*] "}")?
    option   := NAME "=" VALUE          (VALUE: letters, digits, _ . + - or a quoted string)

Errors carry the offset of the problem so that the CLI can print a caret under it, and
list what is allowed: the nearest pass names, the options of the pass, the domain of the
value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.passes.options import DomainError
from kltrans.passes.registry import UnknownPass, get_pass

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")
_VALUE = re.compile(r"'[^']*'|\"[^\"]*\"|[A-Za-z0-9_.+\-*/%]+")


class PipelineError(ValueError):
    def __init__(self, message: str, text: str, offset: int, hint: str | None = None):
        self.message = message
        self.text = text
        self.offset = offset
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        lines = [f"error: {self.message}", f"    {self.text}", f"    {' ' * self.offset}^"]
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Element:
    name: str
    options: tuple[tuple[str, str, int], ...]  # (option, raw value, offset of the value)
    offset: int


def parse_pipeline_text(text: str) -> list[Element]:
    """Split a pipeline string into elements (no pass lookup)."""
    i = 0
    n = len(text)
    out: list[Element] = []

    def skip_ws():
        nonlocal i
        while i < n and text[i].isspace():
            i += 1

    skip_ws()
    if i >= n:
        raise PipelineError("empty pipeline", text, 0, "write passes as 'a,b{opt=1}'")
    while True:
        skip_ws()
        m = _NAME.match(text, i)
        if not m:
            raise PipelineError("expected a pass name", text, i)
        name, start = m.group(), i
        i = m.end()
        skip_ws()
        opts = []
        if i < n and text[i] == "{":
            i += 1
            skip_ws()
            if i < n and text[i] == "}":
                i += 1
            else:
                while True:
                    skip_ws()
                    m = _NAME.match(text, i)
                    if not m:
                        raise PipelineError("expected an option name", text, i)
                    oname = m.group()
                    if any(o[0] == oname for o in opts):
                        raise PipelineError(f"option {oname!r} given twice", text, i)
                    i = m.end()
                    skip_ws()
                    if i >= n or text[i] != "=":
                        raise PipelineError(f"expected '=' after option {oname!r}", text, i)
                    i += 1
                    skip_ws()
                    m = _VALUE.match(text, i)
                    if not m:
                        raise PipelineError(f"expected a value for option {oname!r}", text, i)
                    raw = m.group()
                    if raw[:1] in "'\"":
                        raw = raw[1:-1]
                    opts.append((oname, raw, i))
                    i = m.end()
                    skip_ws()
                    if i < n and text[i] == ",":
                        i += 1
                        continue
                    if i < n and text[i] == "}":
                        i += 1
                        break
                    raise PipelineError("expected ',' or '}' in the options", text, i)
        out.append(Element(name, tuple(opts), start))
        skip_ws()
        if i >= n:
            return out
        if text[i] != ",":
            raise PipelineError("expected ',' between passes", text, i)
        i += 1


def parse_pipeline(text: str) -> list:
    """Parse and instantiate a pipeline: a list of configured pass objects."""
    passes = []
    for el in parse_pipeline_text(text):
        try:
            cls = get_pass(el.name)
        except UnknownPass as e:
            hint = (f"did you mean {', '.join(e.near)}? " if e.near else "") + \
                   "'kltrans passes' lists every pass"
            raise PipelineError(f"unknown pass {el.name!r}", text, el.offset, hint) from None
        specs = {o.name: o for o in cls.options()}
        kw = {}
        for oname, raw, off in el.options:
            spec = specs.get(oname) or specs.get(oname.replace("_", "-"))
            if spec is None:
                allowed = ", ".join(specs) or "none"
                raise PipelineError(f"pass {el.name} has no option {oname!r}", text, off - len(oname) - 1,
                                    f"options of {el.name}: {allowed}")
            try:
                kw[spec.field] = spec.domain.parse(raw)
            except DomainError as e:
                raise PipelineError(f"bad value for {el.name}{{{oname}}}: {e}", text, off,
                                    f"{oname} takes {spec.domain.describe()}") from None
        passes.append(cls(**kw))
    return passes


def format_pipeline(passes) -> str:
    return ",".join(p.spec() for p in passes)
