import numpy as np


def reference(sizes, x, weight, rows, cols, eps):
    x = x.reshape(rows, cols).astype(np.float64)
    eps = np.float64(np.float32(eps))
    inv = 1.0 / np.sqrt(np.mean(x * x, axis=1) + eps)
    return {"y": x * inv[:, None] * weight.astype(np.float64)[None, :]}
