import numpy as np

RUN = 256


def reference(sizes, x, n, **_):
    runs = -(-n // RUN)
    pad = np.full(runs * RUN, -np.inf, dtype=np.float64)
    pad[:n] = np.asarray(x, dtype=np.float64)[:n]
    return {"out": pad.reshape(runs, RUN).max(axis=1)}
