"""The import graph against the layering of docs/architecture.md, as a ratchet.

Layers, top to bottom (a module imports its own layer and the ones below):

    cli, generality                 6
    optimize, lineage, diff         5
    skills                          4
    gate, passes (engine), passes/  3   (passes/ is the catalogue)
    match, analysis, model, workload 2
    syntax                          1
    paths, the kltrans package      0

and two rules of the catalogue's shape: no module imports another package's private
(``_name``) names, and no module of ``passes/`` imports another one. Every import counts,
at module level or inside a function. The violations that exist today are listed in
``tests/data/layering_debt.txt`` (the debt the mechanism-pass rebuild pays off): a new one
fails this test, and so does a listed one that is gone (the list is kept exact, so it
only shrinks)."""

from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEBT = os.path.join(ROOT, "tests", "data", "layering_debt.txt")
LAYERS = {
    "kltrans.cli": 6, "kltrans.__main__": 6, "kltrans.generality": 6,
    "kltrans.optimize": 5, "kltrans.lineage": 5, "kltrans.diff": 5,
    "kltrans.skills": 4,
    "kltrans.gate": 3, "kltrans.passes": 3, "passes": 3,
    "kltrans.match": 2, "kltrans.analysis": 2, "kltrans.model": 2, "kltrans.workload": 2,
    "kltrans.syntax": 1,
    "kltrans.paths": 0, "kltrans": 0,
}


def _module(path: str) -> str:
    rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
    return rel[:-len(".__init__")] if rel.endswith(".__init__") else rel


def _package(mod: str) -> str:
    """The layered package a module belongs to (the longest key of LAYERS it is in)."""
    best = ""
    for key in LAYERS:
        if (mod == key or mod.startswith(key + ".")) and len(key) > len(best):
            best = key
    return best


def _sources() -> list[tuple[str, str, bool]]:
    """(module, source text, whether it is a package's __init__) of kltrans/ and passes/."""
    out = []
    for top in ("kltrans", "passes"):
        for dp, dns, fs in os.walk(os.path.join(ROOT, top)):
            dns[:] = sorted(d for d in dns if d != "__pycache__")
            for f in sorted(fs):
                if f.endswith(".py"):
                    path = os.path.join(dp, f)
                    out.append((_module(path), open(path, encoding="utf-8").read(),
                                f == "__init__.py"))
    return out


def _imports(mod: str, text: str, is_init: bool):
    """(imported module, imported names) for every import of a module."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = mod.split(".")
                base = base[:len(base) - node.level + (1 if is_init else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target, tuple(a.name for a in node.names)


def violations(sources=None) -> list[str]:
    out = set()
    for mod, text, is_init in (sources if sources is not None else _sources()):
        pkg = _package(mod)
        for target, names in _imports(mod, text, is_init):
            tpkg = _package(target)
            if not tpkg or not pkg:
                continue  # the standard library or a third-party package
            if LAYERS[tpkg] > LAYERS[pkg]:
                out.add(f"layer: {mod} imports {target} (layer {LAYERS[tpkg]} above "
                        f"{LAYERS[pkg]})")
            if tpkg != pkg or tpkg == "passes":
                for n in names:
                    if n.startswith("_") and not n.startswith("__"):
                        out.add(f"private: {mod} imports {target}.{n}")
            if pkg == "passes" and tpkg == "passes" and target not in ("passes", mod):
                out.add(f"catalogue: {mod} imports {target}")
    return sorted(out)


def test_no_import_breaks_the_layering_beyond_the_recorded_debt():
    debt = [ln for ln in open(DEBT, encoding="utf-8").read().splitlines()
            if ln and not ln.startswith("#")]
    now = violations()
    new = sorted(set(now) - set(debt))
    paid = sorted(set(debt) - set(now))
    assert not new, "imports that break the layering (docs/architecture.md):\n" + "\n".join(new)
    assert not paid, ("gone from the code, still listed: remove them from "
                      "tests/data/layering_debt.txt\n" + "\n".join(paid))


def test_the_checker_sees_each_kind_of_violation():
    probes = [
        # ruleid: syntax is below gate
        ("kltrans.syntax.probe", "from kltrans.gate.run import gate\n", False),
        # ruleid: a private name of another package
        ("kltrans.lineage.probe", "def f():\n    from kltrans.analysis.affine import _norm\n",
         False),
        # ruleid: one catalogue module importing another
        ("passes.probe", "from passes.grid_stride import uncapped_grid\n", False),
        # ok: down the layers, public names, the engine from the catalogue
        ("kltrans.gate.probe_ok", "from kltrans.syntax import parse\nimport numpy\n", False),
        ("passes.probe_ok", "from kltrans.passes.manager import SkipSite\n", False),
        # ok: relative import inside one package, private name of its own package
        ("kltrans.analysis.probe_ok", "from .affine import _norm\n", False),
    ]
    assert violations(probes) == [
        "catalogue: passes.probe imports passes.grid_stride",
        "layer: kltrans.syntax.probe imports kltrans.gate.run (layer 3 above 1)",
        "private: kltrans.lineage.probe imports kltrans.analysis.affine._norm",
    ]
    assert _package("kltrans.gate.cpu.build") == "kltrans.gate"
    assert not [v for v in violations() if v.split()[1].startswith("kltrans.model")]


def test_the_architecture_doc_counts_the_debt_as_listed():
    import re

    debt = [ln for ln in open(DEBT, encoding="utf-8").read().splitlines()
            if ln and not ln.startswith("#")]
    text = " ".join(open(os.path.join(ROOT, "docs", "architecture.md"),
                         encoding="utf-8").read().split())
    m = re.search(r"\((\d+) upward imports?, (\d+) private names, (\d+) catalogue "
                  r"cross-imports\)", text)
    assert m, "docs/architecture.md no longer states the debt's counts"
    kinds = [ln.split(":", 1)[0] for ln in debt]
    assert [int(g) for g in m.groups()] == [kinds.count("layer"), kinds.count("private"),
                                            kinds.count("catalogue")]
