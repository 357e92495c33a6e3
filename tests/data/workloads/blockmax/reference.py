import numpy as np


def reference(sizes, x, n, **_):
    runs = -(-n // 64)
    pad = np.full(runs * 64, -np.inf, dtype=np.float64)
    pad[:n] = np.asarray(x, dtype=np.float64)[:n]
    return {"out": pad.reshape(runs, 64).max(axis=1)}
