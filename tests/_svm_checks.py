"""Checks and problems shared by the tests of the hinge loss's exact active-set solutions
(``tests/mvml/test_hinge_rebox.py``, ``tests/mvml/test_hinge_reseed.py``)."""

from __future__ import annotations

import numpy as np


def assert_kkt(X, y, C, v, a, weight=None, tol=1e-8):
    """The KKT conditions of the bias-free L1-loss SVM at box ``C`` (``C s_i``; rows of
    weight 0 have no loss term)."""
    box = C if weight is None else C * weight
    m = y * (X @ v)
    np.testing.assert_allclose(v, (a * y) @ X, rtol=1e-9, atol=1e-9)
    assert np.all(a >= -tol) and np.all(a <= box * (1 + tol))
    inside = (a > 1e-9 * np.max(box)) & (a < box * (1 - 1e-9))
    np.testing.assert_allclose(m[inside], 1.0, atol=1e-7)
    counts = np.ones(X.shape[0], dtype=bool) if weight is None else weight > 0
    assert np.all(m[(a <= 1e-12) & counts] >= 1 - 1e-7)  # (rows of weight 0: no term)


def one_vs_rest_problems(n, d, K, seed):
    """Rows ``X`` (n, d) and the +-1 one-vs-rest targets (n, K) of ``K`` noisy classes."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    labels = np.argmax(X[:, :K] + 0.5 * rng.randn(n, K), axis=1)
    return X, np.where(labels[:, None] == np.arange(K), 1.0, -1.0)
