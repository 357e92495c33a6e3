import numpy as np


def reference(sizes, x, n, **_):
    # int32 wrap-around: cumulative sum in int64, keep the low 32 bits, reinterpret
    s = np.cumsum(np.asarray(x, dtype=np.int64).reshape(-1)) & 0xFFFFFFFF
    return {"out": s.astype(np.uint32).view(np.int32)}
