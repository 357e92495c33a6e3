import numpy as np


def reference(sizes, x, n):
    return {"y": (3.0 * x.astype(np.float64)).astype(np.float32)}
