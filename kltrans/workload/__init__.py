"""Workload specs (see :mod:`kltrans.workload.spec`)."""

from kltrans.workload.spec import Argument, SpecError, Tolerance, Workload, load_workload

__all__ = ["Argument", "SpecError", "Tolerance", "Workload", "load_workload"]
