import numpy as np


def reference(sizes, x, weight, bias, rows, cols, eps, **_):
    x = np.asarray(x, dtype=np.float64).reshape(rows, cols)
    mu = x.mean(axis=1)
    var = ((x - mu[:, None]) ** 2).mean(axis=1)
    rs = 1.0 / np.sqrt(var + np.float64(np.float32(eps)))
    y = (x - mu[:, None]) * rs[:, None] * np.asarray(weight, np.float64)[None, :] \
        + np.asarray(bias, np.float64)[None, :]
    return {"y": y, "mean": mu, "rstd": rs}
