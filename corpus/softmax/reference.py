import numpy as np


def reference(sizes, x, rows, cols, **_):
    x = np.asarray(x, dtype=np.float64).reshape(rows, cols)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"y": e / e.sum(axis=1, keepdims=True)}
