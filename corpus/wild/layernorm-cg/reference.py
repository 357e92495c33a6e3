import numpy as np

EPS = np.float32(1e-5)  # the kernels' constant


def reference(sizes, x, gamma, beta, rows, cols, **_):
    x = np.asarray(x, dtype=np.float64).reshape(rows, cols)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)  # biased
    rstd = 1.0 / np.sqrt(var + np.float64(EPS))
    g = np.asarray(gamma, dtype=np.float64)[None, :]
    b = np.asarray(beta, dtype=np.float64)[None, :]
    return {"y": (x - mean) * rstd * g + b}
