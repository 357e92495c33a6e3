import numpy as np


def reference(sizes, x, **_):
    """The exact sum of x, accumulated in float64, as a one-element array."""
    total = np.asarray(x, dtype=np.float64).sum()
    return {"out": np.array([total], dtype=np.float64)}
