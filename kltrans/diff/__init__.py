"""Structural diff of CUDA kernels, and explanation of a diff as a sequence of passes.

Library use::

    from kltrans.diff import diff_units, explain
    d = diff_units(unit_a, unit_b)            # -> Diff: edit script, kernel pairs, hunks
    e = explain(src_a, src_b, depth=2)        # -> Explanation: a pipeline that gives B

This package is imported by ``kltrans --help`` (the ``diff`` subcommand is registered from
:mod:`kltrans.diff.cli`), so nothing heavy is imported here: the names below load their
modules on first use.
"""

from __future__ import annotations

__all__ = ["Diff", "FileDiff", "Explanation", "diff_units", "diff_files", "explain",
           "signature"]

_WHERE = {"Diff": "core", "FileDiff": "core", "diff_units": "core", "diff_files": "core",
          "Explanation": "search", "explain": "search", "signature": "tree"}


def __getattr__(name):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'kltrans.diff' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"kltrans.diff.{mod}"), name)
