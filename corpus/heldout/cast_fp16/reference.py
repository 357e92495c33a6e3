import numpy as np


def reference(sizes, x, scale, n):
    # float32 product (as the kernel computes it), then round to nearest even float16
    return {"y": (x.astype(np.float32) * np.float32(scale)).astype(np.float16)}
