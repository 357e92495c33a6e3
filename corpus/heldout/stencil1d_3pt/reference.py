import numpy as np


def reference(sizes, x, a, b, c, n):
    a, b, c = (np.float64(np.float32(v)) for v in (a, b, c))
    xp = np.zeros(n + 2)
    xp[1:-1] = x.astype(np.float64)
    return {"y": a * xp[:-2] + b * xp[1:-1] + c * xp[2:]}
