import numpy as np


def reference(sizes, x, rows, cols, c0, c1, **_):
    c0, c1 = float(np.float32(c0)), float(np.float32(c1))
    g = np.asarray(x, dtype=np.float64).reshape(rows, cols)
    p = np.pad(g, 1)
    return {"y": c0 * g + c1 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])}
