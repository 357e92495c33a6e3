"""Read a generality suite: lineage folders with ``history.yaml``, checked on load.

``history.yaml`` (schema 1) names the lineage, its family, the idioms it is written in,
the workload it is gated against (``workload: .``, or a sibling folder) and its versions
in historical order, each a variant of that workload's ``kernels:`` map with the one
step that separates it from the version before. The first version is the naive root,
the last the expert. ``workload`` defaults to the lineage's own folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

SCHEMA = 1

IDIOMS = ("blockSize-template", "shared-accessor", "extern-shared-cast", "cooperative-groups",
          "warp-reduce-helper", "lambda-helper", "tile-macro", "constexpr-tile",
          "typedef-element", "mapping-1d-split", "mapping-2d", "pointer-advance",
          "while-loop", "pragma-unbraced", "vector-cast", "packed-struct", "cache-hints",
          "grid-stride", "shuffle-warpsize", "one-pass-variance")

FAMILIES = ("reduction", "transpose", "sgemm", "softmax", "layernorm", "gemv", "elementwise",
            "histogram", "scan", "stencil")

HISTORY_SCHEMA = {
    "type": "object",
    "required": ["schema", "name", "family", "versions"],
    "additionalProperties": False,
    "properties": {
        "schema": {"const": SCHEMA},
        "name": {"type": "string", "pattern": r"^[a-z0-9][a-z0-9-]*$"},
        "family": {"enum": list(FAMILIES)},
        "description": {"type": "string"},
        "workload": {"type": "string", "minLength": 1},
        "idioms": {"type": "array", "items": {"enum": list(IDIOMS)}, "uniqueItems": True},
        "versions": {
            "type": "array", "minItems": 2,
            "items": {"type": "object", "required": ["variant", "step"],
                      "additionalProperties": False,
                      "properties": {"variant": {"type": "string", "minLength": 1},
                                     "step": {"type": "string", "minLength": 1}}}},
    },
}


class SuiteError(ValueError):
    """A suite that cannot be read: the file and what is wrong."""


@dataclass(frozen=True)
class Version:
    variant: str
    step: str
    path: str  # the kernel file
    kernel: str
    name_expression: str | None = None
    bench_size: dict | None = None


@dataclass(frozen=True)
class Lineage:
    name: str
    family: str
    folder: str
    workload: str  # the workload folder the versions are gated against
    versions: tuple
    idioms: tuple = ()
    description: str = ""
    divisible: dict = field(default_factory=dict)

    @property
    def naive(self) -> Version:
        return self.versions[0]

    @property
    def expert(self) -> Version:
        return self.versions[-1]

    def pairs(self) -> list[tuple[Version, Version]]:
        return list(zip(self.versions, self.versions[1:]))


def load_lineage(folder: str) -> Lineage:
    """The lineage in ``folder`` (its ``history.yaml``), every version resolved against its
    workload's ``kernels:`` map."""
    import yaml

    from kltrans.syntax import yamldoc
    from kltrans.syntax.diagnostics import InputError
    from kltrans.syntax.records import schema_problem
    from kltrans.syntax.unit import read_failure, read_source
    from kltrans.workload.spec import SpecError, load_workload

    path = os.path.join(folder, "history.yaml")
    try:
        doc = yamldoc.safe_load(read_source(path))
    except InputError as e:
        where, why = read_failure(e)
        raise SuiteError(f"{where}: {why}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise SuiteError(f"{path}{line}: error: not valid YAML: "
                         f"{getattr(e, 'problem', e)}") from None
    problem = schema_problem(HISTORY_SCHEMA, doc)
    if problem:
        raise SuiteError(f"{path}: error: {problem}")
    if doc["name"] != os.path.basename(os.path.normpath(folder)):
        raise SuiteError(f"{path}: error: name {doc['name']!r} is not the folder's name")
    wdir = os.path.normpath(os.path.join(folder, doc.get("workload", ".")))
    try:
        wl = load_workload(wdir)
    except SpecError as e:
        raise SuiteError(str(e)) from None
    versions = []
    seen = set()
    for i, v in enumerate(doc["versions"]):
        name = v["variant"]
        if name in seen:
            raise SuiteError(f"{path}: error: versions[{i}]: {name!r} listed twice")
        seen.add(name)
        k = wl.kernels.get(name)
        if k is None:
            raise SuiteError(f"{path}: error: versions[{i}]: no variant {name!r} in "
                             f"{os.path.join(wdir, 'workload.yaml')} (kernels: "
                             f"{', '.join(wl.kernels) or 'none'})")
        versions.append(Version(name, v["step"], os.path.join(wdir, k["file"]), k["kernel"],
                                k.get("name_expression"), k.get("bench_size")))
    return Lineage(doc["name"], doc["family"], folder, wdir, tuple(versions),
                   tuple(doc.get("idioms") or ()), doc.get("description", ""),
                   dict(wl.divisible or {}))


def lineage_folders(root: str) -> list[str]:
    """The lineage folders of a suite (sorted), or ``root`` itself when it is one."""
    if os.path.isfile(os.path.join(root, "history.yaml")):
        return [root]
    if not os.path.isdir(root):
        raise SuiteError(f"{root}: not a directory")
    out = sorted(os.path.join(root, n) for n in os.listdir(root)
                 if os.path.isfile(os.path.join(root, n, "history.yaml")))
    if not out:
        raise SuiteError(f"{root}: no lineage in it (a lineage is a folder with history.yaml)")
    return out


def load_suite(root: str, only=None) -> list[Lineage]:
    """Every lineage of the suite at ``root``; ``only``: these lineage names."""
    folders = lineage_folders(root)
    if only:
        names = {os.path.basename(f): f for f in folders}
        missing = [n for n in only if n not in names]
        if missing:
            raise SuiteError(f"{root}: no lineage {missing[0]!r} (lineages: "
                             f"{', '.join(sorted(names))})")
        folders = [names[n] for n in only]
    return [load_lineage(f) for f in folders]
