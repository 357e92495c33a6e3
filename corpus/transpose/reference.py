import numpy as np


def reference(sizes, x, rows, cols, **_):
    return {"y": np.ascontiguousarray(np.asarray(x).reshape(rows, cols).T)}
