"""The batched dense A-step (``LowRankMetrics.a_step``, eq. 16) against dense linear
algebra: the objective it returns is ``alpha g^T A+^{-1} g + eta ||A+||_F^2`` of the
metric it stores (its tests of the steps read ``g^T A+^{-1} g`` from numbers computed once
per metric), and :meth:`~mvkernels.mvml._lowrank.LowRankMetrics.solve` is a solve with
``A``."""

from __future__ import annotations

import numpy as np
import pytest

from mvkernels.mvml._lowrank import LowRankMetrics


def _dense(mets: LowRankMetrics, i: int) -> np.ndarray:
    W = mets.columns(i)
    return mets.s[i] * np.eye(mets.dim) + W @ W.T


@pytest.mark.parametrize("step_size", ["auto", 0.5])
def test_a_step_objective_equals_dense_formula(step_size):
    rng = np.random.default_rng(0)
    n, d, steps = 24, 6, 5
    alpha = 10.0 ** rng.uniform(-3, 1, n)
    eta = 10.0 ** rng.uniform(-3, 1, n)
    mets = LowRankMetrics.identity(n, d, steps)
    for _ in range(steps):  # r = 0, ..., steps - 1 columns before the step
        g = rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-2, 2, (n, 1))
        before = [_dense(mets, i) for i in range(n)]
        q, Wq, xg = mets.solve(slice(None), g)
        for i in range(n):
            np.testing.assert_allclose(before[i] @ q[i], g[i], rtol=1e-9, atol=1e-12)
        s_obj = mets.a_step(slice(None), g, q, Wq, xg, alpha, eta, step_size)
        for i in range(n):
            A = _dense(mets, i)
            want = alpha[i] * g[i] @ np.linalg.solve(A, g[i]) + eta[i] * np.sum(A * A)
            np.testing.assert_allclose(s_obj[i], want, rtol=1e-9)
        accepted = mets.sc[:, mets.r - 1] > 0  # a rejected step appends a zero column
        assert accepted.any()
