import numpy as np

# sqrt(2 / pi) and the cubic coefficient of the tanh form of GELU
_C0 = np.sqrt(2.0 / np.pi)
_C1 = 0.044715


def reference(sizes, x, n):
    v = np.asarray(x, dtype=np.float64)
    inner = _C0 * (v + _C1 * v * v * v)
    return {"y": 0.5 * v * (1.0 + np.tanh(inner))}
