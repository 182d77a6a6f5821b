"""Weights in the cross-validated MVML search beyond complete in-memory views: missing
views (weighted completion statistics, fold statistics and scores), the joint-only
candidate (the weighted grid is the unweighted one) and Dask views (weighted moments in
one pass over the blocks)."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold

from mvkernels import MVMLClassifierCV, MVMLRegressorCV

KP = [{"gamma": 0.3}, {"gamma": 0.5}]
GRID = dict(alphas=[0.01, 0.1, 1.0], etas=[0.5], max_iter=3, random_state=0)
MISSING_ROWS = [0, 5, 9, 21]  # view 1 missing (row 0 has weight 0)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 30
    X1, X2 = rng.normal(size=(n, 3)), rng.normal(size=(n, 2))
    r = X1[:, 0] + np.sin(X2[:, 1])
    labels = np.where(r > 0.2, "a", np.where(r < -0.5, "b", "c"))
    w = rng.integers(0, 4, size=n)
    w[:2] = [0, 3]  # at least one removed and one tripled row
    test = [rng.normal(size=(10, 3)), rng.normal(size=(10, 2))]
    return [X1, X2], r, labels, w, test


def _missing(Xs):
    Xm = [X.copy() for X in Xs]
    Xm[1][MISSING_ROWS] = np.nan
    return Xm


def _fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y, **kw)


def _folds(n, w, n_splits=4):
    """Explicit folds of the rows given, the same folds without the rows of zero weight,
    and of the repeated rows (every copy in its row's fold)."""
    splits = list(KFold(n_splits, shuffle=True, random_state=0).split(np.zeros((n, 1))))
    kept = np.flatnonzero(w > 0)
    new = np.full(n, -1)
    new[kept] = np.arange(kept.size)
    removed = [(new[tr][new[tr] >= 0], new[te][new[te] >= 0]) for tr, te in splits]
    rep = np.repeat(np.arange(n), w)
    repeated = [
        (np.flatnonzero(np.isin(rep, tr)), np.flatnonzero(np.isin(rep, te))) for tr, te in splits
    ]
    return splits, removed, repeated


def _split_scores(cv_est):
    k = cv_est.n_splits_
    return np.array([cv_est.cv_results_[f"split{i}_test_score"] for i in range(k)])


def _out(est, X):
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)


# ------------------------------------------------------------------ missing views
@pytest.mark.parametrize("cls", [MVMLRegressorCV, MVMLClassifierCV])
@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(fit_intercept=True),
        dict(landmarks=np.array([1, 3, 4, 6, 8, 12, 14, 17, 20])),
        dict(n_landmarks=None, alphas=[0.1, 1.0], max_iter=2),
    ],
    ids=["nystrom", "intercept", "index-landmarks", "full"],
)
def test_cv_missing_views_zero_weight_is_a_removed_row(data, cls, kw):
    """Missing views: a zero weight equals the row removed, in every fold's score (the
    screen, the weighted completion statistics), the choice, and the refit with its
    reduced models (predictions of test rows with a missing view included)."""
    Xs, r, labels, w, test = data
    Xm = _missing(Xs)
    y = labels if cls is MVMLClassifierCV else r
    keep = w > 0
    splits, removed, _ = _folds(len(y), w)
    params = {**GRID, **kw}
    lm_b = None
    if "landmarks" in kw:  # rows of X; the same rows among the rows kept
        lm_b = np.searchsorted(np.flatnonzero(keep), kw["landmarks"])
    a = _fit(cls(cv=splits, **params), Xm, y, sample_weight=w)
    if lm_b is not None:
        params["landmarks"] = lm_b
    b = _fit(cls(cv=removed, **params), [X[keep] for X in Xm], y[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(_split_scores(a), _split_scores(b))
    assert a.best_params_ == b.best_params_
    assert len(a.best_estimator_.reduced_models_) == 1
    test_m = [test[0], test[1].copy()]
    test_m[1][:4] = np.nan
    np.testing.assert_array_equal(_out(a, test_m), _out(b, test_m))


@pytest.mark.parametrize("cls", [MVMLRegressorCV, MVMLClassifierCV])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_cv_missing_views_integer_weights_equal_repeated_rows(data, cls, fit_intercept):
    """Missing views, fixed landmarks (row indices, observed in every view) and
    bandwidths, every candidate cross-validated: the weighted completion statistics, fold
    statistics and held-out scores are those of the repeated rows."""
    Xs, r, labels, w, test = data
    Xm = _missing(Xs)
    y = labels if cls is MVMLClassifierCV else r
    splits, _, repeated = _folds(len(y), w)
    lm = np.array([1, 3, 4, 6, 8, 10, 12, 14, 17, 20])
    lm = lm[(w[lm] > 0) & ~np.isin(lm, MISSING_ROWS)]
    rep = np.repeat(np.arange(len(w)), w)
    lm_rep = np.array([np.flatnonzero(rep == i)[0] for i in lm])
    params = dict(
        GRID,
        kernel_params=KP,
        bandwidth_factors=[1.0],
        search="exhaustive",
        joint_view=False,
        fit_intercept=fit_intercept,
        missing_views="complete",
    )
    a = _fit(cls(cv=splits, landmarks=lm, **params), Xm, y, sample_weight=w)
    b = _fit(cls(cv=repeated, landmarks=lm_rep, **params), [X[rep] for X in Xm], y[rep])
    np.testing.assert_allclose(_split_scores(a), _split_scores(b), rtol=0, atol=1e-8)
    assert a.best_params_ == b.best_params_
    test_m = [test[0], test[1].copy()]
    test_m[1][:4] = np.nan  # completed by the weighted statistics
    np.testing.assert_allclose(_out(a, test_m), _out(b, test_m), rtol=0, atol=1e-8)
