import numpy as np


def reference(sizes, x, n):
    return {"y": np.maximum(x, np.float32(0.0))}
