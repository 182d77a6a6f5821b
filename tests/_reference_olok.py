"""Plain per-sample Algorithm 1 of the OLOK paper, the reference of the OLOK tests and of the
speed comparison in ``benchmarks/bench_olok.py`` (not part of the library)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from mvkernels.olok import OLOKRegressor
from mvkernels.olok._problem import LOSSES, make_operator_kernel


def olok_reference(
    est: OLOKRegressor, X: np.ndarray, Y: np.ndarray, snapshots: tuple[int, ...] = ()
) -> dict[str, Any]:
    """Algorithm 1, literally: explicit decay of every coefficient at every step, explicit
    zeroing for truncation, full-kernel prediction ``O(t d)`` per step.

    Uses the kernel, schedules and loss of the (unfitted) estimator ``est``, with the
    bandwidth set from ``X`` as :meth:`OLOKRegressor.fit` does.

    Returns
    -------
    dict with ``predictions`` (T, d) = ``f_{t-1}(x_t)``, ``alpha`` (T, d) = ``alpha_{i,T}``,
    ``snapshots`` {t: alpha (t, d)}, ``kernel`` (the fitted OperatorKernel).
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y.reshape(-1, 1) if Y.ndim == 1 else Y
    T, d = Y.shape
    est = copy.deepcopy(est)
    est._check_params()
    kernel = make_operator_kernel(est.kernel, est.kernel_params, est.output_kernel)
    kernel.fit(X, n_outputs=d, random_state=check_random_state(est.random_state))
    _, grad = LOSSES[est.loss]
    times = np.arange(1, T + 1)
    etas = est._schedule.etas(times)
    windows = est._schedule.windows(times)
    lam = float(est.alpha)
    alpha = np.zeros((T, d))
    P = np.zeros((T, d))
    snaps = {}
    for t in range(T):
        if t > 0:
            P[t] = kernel.apply(X[t : t + 1], X[:t], alpha[:t])[0]  # f_{t-1}(x_t)
        a_new = -etas[t] * grad(P[t], Y[t], float(est.epsilon))  # step 1
        alpha[:t] *= 1.0 - etas[t] * lam  # step 2
        alpha[t] = a_new
        if windows is not None:  # step 3
            alpha[: max(0, t + 1 - int(windows[t]))] = 0.0
        if t + 1 in snapshots:
            snaps[t + 1] = alpha[: t + 1].copy()
    return {"predictions": P, "alpha": alpha, "snapshots": snaps, "kernel": kernel}
