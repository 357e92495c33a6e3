"""The generality suite: how much of code written by others kltrans handles.

A suite (``corpus/wild/``) holds lineages, each a folder with a workload spec and the
versions of one kernel in historical order (``history.yaml``). ``kltrans generality``
measures, per lineage: how much of each adjacent step ``diff --explain`` explains
(:mod:`.measure`), whether the backward walk takes the expert to a naive kernel with no
mechanism left (the mechanisms read off the compiled PTX, :mod:`kltrans.gate.ptx`, not off the
source's spelling), and what the forward search makes of the naive version. The report
(:mod:`.report`) is a table, JSON and a one-page HTML with a chart per measure.

Layering: this package sits beside ``cli`` (it drives ``diff``, ``lineage`` and
``optimize``); nothing below imports it.
"""

from kltrans.generality.suite import Lineage, SuiteError, Version, load_suite

__all__ = ["Lineage", "SuiteError", "Version", "load_suite"]
