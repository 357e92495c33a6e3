import numpy as np


def reference(sizes, x, rows, cols):
    return {"y": np.sum(x.reshape(rows, cols).astype(np.float64), axis=0)}
