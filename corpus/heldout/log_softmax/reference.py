import numpy as np


def reference(sizes, x, rows, cols):
    x = x.reshape(rows, cols).astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    return {"y": x - m - np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))}
