"""The ``kltrans`` command.

Exit codes (CONVENTIONS.md rule 10): 0 success, 1 a check failed, 2 usage or input error.
User mistakes are reported as compiler-style diagnostics, never as a traceback. Heavy
modules (tree-sitter, libcst, cuda, openai) are imported inside the commands that need
them, so ``kltrans --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE = 0, 1, 2

SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", "node_modules", ".pytest_cache",
             ".hypothesis", "build", "dist", ".whl"}


class UsageError(Exception):
    """Bad command-line usage: printed as ``kltrans: error: ...`` with exit code 2."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.hint = hint


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
    from kltrans.syntax.unit import SUFFIXES

    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
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
                "sexp": u.sexp(),
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
    sp.add_argument("file", metavar="FILE", help=".cu, .cuh or .py file")
    sp.add_argument("--sexp", action="store_true", help="print the tree as one S-expression")
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    sp.set_defaults(func=cmd_parse)

    sk = sub.add_parser("kernels", help="list kernels, device functions, shared memory, "
                                        "launches and pragmas",
                        description="List the CUDA structure of each file (directories are "
                                    "searched for .cu, .cuh and .py files).")
    sk.add_argument("files", metavar="FILE", nargs="+", help="files or directories")
    sk.add_argument("--json", action="store_true", help="machine-readable output")
    sk.set_defaults(func=cmd_kernels)
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
    except UsageError as e:
        print(f"kltrans: error: {e}", file=sys.stderr)
        if e.hint:
            print(f"hint: {e.hint}", file=sys.stderr)
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
