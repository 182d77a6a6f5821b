"""Ridge of the multi-view RKM's missing-view inference (eq. 15/16), chosen on training rows."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits

from mvkernels import MultiViewKPCA
from mvkernels.rkm._inference import RELATIVE_GRID


@pytest.fixture(scope="module")
def digits_halves():
    X = load_digits().data
    p = np.random.RandomState(0).permutation(len(X))
    tr, te = X[p[:1200]], X[p[1200:]]
    return tr[:, :32], tr[:, 32:], te[:, :32], te[:, 32:]


def test_digits_top_to_bottom_never_worse_than_mean_and_monotone(digits_halves):
    """Bottom half of digits from the top half, linear views: plain eq. (15) degrades with
    s (MSE far above the training mean's at s = 20); the chosen ridge never does worse than
    the training mean, without a warning, and more components do not make it worse."""
    top, bot, top_te, bot_te = digits_halves
    mean_mse = np.mean((bot_te - bot.mean(axis=0)) ** 2)
    mse = {}
    for s in (2, 4, 8, 16, 20, 32):
        m = MultiViewKPCA(n_components=s).fit([top, bot])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            (pred,) = m.infer_views([top_te, None], missing=[1])
        mse[s] = float(np.mean((pred - bot_te) ** 2))
        assert mse[s] < mean_mse
    values = list(mse.values())
    for a, b in zip(values, values[1:]):
        assert b <= a * 1.02
    assert mse[32] < 0.75 * mean_mse
    # the paper's plain inference at s = 20 (ridge 0) is far worse than the mean
    plain = MultiViewKPCA(n_components=20, inference_ridge=0).fit([top, bot])
    (pred0,) = plain.infer_views([top_te, None], missing=[1])
    assert np.mean((pred0 - bot_te) ** 2) > 5 * mean_mse


def test_auto_ridge_equals_brute_force_choice(rng):
    """The closed-form grid search equals refitting nothing but solving, for every grid
    value, the ridged eq. (15) on the training rows and keeping the smallest error."""
    n = 300
    Z = rng.standard_normal((n, 6)) @ rng.standard_normal((6, 9))
    Xs = [Z[:, :5] + 0.3 * rng.standard_normal((n, 5)), Z[:, 5:]]
    m = MultiViewKPCA(n_components=4).fit(Xs)
    W0, W1 = m.W_
    mu0, mu1 = m.feature_means_
    A = W0.T @ W0
    top = np.linalg.eigvalsh(A).max()
    errs = {}
    for a in [0.0, *(top * RELATIVE_GRID)]:
        h = np.linalg.solve(A + a * np.eye(4), W0.T @ (Xs[0] - mu0).T).T
        errs[a] = np.sum((h @ W1.T - (Xs[1] - mu1)) ** 2)
    errs[np.inf] = np.sum((Xs[1] - mu1) ** 2)
    best = min(errs, key=errs.get)
    assert best < np.inf
    Xt = rng.standard_normal((7, 5))
    h = np.linalg.solve(A + best * np.eye(4), W0.T @ (Xt - mu0).T).T
    (got,) = m.infer_views([Xt, None], missing=[1])
    np.testing.assert_allclose(got, h @ W1.T + mu1, rtol=1e-10, atol=1e-10)
    # primal and dual choose the same ridge and infer the same view
    d = MultiViewKPCA(n_components=4, solver="dual-eig").fit(Xs)
    np.testing.assert_allclose(d.infer_views([Xt, None], missing=[1])[0], got, atol=1e-8)


def test_uninformative_views_warn_and_return_training_mean(rng):
    """Observed and missing views uncorrelated on the training rows (exactly): no ridge
    beats the training mean, so infer_views says so and returns the mean."""
    n = 200
    X0 = rng.standard_normal((n, 4))
    X1 = rng.standard_normal((n, 3))
    X0c = X0 - X0.mean(axis=0)
    X1c = X1 - X1.mean(axis=0)
    X1 = X1c - X0c @ np.linalg.lstsq(X0c, X1c, rcond=None)[0] + 5.0  # X0c^T X1c = 0
    m = MultiViewKPCA(n_components=5).fit([X0, X1])
    Xt = rng.standard_normal((9, 4))
    with pytest.warns(UserWarning, match="training mean"):
        (got,) = m.infer_views([Xt, None], missing=[1])
    np.testing.assert_allclose(got, np.tile(X1.mean(axis=0), (9, 1)), atol=1e-12)
    # a fixed ridge is taken as given
    fixed = MultiViewKPCA(n_components=5, inference_ridge=10.0).fit([X0, X1])
    W0, W1 = fixed.W_
    h = np.linalg.solve(W0.T @ W0 + 10.0 * np.eye(5), W0.T @ (Xt - X0.mean(axis=0)).T).T
    np.testing.assert_allclose(
        fixed.infer_views([Xt, None], [1])[0], h @ W1.T + X1.mean(axis=0), atol=1e-10
    )
