"""
Out of core with Dask
=====================

MVML in Nystrom mode accepts one Dask array per view: the single pass that builds the
sufficient statistics runs as a Dask reduction on the workers, only small matrices reach
the client, and ``predict`` returns a lazy Dask array. Here the views are generated block
by block (they never exist in memory as a whole) and the same model is fitted on NumPy
copies to show that the two agree. A real cluster is one line away:
``Client("tcp://scheduler:8786")`` instead of the local threads used here.
"""

import dask
import dask.array as da
import numpy as np

from mvkernels import MVMLRegressor


def block(seed, n):
    """One row block of the three views and the target, from its own seed."""
    rng = np.random.RandomState(seed)
    z = rng.uniform(-2, 2, size=(n, 2))
    views = [np.c_[z, np.sin(z)] @ W + 0.05 * rng.standard_normal((n, W.shape[1])) for W in WEIGHTS]
    return views + [np.sin(z[:, 0]) * np.cos(z[:, 1])]


WEIGHTS = [np.random.RandomState(k).standard_normal((4, d)) for k, d in enumerate((6, 4, 3))]
n_blocks, rows = 8, 2_000
delayed = [dask.delayed(block)(seed, rows) for seed in range(n_blocks)]
Xs = [
    da.concatenate([da.from_delayed(d[v], shape=(rows, W.shape[1]), dtype=float) for d in delayed])
    for v, W in enumerate(WEIGHTS)
]
y = da.concatenate([da.from_delayed(d[3], shape=(rows,), dtype=float) for d in delayed])
print("views:", [X.shape for X in Xs], "chunks per view:", Xs[0].numblocks[0])

with dask.config.set(scheduler="threads", num_workers=2):
    est = MVMLRegressor(n_landmarks=100, learn_weights=True, max_iter=5, random_state=0)
    est.fit(Xs, y)
    pred = est.predict(Xs)  # lazy: nothing computed yet
    print("prediction:", type(pred).__name__, pred.shape)
    r2 = 1 - float(((pred - y) ** 2).mean().compute()) / float(y.var().compute())
print(f"training R^2 on Dask views: {r2:.4f}")

# %%
# The same fit in memory
# ----------------------
# ``compute()`` brings the (small) example data into NumPy; the fitted models agree to
# rounding, because both paths accumulate the same sufficient statistics.
Xs_np = [X.compute() for X in Xs]
est_np = MVMLRegressor(n_landmarks=100, learn_weights=True, max_iter=5, random_state=0)
est_np.fit(Xs_np, y.compute())
diff = np.max(np.abs(est_np.predict(Xs_np) - pred.compute()))
print(f"largest difference between Dask and NumPy predictions: {diff:.2e}")
