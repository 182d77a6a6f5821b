"""
OLOK: streaming vector-valued regression with partial_fit
=========================================================

:class:`~mvkernels.OLOKRegressor` is online learning with operator-valued kernels
(Audiffren & Kadri, ESANN 2015, Algorithm 1): each new example adds one coefficient, the
old ones decay by ``1 - eta_t lambda``, and Theorem 1's truncation drops the oldest.
Here the data arrive in batches of 25 and every batch is first predicted, then learned
(test-then-train), which gives the learning curve without a separate test set. The batch
counterpart :class:`~mvkernels.VVRLSRegressor` fitted on everything is the reference.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvkernels import OLOKRegressor, VVRLSRegressor
from mvkernels.datasets import make_multitask_regression

X, Y = make_multitask_regression(
    n_samples=600, n_features=5, n_tasks=3, n_relevant=2, noise=0.1, random_state=0
)
Y = np.tanh(Y)  # a nonlinear target
X_stream, Y_stream = X[:500], Y[:500]
X_test, Y_test = X[500:], Y[500:]

ol = OLOKRegressor(
    kernel_params={"gamma": 0.1},
    output_kernel=0.1,
    eta0=0.3,
    learning_rate="invscaling",
    power_t=0.5,
    alpha=1e-3,
)
seen, mse = [], []
for start in range(0, len(X_stream), 25):
    Xb, Yb = X_stream[start : start + 25], Y_stream[start : start + 25]
    if start > 0:  # test on the batch before learning it
        seen.append(start)
        mse.append(np.mean((ol.predict(Xb) - Yb) ** 2))
    ol.partial_fit(Xb, Yb)

vv = VVRLSRegressor(kernel_params={"gamma": 0.1}, output_kernel=0.1, alpha=1e-2)
vv.fit(X_stream, Y_stream)
mse_ol = np.mean((ol.predict(X_test) - Y_test) ** 2)
mse_vv = np.mean((vv.predict(X_test) - Y_test) ** 2)
print(f"held-out MSE after the stream: OLOK {mse_ol:.4f}, vv-RLS (batch) {mse_vv:.4f}")
print(f"variance of the held-out targets: {Y_test.var():.4f}")

# %%
# Learning curve
# --------------
fig, ax = plt.subplots(figsize=(5, 3.5))
ax.plot(seen, mse, marker="o", label="OLOK, next batch (test-then-train)")
ax.axhline(mse_vv, color="k", linestyle="--", label="vv-RLS on all 500, held-out")
ax.set_xlabel("examples seen")
ax.set_ylabel("mean squared error")
ax.legend()
fig.tight_layout()
