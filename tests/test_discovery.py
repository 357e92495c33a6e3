"""Kernel discovery on realistic kernels, checked against tests/data/kernels/expected.yaml."""

import os

import pytest
import yaml

from kltrans.syntax import load

KDIR = os.path.join(os.path.dirname(__file__), "data", "kernels")
with open(os.path.join(KDIR, "expected.yaml")) as f:
    EXPECTED = yaml.safe_load(f)


def test_enough_fixtures():
    assert len(EXPECTED) >= 14
    on_disk = {f for f in os.listdir(KDIR) if f.endswith((".cu", ".cuh"))}
    assert on_disk == set(EXPECTED), "every fixture has expectations and vice versa"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_discovery(name):
    exp = EXPECTED[name]
    [unit] = load(os.path.join(KDIR, name))
    assert unit.parse_diagnostics() == [], [str(d) for d in unit.parse_diagnostics()]

    got_kernels = unit.kernels()
    assert [k.name for k in got_kernels] == [k["name"] for k in exp["kernels"]]
    for k, e in zip(got_kernels, exp["kernels"]):
        assert k.line == e["line"], k.name
        assert [t.name for t in k.template_params] == e["template_params"], k.name
        lb = None if k.launch_bounds is None else [a.replace(" ", "") for a in k.launch_bounds]
        assert lb == e["launch_bounds"], k.name
        got = [{"name": p.name, "base_type": p.base_type, "pointer": p.pointer,
                "const": p.const, "restrict": p.restrict} for p in k.params]
        assert got == e["params"], k.name

    assert [f.name for f in unit.device_functions()] == exp["device_functions"]
    assert [s.name for s in unit.shared_decls()] == exp["shared"]
    assert [lch.kernel for lch in unit.launches()] == exp["launches"]
    got_pragmas = [{"text": p.text, "line": p.line,
                    "loop_line": unit.line_col(p.loop.start_byte)[0] if p.loop else None}
                   for p in unit.pragmas if p.name == "unroll"]
    assert got_pragmas == exp["pragmas"]


def test_trouble_file_lists_every_kernel():
    """The file with all four grammar trouble cases: every kernel, right parameters."""
    [unit] = load(os.path.join(KDIR, "trouble_all.cu"))
    rules = {n.rule for n in unit.normalizations}
    assert rules == {"pragma", "device-lambda", "align", "launch-bounds"}
    assert not unit.has_errors
    exp = EXPECTED["trouble_all.cu"]["kernels"]
    assert len(unit.kernels()) == len(exp) >= 2
