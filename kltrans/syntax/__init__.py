"""The syntax layer: CUDA translation units parsed with tree-sitter-cuda.

Public entry points:

- :func:`parse` / :func:`load` build :class:`Unit` objects (a ``.cu``/``.cuh`` file, or
  each CUDA string embedded in a Python file);
- :class:`Edit` and :func:`apply_edits` rewrite a unit losslessly;
- :mod:`kltrans.syntax.cuda` discovers kernels, device functions, shared memory,
  launches and pragmas;
- :mod:`kltrans.syntax.diagnostics` renders compiler-style messages.
"""

from kltrans.syntax.diagnostics import Diagnostic, InputError, Location
from kltrans.syntax.edits import Edit, EditError, apply_edits
from kltrans.syntax.unit import Unit, load, parse, read_source

__all__ = [
    "Diagnostic",
    "Edit",
    "EditError",
    "InputError",
    "Location",
    "Unit",
    "apply_edits",
    "load",
    "parse",
    "read_source",
]
