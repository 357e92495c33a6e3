import numpy as np


def reference(sizes, A, x, rows, cols, **_):
    A = np.asarray(A, dtype=np.float64).reshape(rows, cols)
    return {"y": A @ np.asarray(x, dtype=np.float64)}
