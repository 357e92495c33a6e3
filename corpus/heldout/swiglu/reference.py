import numpy as np


def reference(sizes, a, b, n):
    a = a.astype(np.float64)
    return {"out": a / (1.0 + np.exp(-a)) * b.astype(np.float64)}
