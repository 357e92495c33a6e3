"""Workload specs: loading, formulas, and an error that names the field for each mistake."""

import os
import shutil

import pytest
import yaml

from kltrans.workload import SpecError, load_workload

ROOT = os.path.dirname(os.path.abspath(__file__))
SCALE = os.path.join(ROOT, "data", "workloads", "scale")


def test_load_scale():
    wl = load_workload(SCALE)
    assert wl.name == "scale" and wl.sizes == ("n",)
    assert [a.role for a in wl.arguments] == ["in", "out", "scalar", "scalar", "scalar"]
    assert wl.env({"n": 10}) == {"n": 10}
    assert wl.bytes_moved({"n": 10}) == 80 and wl.flops({"n": 10}) == 20
    assert wl.shape(wl.arguments[0], {"n": 7}) == (7,)
    out = wl.reference()({"n": 2}, x=__import__("numpy").array([1.0, 2.0]), a=1.5, b=-0.25, n=2)
    assert list(out["y"]) == [1.25, 2.75]


def _broken(tmp_path, edit):
    d = tmp_path / "w"
    shutil.copytree(SCALE, d)
    data = yaml.safe_load((d / "workload.yaml").read_text())
    edit(data)
    (d / "workload.yaml").write_text(yaml.safe_dump(data))
    return str(d)


@pytest.mark.parametrize("edit, field", [
    (lambda d: d.pop("name"), "name: missing"),
    (lambda d: d.update(schema=2), "schema: must be 1"),
    (lambda d: d.update(colour="red"), "colour: unknown field"),
    (lambda d: d["arguments"][0].update(dtype="float8"), "arguments[0].dtype"),
    (lambda d: d["arguments"][1].update(role="output"), "arguments[1].role"),
    (lambda d: d["arguments"][0].pop("shape"), "arguments[0].shape"),
    (lambda d: d["arguments"][2].pop("value"), "arguments[2].value"),
    (lambda d: d["arguments"][3].update(name="x"), "arguments[3].name: duplicate"),
    (lambda d: d["arguments"][0].update(init="zero"), "arguments[0].init"),
    (lambda d: d.update(test_sizes=[{"n": 1024}, {"n": 4096}]), "needs at least one ragged size"),
    (lambda d: d.update(test_sizes=[{"m": 3}]), "test_sizes[0]: must give exactly n"),
    (lambda d: d.update(bench_size={"n": 1, "m": 2}), "bench_size"),
    (lambda d: d.update(tolerance={}), "tolerance: no rule for output 'y'"),
    (lambda d: d.update(tolerance={"y": {"rtol": 1e-6, "fuzz": 1}}), "tolerance.y.fuzz"),
    (lambda d: d.update(tolerance={"x": {"exact": True}, "y": {"exact": True}}), "tolerance.x"),
    (lambda d: d.update(seeds=[1]), "seeds: needs at least 3"),
    (lambda d: d.update(roofline={"bytes": "8 * m"}), "roofline.bytes"),
    (lambda d: d.update(kernels={"naive": {"file": "nope.cu", "kernel": "k"}}), "kernels.naive.file"),
    (lambda d: d.update(divisible={"n": 4}), "test_sizes[0].n: must be divisible by 4"),
    (lambda d: d.update(reference="missing.py"), "reference: missing.py not found"),
])
def test_errors_point_at_the_field(tmp_path, edit, field):
    with pytest.raises(SpecError) as e:
        load_workload(_broken(tmp_path, edit))
    assert "workload.yaml: " in str(e.value) and field in str(e.value)


def test_not_a_workload_and_bad_yaml(tmp_path):
    with pytest.raises(SpecError, match="no workload.yaml"):
        load_workload(str(tmp_path))
    (tmp_path / "workload.yaml").write_text("name: [unclosed\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        load_workload(str(tmp_path))


def test_reference_errors(tmp_path):
    d = _broken(tmp_path, lambda d: None)
    with open(os.path.join(d, "reference.py"), "w") as f:
        f.write("def ref(sizes):\n    pass\n")
    wl = load_workload(d)
    with pytest.raises(SpecError, match="defines no function reference"):
        wl.reference()
