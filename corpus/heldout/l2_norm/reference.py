import numpy as np


def reference(sizes, x, rows, cols):
    x = x.reshape(rows, cols).astype(np.float64)
    return {"y": np.sqrt(np.sum(x * x, axis=1))}
