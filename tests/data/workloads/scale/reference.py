import numpy as np


def reference(sizes, x, a, b, n):
    return {"y": (np.float64(a) * x.astype(np.float64) + np.float64(b))}
