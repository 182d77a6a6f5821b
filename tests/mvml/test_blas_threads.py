"""A fit does not depend on the number of BLAS threads (one rule for every estimator).

The same fits run under ``threadpool_limits(1)`` and ``threadpool_limits(2)`` in one
process must give the same decision values to rounding-free precision (1e-13 relative:
the heuristics that used to depend on the thread count, the single-precision products of
the bandwidth heuristic, now run on one thread whatever the caller's setting).
"""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from mvkernels import MVMLSVC, MVMLClassifier, MVMLClassifierCV, MVMLRegressor
from mvkernels.kernels import mean_pairwise_distance

RTOL = 1e-13


def _data(seed=0, n=300):
    """Wide views: the products of the bandwidth heuristic then span several BLAS blocks
    (at 9946e0c, 600 columns moved the bandwidth by 2e-10 between 1 and 2 threads)."""
    rng = np.random.default_rng(seed)
    views = [rng.normal(size=(n, 600)) + 2.0, rng.normal(size=(n, 25)) * 3.0]
    y = (views[0][:, 0] + views[1][:, 1] > 0).astype(int) + (views[0][:, 2] > 1)
    return views, y


def _needs_threaded_blas():
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    if not blas:
        pytest.skip("no BLAS library found by threadpoolctl")


def _close(a, b):
    scale = max(float(np.max(np.abs(a))), 1e-300)
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) / scale


@pytest.mark.parametrize(
    "make",
    [
        lambda: MVMLClassifier(random_state=0),
        lambda: MVMLClassifier(joint_view=True, random_state=0),
        lambda: MVMLSVC(random_state=0),
        lambda: MVMLRegressor(random_state=0),
        lambda: MVMLClassifierCV(alphas=[1e-3, 1e-1], cv=3, random_state=0),
    ],
)
def test_fit_does_not_depend_on_blas_threads(make):
    _needs_threaded_blas()
    Xs, y = _data()
    out = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            est = make().fit(Xs, y)
            f = est.decision_function(Xs) if hasattr(est, "decision_function") else None
            out.append(est.predict(Xs) if f is None else f)
    assert _close(out[0], out[1]) <= RTOL


def test_bandwidth_heuristic_is_thread_independent():
    _needs_threaded_blas()
    X = np.random.default_rng(1).normal(size=(300, 600)) * 5.0 + 2.0
    vals = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            vals.append(mean_pairwise_distance(X))
    assert vals[0] == vals[1]
