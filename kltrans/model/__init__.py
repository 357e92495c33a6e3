"""The kernel model: what a CUDA unit does, independent of how it is spelled.

Passes and analyses ask the model for facts ("where are the warp shuffles, on which
group, with which offset") instead of matching text, so a pass written against one
spelling applies to every other. Results are computed once per unit (``Unit.memo``).

- :mod:`~kltrans.model.ops` — the operations of ``spellings.yaml`` (barriers, shuffles,
  votes, warp and block reductions, thread/lane/warp indices, asynchronous copies,
  atomics), each declared once with every spelling it has (intrinsics, legacy forms,
  cooperative-groups members and free functions under any namespace alias), and the
  cooperative groups they act on.

Layering: this package imports :mod:`kltrans.syntax`, PyYAML and the standard library.
"""

from kltrans.model.ops import Group, Op, OpDef, definitions, group_of, mechanisms, operations

__all__ = ["Group", "Op", "OpDef", "definitions", "group_of", "mechanisms", "operations"]
