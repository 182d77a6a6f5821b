"""Learned feature relevance inside the views (``feature_relevance``, mvml/_relevance.py)."""

import numpy as np
import pytest
from scipy import sparse

from mvkernels import MVMLSVC, MVMLClassifier, MVMLClassifierCV, MVMLRegressor
from mvkernels.mvml._relevance import (
    ard_loo_loss_grad,
    learn_feature_relevance,
    scale_views,
)

#: MVMLSVC as the paper has it (one-vs-all, additive over the views), its defaults before
#: issue 32 (item 4) made them joint_view="auto", multi_class="auto": what these tests check
SVC_PAPER = dict(joint_view=False, multi_class="ovr")


def _direct_loo_loss(params, X, Y):
    """Mean squared leave-one-out residual of kernel ridge, one refit per left-out row."""
    theta, lam = np.exp(params[:-1]), np.exp(params[-1])
    n = X.shape[0]
    total = 0.0
    for i in range(n):
        keep = np.arange(n) != i
        D = ((X[keep][:, None, :] - X[keep][None, :, :]) ** 2 * theta).sum(-1)
        K = np.exp(-D)
        k = np.exp(-(((X[keep] - X[i]) ** 2) * theta).sum(-1))
        coef = np.linalg.solve(K + lam * np.eye(n - 1), Y[keep])
        total += np.sum((Y[i] - k @ coef) ** 2)
    return total / Y.size


def test_loss_is_the_leave_one_out_error_of_kernel_ridge():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(25, 3)), rng.normal(size=(25, 2))
    params = np.array([-0.5, 0.3, -1.2, np.log(0.2)])
    loss, _ = ard_loo_loss_grad(params, X, Y)
    assert loss == pytest.approx(_direct_loo_loss(params, X, Y), rel=1e-8)


@pytest.mark.parametrize("as_sparse", [False, True])
def test_gradient_matches_finite_differences(as_sparse):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 4))
    X[X < -0.5] = 0.0  # sparse-looking, for the CSR path
    Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]])
    Y -= Y.mean(axis=0)
    Xin = sparse.csr_matrix(X) if as_sparse else X
    params = np.array([-1.0, -0.2, -2.0, 0.5, np.log(0.05)])
    _, grad = ard_loo_loss_grad(params, Xin, Y)
    eps = 1e-6
    num = np.empty_like(params)
    for k in range(params.size):
        step = np.zeros_like(params)
        step[k] = eps
        num[k] = (
            ard_loo_loss_grad(params + step, Xin, Y)[0]
            - ard_loo_loss_grad(params - step, Xin, Y)[0]
        ) / (2 * eps)
    np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-9)


def test_flat_relevance_when_every_column_counts_the_same():
    # an isotropic function of all 6 columns (2 views x 3): every column equally relevant;
    # tolerance 0.1 on the deviation from 1 (measured: 0.04)
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 6))
    y = np.cos(np.linalg.norm(X, axis=1)) + 0.05 * rng.normal(size=500)
    r = learn_feature_relevance([X[:, :3], X[:, 3:]], y[:, None], random_state=0)
    for rv in r:
        assert np.sqrt(np.mean(rv**2)) == pytest.approx(1.0)
        assert np.max(np.abs(rv - 1.0)) < 0.1


def test_noise_column_gets_relevance_near_zero():
    # view 0: columns 0 and 1 relevant, column 2 pure noise; view 1: column 0 relevant,
    # column 1 pure noise. Threshold: below 0.2 times the view's largest relevance
    # (measured 0.13 and 0.06 times: the held-out shrinkage towards flat scales keeps a
    # little of the noise columns at 500 + 500 rows)
    rng = np.random.default_rng(3)
    n = 1000
    X1, X2 = rng.normal(size=(n, 3)), rng.normal(size=(n, 2))
    y = np.sin(1.5 * X1[:, 0]) + np.cos(2 * X1[:, 1]) + X2[:, 0] ** 2 / 2
    y += 0.1 * rng.normal(size=n)
    r = learn_feature_relevance([X1, X2], y[:, None], random_state=0)
    assert r[0][2] < 0.2 * r[0].max() and r[1][1] < 0.2 * r[1].max()
    assert min(r[0][0], r[0][1], r[1][0]) > 0.8


def test_relevance_is_flat_when_the_held_out_rows_prefer_it():
    # every column relevant through sums (no axis-aligned structure): the per-column
    # scales do not beat the flat scale on the held-out half, which is then kept exactly
    rng = np.random.default_rng(6)
    X1, X2 = rng.normal(size=(400, 4)), rng.normal(size=(400, 4))
    y = np.sin(X1.sum(axis=1) / 2) * np.cos(X2.sum(axis=1) / 2)
    r = learn_feature_relevance([X1, X2], y[:, None], random_state=0)
    for rv in r:
        np.testing.assert_allclose(rv, 1.0, rtol=1e-12)


def test_learned_relevance_helps_on_irrelevant_columns():
    # 2 relevant columns among 16: the scaled views fit far better
    rng = np.random.default_rng(4)
    n = 600
    X1, X2 = rng.normal(size=(n, 8)), rng.normal(size=(n, 8))
    y = np.sin(2 * X1[:, 0]) + np.tanh(2 * X2[:, 3])
    tr, te = slice(0, 400), slice(400, n)
    scores = {}
    for fr in ("none", "ard"):
        reg = MVMLRegressor(alpha=0.01, feature_relevance=fr, random_state=0)
        reg.fit([X1[tr], X2[tr]], y[tr])
        scores[fr] = reg.score([X1[te], X2[te]], y[te])
    assert scores["ard"] > scores["none"] + 0.3, scores
    assert reg.feature_relevance_[0].argmax() == 0 and reg.feature_relevance_[1].argmax() == 3


def _views(n=80, seed=5):
    rng = np.random.default_rng(seed)
    X1, X2 = rng.normal(size=(n, 3)), rng.normal(size=(n, 2))
    y = np.where(np.sin(2 * X1[:, 0]) + X2[:, 1] > 0, "a", "b")
    return [X1, X2], y


def test_none_is_unchanged_and_ones_are_the_identity():
    Xs, y = _views()
    base = MVMLClassifier(random_state=0).fit(Xs, y)
    assert base.feature_relevance_ is None
    ones = MVMLClassifier(random_state=0, feature_relevance=[np.ones(3), np.ones(2)]).fit(Xs, y)
    np.testing.assert_array_equal(base.decision_function(Xs), ones.decision_function(Xs))


def test_fixed_relevance_is_the_same_as_scaling_the_input():
    Xs, y = _views()
    r = [np.array([2.0, 0.5, 0.0]), np.array([1.0, 3.0])]
    a = MVMLClassifier(random_state=0, feature_relevance=r).fit(Xs, y)
    scaled = [Xv * rv for Xv, rv in zip(Xs, r)]
    b = MVMLClassifier(random_state=0).fit(scaled, y)
    np.testing.assert_allclose(a.decision_function(Xs), b.decision_function(scaled), atol=1e-12)


def test_ard_fit_is_deterministic_and_normalised():
    Xs, y = _views(120)
    a = MVMLClassifier(feature_relevance="ard", random_state=0).fit(Xs, y)
    b = MVMLClassifier(feature_relevance="ard", random_state=0).fit(Xs, y)
    assert len(a.feature_relevance_) == 2
    for ra, rb, d in zip(a.feature_relevance_, b.feature_relevance_, (3, 2)):
        assert ra.shape == (d,)
        np.testing.assert_array_equal(ra, rb)
        assert np.sqrt(np.mean(ra**2)) == pytest.approx(1.0)
    np.testing.assert_array_equal(a.decision_function(Xs), b.decision_function(Xs))


def test_sample_weight_leaves_the_learned_scales_unweighted():
    """As documented: ``"ard"`` learns its scales from the rows as given, the model after
    them takes ``sample_weight`` (so the weights change the fit, not the scales); the CV
    estimators refuse weights with a learned relevance, naming the parameter."""
    Xs, y = _views(120)
    w = np.random.default_rng(3).integers(1, 4, size=y.size).astype(float)
    kw = dict(feature_relevance="ard", random_state=0)
    plain = MVMLClassifier(**kw).fit(Xs, y)
    weighted = MVMLClassifier(**kw).fit(Xs, y, sample_weight=w)
    for a, b in zip(plain.feature_relevance_, weighted.feature_relevance_):
        np.testing.assert_array_equal(a, b)
    assert not np.allclose(plain.decision_function(Xs), weighted.decision_function(Xs))
    with pytest.raises(ValueError, match="feature_relevance with sample_weight"):
        MVMLClassifierCV(feature_relevance="ard", cv=2).fit(Xs, y, sample_weight=w)


def test_missing_views_rows_stay_missing():
    Xs, y = _views(120)
    X1 = Xs[0].copy()
    X1[:10] = np.nan
    r = [np.array([1.0, 2.0, 0.5]), np.array([0.3, 1.0])]
    scaled = scale_views([X1, Xs[1]], r)
    assert np.isnan(scaled[0][:10]).all() and np.isfinite(scaled[0][10:]).all()
    clf = MVMLClassifier(feature_relevance="ard", random_state=0).fit([X1, Xs[1]], y)
    assert np.isfinite(clf.decision_function([X1, Xs[1]])).all()


def test_sparse_views_stay_sparse_and_learn_the_same_relevance():
    Xs, y = _views(100)
    X2 = Xs[1].copy()
    X2[np.abs(X2) < 0.5] = 0.0
    S = sparse.csr_matrix(X2)
    scaled = scale_views([Xs[0], S], [np.ones(3), np.array([2.0, 0.5])])
    assert sparse.issparse(scaled[1]) and scaled[1].nnz == S.nnz
    Y = np.where(y == "a", 1.0, -1.0)[:, None]
    dense = learn_feature_relevance([Xs[0], X2], Y, random_state=0)
    sp = learn_feature_relevance([Xs[0], S], Y, random_state=0)
    for a, b in zip(dense, sp):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


def test_hinge_loss_estimator_takes_it():
    Xs, y = _views(100)
    clf = MVMLSVC(**SVC_PAPER, max_iter=2, feature_relevance="ard", random_state=0).fit(Xs, y)
    assert clf.feature_relevance_[0].shape == (3,)
    assert clf.score(Xs, y) > 0.8


def test_cv_learns_once_and_refits_with_the_fixed_scales():
    Xs, y = _views(120)
    cv = MVMLClassifierCV(
        alphas=[0.1, 1.0],
        etas=[0.5],
        bandwidth_factors=[1.0, 4.0],
        max_iter=2,
        cv=3,
        feature_relevance="ard",
        random_state=0,
    ).fit(Xs, y)
    # learned on a subsample of at most half the rows (n // 4 in each half)
    direct = learn_feature_relevance(
        Xs, np.where(y == "b", 1.0, -1.0)[:, None], random_state=0, max_rows=120 // 4
    )
    for a, b, c in zip(cv.feature_relevance_, cv.best_estimator_.feature_relevance_, direct):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=1e-10)
    np.testing.assert_array_equal(cv.predict(Xs), cv.best_estimator_.predict(Xs))


def test_dask_views_learn_the_numpy_relevance():
    da = pytest.importorskip("dask.array")
    Xs, y = _views(120)
    Dx = [da.from_array(Xv, chunks=40) for Xv in Xs]
    a = MVMLClassifier(feature_relevance="ard", n_landmarks=30, random_state=0).fit(Xs, y)
    b = MVMLClassifier(feature_relevance="ard", n_landmarks=30, random_state=0).fit(Dx, y)
    for ra, rb in zip(a.feature_relevance_, b.feature_relevance_):
        np.testing.assert_allclose(ra, rb, rtol=1e-10)
    np.testing.assert_allclose(
        np.asarray(b.decision_function(Dx)), a.decision_function(Xs), atol=1e-8
    )


def test_errors_name_the_parameter_and_view():
    Xs, y = _views()
    with pytest.raises(ValueError, match="view 1 must have shape"):
        MVMLClassifier(feature_relevance=[np.ones(3), np.ones(3)]).fit(Xs, y)
    with pytest.raises(ValueError, match="2 views"):
        MVMLClassifier(feature_relevance=[np.ones(3)]).fit(Xs, y)
    with pytest.raises(ValueError, match="finite and >= 0"):
        MVMLClassifier(feature_relevance=[np.ones(3), np.array([1.0, -1.0])]).fit(Xs, y)
    K = [Xv @ Xv.T for Xv in Xs]
    with pytest.raises(ValueError, match="precomputed"):
        MVMLClassifier(kernel="precomputed", feature_relevance="ard").fit(K, y)
    with pytest.raises(ValueError, match="feature_relevance"):
        MVMLClassifier(feature_relevance="lasso").fit(Xs, y)


def test_fewer_rows_than_columns_give_flat_scales():
    # 12 training rows in each half, 30 columns: nothing is learned
    rng = np.random.default_rng(7)
    X1, X2 = rng.normal(size=(24, 15)), rng.normal(size=(24, 15))
    y = np.sin(2 * X1[:, 0])
    r = learn_feature_relevance([X1, X2], y[:, None], random_state=0)
    for rv in r:
        np.testing.assert_array_equal(rv, 1.0)


def test_cv_loss_axis_refits_the_winner_with_the_learned_scales():
    # loss="auto": one search per loss on the scaled views, the winner refitted with them
    Xs, y = _views(90)
    cv = MVMLClassifierCV(
        loss="auto",
        alphas=[0.1, 1.0],
        etas=[0.5],
        bandwidth_factors=[2.0],
        max_iter=2,
        cv=3,
        feature_relevance="ard",
        random_state=0,
    ).fit(Xs, y)
    for a, b in zip(cv.feature_relevance_, cv.best_estimator_.feature_relevance_):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(cv.predict(Xs), cv.best_estimator_.predict(Xs))
