import numpy as np


def reference(sizes, x, n, **_):
    return {"out": np.array([np.sum(np.asarray(x, dtype=np.float64))], dtype=np.float64)}
