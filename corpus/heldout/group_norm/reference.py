import numpy as np


def reference(sizes, x, weight, bias, N, C, HW, G, eps):
    eps = np.float64(np.float32(eps))
    xg = x.reshape(N, G, (C // G) * HW).astype(np.float64)
    mean = xg.mean(axis=2, keepdims=True)
    var = ((xg - mean) ** 2).mean(axis=2, keepdims=True)
    xn = ((xg - mean) / np.sqrt(var + eps)).reshape(N, C, HW)
    return {"y": xn * weight.astype(np.float64)[None, :, None]
            + bias.astype(np.float64)[None, :, None]}
