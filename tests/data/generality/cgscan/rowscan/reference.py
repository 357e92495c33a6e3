import numpy as np


def reference(sizes, x, rows, cols):
    return {"y": np.cumsum(x.astype(np.float64).reshape(rows, cols), axis=1)}
