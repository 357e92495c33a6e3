import math

import numpy as np


def reference(sizes, x, n):
    x = x.astype(np.float64)
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return {"y": 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))}
