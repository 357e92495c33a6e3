import numpy as np


def reference(sizes, p, m, g, lr, beta, n, **_):
    m2 = np.float64(beta) * m.astype(np.float64) + g.astype(np.float64)
    return {"m_out": m2, "p_out": p.astype(np.float64) - np.float64(lr) * m2}
