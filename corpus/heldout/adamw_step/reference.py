import numpy as np


def _f32(v):
    # the kernel receives the scalars as float32
    return np.float64(np.float32(v))


def reference(sizes, param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps,
              weight_decay, step, n):
    lr, beta1, beta2, eps, wd = (_f32(v) for v in (lr, beta1, beta2, eps, weight_decay))
    p = param.astype(np.float64)
    g = grad.astype(np.float64)
    m = beta1 * exp_avg.astype(np.float64) + (1.0 - beta1) * g
    v = beta2 * exp_avg_sq.astype(np.float64) + (1.0 - beta2) * g * g
    p = p * (1.0 - lr * wd)
    bc1 = 1.0 - beta1 ** int(step)
    bc2 = 1.0 - beta2 ** int(step)
    denom = np.sqrt(v) / np.sqrt(bc2) + eps
    p = p - (lr / bc1) * m / denom
    return {"param": p, "exp_avg": m, "exp_avg_sq": v}
