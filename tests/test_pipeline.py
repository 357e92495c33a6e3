"""Pipeline strings, the registry, pass definitions and options."""

import dataclasses

import pytest

from kltrans.passes import Choice, IntRange, OneOf, Pass, PassDefinitionError, option
from kltrans.passes.options import DomainError
from kltrans.passes.pipeline import PipelineError, format_pipeline, parse_pipeline, parse_pipeline_text
from kltrans.passes.registry import UnknownPass, get_pass, names, table
from kltrans.match import Rule


def test_parse_pipeline_text():
    els = parse_pipeline_text(" unroll{factor=4} , restrict-pointers{const=false},reroll{} ")
    assert [e.name for e in els] == ["unroll", "restrict-pointers", "reroll"]
    assert [(o, v) for o, v, _ in els[0].options] == [("factor", "4")]


@pytest.mark.parametrize("text, message, offset", [
    ("", "empty pipeline", 0),
    ("unroll{factor=4", "expected ',' or '}'", 15),
    ("unroll{factor}", "expected '='", 13),
    ("unroll,,reroll", "expected a pass name", 7),
    ("unroll reroll", "expected ',' between passes", 7),
    ("unroll{=4}", "expected an option name", 7),
])
def test_malformed_pipelines_point_at_the_problem(text, message, offset):
    with pytest.raises(PipelineError) as e:
        parse_pipeline_text(text)
    assert message in e.value.message and e.value.offset == offset
    assert e.value.render().splitlines()[2] == "    " + " " * offset + "^"


def test_instantiate_with_options_and_format_back():
    ps = parse_pipeline("unroll{factor=full,style=manual},restrict-pointers{const=false}")
    assert ps[0].factor == "full" and ps[0].style == "manual" and ps[1].const is False
    assert format_pipeline(ps) == "unroll{factor=full,style=manual},restrict-pointers{const=false}"
    assert parse_pipeline("unroll")[0].factor == 4


def test_unknown_pass_lists_nearest_names():
    with pytest.raises(PipelineError) as e:
        parse_pipeline("unrol{factor=4}")
    assert "unknown pass 'unrol'" in e.value.message and "unroll" in e.value.hint


def test_unknown_option_and_bad_value_list_what_is_allowed():
    with pytest.raises(PipelineError) as e:
        parse_pipeline("unroll{fator=4}")
    assert "has no option 'fator'" in e.value.message and "factor, style" in e.value.hint
    with pytest.raises(PipelineError) as e:
        parse_pipeline("unroll{factor=100}")
    assert "an integer in [2, 64] or one of full" in e.value.hint
    with pytest.raises(PipelineError) as e:
        parse_pipeline("restrict-pointers{const=maybe}")
    assert "true or false" in e.value.hint


def test_registry_every_name_class_inverse():
    t = table()
    assert {"unroll", "reroll", "restrict-pointers", "unrestrict-pointers"} <= set(t)
    for n in names():
        cls = get_pass(n)
        assert cls.name == n
        inv = get_pass(cls.inverse)
        assert inv.inverse == n, f"{n} <-> {cls.inverse} must pair both ways"
        assert {cls.kind, inv.kind} == {"simplify", "optimize"}
        assert cls.summary() and cls.__doc__.count("Preconditions") == 1
        assert "Options" in cls.__doc__ and "Before" in cls.__doc__
    assert names("simplify") == sorted(n for n in names() if get_pass(n).kind == "simplify")
    with pytest.raises(UnknownPass, match="did you mean"):
        get_pass("restrict-pointer")


def test_every_pass_has_fixtures_for_each_precondition():
    from kltrans.passes.fixtures import discover, pipeline_names, refused_lines

    cases = discover()
    for n in names():
        cls = get_pass(n)
        mine = [c for c in cases if n in pipeline_names(c.pipeline)]
        assert any(not c.negative for c in mine), f"{n} has no positive fixture"
        skipped = {c.check_skip[0].split(":")[0] for c in mine if c.negative}
        for c in mine:  # refused sites kept in a positive case (// ok: PRECONDITION: why)
            skipped |= {pre for _, pre, _ in refused_lines(open(c.path, encoding="utf-8").read())}
        missing = {p.name for p in cls.preconditions} - skipped
        assert not missing, f"{n}: no negative fixture for {sorted(missing)}"


def test_context_reads_the_tolerance_fact():
    from kltrans.passes.facts import Context

    assert Context.from_strings(["tolerance(1e-5)"]).tolerance() == (1e-5, "")
    assert Context.from_strings(["rtol(exact)"]).tolerance() == (0.0, "")
    assert Context.from_strings(["reassoc"]).tolerance() == (None, "")
    val, why = Context.from_strings(["tolerance(loose)"]).tolerance()
    assert val is None and "write a number" in why


def test_option_domains():
    d = OneOf(IntRange(2, 8), Choice("full"))
    assert d.parse("4") == 4 and d.parse("FULL") == "full"
    with pytest.raises(DomainError):
        d.parse("9")
    with pytest.raises(DomainError):
        option(1, IntRange(2, 8))
    assert IntRange(1, 16).values() == [1, 2, 4, 8, 16]


def _define(**attrs):
    ns = {"__doc__": "A pass.\n\nBefore:: x\n\nPreconditions: none.\n\nOptions: none."}
    ns.update(attrs)
    return dataclasses.dataclass(frozen=True)(type("P", (Pass,), ns))


def test_pass_definitions_are_checked_at_load_time():
    ok = dict(name="demo", kind="optimize", inverse="undemo", anchor=Rule(pattern="$A / $B"))
    _define(**ok)
    with pytest.raises(PassDefinitionError, match="kebab-case"):
        _define(**{**ok, "name": "Demo_Pass"})
    with pytest.raises(PassDefinitionError, match="kind"):
        _define(**{**ok, "kind": "speedup"})
    with pytest.raises(PassDefinitionError, match="unbound metavariable.*\\$C"):
        _define(**ok, templates={"t": "{{ A }} * {{ C }}"})
    with pytest.raises(PassDefinitionError, match="docstring"):
        _define(**{**ok, "__doc__": None})
    # options and declared template variables are bound
    _define(**ok, templates={"t": "{{ A }} * {{ R }} {{ factor }}"}, template_vars=("R",),
            __annotations__={"factor": int}, factor=option(2, IntRange(1, 4)))


def test_every_pass_spec_parses_back_with_every_explored_option_value():
    """The walk stores inverses as spec strings: each must parse back to the same pass."""
    import dataclasses

    from kltrans.passes.pipeline import parse_pipeline
    from kltrans.passes.registry import get_pass, names

    for n in names():
        p = get_pass(n)()
        variants = [p]
        for o in p.options():
            for v in o.domain.values()[:4]:
                try:
                    variants.append(dataclasses.replace(p, **{o.field: v}))
                except (TypeError, ValueError):
                    pass
        for q in variants:
            [back] = parse_pipeline(q.spec())
            assert back.spec() == q.spec() and back.option_values() == q.option_values(), q.spec()


def test_the_readme_counts_the_registered_pass_pairs():
    import os
    import re

    readme = open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                               "README.md"), encoding="utf-8").read()
    [n] = re.findall(r"(\d+) pass pairs", readme)
    assert int(n) * 2 == len(names()) and len(names("simplify")) == int(n)


def test_a_precondition_that_needs_a_failing_one_is_not_checked():
    """``needs``: a costly check whose premise an earlier precondition refutes is left
    unknown ("not checked") and never run; where the premise holds it runs."""
    from kltrans.analysis.verdict import Verdict
    from kltrans.passes import Precondition
    from kltrans.passes.facts import Context
    from kltrans.syntax import parse

    ran = []
    premise = Precondition("premise", "layout", "the premise",
                           lambda s, c: Verdict.no("no") if "bad" in s.unit.text(s.node)
                           else Verdict.yes("yes"))
    costly = Precondition("costly", "storage", "a model run",
                          lambda s, c: ran.append(1) or Verdict.yes("ran"), needs=("premise",))
    P = _define(name="demo", kind="optimize", inverse="undemo", anchor=Rule(pattern="$A / $B"),
                preconditions=(premise, costly))
    with pytest.raises(PassDefinitionError, match="needs 'premise', which is not one of the"):
        _define(name="demo", kind="optimize", inverse="undemo", anchor=Rule(pattern="$A / $B"),
                preconditions=(costly, premise))  # ok: refused, the premise must come first
    for text, runs in (("bad / 2", 0), ("good / 2", 1)):
        ran.clear()
        unit = parse(f"__global__ void k(float* x) {{ x[0] = {text}; }}".encode(), "k.cu")
        [site] = P().sites(unit, Context())
        (_, v1), (_, v2) = P().check(site, Context())
        assert len(ran) == runs
        if runs:
            assert v1.holds and v2.holds
        else:  # ok: refused by the premise, the costly check is unknown, not run
            assert not v1.holds and v2.is_unknown and "not checked: premise" in v2.reason
