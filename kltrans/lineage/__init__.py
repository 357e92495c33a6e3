"""The backward walk: from an expert kernel, through gate-validated
simplifications, towards its naive root.

``walk`` takes one step at a time: every applicable (simplify pass, site) is a candidate,
each candidate is gated (compile, then correct at the test sizes and seeds; on a GPU also
timed against the current state), one accepted candidate is taken, its inverse is checked
to give the previous state back, and the lineage on disk (``lineage.json``, ``states/``,
``lineage.md``) is rewritten after every step so that an interrupted walk resumes.
"""

from kltrans.lineage.walk import WalkError, WalkOptions, walk  # noqa: F401
