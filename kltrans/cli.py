"""The ``kltrans`` command.

Exit codes: 0 success, 1 a check failed, 2 usage or input error.
User mistakes are reported as compiler-style diagnostics, never as a traceback. Heavy
modules (tree-sitter, libcst, cuda, openai) are imported inside the commands that need
them, so ``kltrans --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

from kltrans.paths import MissingData, bundled, default_out, lineage_out
from kltrans.syntax.diagnostics import UsageError

EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE = 0, 1, 2

SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", "node_modules", ".pytest_cache",
             ".hypothesis", "build", "dist", ".whl", "kltrans-out"}



class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's default exits 2 already; keep its format
        self.print_usage(sys.stderr)
        hint = f"\nhint: run '{self.prog} --help' for the options"
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}{hint}\n")


def _version() -> str:
    from kltrans import __version__

    return __version__


# ------------------------------------------------------------------------ file sets
def expand_inputs(paths: list[str]) -> list[str]:
    """Files named on the command line; directories are searched for .cu/.cuh/.py."""
    from kltrans.syntax import InputError
    from kltrans.syntax.unit import SUFFIXES, stdin_path

    out: list[str] = []
    for p in paths:
        if p == "-":  # standard input, read as CUDA
            out.append(stdin_path(p))
        elif os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
                for f in sorted(files):
                    if f.endswith(SUFFIXES):
                        found.append(os.path.join(root, f))
            if not found:
                raise InputError.at(p, "no .cu, .cuh or .py files in this directory",
                                    code="empty-dir")
            out.extend(found)
        elif os.path.exists(p) and not p.endswith(SUFFIXES):
            raise InputError.at(p, "not a CUDA or Python source",
                                hint="kltrans reads .cu, .cuh and .py files", code="suffix")
        else:
            out.append(p)
    return out


def _load_all(paths: list[str], diags: list):
    """Yield (path, [units]) for each input; parse errors are collected into diags."""
    from kltrans.syntax import InputError, load
    from kltrans.syntax.unit import read_source, skipped_python_sites

    for path in expand_inputs(paths):
        try:
            units = load(path)
            if path.endswith(".py"):
                diags.extend(skipped_python_sites(path, read_source(path)))
        except InputError as e:
            diags.append(e.diagnostic)
            yield path, None
            continue
        for u in units:
            diags.extend(u.parse_diagnostics())
        yield path, units


# ------------------------------------------------------------------------- commands
def cmd_parse(args) -> int:
    from kltrans.syntax.diagnostics import emit

    from kltrans.syntax import InputError

    if os.path.isdir(args.file):
        raise InputError.at(args.file, "is a directory", hint="name a .cu, .cuh or .py file",
                            code="is-dir")
    diags: list = []
    reports = []
    for path, units in _load_all([args.file], diags):
        if units is None:
            continue
        if not units and path.endswith(".py"):
            from kltrans.syntax.diagnostics import Diagnostic, Location

            diags.append(Diagnostic("note", "no embedded CUDA sources found", Location(path),
                                    hint="kltrans looks for load_inline(cuda_sources=...), "
                                         "cupy RawKernel/RawModule and cuda.core Program"))
        for u in units:
            reports.append(u)
    if args.json:
        data = []
        for u in reports:
            data.append({
                "path": u.path,
                "bytes": len(u.source),
                "lines": u.source.count(b"\n") + (0 if u.source.endswith(b"\n") else 1),
                "normalizations": [
                    {"rule": n.rule, **_pos(u, n.start),
                     "original": n.original.decode("utf-8", "replace")}
                    for n in u.normalizations],
                "diagnostics": [d.to_json() for d in u.parse_diagnostics()],
                "tree": _json_tree(u),
            })
        print(json.dumps({"units": data, "diagnostics": [d.to_json() for d in diags]}, indent=2))
    else:
        for u in reports:
            if len(reports) > 1 or u.origin.embedded is not None:
                print(f"; unit {u.path}")
            for n in u.normalizations:
                p = _pos(u, n.start)
                orig = n.original.decode("utf-8", "replace").strip().replace("\n", " ")
                print(f"; normalized {n.rule} at {p['line']}:{p['column']}: {orig}")
            print(u.sexp() if args.sexp else _outline(u))
        emit(diags)
    return EXIT_USAGE if any(d.severity == "error" for d in diags) else EXIT_OK


def _pos(unit, offset: int) -> dict:
    loc = unit.location(offset)
    return {"line": loc.line, "column": loc.column}


def _json_tree(unit) -> dict:
    """The named nodes as nested objects: ``type``, ``field`` (the parent's field name, when
    one), ``start``/``end`` (1-based line and column of the original text), ``text`` for
    leaves and error nodes, ``missing`` for nodes the parser inserted, ``children``."""

    def visit(node, field):
        out = {"type": node.type}
        if field:
            out["field"] = field
        out["start"] = _pos(unit, node.start_byte)
        out["end"] = _pos(unit, node.end_byte)
        if node.is_missing:
            out["missing"] = True
        if node.child_count == 0 or node.is_error:
            out["text"] = unit.text(node)
        if not node.is_error:
            kids = [visit(c, node.field_name_for_child(i)) for i, c in enumerate(node.children)
                    if c.is_named or c.is_missing]
            if kids:
                out["children"] = kids
        return out

    return visit(unit.root, None)


def _outline(unit) -> str:
    """An indented tree of named nodes with field names, positions and leaf text."""
    lines = []

    def visit(node, depth, field):
        if not node.is_named and not node.is_missing:
            return
        sl, sc = node.start_point
        label = f"{field}: " if field else ""
        kind = f"MISSING {node.type}" if node.is_missing else node.type
        text = ""
        if node.child_count == 0 or node.is_error:
            t = unit.text(node).replace("\n", "\\n")
            text = f" {t[:60]!r}" if t else ""
        lines.append(f"{'  ' * depth}{label}{kind} [{sl + 1}:{sc + 1}]{text}")
        if node.is_error:
            return
        for i, c in enumerate(node.children):
            visit(c, depth + 1, node.field_name_for_child(i))

    visit(unit.root, 0, None)
    return "\n".join(lines)


def cmd_kernels(args) -> int:
    from kltrans.syntax.cuda import find_functions
    from kltrans.syntax.diagnostics import emit

    diags: list = []
    files = []
    for path, units in _load_all(args.files, diags):
        if units is None:
            continue
        for u in units:
            entry = {
                "path": u.path,
                "origin": u.origin.path,
                "kernels": [f.to_json() for f in find_functions(u) if f.is_kernel],
                "device_functions": [f.to_json() for f in find_functions(u)
                                     if f.is_device and not f.is_kernel],
                "shared": [s.to_json() for s in u.shared_decls()],
                "launches": [lch.to_json() for lch in u.launches()],
                "pragmas": [p.to_json(u) for p in u.pragmas],
                "errors": len(u.error_nodes()),
            }
            emb = u.origin.embedded
            if emb is not None:
                entry["embedded"] = {"kind": emb.kind, "line": emb.line, "column": emb.column,
                                     "name": emb.name}
            files.append((u, entry))
    if args.json:
        print(json.dumps({"units": [e for _, e in files],
                          "diagnostics": [d.to_json() for d in diags]}, indent=2))
    else:
        for u, e in files:
            print(_render_kernels(u, e))
        emit(diags)
    return EXIT_USAGE if any(d.severity == "error" for d in diags) else EXIT_OK


def _render_kernels(unit, entry) -> str:
    from kltrans.syntax.cuda import find_functions

    head = entry["path"]
    emb = entry.get("embedded")
    if emb:
        head += f"  ({emb['kind']} at line {emb['line']})"
    rows = []
    for f in find_functions(unit):
        if f.is_kernel or f.is_device:
            rows.append((f.line, f.column, "kernel" if f.is_kernel else "device", f.signature()))
    for s in unit.shared_decls():
        dims = "".join(f"[{d}]" for d in s.dims)
        where = f"  (in {s.function})" if s.function else ""
        rows.append((s.line, s.column, "shared",
                     f"{'extern ' if s.extern else ''}__shared__ {s.type} {s.name}{dims}{where}"))
    for lch in unit.launches():
        conf = ", ".join(x for x in (lch.grid, lch.block, lch.shared_bytes, lch.stream) if x)
        where = f"  (in {lch.function})" if lch.function else ""
        rows.append((lch.line, lch.column, "launch",
                     f"{lch.callee}<<<{conf}>>>({', '.join(lch.args)}){where}"))
    for p in unit.pragmas:
        if p.target is not None:
            tl, tc = unit.location(p.target.start_byte).line, unit.location(p.target.start_byte).column
            kind = p.target.type.replace("_statement", "").replace("_", " ")
            tgt = f"  -> {kind} at {tl}:{tc}"
        else:
            tgt = "  -> (nothing)"
        rows.append((p.line, p.column, "pragma", p.text + tgt))
    rows.sort(key=lambda r: (r[0], r[1]))
    if not rows:
        return f"{head}\n  (no kernels)"
    body = "\n".join(f"  {f'{ln}:{col}':<8} {kind:<7} {text}" for ln, col, kind, text in rows)
    return f"{head}\n{body}"


# ----------------------------------------------------------------------- passes
def _pipeline(text: str):
    from kltrans.passes.pipeline import PipelineError, parse_pipeline
    from kltrans.passes.registry import RegistryError

    try:
        return parse_pipeline(text)
    except PipelineError as e:
        raise UsageError(f"bad pipeline: {e.message}\n    {e.text}\n    {' ' * e.offset}^",
                         e.hint) from None
    except RegistryError as e:
        raise UsageError(str(e)) from None


def _context(args):
    from kltrans.passes.facts import AssumptionError, Context

    try:
        return Context.from_strings(args.assume or (), args.arch, args.force, args.kernel)
    except AssumptionError as e:
        raise UsageError(str(e)) from None


def cmd_opt(args) -> int:
    import difflib

    from kltrans.passes.manager import run_pipeline
    from kltrans.syntax import InputError
    from kltrans.syntax.diagnostics import emit
    from kltrans.syntax.files import atomic_write, output_problem
    from kltrans.syntax.unit import load, origin_text, read_source, stdin_path

    if args.in_place and args.output:
        raise UsageError("-i and -o exclude each other")
    if args.in_place and args.file == "-":
        raise UsageError("-i rewrites a file in place; standard input has none",
                         "write the result to standard output (the default) or -o FILE")
    if args.output == "-":
        args.output = None  # standard output, as without -o
    passes = _pipeline(args.passes)
    ctx = _context(args)
    path = stdin_path(args.file)
    if os.path.isdir(path):
        raise InputError.at(path, "is a directory", hint="name one .cu, .cuh or .py file")
    if args.site is not None and args.site < 1:
        raise UsageError(f"--site {args.site}: sites are numbered from 1")
    why = args.output and output_problem(args.output, [path])
    if why:
        raise UsageError(f"{args.output}: -o {why}" + (" (-i rewrites the input in place)"
                                                         if "overwrite" in why else ""))
    original_text = read_source(path)
    units = load(path)
    diags = [d for u in units for d in u.parse_diagnostics()]
    if not units:
        raise InputError.at(path, "no CUDA source to rewrite",
                            hint="kltrans looks for load_inline(cuda_sources=...), cupy "
                                 "RawKernel/RawModule and cuda.core Program in Python files")
    if args.kernel:
        from kltrans.syntax.cuda import find_functions

        names = sorted({f.name for u in units for f in find_functions(u)})
        if args.kernel not in names:
            raise UsageError(f"--kernel {args.kernel}: no such function in {path}",
                             f"functions: {', '.join(names) or 'none'}")
    pairs = []
    reports = []
    verify = not (args.dry_run or args.no_verify)
    for u in units:
        res = run_pipeline(u, passes, ctx, only_site=args.site, dry_run=args.dry_run,
                           keep_snapshots=args.print_between_passes or verify,
                           skip_unforceable=True)
        pairs.append((u, res.unit))
        reports.append((u, res))
        if args.print_between_passes:
            for spec, snap in res.snapshots:
                print(f"// *** {u.path} after {spec} ***", file=sys.stderr)
                print(snap.source.decode("utf-8"), file=sys.stderr)
    if args.site is not None and not any(rep.sites for _, res in reports for rep in res.reports):
        raise UsageError(f"--site {args.site}: no pass of the pipeline has a site "
                         f"{args.site}" + (f" in {args.kernel}" if args.kernel else ""),
                         "kltrans opt --dry-run lists the sites")
    new_text = origin_text(path, pairs).decode("utf-8") if not args.dry_run else original_text
    # like a compiler: a file with syntax errors gets its diagnostics and no output (the
    # passes skip what did not parse, but a rewrite of the rest is not what was asked for)
    broken = any(d.severity == "error" for d in diags) and not args.allow_errors
    if args.json:
        out = {"file": path, "pipeline": ",".join(p.spec() for p in passes),
               "dry_run": args.dry_run,
               "units": [{"path": u.path, "passes": [r.to_json() for r in res.reports]}
                         for u, res in reports],
               "changed": new_text != original_text,
               "diagnostics": [d.to_json() for d in diags]}
        if not args.dry_run and not (args.output or args.in_place) and not broken:
            out["output"] = new_text
        print(json.dumps(out, indent=2))
    else:
        kinds = frozenset(REMARK_KINDS) if args.verbose else args.remarks if \
            args.remarks is not None else frozenset({"missed"} if args.force else ())
        for u, res in reports:
            for rep in res.reports:
                name = rep.pass_spec.split("{")[0]
                for site in rep.sites:
                    if _shown(site, kinds, args):
                        print(site.remark(name), file=sys.stderr)
                if rep.sites and not rep.applied and not args.dry_run and \
                        "missed" not in kinds:
                    print(f"{u.path}: note: {rep.pass_spec}: rewrote none of its "
                          f"{len(rep.sites)} site(s); --remarks missed says why",
                          file=sys.stderr)
        emit(diags)
    if broken:
        print(f"kltrans: error: {path}: not rewritten: it has syntax errors (above)",
              file=sys.stderr)
        return EXIT_USAGE
    if verify:
        failed = _verify_output(reports, args.arch or "sm_90")
        if failed:
            print(failed, file=sys.stderr)
            print(f"kltrans: error: {path}: not rewritten: a pass made code that does not "
                  f"compile (--no-verify writes it anyway)", file=sys.stderr)
            return EXIT_CHECK_FAILED
    if args.dry_run:
        if not args.json:
            for u, res in reports:
                for rep in res.reports:
                    n = sum(s.status == "would-apply" for s in rep.sites)
                    print(f"{u.path}: {rep.pass_spec}: {n} of {len(rep.sites)} site(s) would be rewritten")
        return EXIT_OK
    if args.in_place:
        if new_text != original_text:
            atomic_write(path, new_text)
    elif args.output:
        atomic_write(args.output, new_text)
    elif args.diff:
        sys.stdout.writelines(difflib.unified_diff(
            original_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
            f"a/{path}", f"b/{path}"))
    elif not args.json:
        sys.stdout.write(new_text)
    return EXIT_OK


REMARK_KINDS = ("missed", "applied")


def _remark_kinds(text: str) -> frozenset:
    """``--remarks missed,applied`` (or ``all``, ``none``) as a set of kinds."""
    got: set = set()
    for word in filter(None, (w.strip() for w in text.split(","))):
        if word == "all":
            got.update(REMARK_KINDS)
        elif word in REMARK_KINDS:
            got.add(word)
        elif word != "none":
            raise argparse.ArgumentTypeError(
                f"{word!r} is no kind of remark: missed, applied, all or none")
    return frozenset(got)


def _shown(site, kinds: frozenset, args) -> bool:
    """Whether ``opt`` prints the site's remark: every site of a dry run; a rewritten site
    with a note always (what --force forced, a pragma the rewrite dropped, a
    canonicalization rule); else by ``kinds``."""
    if args.dry_run:
        return True
    if site.status == "applied":
        return "applied" in kinds or bool(site.reason)
    return "missed" in kinds


def _verify_output(reports, arch: str) -> str | None:
    """Like a compiler's -verify-each: every unit a pipeline changed is compiled with
    NVRTC (cached) after each pass that changed it. Returns the first failure as a
    diagnostic naming the pass, or None. A unit whose input does not compile is not
    verified (a note says so); new NVRTC warnings are reported, not refused."""
    from kltrans.gate.compile import CompileError, compile_unit

    def diags(r):
        return {(d.severity, d.message) for d in r.diagnostics}

    for u, res in reports:
        if not res.changed:
            continue
        try:
            before = compile_unit(u, arch=arch)
        except (CompileError, ValueError) as e:
            print(f"kltrans: note: {u.path}: output not verified: {e}", file=sys.stderr)
            return None
        if not before.ok:
            print(f"kltrans: note: {u.path}: the input does not compile with NVRTC, so the "
                  f"output is not verified", file=sys.stderr)
            continue
        prev, prev_diags = u, diags(before)
        for spec, snap in res.snapshots:
            if snap is prev:
                continue
            r = compile_unit(snap, arch=arch)
            if not r.ok:
                first = r.errors[0].render() if r.errors else r.log.strip()[-2000:]
                return (f"{u.path}: error: after pass {spec} the code no longer compiles "
                        f"with NVRTC ({arch}):\n{first}")
            for sev, msg in sorted(diags(r) - prev_diags):
                if sev == "warning":
                    print(f"{u.path}: warning: pass {spec} adds an NVRTC warning: {msg}",
                          file=sys.stderr)
            prev, prev_diags = snap, diags(r)
    return None


def cmd_passes(args) -> int:
    from kltrans.passes.registry import ENGINE, get_pass, names

    rows = []
    engine = [n for n in sorted(ENGINE) if args.kind in (None, get_pass(n).kind)]
    for n in names(args.kind if args.kind != "canonicalize" else None) + engine:
        if args.kind is not None and get_pass(n).kind != args.kind:
            continue
        cls = get_pass(n)
        rows.append({"name": n, "kind": cls.kind, "inverse": cls.inverse,
                     "summary": cls.summary(),
                     "options": [o.to_json() for o in cls.options()],
                     "preconditions": [p.to_json() for p in cls.preconditions],
                     "module": cls.__module__})
    if args.json:
        print(json.dumps({"passes": rows}, indent=2))
        return EXIT_OK
    for r in rows:
        opts = ", ".join(f"{o['name']}={str(o['default']).lower() if isinstance(o['default'], bool) else o['default']}"
                         for o in r["options"])
        inv = f"inverse {r['inverse']:<24}" if r["kind"] != "canonicalize" else f"{'(engine)':<32}"
        print(f"{r['name']:<24} {r['kind']:<9} {inv} {r['summary']}")
        if opts:
            print(f"{'':<24} options: {opts}")
    return EXIT_OK


def cmd_pass_info(args) -> int:
    import inspect

    from kltrans.passes.registry import UnknownPass, get_pass

    try:
        cls = get_pass(args.name)
    except UnknownPass as e:
        raise UsageError(str(e), "'kltrans passes' lists every pass") from None
    a = cls.anchor
    anchor = {k: v for k, v in (("pattern", a.pattern), ("kind", a.kind), ("query", a.query))
              if v}
    anchor["rule"] = a.describe()
    if args.json:
        print(json.dumps({"name": cls.name, "kind": cls.kind, "inverse": cls.inverse,
                          "doc": inspect.cleandoc(cls.__doc__), "anchor": anchor,
                          "scope": cls.scope,
                          "preconditions": [p.to_json() for p in cls.preconditions],
                          "options": [o.to_json() for o in cls.options()]}, indent=2))
        return EXIT_OK
    print(f"{cls.name} ({cls.kind}; inverse: {cls.inverse}; module {cls.__module__})\n")
    print(inspect.cleandoc(cls.__doc__))
    print("\nAnchor:")
    for k, v in anchor.items():
        print(f"  {k}: {v}")
    print(f"  scope: {cls.scope}")
    print("\nPreconditions:")
    for p in cls.preconditions:
        print(f"  {p.name:<20} [{p.category}] {p.doc}")
    print("\nOptions:")
    for o in cls.options() or []:
        print(f"  {o.name:<12} {o.domain.describe()} (default {o.default}): {o.doc}")
    if not cls.options():
        print("  (none)")
    return EXIT_OK


def cmd_new_pass(args) -> int:
    from kltrans.passes.scaffold import ScaffoldError, new_pass

    try:
        written = new_pass(args.name, args.inverse, args.root)
    except ScaffoldError as e:
        raise UsageError(str(e)) from None
    for w in written:
        print(f"wrote {os.path.relpath(w)}")
    print(f"next: edit the module, then run 'kltrans test-passes {args.name}'")
    return EXIT_OK


def cmd_test_passes(args) -> int:
    from kltrans.passes.fixtures import FixtureError, discover, roundtrip, run_case
    from kltrans.passes.registry import UnknownPass, get_pass

    for n in args.names:
        try:
            get_pass(n)
        except UnknownPass as e:
            raise UsageError(str(e), "'kltrans passes' lists every pass") from None
    try:
        cases = discover(args.names or None, args.root)
    except FixtureError as e:
        raise UsageError(str(e)) from None
    if not cases:
        raise UsageError("no fixtures found" + (f" for {', '.join(args.names)}" if args.names else ""))
    passed = failed = 0
    results = []
    for case in cases:
        out = run_case(case, update=args.update)
        msgs = list(out.messages)
        # the round trip is checked with -U too: a golden written for a pass whose inverse
        # does not give the input back is not a passing fixture
        if out.ok and not case.negative and case.roundtrip_mode != "none":
            ok, msg = roundtrip(case)
            if not ok:
                out.ok = False
                msgs.append("round trip: " + msg)
        rel = os.path.relpath(case.path)
        tag = ("UPDATED" if out.updated else "PASS") if out.ok else "FAIL"
        passed, failed = passed + out.ok, failed + (not out.ok)
        results.append({"path": rel, "pipeline": case.pipeline, "negative": case.negative,
                        "roundtrip": case.roundtrip_mode, "status": tag.lower(),
                        "messages": msgs if not out.ok else []})
        if args.json:
            continue
        print(f"{tag:<7} {rel}")
        for m in msgs if not out.ok else ():
            print("        " + m.replace("\n", "\n        "))
    if args.json:
        print(json.dumps({"cases": results, "passed": passed, "failed": failed}, indent=2))
    else:
        print(f"{passed} passed, {failed} failed")
    return EXIT_OK if failed == 0 else EXIT_CHECK_FAILED


# ------------------------------------------------------------------------- gate
def _load_wl(path):
    from kltrans.workload.spec import SpecError, load_workload

    try:
        return load_workload(path)
    except SpecError as e:
        raise UsageError(str(e)) from None


def _sizes_arg(wl, text):
    """--sizes 'n=1000;n=31' or 'rows=7,cols=33'."""
    if not text:
        return None
    out = []
    for part in text.split(";"):
        d = {}
        for kv in part.split(","):
            if "=" not in kv:
                raise UsageError(f"bad --sizes item {kv!r}", "write --sizes 'n=1000' or 'rows=7,cols=33;rows=1,cols=5'")
            k, v = kv.split("=", 1)
            k = k.strip()
            if k not in wl.sizes:
                raise UsageError(f"--sizes: {k!r} is not a size of {wl.name} ({', '.join(wl.sizes)})")
            try:
                d[k] = int(v)
            except ValueError:
                raise UsageError(f"--sizes: {v!r} is not an integer") from None
            if d[k] < 0:
                raise UsageError(f"--sizes: {k}={d[k]}: a size is 0 or more")
        if set(d) != set(wl.sizes):
            raise UsageError(f"--sizes: give every size of {wl.name}: {', '.join(wl.sizes)}")
        out.append(d)
    return out


def cmd_gate(args) -> int:
    from kltrans.gate.run import STAGES, GateUsageError, gate
    from kltrans.syntax import InputError
    from kltrans.syntax.unit import read_source

    wl = _load_wl(args.workload)
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    bad = [s for s in stages if s not in STAGES]
    if bad:
        raise UsageError(f"unknown stage {bad[0]!r}", f"stages are {', '.join(STAGES)}")
    if not stages:
        raise UsageError("--stages names no stage", f"stages are {', '.join(STAGES)}")
    if not args.timeout > 0:
        raise UsageError(f"--timeout must be more than 0 seconds (got {args.timeout:g})")
    read_source(args.kernel_file)  # clear errors for missing / non-UTF-8 files
    if not args.kernel_file.endswith((".cu", ".cuh")):
        raise InputError.at(args.kernel_file, "the gate takes a .cu or .cuh kernel file")
    if args.arch:
        from kltrans.gate.compile import UnsupportedArchError, check_arch

        try:
            check_arch(args.arch)
        except (UnsupportedArchError, ValueError) as e:
            raise UsageError(str(e)) from None
    try:
        rep = gate(args.kernel_file, wl.path, args.kernel, args.backend, stages, args.arch,
                   _sizes_arg(wl, args.sizes), None, args.timeout)
    except GateUsageError as e:
        raise UsageError(str(e)) from None
    ref = next((s for s in rep.stages if s.data.get("kind") == "reference"), None)
    if ref is not None:  # the workload's reference raised: an input error, not a verdict
        raise UsageError(ref.reason.split(": ", 1)[1] if ref.reason.startswith("error: ")
                         else ref.reason, "fix the workload's reference; the kernel was not judged")
    if args.json:
        print(json.dumps(rep.to_json(), indent=2))
    else:
        print(f"{rep.kernel_file} ({rep.kernel}) on {rep.workload}, backend {rep.backend}, {rep.arch}")
        for s in rep.stages:
            extra = ""
            if s.stage == "compile" and s.data.get("resources"):
                r = s.data["resources"]
                extra = (f"  registers {r['registers']}, spills {r['spill_stores']}/{r['spill_loads']}, "
                         f"smem {r['smem_static']} B, stack {r['stack']} B"
                         f"{' (cached)' if s.data.get('cached') else ''}")
            if s.stage == "profile" and s.data.get("profile"):
                p = s.data["profile"]
                parts = [f"{p['ms']:.4f} ms (spread {100 * p['spread']:.1f}%)"]
                if p.get("gbps"):
                    parts.append(f"{p['gbps']:.0f} GB/s")
                if p.get("tflops"):
                    parts.append(f"{p['tflops']:.2f} TFLOP/s")
                if p.get("roofline"):
                    parts.append(f"{100 * p['roofline']:.0f}% of copy bandwidth")
                extra = "  " + ", ".join(parts)
            print(f"  {s.stage:<8} {s.status.upper():<8} {s.seconds:7.2f} s  {s.reason}{extra}")
            for w in s.data.get("warnings") or []:
                print(f"{rep.kernel_file}: warning: NVRTC: {w}")
    return EXIT_OK if rep.ok else EXIT_CHECK_FAILED


def cmd_bench(args) -> int:
    from kltrans.gate.backends import gpu_available
    from kltrans.gate.run import GateUsageError, bench

    wl = _load_wl(args.workload)
    if not gpu_available():
        raise UsageError("kltrans bench needs a GPU (the profile stage runs on the cuda backend)")
    try:
        out = bench(args.a, args.b, wl.path, args.kernel_a, args.kernel_b, trials=args.trials)
    except GateUsageError as e:
        raise UsageError(str(e)) from None
    if args.json:
        print(json.dumps(out, indent=2))
        return EXIT_OK if out.get("ok") else EXIT_CHECK_FAILED
    if not out.get("ok"):
        print(f"kltrans: bench failed: {out.get('verdict')}: {out.get('reason')}", file=sys.stderr)
        return EXIT_CHECK_FAILED
    p = out["paired"]
    print(f"{wl.name} at {out['size']} on {out['device']} (copy bandwidth {p['copy_bandwidth_gbps']:.0f} GB/s)")
    for key, f in (("a", args.a), ("b", args.b)):
        t = p[key]
        gb = f", {t['gbps']:.0f} GB/s" if t.get("gbps") else ""
        tf = f", {t['tflops']:.2f} TFLOP/s" if t.get("tflops") else ""
        print(f"  {key.upper()} {f}: {t['ms']:.4f} ms{gb}{tf}, trials {', '.join(f'{x:.4f}' for x in t['trials'])}")
    print(f"  ratio A/B per trial: {', '.join(f'{r:.3f}' for r in p['ratios'])} (median {p['ratio_median']:.3f})")
    verdict = "B is faster in every trial" if p["b_faster"] else (
        "B is no slower (>= 0.99 in every trial)" if p["b_no_slower"] else "B is not faster")
    print(f"  {verdict}")
    return EXIT_OK


def cmd_bench_corpus(args) -> int:
    from kltrans.gate.backends import resolve_backend
    from kltrans.gate.corpus_bench import render, run, workload_dirs

    args.corpus = bundled("corpus", args.corpus, "DIR (the first argument)")
    if not os.path.isdir(args.corpus):
        raise UsageError(f"{args.corpus}: not a directory")
    dirs = workload_dirs(args.corpus, args.heldout)
    if not dirs:
        raise UsageError(f"{args.corpus}: no workload folders (with workload.yaml)")
    names = {os.path.basename(d) for d in dirs}
    unknown = [n for n in (args.only or ()) if n not in names]
    if unknown:
        raise UsageError(f"--only {unknown[0]}: no such workload in {args.corpus}",
                         hint=f"workloads: {', '.join(sorted(names))}")
    for d in dirs:  # every spec is read before any work: a bad one is an input error
        if not args.only or os.path.basename(d) in args.only:
            _load_wl(d)
    if args.out:
        from kltrans.syntax.files import output_problem

        if os.path.exists(args.out) and not os.path.isdir(args.out):
            raise UsageError(f"{args.out}: --out is a file; name a directory")
        why = output_problem(os.path.join(args.out, "x"), parents=True)
        if why:
            raise UsageError(f"{args.out}: --out: {why}")
    from kltrans.gate.executor import ExecutorError, make_executor

    be = resolve_backend(args.backend)
    if be == "cpu":
        print("kltrans: no GPU: checking correctness only (times need the cuda backend)",
              file=sys.stderr)
    try:
        ex = make_executor(args.cluster, be, args.jobs)
    except ExecutorError as e:
        raise UsageError(str(e)) from None
    with ex:
        print(f"kltrans: bench-corpus through the {ex.describe()}", file=sys.stderr)
        rows = run(args.corpus, args.out, args.heldout, be, args.only, executor=ex)
    print(render(rows))
    if args.json:
        print(json.dumps(rows, indent=2))
    ok = all(v.get("ok") for r in rows for v in r["variants"].values())
    return EXIT_OK if ok else EXIT_CHECK_FAILED


def cmd_lineage(args) -> int:
    from kltrans.lineage import WalkError, WalkOptions, walk

    if not os.path.isdir(args.workload):
        raise UsageError(f"{args.workload}: not a directory (a workload folder with workload.yaml)")
    if args.measure:
        from kltrans.lineage.measure import MeasureError, measure

        out = args.out or lineage_out(args.workload)
        if not os.path.isfile(os.path.join(out, "lineage.json")):
            raise UsageError(f"{out}: no lineage.json to measure (walk first, or name it with --out)")
        try:
            doc = measure(out, args.workload, args.cluster, args.jobs, redo=args.restart,
                          progress=not args.quiet)
        except MeasureError as e:
            raise UsageError(str(e)) from None
        ok = sum(1 for t in doc["transitions"] if (t.get("effect") or {}).get("ok"))
        print(f"{doc['config']['workload']}: {ok} of {len(doc['transitions'])} step(s) measured "
              f"on {doc.get('effects_measured_on') or doc.get('gpu') or 'no GPU'}"
              + ("; none had to be timed (--restart times them again)"
                 if doc.get("measured_now") == 0 else ""))
        return EXIT_OK
    if args.composite:
        from kltrans.lineage.measure import MeasureError, composites, roundtrip_holds

        out = args.out or lineage_out(args.workload)
        if not os.path.isfile(os.path.join(out, "lineage.json")):
            raise UsageError(f"{out}: no lineage.json (walk first, or name it with --out)")
        try:
            doc = composites(out, args.workload, args.cluster, args.jobs,
                             side_ms=args.side_ms, max_back=args.max_back,
                             steps=args.steps or None, redo=args.restart,
                             progress=not args.quiet)
        except MeasureError as e:
            raise UsageError(str(e)) from None
        for t in doc["transitions"]:
            c = (t.get("roundtrip") or {}).get("composite")
            if c is None:
                continue
            what = (f"no slower with step(s) {', '.join(map(str, c['steps'][1:]))}: "
                    f"median {c['slowdown_median']:.3f}" if c["no_slower"]
                    else f"slower with every composite up to {c['max_back']} step(s) back")
            print(f"  {t['step']:2d}. {t['spec']}: {what}")
        bad = sum(not roundtrip_holds(t.get("roundtrip")) for t in doc["transitions"])
        print(f"{doc['config']['workload']}: the round trip holds for "
              f"{len(doc['transitions']) - bad} of {len(doc['transitions'])} step(s)")
        return EXIT_OK
    if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"{args.out}: --out is a file; name a directory")
    if args.max_steps < 0 or (args.jobs is not None and args.jobs < 1):
        raise UsageError("--max-steps must be >= 0 and --jobs >= 1")
    if not args.side_ms > 0 or args.max_backtracks < 0 or args.probes < 0:
        raise UsageError("--side-ms must be > 0, --max-backtracks >= 0 and --probes >= 0")
    if args.redo_from is not None and (args.redo_from < 1 or args.restart):
        raise UsageError("--redo-from must be >= 1, and cannot go with --restart")
    opts = WalkOptions(args.workload, args.expert, args.backend, args.max_steps, args.out,
                       args.jobs, args.size_limit, args.arch, args.restart,
                       tuple(args.assume), args.probes, side_ms=args.side_ms,
                       max_backtracks=args.max_backtracks,
                       progress=not args.quiet, cluster=args.cluster,
                       redo_from=args.redo_from, canonicalize=args.canonicalize)
    try:
        doc = walk(opts)
    except WalkError as e:
        raise UsageError(str(e)) from None
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        t = doc["termination"]
        bt = len(doc.get("backtracks") or [])
        print(f"{doc['config']['workload']}: {len(doc['transitions'])} step(s), termination "
              f"{t['kind']} ({t['reason']})" + (f", after {bt} backtrack(s)" if bt else ""))
        for tr in doc["transitions"]:
            print(f"  {tr['step']:2d}. {tr['spec']} at line {tr['site']['line']} "
                  f"({tr['chosen_by']}, {len(tr['alternatives'])} alternative(s), "
                  f"{len(tr['rejected'])} rejected)")
    return EXIT_OK


def cmd_cache(args) -> int:
    from kltrans import cachedir

    root = cachedir.cache_root()
    if args.action == "clean":
        n, size = cachedir.clean(root, builds=args.all)
        print(f"removed {n} file(s), {size / (1 << 20):.1f} MiB, from {root}")
        return EXIT_OK
    use = cachedir.usage(root)
    total = sum(v["bytes"] for v in use.values())
    limit = cachedir.max_bytes()
    if args.json:
        print(json.dumps({"root": root, "areas": use, "bytes": total, "max_bytes": limit},
                         indent=2))
        return EXIT_OK
    print(f"{root}: {total / (1 << 20):.1f} MiB"
          + (f" (entries kept under {limit / (1 << 20):.0f} MiB: KLTRANS_CACHE_MAX_MB)"
             if limit else " (no size bound: KLTRANS_CACHE_MAX_MB=0)"))
    for area, v in use.items():
        print(f"  {area:<10} {v['files']:7d} file(s) {v['bytes'] / (1 << 20):9.1f} MiB")
    return EXIT_OK


def cmd_skills(args) -> int:
    from kltrans.skills import (CardError, extract, load_cards, render_card, render_index,
                                validate_card, write_cards)
    from kltrans.syntax.files import atomic_write

    out = args.out or default_out("skills")
    try:
        if args.action == "extract":
            dirs = args.lineages
            if not dirs:
                raise UsageError("skills extract needs lineage folders (e.g. corpus/*/lineage)")
            if os.path.exists(out) and not os.path.isdir(out):
                raise UsageError(f"{out}: -o is a file; name a directory for the cards")
            for d in dirs:
                if not os.path.isfile(os.path.join(d, "lineage.json")):
                    raise UsageError(f"{d}: no lineage.json (run 'kltrans lineage' first)")
            cards = extract(dirs)
            bad = {cid: validate_card(c) for cid, c in cards.items()}
            bad = {k: v for k, v in bad.items() if v}
            if bad:
                for cid, errs in bad.items():
                    for e in errs:
                        print(f"kltrans: error: card {cid}: {e}", file=sys.stderr)
                return EXIT_CHECK_FAILED
            written = write_cards(cards, out)
            print(f"{len(written)} card(s) from {len(dirs)} lineage(s) written to {out}")
            return EXIT_OK
        try:
            args.dir = bundled("skills", args.dir, "--dir")
        except MissingData as e:
            raise UsageError(str(e)) from None
        cards = load_cards(args.dir)
        if args.action == "list":
            rows = []
            for cid, (path, c) in sorted(cards.items()):
                prov = c.get("provenance")
                n = len(prov) if isinstance(prov, list) else None  # validate says what is wrong
                rows.append({"id": cid, "pass": c.get("pass"), "intent": c.get("intent", ""),
                             "evidence": n, "path": path})
            if args.json:
                print(json.dumps({"dir": args.dir, "cards": rows}, indent=2))
            for r in rows if not args.json else ():
                n = "?" if r["evidence"] is None else r["evidence"]
                print(f"{r['id']:<26} {n} evidence  {r['intent']}")
            return EXIT_OK
        if args.action == "show":
            if not args.lineages:
                raise UsageError("skills show needs a card id")
            cid = args.lineages[0]
            if cid not in cards:
                raise UsageError(f"no card {cid!r} in {args.dir}", f"cards: {', '.join(sorted(cards)) or 'none'}")
            if args.json:
                print(json.dumps({"id": cid, "path": cards[cid][0], "card": cards[cid][1]},
                                 indent=2, default=str))
            else:
                print(render_card(cards[cid][1]), end="")
            return EXIT_OK
        if args.action == "validate":
            n_bad = 0
            for cid, (path, c) in sorted(cards.items()):
                for e in validate_card(c):
                    n_bad += 1
                    print(f"{path}:1:1: error: {e}", file=sys.stderr)
            print(f"{len(cards)} card(s), {n_bad} problem(s)")
            return EXIT_OK if n_bad == 0 else EXIT_CHECK_FAILED
        if args.action == "render":  # every view made before any is written
            if os.path.exists(out) and not os.path.isdir(out):
                raise UsageError(f"{out}: -o is a file; name a directory for the views")
            views = {os.path.join(out, os.path.basename(path)[:-5] + ".md"): render_card(c)
                     for cid, (path, c) in cards.items()}
            views[os.path.join(out, "README.md")] = render_index(
                {k: c for k, (_, c) in cards.items()})
            os.makedirs(out, exist_ok=True)
            for path, text in views.items():
                atomic_write(path, text.encode())
            print(f"rendered {len(cards)} card(s) of {args.dir} in {out}")
            return EXIT_OK
    except CardError as e:
        raise UsageError(str(e)) from None
    raise UsageError(f"unknown action {args.action!r}")


# ---------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="kltrans",
        description="Compiler-style source transformation for CUDA kernels that learns "
                    "when an optimization is valid.",
        epilog="Exit codes: 0 ok, 1 a check failed, 2 usage or input error.",
    )
    p.add_argument("--version", action="version", version=f"kltrans {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    sp = sub.add_parser("parse", help="parse a CUDA (or Python) file and print its tree",
                        description="Parse FILE with tree-sitter-cuda (after kltrans's "
                                    "length-preserving normalization) and print the tree.")
    sp.add_argument("file", metavar="FILE", help=".cu, .cuh or .py file (-: standard input, "
                                                 "read as CUDA)")
    sp.add_argument("--sexp", action="store_true", help="print the tree as one S-expression")
    sp.add_argument("--json", action="store_true",
                    help="machine-readable output: per unit its normalizations, diagnostics "
                         "and the tree of named nodes (type, field, start, end, text, children)")
    sp.set_defaults(func=cmd_parse)

    sk = sub.add_parser("kernels", help="list kernels, device functions, shared memory, "
                                        "launches and pragmas",
                        description="List the CUDA structure of each file (directories are "
                                    "searched for .cu, .cuh and .py files).")
    sk.add_argument("files", metavar="FILE", nargs="+",
                    help="files or directories (-: standard input, read as CUDA)")
    sk.add_argument("--json", action="store_true", help="machine-readable output")
    sk.set_defaults(func=cmd_kernels)

    so = sub.add_parser("opt", help="run a pipeline of passes over a file",
                        description="Apply passes in order and print the result (or write it "
                                    "with -o / -i). Sites where a precondition does not hold "
                                    "are reported with the reason.")
    so.add_argument("file", metavar="FILE",
                    help=".cu, .cuh or .py file (-: standard input, read as CUDA; the result "
                         "goes to standard output, or -o)")
    so.add_argument("-p", "--passes", required=True, metavar="PIPELINE",
                    help="e.g. 'unroll{factor=4},restrict-pointers'")
    out = so.add_mutually_exclusive_group()
    out.add_argument("-o", "--output", metavar="OUT",
                     help="write the result here (atomically; -: standard output)")
    out.add_argument("-i", "--in-place", action="store_true", help="rewrite FILE in place")
    out.add_argument("--diff", action="store_true", help="print a unified diff instead")
    so.add_argument("--print-between-passes", action="store_true",
                    help="print the source after each pass (to stderr)")
    so.add_argument("--kernel", metavar="NAME", help="only sites in this kernel")
    so.add_argument("--site", type=int, metavar="N", help="only the N-th site of each pass (1-based)")
    so.add_argument("--assume", action="append", metavar="FACT",
                    help="a fact the code does not say: n%%4==0, aligned(x,16), no_alias(*)...")
    so.add_argument("--arch", metavar="sm_XX", help="target architecture for hardware preconditions")
    so.add_argument("--force", action="store_true",
                    help="rewrite even where a precondition fails or is unknown (reported)")
    so.add_argument("--dry-run", action="store_true",
                    help="list the sites each pass would touch and why others are skipped")
    so.add_argument("--allow-errors", action="store_true",
                    help="rewrite a file with syntax errors anyway: the declarations that did "
                         "not parse stay byte for byte as they are (by default nothing is "
                         "written for such a file)")
    so.add_argument("--no-verify", action="store_true",
                    help="do not compile the result with NVRTC after each pass that changed "
                         "it (by default code that no longer compiles is not written)")
    so.add_argument("--remarks", type=_remark_kinds, default=None, metavar="KINDS",
                    help="report sites as remarks, like clang's -Rpass: missed (skipped, with "
                         "the precondition and why), applied, all or none; comma-separated "
                         "(default none, but a rewritten site with a note; missed with "
                         "--force; --dry-run lists every site)")
    so.add_argument("-v", "--verbose", action="store_true", help="--remarks all")
    so.add_argument("--json", action="store_true", help="machine-readable report")
    so.set_defaults(func=cmd_opt)

    sp2 = sub.add_parser("passes", help="list the registered passes")
    sp2.add_argument("--kind", choices=("simplify", "optimize", "canonicalize"))
    sp2.add_argument("--json", action="store_true")
    sp2.set_defaults(func=cmd_passes)

    si = sub.add_parser("pass-info", help="show a pass: docstring, anchor, preconditions, options")
    si.add_argument("name", metavar="NAME")
    si.add_argument("--json", action="store_true")
    si.set_defaults(func=cmd_pass_info)

    sn = sub.add_parser("new-pass", help="write a pass-pair skeleton, register it, add fixtures")
    sn.add_argument("name", metavar="NAME", help="kebab-case name of the optimize pass")
    sn.add_argument("--inverse", metavar="NAME", help="name of the simplify pass (default: unNAME)")
    sn.add_argument("--root", metavar="DIR", help="the kltrans checkout (default: this one)")
    sn.set_defaults(func=cmd_new_pass)

    st = sub.add_parser("test-passes", help="run the pass fixtures (and round trips)")
    st.add_argument("names", metavar="NAME", nargs="*", help="only fixtures of these passes")
    st.add_argument("-U", "--update", action="store_true", help="rewrite the expected files")
    st.add_argument("--root", metavar="DIR", help="the kltrans checkout (default: this one)")
    st.add_argument("--json", action="store_true",
                    help="machine-readable output: each case with its status and messages")
    st.set_defaults(func=cmd_test_passes)

    sg = sub.add_parser("gate", help="compile, check and profile a kernel against a workload",
                        description="Run the gate's stages on KERNEL: compile (NVRTC), correct "
                                    "(every test size and seed, anti-cheat checks), profile "
                                    "(GPU only). Exit 0 when every requested stage passes.")
    sg.add_argument("kernel_file", metavar="KERNEL.cu")
    sg.add_argument("--workload", required=True, metavar="DIR", help="a workload folder (corpus/W)")
    sg.add_argument("--backend", default="auto", choices=("cuda", "cpu", "auto"))
    sg.add_argument("--stages", default="compile,correct,profile", help="comma-separated")
    sg.add_argument("--arch", metavar="sm_XX", help="compile target (default sm_90)")
    sg.add_argument("--sizes", metavar="SIZES", help="override test sizes: 'n=1000;n=31'")
    sg.add_argument("--kernel", metavar="NAME", help="the kernel, when the file has several")
    sg.add_argument("--timeout", type=float, default=300.0, help="seconds for the worker")
    sg.add_argument("--json", action="store_true")
    sg.set_defaults(func=cmd_gate)

    sb = sub.add_parser("bench", help="paired A/B timing of two kernels on the GPU")
    sb.add_argument("a", metavar="A.cu")
    sb.add_argument("b", metavar="B.cu")
    sb.add_argument("--workload", required=True, metavar="DIR")
    sb.add_argument("--kernel-a", metavar="NAME")
    sb.add_argument("--kernel-b", metavar="NAME")
    sb.add_argument("--trials", type=int, default=5)
    sb.add_argument("--json", action="store_true")
    sb.set_defaults(func=cmd_bench)

    sc = sub.add_parser("bench-corpus", help="naive, expert and vendor times for the corpus",
                        description="Gate every kernel variant of every workload (correct at "
                                    "every test size and seed) and time it at the bench size "
                                    "next to the vendor reference (GPU).")
    sc.add_argument("corpus", nargs="?", default=None, metavar="DIR",
                    help="the corpus (default: corpus/ here, else the one kltrans ships)")
    sc.add_argument("--heldout", action="store_true", help="include corpus/heldout/*")
    sc.add_argument("--only", nargs="*", metavar="NAME", help="only these workload folders")
    sc.add_argument("--backend", default="auto", choices=("cuda", "cpu", "auto"))
    sc.add_argument("--out", metavar="DIR", help="write bench_corpus.txt and .json here")
    sc.add_argument("--cluster", metavar="SPEC",
                    help="run on Dask: local:N (N workers here, one per GPU) or tcp://HOST:PORT")
    sc.add_argument("--jobs", type=int, metavar="N",
                    help="local pool slots (default: one per GPU; CPU backend: the cores)")
    sc.add_argument("--json", action="store_true")
    sc.set_defaults(func=cmd_bench_corpus)

    sl = sub.add_parser("lineage", help="walk an expert kernel back to its naive root",
                        description="From the workload's expert kernel, take gate-validated "
                                    "simplify steps until none applies; write --out "
                                    "(lineage.json, states/, lineage.md; by default "
                                    "kltrans-out/lineage/NAME, never the committed "
                                    "DIR/lineage unless named). An interrupted walk "
                                    "resumes from what it wrote.")
    sl.add_argument("workload", metavar="DIR", help="workload folder (workload.yaml)")
    sl.add_argument("--expert", metavar="FILE", help="start from FILE (default: the expert variant)")
    sl.add_argument("--backend", choices=("cuda", "cpu", "auto"), default="auto")
    sl.add_argument("--max-steps", type=int, default=100, metavar="N")
    sl.add_argument("--out", metavar="DIR",
                    help="where to write (default: kltrans-out/lineage/NAME; the committed "
                         "DIR/lineage only when named)")
    sl.add_argument("--jobs", type=int, metavar="N",
                    help="local pool: candidates gated at once (default: one per GPU; CPU "
                         "backend: the cores)")
    sl.add_argument("--cluster", metavar="SPEC",
                    help="gate on Dask: local:N (N workers here, one per GPU) or "
                         "tcp://HOST:PORT (an existing scheduler)")
    sl.add_argument("--size-limit", type=int, metavar="ELEMS",
                    help="gate only the test sizes with at most ELEMS elements")
    sl.add_argument("--arch", help="target architecture (default sm_90)")
    sl.add_argument("--assume", action="append", default=[], metavar="FACT",
                    help="a fact beyond the workload's own (no_alias(*), aligned(*,16))")
    sl.add_argument("--restart", action="store_true",
                    help="ignore a lineage already there (with --measure: time every step again)")
    sl.add_argument("--redo-from", type=int, metavar="N",
                    help="walk the lineage already there again from step N: steps N on are "
                         "dropped and taken again by this version's rules")
    sl.add_argument("--measure", action="store_true",
                    help="do not walk: time every recorded step of the lineage in --out "
                         "(default kltrans-out/lineage/NAME) on the GPU, paired, where it has no measured "
                         "effect (a lineage walked on the CPU)")
    sl.add_argument("--composite", action="store_true",
                    help="do not walk: time the composite round trip of each step of the "
                         "lineage in --out whose inverse alone is slower (the inverse with "
                         "those of the steps peeled before it, up to --max-back), on the GPU")
    sl.add_argument("--max-back", type=int, default=20, metavar="N",
                    help="--composite: at most N later-peeled steps with it (default 20; "
                         "the nearest 6 are timed first)")
    sl.add_argument("--steps", type=int, nargs="+", metavar="K",
                    help="--composite: these steps only, whatever their round trip says")
    sl.add_argument("--canonicalize", action="store_true",
                    help="walk from the expert's canonical form (kltrans opt -p canonicalize), "
                         "every state brought to it, round trips up to canonical form")
    sl.add_argument("--probes", type=int, default=6, metavar="N",
                    help="probes of what fails without each step's conditions (0: none)")
    sl.add_argument("--max-backtracks", type=int, default=8, metavar="N",
                    help="dead ends (stuck, all rejected) the walk may back out of, taking "
                         "the next alternative of the latest step that has one (default 8)")
    sl.add_argument("--side-ms", type=float, default=300.0, metavar="MS",
                    help="GPU: each side of a paired trial runs near MS milliseconds "
                         "(default 300)")
    sl.add_argument("--quiet", action="store_true", help="no progress lines")
    sl.add_argument("--json", action="store_true")
    sl.set_defaults(func=cmd_lineage)

    from kltrans.optimize.cli import register as _register_optimize

    _register_optimize(sub)

    sk2 = sub.add_parser("skills", help="skill cards: extract from lineages, list, show, validate, render",
                         description="extract LINEAGE_DIR... -o DIR | list | show ID | validate | render")
    sk2.add_argument("action", choices=("extract", "list", "show", "validate", "render"))
    sk2.add_argument("lineages", nargs="*", metavar="ARG",
                     help="lineage folders (extract) or a card id (show)")
    sk2.add_argument("-o", "--out", default=None,
                     help="where extract writes the cards and render the views (default "
                          "kltrans-out/skills; the committed skills/ only when named)")
    sk2.add_argument("--dir", default=None,
                     help="the card folder (default: skills/ here, else the one kltrans ships)")
    sk2.add_argument("--json", action="store_true",
                     help="list and show: machine-readable output (the cards' data)")
    sk2.set_defaults(func=cmd_skills)

    ca = sub.add_parser("cache", help="show or empty kltrans's on-disk cache",
                        description="info: where the cache is, what each part holds, its size "
                                    "bound; clean: delete the cached compiles and CPU modules "
                                    "(--all: everything). Every entry is a cache: deleting one "
                                    "costs a recompile, never a wrong answer.")
    ca.add_argument("action", choices=("info", "clean"))
    ca.add_argument("--all", action="store_true",
                    help="clean: also the CPU runtime builds and the measured device bandwidths")
    ca.add_argument("--json", action="store_true", help="info: machine-readable output")
    ca.set_defaults(func=cmd_cache)

    from kltrans.diff.cli import register as register_diff  # argparse only (no tree-sitter)

    register_diff(sub)
    from kltrans.generality.cli import register as register_generality  # argparse only

    register_generality(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    from kltrans.syntax.diagnostics import InputError, emit

    try:
        return args.func(args)
    except InputError as e:
        emit([e.diagnostic])
        return EXIT_USAGE
    except MissingData as e:
        print(f"kltrans: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except UsageError as e:
        msg = str(e)
        # a message that is a diagnostic already (file[:line:col]: error: ...) as it is
        located = re.match(r"[^\s:-][^:\n]*(:\d+:\d+)?: (error|warning): ", msg)
        print(msg if located else f"kltrans: error: {msg}", file=sys.stderr)
        if e.hint:
            print(f"hint: {e.hint}", file=sys.stderr)
        return EXIT_USAGE
    except (IsADirectoryError, NotADirectoryError, PermissionError, FileNotFoundError) as e:
        if e.filename is None:
            raise
        # a path the user named that cannot be read or written (an output under a file,
        # a directory where a file goes): what and where, not a traceback
        print(f"kltrans: error: {e.filename}: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("kltrans: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # output piped into `head` and closed early: not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
