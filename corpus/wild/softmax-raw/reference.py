import numpy as np


def reference(sizes, x, rows, cols, **_):
    # float64 throughout: the max shift and the row sum carry no float32 rounding
    a = np.asarray(x, dtype=np.float64).reshape(rows, cols)
    shifted = np.exp(a - a.max(axis=1, keepdims=True))
    return {"y": shifted / shifted.sum(axis=1, keepdims=True)}
