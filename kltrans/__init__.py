"""kltrans: compiler-style source transformation for CUDA kernels.

The engine lives in subpackages layered as docs/architecture.md describes; this module
stays import-light so that ``kltrans --help`` is fast.
"""

__version__ = "0.1.0"
