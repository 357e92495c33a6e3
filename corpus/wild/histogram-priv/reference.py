import numpy as np


def reference(sizes, data, n, **_):
    # exact 256-bin count of the bytes
    hist = np.zeros(256, dtype=np.uint64)
    np.add.at(hist, np.asarray(data, dtype=np.uint8).ravel(), 1)
    return {"bins": hist.astype(np.uint32)}
