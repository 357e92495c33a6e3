import numpy as np


def reference(sizes, x, rows, cols, **_):
    m = np.asarray(x, dtype=np.float64).reshape(rows, cols)
    e = np.exp(m - m.max(axis=1, keepdims=True))
    return {"y": e / e.sum(axis=1, keepdims=True)}
