import numpy as np


def reference(sizes, x, rows, cols):
    return {"idx": np.argmax(x.reshape(rows, cols), axis=1).astype(np.int32)}
