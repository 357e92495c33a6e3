"""``kltrans diff A B``: argparse registration and the command.

Only argparse is imported at module level (``kltrans --help`` imports this module); the
diff machinery is imported inside :func:`cmd_diff`.

Exit codes, as ``diff``: 0 equal, 1 different, 2 bad input (missing file, parse error,
unknown kernel) with a compiler-style diagnostic.
"""

from __future__ import annotations

import sys

EXIT_EQUAL, EXIT_DIFFERENT, EXIT_USAGE = 0, 1, 2


def register(sub) -> None:
    """Add the ``diff`` subcommand to ``sub`` (the subparsers of ``kltrans``)."""
    sp = sub.add_parser(
        "diff", help="structural diff of two kernels; explain it as a sequence of passes",
        description="Match the syntax trees of A and B (identical subtrees by content hash, "
                    "then containers by similarity) and print the edit script (update, "
                    "insert, delete, move) on the source lines. Comments and formatting are "
                    "not differences unless --strict. Kernels are paired by name, a renamed "
                    "one by similarity. With --explain, search for passes that turn A into "
                    "B. Exit 0 when equal, 1 when different, 2 on bad input.")
    sp.add_argument("a", metavar="A",
                    help=".cu, .cuh or .py file (-: standard input, read as CUDA)")
    sp.add_argument("b", metavar="B",
                    help=".cu, .cuh or .py file (-: standard input, read as CUDA)")
    sp.add_argument("--kernel", metavar="NAME", help="only this kernel (its name in A or B)")
    sp.add_argument("--format", choices=("text", "side-by-side", "json"), default="text",
                    help="output format (default text)")
    sp.add_argument("--stat", action="store_true", help="counts per kernel instead of hunks")
    sp.add_argument("--strict", action="store_true",
                    help="comments and formatting are differences too")
    sp.add_argument("--explain", action="store_true",
                    help="search for a sequence of registered passes that turns A into B")
    sp.add_argument("--depth", type=int, default=2, metavar="K",
                    help="--explain: at most K passes (default 2)")
    sp.add_argument("--assume", action="append", default=[], metavar="FACT",
                    help="--explain: a fact the code does not state, as for 'kltrans opt'")
    sp.add_argument("--arch", metavar="sm_XX", help="--explain: target architecture")
    sp.add_argument("--canonicalize", action="store_true",
                    help="--explain: bring both sides to canonical form first (kltrans opt -p "
                         "canonicalize, checked to keep the machine code); the explanation "
                         "then holds up to canonical form")
    sp.add_argument("--equal", choices=("tokens", "code", "model"), default="model",
                    help="--explain: how a result must equal B: token for token; or also "
                         "compiling to B's machine code with the same launches (code); or "
                         "also the same launches, kinds of mechanism and effects as the "
                         "kernel model runs them (model, the default); the output says which")
    sp.add_argument("--tokens", action="store_const", const="tokens", dest="equal",
                    help="--explain: the same as --equal tokens")
    sp.add_argument("--json", action="store_true", help="machine-readable output "
                    "(same as --format json)")
    sp.set_defaults(func=cmd_diff)


def _error(msg: str, hint: str | None = None) -> int:
    print(f"kltrans diff: error: {msg}", file=sys.stderr)
    if hint:
        print(f"hint: {hint}", file=sys.stderr)
    return EXIT_USAGE


def cmd_diff(args) -> int:
    import json
    import os

    from kltrans.diff.core import diff_files
    from kltrans.syntax import InputError
    from kltrans.syntax.unit import stdin_path

    as_json = args.json or args.format == "json"
    if args.depth < 0:
        return _error(f"--depth must be 0 or more, not {args.depth}")
    if args.a == args.b == "-":
        return _error("only one side of a diff can be standard input (-)")
    args.a, args.b = stdin_path(args.a), stdin_path(args.b)
    for p in (args.a, args.b):
        if os.path.isdir(p):
            raise InputError.at(p, "is a directory", hint="name a .cu, .cuh or .py file",
                                code="is-dir")
    fd = diff_files(args.a, args.b, strict=args.strict, kernel=args.kernel)
    expl = None
    if args.explain and not fd.equal:
        expl = _explain(args, fd)
        if isinstance(expl, int):
            return expl
    if as_json:
        doc = fd.to_json()
        if args.explain:
            doc["explanation"] = expl.to_json() if expl is not None else None
        print(json.dumps(doc, indent=2))
        return EXIT_EQUAL if fd.equal else EXIT_DIFFERENT
    from kltrans.syntax.diagnostics import use_color

    color = use_color(sys.stdout)
    if args.stat:
        from kltrans.diff.render import render_stat

        lines = render_stat(fd)
        print("\n".join(lines))
    elif expl is None:
        _print_rich(_render(fd, args, color), color)
    if expl is not None:
        _print_explanation(expl, args, color)
    elif args.explain and not args.stat:
        print("explain: A and B are equal: the empty pipeline")
    return EXIT_EQUAL if fd.equal else EXIT_DIFFERENT


def _render(fd, args, color):
    import shutil

    from kltrans.diff.render import render_text

    width = shutil.get_terminal_size((160, 40)).columns if color else 160
    return render_text(fd, color, side_by_side=args.format == "side-by-side", width=width)


def _print_rich(lines, color: bool) -> None:
    if color:
        from rich.console import Console

        console = Console(highlight=False, soft_wrap=True)
        for t in lines:
            console.print(t)
    else:
        for t in lines:
            print(t.plain)


def _explain(args, fd):
    from kltrans.diff.search import explain
    from kltrans.passes.facts import AssumptionError

    changed = [d for d in fd.units if not d.equal]
    if len(changed) != 1:
        return _error(f"--explain needs one changed CUDA source; {len(changed)} of the "
                      f"{len(fd.units)} source(s) differ",
                      "diff the embedded sources one at a time")
    d = changed[0]
    try:
        return explain(d.a, d.b, depth=args.depth, assume=tuple(args.assume), arch=args.arch,
                       kernel=args.kernel, a_path=args.a, b_path=args.b,
                       canonical=args.canonicalize, code=args.equal != "tokens",
                       model=args.equal == "model")
    except AssumptionError as e:
        return _error(str(e))


def _print_explanation(e, args, color: bool) -> None:
    if e.canonical is not None:
        c = e.canonical
        print(f"canonical form: {c['a']} rewrite(s) on {e.a_path}, {c['b']} on {e.b_path}; "
              f"what follows holds up to canonical form")
        for n in c["notes"]:
            print(f"  note: {n}")
    if e.renamed:
        print(f"kernel renamed: {e.a_path}'s {e.renamed[0]} is {e.b_path}'s {e.renamed[1]}; "
              f"what follows holds with the kernel so named")
    if e.exact and e.steps:
        how = {"forward": "passes applied to A",
               "inverse": "the inverse of passes applied to B",
               "mixed": "passes applied to A, then inverses of passes applied to B"}
        print(f"explained: {len(e.steps)} pass(es) turn {e.a_path} into {e.b_path} "
              f"({how.get(e.direction, e.direction)}; {e.seconds:.2f} s, {e.tried} rewrite(s) "
              f"tried)")
        for i, s in enumerate(e.steps, 1):
            print(f"  {i}. {s.describe()}")
        if e.inverse_steps:
            print(f"  found as: {', '.join(s.describe() for s in e.inverse_steps)} applied to "
                  f"{e.b_path} gives {e.a_path}")
        print(f"pipeline: {e.pipeline}")
        print("reproduce: " + "\n           ".join(e.commands()))
        for alt in e.alternatives:
            print("also: " + ", ".join(s.describe() for s in alt))
        if e.equal == "tokens":
            print("residual: none")
        elif e.equal == "model":
            print(f"residual: none in the model: the result has {e.b_path}'s launches and "
                  f"kinds of mechanism and does the same ({e.note}); its text and machine "
                  f"code differ")
        else:
            print(f"residual: none in the program: the result compiles to {e.b_path}'s "
                  f"machine code and launches alike (its text differs: comments, unused "
                  f"macros or names the compiler drops)")
        return
    if e.exact:  # B gives A, but no inverse reproduces B
        gives = {"tokens": f"gives {e.a_path}",
                 "model": f"gives {e.a_path} as the kernel model reads it ({e.note})"}.get(
            e.equal, f"gives the program of {e.a_path} (same machine code)")
        print(f"explained backwards: {', '.join(s.describe() for s in e.inverse_steps)} "
              f"applied to {e.b_path} {gives}; no inverse pass reproduces "
              f"{e.b_path} from {e.a_path}")
        return
    print(f"not explained: no sequence of at most {args.depth} registered pass(es) turns "
          f"{e.a_path} into {e.b_path} ({e.seconds:.2f} s, {e.tried} rewrite(s) tried)")
    if e.steps:
        print("closest: " + ", ".join(s.describe() for s in e.steps))
        print(f"pipeline: {e.pipeline}")
        print("reproduce: " + "\n           ".join(e.commands()))
    print("residual hunks (no pass explains them):")
    from kltrans.diff.core import FileDiff

    fd = FileDiff(e.a_path if not e.steps else f"{e.a_path} after {e.pipeline}", e.b_path,
                  [e.residual])
    _print_rich(_render(fd, args, color)[1:], color)
