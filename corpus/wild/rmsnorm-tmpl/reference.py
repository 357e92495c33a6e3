import numpy as np

EPS = np.float32(1e-6)  # compiled into every version


def reference(sizes, x, w, rows, cols, **_):
    xs = np.asarray(x, dtype=np.float64).reshape(rows, cols)
    ms = np.mean(xs * xs, axis=1, keepdims=True)
    scale = 1.0 / np.sqrt(ms + np.float64(EPS))
    return {"y": xs * scale * np.asarray(w, dtype=np.float64)[None, :]}
