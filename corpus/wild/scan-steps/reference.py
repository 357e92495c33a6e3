import numpy as np


def reference(sizes, x, n, **_):
    # running sum in int64 (no overflow for n < 2^32), then reduce modulo 2^32 and
    # reinterpret the low 32 bits as int32: the same wrap-around as int32 addition
    total = np.cumsum(np.asarray(x, dtype=np.int64).reshape(-1))
    return {"out": (total & 0xFFFFFFFF).astype(np.uint32).view(np.int32)}
