import numpy as np


def reference(sizes, x, rows, cols):
    return {"y": np.max(x.reshape(rows, cols), axis=1)}
