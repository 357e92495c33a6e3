import numpy as np


def _as_f32(value):
    # every hyperparameter reaches the kernel as a float32 argument
    return np.float64(np.float32(value))


def reference(sizes, param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps,
              weight_decay, bias_correction1, bias_correction2, n):
    lr, b1, b2, eps, wd, bc1, bc2 = map(
        _as_f32, (lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2))
    g = np.asarray(grad, dtype=np.float64)
    m = b1 * np.asarray(exp_avg, dtype=np.float64) + (1.0 - b1) * g
    v = b2 * np.asarray(exp_avg_sq, dtype=np.float64) + (1.0 - b2) * g * g
    p = np.asarray(param, dtype=np.float64) * (1.0 - lr * wd)   # decoupled weight decay
    p = p - (lr / bc1) * m / (np.sqrt(v) / np.sqrt(bc2) + eps)
    return {"param": p, "exp_avg": m, "exp_avg_sq": v}
