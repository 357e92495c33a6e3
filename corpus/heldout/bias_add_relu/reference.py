import numpy as np


def reference(sizes, x, bias, rows, cols):
    return {"y": np.maximum(x.astype(np.float64) + bias.astype(np.float64)[None, :], 0.0)}
