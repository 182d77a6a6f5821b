"""
Multi-view kernel PCA: forecasting and inferring a missing view
===============================================================

The multi-view restricted kernel machine (Achten et al., 2023) finds hidden units ``h``
shared by all views (eq. 5-6). Two uses:

* :class:`~mvkernels.RKMForecaster` models the pairs (window of past values, next value)
  as two views and forecasts recursively by inferring the missing "next value" view from
  the window (eq. 15/16);
* :meth:`~mvkernels.MultiViewKPCA.infer_views` does the same for any set of views: here
  a noisy second view is reconstructed from the first.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvkernels import MultiViewKPCA, RKMForecaster
from mvkernels.datasets import make_sum_of_sines

# %%
# Recursive forecast of the sum of sines
# --------------------------------------
# The paper's setting: windows of 41 values, linear kernels, 4 components, the last 100
# of 400 values forecast recursively (each prediction is fed back into the window).
series = make_sum_of_sines(400)
f = RKMForecaster(lag=41, n_components=4).fit(series[:300])
forecast = f.forecast(100)
print(f"forecast MSE over 100 steps: {np.mean((forecast - series[300:]) ** 2):.2e}")

fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(np.arange(400), series, color="0.6", label="series")
ax.plot(np.arange(300, 400), forecast, "--", label="recursive forecast")
ax.axvline(300, color="k", linewidth=0.8)
ax.legend(loc="lower left")
fig.tight_layout()

# %%
# Inferring a missing view
# ------------------------
# Two views of a 2-D latent variable: view 0 has 6 noisy linear measurements, view 1 has
# 3. With linear (identity) features the missing view is returned exactly in the model's
# space; its error is the noise the 2 components cannot explain.
rng = np.random.RandomState(0)
Z = rng.standard_normal((300, 2))
X0 = Z @ rng.standard_normal((2, 6)) + 0.05 * rng.standard_normal((300, 6))
X1 = Z @ rng.standard_normal((2, 3)) + 0.05 * rng.standard_normal((300, 3))
m = MultiViewKPCA(n_components=2).fit([X0[:200], X1[:200]])
(X1_hat,) = m.infer_views([X0[200:], None], missing=[1])
rel = np.linalg.norm(X1_hat - X1[200:]) / np.linalg.norm(X1[200:] - X1[:200].mean(0))
print(f"relative error of the inferred view 1 on 100 new points: {rel:.3f}")

fig, ax = plt.subplots(figsize=(4, 4))
ax.scatter(X1[200:, 0], X1_hat[:, 0], s=10)
lim = [X1[200:, 0].min(), X1[200:, 0].max()]
ax.plot(lim, lim, "k--", linewidth=0.8)
ax.set_xlabel("true view 1, first column")
ax.set_ylabel("inferred from view 0")
fig.tight_layout()
