import numpy as np


def reference(sizes, logits, target, rows, classes):
    z = logits.reshape(rows, classes).astype(np.float64)
    m = z.max(axis=1)
    lse = m + np.log(np.sum(np.exp(z - m[:, None]), axis=1))
    picked = z[np.arange(rows), target.reshape(rows).astype(np.int64)]
    return {"loss": lse - picked}
