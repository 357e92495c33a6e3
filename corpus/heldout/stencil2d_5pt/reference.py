import numpy as np


def reference(sizes, x, cc, cn, rows, cols):
    cc, cn = np.float64(np.float32(cc)), np.float64(np.float32(cn))
    xp = np.zeros((rows + 2, cols + 2))
    xp[1:-1, 1:-1] = x.reshape(rows, cols).astype(np.float64)
    nb = xp[:-2, 1:-1] + xp[2:, 1:-1] + xp[1:-1, :-2] + xp[1:-1, 2:]
    return {"y": cc * xp[1:-1, 1:-1] + cn * nb}
