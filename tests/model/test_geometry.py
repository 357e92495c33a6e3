"""The kernel model reads a thread's indices and the launch's extents in any spelling.

Each data file marks declarations: ``// role: KIND DIM [WIDTH] [div|mod C]`` (what
:func:`role_of` must read the declared value as; :meth:`Role.__str__` spells it), or
``// role: none: WHY`` for a value that has no role. Every local variable the model gives
a role (:func:`geometry`) must be declared on a marked line, with that role."""

from __future__ import annotations

import glob
import os
import re

import pytest

from kltrans.model.geometry import Role, geometry, role_explain, role_of
from kltrans.syntax.cuda import find_functions
from kltrans.syntax.unit import load, parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "model")
FILES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(DATA, "geometry_*.cu")))
_MARK = re.compile(r"//\s*role:\s*(.*)$")


def _expected(path: str) -> dict[int, str | None]:
    out = {}
    for i, line in enumerate(open(path, encoding="utf-8"), 1):
        m = _MARK.search(line)
        if m:
            words = m.group(1).strip()
            if words.startswith("none"):
                assert re.match(r"none:\s*\S", words), f"{path}:{i}: a refused case says why"
                out[i] = None
            else:
                out[i] = words
    return out


def _declared(unit, line: int):
    """(name, value node) of the one declaration with a value on a line."""
    found = [d for d in unit.nodes_of_type("init_declarator")
             if unit.location(d.start_byte).line == line]
    assert len(found) == 1, f"line {line}: one declaration per marked line"
    d = found[0]
    return unit.text(d.child_by_field_name("declarator")), d.child_by_field_name("value")


def test_there_are_data_files():
    assert len(FILES) >= 3


@pytest.mark.parametrize("name", FILES)
def test_every_spelling_is_read_as_its_role(name):
    path = os.path.join(DATA, name)
    [unit] = load(path)
    want = _expected(path)
    assert want, f"{name}: no marks"
    for line, role in want.items():
        var, value = _declared(unit, line)
        got, why = role_explain(unit, value)
        assert (str(got) if got else None) == role, f"{name}:{line} {var}: {why}"
        assert why, f"{name}:{line}: a reason is given"
    marked = {line for line, role in want.items() if role is not None}
    for fn in find_functions(unit):
        for var, role in geometry(unit, fn).roles.items():
            decl = [d for d in unit.nodes_of_type("init_declarator", within=fn.node)
                    if unit.text(d.child_by_field_name("declarator")) == var]
            line = unit.location(decl[0].start_byte).line
            assert line in marked, f"{name}:{line}: {var} has role {role} but no mark"
            assert str(role) == want[line], f"{name}:{line}"


def _unit(body: str, prelude: str = "", params: str = "float* y, int n"):
    return parse(f"{prelude}\n__global__ void k({params}) {{\n{body}\n}}\n", "k.cu")


def _role(unit, var: str):
    fn = next(f for f in find_functions(unit) if f.name == "k")
    return geometry(unit, fn).get(var)


def test_a_role_carries_its_fields_and_the_spelling_read():
    u = _unit("int i = blockIdx.x * blockDim.x + threadIdx.x;\nint w = i / 32;\n"
              "int l = threadIdx.x & 31;")
    assert _role(u, "i") == Role("global", "x")
    assert _role(u, "w") == Role("global", "x", None, ("div", 32))
    lane = _role(u, "l")
    assert (lane.kind, lane.dim, lane.width, lane.split) == ("lane", "x", 32, ("mod", 32))
    assert lane.is_index and "threadIdx.x & 31" in lane.reason
    assert not Role("grid-size", "x").is_index


def test_a_constant_block_size_names_the_launch_contract_or_its_absence():
    body = "int i = blockIdx.x * 256 + threadIdx.x;"
    u = _unit(body)
    got, why = role_explain(u, _value(u, "i"))
    assert got is None and "not known to be the block size (no launch contract)" in why
    u = _unit(body, prelude="// kltrans: launch k grid=ceil_div(n, 256) block=256")
    got, why = role_explain(u, _value(u, "i"))
    assert got == Role("global", "x") and "the launch contract sets block=256" in why
    u = _unit(body, prelude="// kltrans: launch k grid=ceil_div(n, 128) block=128")
    got, why = role_explain(u, _value(u, "i"))
    assert got is None and "the launch contract sets 128" in why


def test_a_launcher_in_the_file_is_a_contract():
    src = ("#define NT 64\n__global__ void k(float* y, int n) {\n"
           "  int i = blockIdx.x * NT + threadIdx.x;\n  if (i < n) y[i] = 0;\n}\n"
           "void run(float* y, int n) { k<<<(n + NT - 1) / NT, NT>>>(y, n); }\n")
    u = parse(src, "k.cu")
    assert _role(u, "i") == Role("global", "x")


def test_value_template_parameters_are_the_instantiation_the_contract_launches():
    src = ("template <int TS>\n__global__ void k(float* y, int n) {\n"
           "  int r = threadIdx.x / TS;\n  int i = blockIdx.x * (TS * TS) + threadIdx.x;\n"
           "  y[i] = r;\n}\n")
    u = parse("// kltrans: launch k<16> grid=ceil_div(n, 256) block=256\n" + src, "k.cu")
    assert _role(u, "r") == Role("thread", "x", None, ("div", 16))
    assert _role(u, "i") == Role("global", "x")  # TS * TS is the block the contract sets
    # ok: no instantiation named, the split is by the parameter's name
    u = parse("// kltrans: launch k grid=ceil_div(n, 256) block=256\n" + src, "k.cu")
    assert _role(u, "r") == Role("thread", "x", None, ("div", "TS"))


def test_lanes_of_a_two_dimensional_block_are_refuted_by_the_contract():
    body = "int l = threadIdx.x % 32;"
    assert _role(_unit(body), "l") == Role("lane", "x", 32, ("mod", 32))
    u = _unit(body, prelude="// kltrans: launch k grid=n block=(16, 16)")
    got, why = role_explain(u, _value(u, "l"))
    assert got == Role("thread", "x", None, ("mod", 32)) and "not a lane" in why


def test_odd_code_is_no_role_and_never_raises():
    u = _unit("int a = ;\nint b = (threadIdx.x +);\nint c = undefined_thing(threadIdx.x);\n"
              "int d = threadIdx.x / 0;\nint e = threadIdx.x >> n;\nauto f = [&](int x) "
              "{ return x; };")
    for var in "abcdef":
        node = _value(u, var)
        if node is not None:
            assert role_of(u, node) is None
    assert role_of(u, None) is None
    assert geometry(u, find_functions(u)[0]) is geometry(u, find_functions(u)[0])  # cached


def test_a_variable_assigned_again_has_no_role():
    u = _unit("int t = threadIdx.x;\nint moved = threadIdx.x;\nif (n > 4) moved += 32;\n"
              "int twice = 0, twice2 = 0;\nint twice = blockIdx.x;")
    assert _role(u, "t") == Role("thread", "x")
    assert role_of(u, _value(u, "moved")) == Role("thread", "x")  # the value has one
    assert _role(u, "moved") is None and _role(u, "twice") is None  # the variable has not


def test_names_of_a_kind_in_declaration_order():
    u = _unit("int t = threadIdx.x;\nint l = t % 32;\nint w = t / 32;\nint l2 = __lane_id();")
    g = geometry(u, find_functions(u)[0])
    assert g.names("lane") == ["l", "l2"] and g.names("warp") == ["w"]
    assert g.function == "k" and g.get("missing") is None


def _value(unit, var):
    for d in unit.nodes_of_type("init_declarator"):
        if unit.text(d.child_by_field_name("declarator")) == var:
            return d.child_by_field_name("value")
    return None
