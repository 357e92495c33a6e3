"""Analyses: facts about CUDA code that pass preconditions ask for.

Every analysis is a deterministic function over a :class:`~kltrans.syntax.unit.Unit`
that never raises on odd code: what it cannot decide comes back as ``None`` or as a
:class:`Verdict` with status ``"unknown"`` and a reason.

- :mod:`~kltrans.analysis.affine` — index expressions as integer polynomials
  (:func:`affine_of`), strides and coalescing (:func:`index_stride`, :func:`unit_stride`,
  :func:`is_coalesced`);
- :mod:`~kltrans.analysis.loops` — induction variables, bounds, steps, trip counts;
- :mod:`~kltrans.analysis.barriers` — barriers, what lies between two statements,
  barriers under divergent conditions;
- :mod:`~kltrans.analysis.pointers` — which pointer parameters are written, aliasing;
- :mod:`~kltrans.analysis.smem` — static shared-memory footprint, sizes of types;
- :mod:`~kltrans.analysis.warps` — warp-uniform conditions, warp primitives.

Layering: this package imports :mod:`kltrans.syntax` and the standard library only.
"""

from kltrans.analysis.affine import (
    Affine,
    affine_explain,
    affine_of,
    index_stride,
    is_coalesced,
    sources,
    unit_stride,
)
from kltrans.analysis.barriers import (
    Barrier,
    barrier_calls,
    barrier_free_between,
    barriers,
    enclosing_conditions,
    statements_between,
    under_divergent_condition,
)
from kltrans.analysis.loops import Loop, assigned_in, loop_of, loops
from kltrans.analysis.pointers import PointerParam, may_alias, pointer_params
from kltrans.analysis.smem import SmemDecl, SmemFootprint, shared_footprint, type_size
from kltrans.analysis.verdict import Verdict
from kltrans.analysis.warps import WarpPrimitive, warp_primitives, warp_uniform

__all__ = [
    "Affine", "Barrier", "Loop", "PointerParam", "SmemDecl", "SmemFootprint", "Verdict",
    "WarpPrimitive", "affine_explain", "affine_of", "assigned_in", "barrier_calls",
    "barrier_free_between", "barriers", "enclosing_conditions", "index_stride", "is_coalesced",
    "loop_of", "loops", "may_alias", "pointer_params", "shared_footprint", "sources",
    "statements_between", "type_size", "under_divergent_condition", "unit_stride",
    "warp_primitives", "warp_uniform",
]
