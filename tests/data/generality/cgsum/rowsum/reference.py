import numpy as np


def reference(sizes, x, rows, cols):
    return {"y": x.astype(np.float64).sum(axis=1)}
