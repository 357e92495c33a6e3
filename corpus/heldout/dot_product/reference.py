import numpy as np


def reference(sizes, x, y, n):
    return {"out": np.array([np.dot(x.astype(np.float64), y.astype(np.float64))])}
