"""Weights in the cross-validated MVML search beyond complete in-memory views: missing
views (weighted completion statistics, fold statistics and scores), the joint-only
candidate (the weighted grid is the unweighted one) and Dask views (weighted moments in
one pass over the blocks)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import KFold

from _weighted import fit_quietly, outputs, split_scores, weighted_data, weighted_folds
from mvkernels import MVMLClassifier, MVMLClassifierCV, MVMLRegressor, MVMLRegressorCV
from mvkernels.mvml._screen import kernel_ridge_fold_outputs, ridge_fold_outputs

KP = [{"gamma": 0.3}, {"gamma": 0.5}]
GRID = dict(alphas=[0.01, 0.1, 1.0], etas=[0.5], max_iter=3, random_state=0)
MISSING_ROWS = [0, 5, 9, 21]  # view 1 missing (row 0 has weight 0)


@pytest.fixture(scope="module")
def data():
    return weighted_data()


def _missing(Xs):
    Xm = [X.copy() for X in Xs]
    Xm[1][MISSING_ROWS] = np.nan
    return Xm


# ------------------------------------------------------------------ missing views
@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")
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
    splits, removed, _ = weighted_folds(len(y), w)
    params = {**GRID, **kw}
    lm_b = None
    if "landmarks" in kw:  # rows of X; the same rows among the rows kept
        lm_b = np.searchsorted(np.flatnonzero(keep), kw["landmarks"])
    a = fit_quietly(cls(cv=splits, **params), Xm, y, sample_weight=w)
    if lm_b is not None:
        params["landmarks"] = lm_b
    b = fit_quietly(
        cls(cv=removed, **params), [X[keep] for X in Xm], y[keep], sample_weight=w[keep]
    )
    np.testing.assert_array_equal(split_scores(a), split_scores(b))
    assert a.best_params_ == b.best_params_
    assert len(a.best_estimator_.reduced_models_) == 1
    test_m = [test[0], test[1].copy()]
    test_m[1][:4] = np.nan
    np.testing.assert_array_equal(outputs(a, test_m), outputs(b, test_m))


@pytest.mark.parametrize("cls", [MVMLRegressorCV, MVMLClassifierCV])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_cv_missing_views_integer_weights_equal_repeated_rows(data, cls, fit_intercept):
    """Missing views, fixed landmarks (row indices, observed in every view) and
    bandwidths, every candidate cross-validated: the weighted completion statistics, fold
    statistics and held-out scores are those of the repeated rows."""
    Xs, r, labels, w, test = data
    Xm = _missing(Xs)
    y = labels if cls is MVMLClassifierCV else r
    splits, _, repeated = weighted_folds(len(y), w)
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
    a = fit_quietly(cls(cv=splits, landmarks=lm, **params), Xm, y, sample_weight=w)
    b = fit_quietly(cls(cv=repeated, landmarks=lm_rep, **params), [X[rep] for X in Xm], y[rep])
    np.testing.assert_allclose(split_scores(a), split_scores(b), rtol=0, atol=1e-8)
    assert a.best_params_ == b.best_params_
    test_m = [test[0], test[1].copy()]
    test_m[1][:4] = np.nan  # completed by the weighted statistics
    np.testing.assert_allclose(outputs(a, test_m), outputs(b, test_m), rtol=0, atol=1e-8)


# ------------------------------------------------------------------ joint-only candidate
def _weighted_ridge(U_tr, Y_tr, s, alpha, fit_intercept):
    """The weighted ridge by a direct solve: coefficients and offset."""
    mu, ybar = np.zeros(U_tr.shape[1]), np.zeros(Y_tr.shape[1])
    if fit_intercept:
        mu, ybar = s @ U_tr / s.sum(), s @ Y_tr / s.sum()
    Uc, Yc = U_tr - mu, Y_tr - ybar
    G = np.linalg.solve(
        Uc.T @ (s[:, None] * Uc) + alpha * np.eye(U_tr.shape[1]), Uc.T @ (s[:, None] * Yc)
    )
    return G, ybar - mu @ G


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("partition", [True, False])
def test_weighted_ridge_fold_outputs_direct_formula(fit_intercept, partition):
    """The joint-only candidate's weighted fold outputs, feature and kernel forms, equal
    the weighted ridge solved directly on each fold's training rows."""
    rng = np.random.default_rng(3)
    n, d = 14, 5
    U, Y = rng.normal(size=(n, d)), rng.normal(size=(n, 2))
    s = rng.uniform(0.2, 3.0, size=n)
    splits = list(KFold(3, shuffle=True, random_state=1).split(U))
    if not partition:  # a training part that leaves rows out
        splits = [(tr[1:], te) for tr, te in splits]
    alphas = np.array([0.05, 0.7])
    feat = ridge_fold_outputs(U, Y, splits, alphas, fit_intercept, s)
    kern = kernel_ridge_fold_outputs(U @ U.T, Y, splits, alphas, fit_intercept, s)
    for (tr, te), Df, Dk in zip(splits, feat, kern):
        for ai, a in enumerate(alphas):
            G, b = _weighted_ridge(U[tr], Y[tr], s[tr], a, fit_intercept)
            np.testing.assert_allclose(Df[ai], U[te] @ G + b, rtol=0, atol=1e-10)
            np.testing.assert_allclose(Dk[ai], U[te] @ G + b, rtol=0, atol=1e-10)
    ones = ridge_fold_outputs(U, Y, splits, alphas, fit_intercept, np.ones(n))
    plain = ridge_fold_outputs(U, Y, splits, alphas, fit_intercept)
    np.testing.assert_allclose(np.concatenate(ones, 1), np.concatenate(plain, 1), atol=1e-12)


@pytest.mark.parametrize("cls", [MVMLRegressorCV, MVMLClassifierCV])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_cv_joint_only_integer_weights_equal_repeated_rows(data, cls, fit_intercept):
    """The weighted search has the joint-only candidate, and its weighted scores (ridge on
    the Nystrom features of the concatenated views, the given landmark rows) are those of
    the repeated rows; so is the refit of the best candidate."""
    Xs, r, labels, w, test = data
    y = labels if cls is MVMLClassifierCV else r
    splits, _, repeated = weighted_folds(len(y), w)
    lm = np.array([1, 3, 4, 6, 8, 12, 14, 17, 20])
    rep = np.repeat(np.arange(len(w)), w)
    lm_rep = np.array([np.flatnonzero(rep == i)[0] for i in lm])
    params = dict(
        GRID,
        kernel_params=[*KP, {"gamma": 0.2}],  # the joint view's bandwidth fixed too
        bandwidth_factors=[1.0],
        search="exhaustive",
        fit_intercept=fit_intercept,
    )
    a = fit_quietly(cls(cv=splits, landmarks=lm, **params), Xs, y, sample_weight=w)
    b = fit_quietly(cls(cv=repeated, landmarks=lm_rep, **params), [X[rep] for X in Xs], y[rep])
    only = np.array([p["joint_view"] == "only" for p in a.cv_results_["params"]])
    # scored at every alpha (at the first eta and iteration: the identity metric has neither)
    assert np.isfinite(a.cv_results_["mean_test_score"][only]).sum() == 3
    np.testing.assert_allclose(split_scores(a), split_scores(b), rtol=0, atol=1e-8)
    assert a.best_params_ == b.best_params_
    np.testing.assert_allclose(outputs(a, test), outputs(b, test), rtol=0, atol=1e-8)


@pytest.mark.parametrize("cls", [MVMLRegressorCV, MVMLClassifierCV])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_cv_joint_only_kernel_form_integer_weights(data, cls, fit_intercept):
    """Every row a landmark (``n_landmarks="auto"`` on few rows): the joint-only
    candidate's weighted kernel ridge scores are those of the repeated rows (the other
    candidates draw their landmarks among other rows here, so only its scores compare)."""
    Xs, r, labels, w, _ = data
    y = labels if cls is MVMLClassifierCV else r
    splits, _, repeated = weighted_folds(len(y), w)
    rep = np.repeat(np.arange(len(w)), w)
    params = dict(
        GRID,
        kernel_params=[*KP, {"gamma": 0.2}],
        bandwidth_factors=[1.0],
        search="exhaustive",
        fit_intercept=fit_intercept,
        refit=False,
    )
    a = fit_quietly(cls(cv=splits, **params), Xs, y, sample_weight=w)
    b = fit_quietly(cls(cv=repeated, **params), [X[rep] for X in Xs], y[rep])
    only = np.array([p["joint_view"] == "only" for p in a.cv_results_["params"]])
    sa, sb = split_scores(a)[:, only], split_scores(b)[:, only]
    assert np.isfinite(sa).sum() == 3 * a.n_splits_
    np.testing.assert_allclose(sa, sb, rtol=0, atol=1e-8)


def _digits_views():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = np.flatnonzero(y < 4)[:160]
    X, y = X[keep] / 16.0, y[keep]
    return [X[:, :32], X[:, 32:]], y


@pytest.mark.parametrize("case", ["synthetic-regression", "digits-classification"])
def test_cv_unit_weights_are_the_unweighted_search(data, case):
    """With every weight 1 the weighted search is the unweighted one: the same grid (the
    joint view alone included), the same scores and the same choice. (One more row of
    weight 0, dropped first, makes the search take its weighted path: unit weights alone
    are the unweighted search by construction.)"""
    if case == "digits-classification":
        Xs, y = _digits_views()
        est = MVMLClassifierCV(alphas=[1e-3, 1e-2, 1e-1], etas=[0.1], max_iter=2, random_state=0)
    else:
        Xs, y = data[0], data[1]
        est = MVMLRegressorCV(**GRID)
    w = np.ones(len(y), dtype=int)
    w[0] = 0
    splits, removed, _ = weighted_folds(len(y), w, n_splits=3)
    a = fit_quietly(clone(est).set_params(cv=splits), Xs, y, sample_weight=w)
    b = fit_quietly(clone(est).set_params(cv=removed), [X[1:] for X in Xs], y[1:])
    assert a.cv_results_["params"] == b.cv_results_["params"]
    assert any(p["joint_view"] == "only" for p in a.cv_results_["params"])
    for key in [k for k in b.cv_results_ if k.endswith("_test_score") or "screen" in k]:
        np.testing.assert_allclose(a.cv_results_[key], b.cv_results_[key], rtol=0, atol=1e-8)
    assert a.best_params_ == b.best_params_
    np.testing.assert_allclose(outputs(a, Xs), outputs(b, Xs), rtol=0, atol=1e-8)


def test_cv_weighted_screen_has_the_joint_only_candidate(data):
    """Weighted and screened (the default search): the joint view alone is screened on
    the weighted leave-one-out error and cross-validated with weights."""
    Xs, r, _, w, _ = data
    a = fit_quietly(MVMLRegressorCV(**GRID), Xs, r, sample_weight=w)
    only = np.array([p["joint_view"] == "only" for p in a.cv_results_["params"]])
    assert only.any() and np.isfinite(a.cv_results_["mean_test_score"][only]).any()


# ------------------------------------------------------------------ Dask views
DASK_VARIANTS = [
    dict(),
    dict(fit_intercept=True),
    dict(metric="identity"),
    dict(metric="cov"),
    dict(metric="sparse", eta=0.1),
    dict(learn_weights=True),
    dict(kernel_params=None, landmarks="kmeans++"),  # weighted default bandwidths
]


def _dask(arrays, chunks=13):
    da = pytest.importorskip("dask.array")
    return [da.from_array(A, chunks=(chunks,) + A.shape[1:]) for A in arrays]


def test_dask_weighted_moments_in_one_pass(data):
    """The weighted moments of Dask views (weights a Dask array too) are the NumPy ones."""
    from mvkernels.nystrom import BlockNystrom

    Xs, r, _, w, _ = data
    nys = BlockNystrom(n_landmarks=8, random_state=0).fit(Xs)
    a = nys.moments(Xs, r, sample_weight=w)
    (wd,) = _dask([w.astype(float)])
    b = nys.moments(_dask(Xs), r, sample_weight=wd)
    assert b.weight == pytest.approx(a.weight)
    for name in ("sum", "gram", "cross", "target_sum", "target_gram", "scatter"):
        np.testing.assert_allclose(getattr(b, name), getattr(a, name), rtol=0, atol=1e-10)


@pytest.mark.parametrize("cls", [MVMLRegressor, MVMLClassifier])
@pytest.mark.parametrize("kw", DASK_VARIANTS, ids=lambda kw: "-".join(map(str, kw.values())))
def test_dask_weighted_fit_equals_numpy(data, cls, kw):
    """Nystrom mode on Dask views with sample_weight (zero weights included, the weights
    and labels Dask arrays too): the NumPy fit's predictions to 1e-8."""
    Xs, r, labels, w, test = data
    y = labels if cls is MVMLClassifier else r
    params = dict(n_landmarks=8, kernel_params=KP, random_state=0, max_iter=3)
    est = cls(**{**params, **kw})
    a = fit_quietly(est, Xs, y, sample_weight=w)
    yd, wd = _dask([y, w.astype(float)])
    b = fit_quietly(clone(est), _dask(Xs), yd, sample_weight=wd)
    np.testing.assert_allclose(outputs(a, test), np.asarray(outputs(b, test)), rtol=0, atol=1e-8)


def test_dask_class_weight_and_missing_views_equal_numpy(data):
    """class_weight on Dask labels, and weights on Dask views with missing rows (the
    weighted completion statistics from the Dask pass): the NumPy fits."""
    Xs, _, labels, w, test = data
    (yd,) = _dask([labels])
    est = MVMLClassifier(n_landmarks=8, class_weight="balanced", random_state=0, max_iter=3)
    a = fit_quietly(est, Xs, labels)
    b = fit_quietly(clone(est), _dask(Xs), yd)
    np.testing.assert_allclose(a.decision_function(test), b.decision_function(test), atol=1e-8)
    Xm = _missing(Xs)
    test_m = [test[0], test[1].copy()]
    test_m[1][:4] = np.nan
    est = MVMLClassifier(n_landmarks=8, kernel_params=KP, random_state=0, max_iter=3)
    a = fit_quietly(est, Xm, labels, sample_weight=w)
    b = fit_quietly(clone(est), _dask(Xm), yd, sample_weight=w)
    np.testing.assert_allclose(
        a.decision_function(test_m), np.asarray(b.decision_function(test_m)), atol=1e-8
    )


@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")
@pytest.mark.parametrize("cls", [MVMLRegressorCV, MVMLClassifierCV])
@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(fit_intercept=True),
        dict(metric="identity", joint_view=False),
        dict(scoring="r2"),
        dict(missing_views="complete"),  # with missing rows (no reduced models on Dask)
    ],
    ids=["dense", "intercept", "identity", "scoring", "missing"],
)
def test_dask_weighted_cv_equals_numpy(data, cls, kw):
    """The weighted CV on Dask views (held-out statistics and weighted scores from Dask
    reductions): the NumPy search's scores to 1e-8, its choice and its refit. The grid
    of Dask input (no screen, no joint-only candidate) is given to both."""
    Xs, r, labels, w, test = data
    y = labels if cls is MVMLClassifierCV else r
    if cls is MVMLClassifierCV and "scoring" in kw:
        kw = dict(scoring="balanced_accuracy")
    splits, _, _ = weighted_folds(len(y), w)
    params = dict(GRID, n_landmarks=8, cv=splits, search="exhaustive", joint_view=True)
    params.update(kw)
    if "missing_views" in kw:
        Xs = _missing(Xs)
    a = fit_quietly(cls(**params), Xs, y, sample_weight=w)
    b = fit_quietly(cls(**params), _dask(Xs), y, sample_weight=w)
    assert a.cv_results_["params"] == b.cv_results_["params"]
    np.testing.assert_allclose(split_scores(a), split_scores(b), rtol=0, atol=1e-8)
    assert a.best_params_ == b.best_params_
    np.testing.assert_allclose(outputs(a, test), np.asarray(outputs(b, test)), rtol=0, atol=1e-8)
