"""Baselines: equivalences with the direct formulas, invariants, sklearn checks, errors."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC

from mvkernels import baselines as B
from mvkernels.kernels import mean_pairwise_distance


def _views(rng, n=60, informative=(0, 1)):
    """Two views; y depends on the informative ones, others are noise."""
    X0 = rng.standard_normal((n, 3))
    X1 = rng.standard_normal((n, 2))
    f = 0.0
    if 0 in informative:
        f = f + np.sin(X0[:, 0])
    if 1 in informative:
        f = f + X1[:, 1] ** 2 - 1
    return [X0, X1], f + 0.05 * rng.standard_normal(n)


def _gamma(X):
    """The baselines' default rbf bandwidth (computed in double precision)."""
    return 1.0 / (2 * mean_pairwise_distance(X, precision="double") ** 2)


# ------------------------------------------------------------------ lpMKL
def test_lpmkl_one_view_equals_kernel_ridge(rng):
    (X0, _), y = _views(rng)
    K = rbf_kernel(X0, gamma=_gamma(X0))
    ours = B.LpMKLRegressor(alpha=0.3).fit([X0], y)
    ref = KernelRidge(alpha=0.3, kernel="precomputed").fit(K, y)
    Xt = rng.standard_normal((10, 3))
    Kt = rbf_kernel(Xt, X0, gamma=_gamma(X0))
    np.testing.assert_allclose(ours.kernel_weights_, [1.0])
    np.testing.assert_allclose(ours.predict([Xt]), ref.predict(Kt), rtol=1e-8, atol=1e-10)


def test_lpmkl_one_view_equals_svm(rng):
    (X0, _), y = _views(rng)
    yc = (y > np.median(y)).astype(int)
    K = rbf_kernel(X0, gamma=_gamma(X0))
    ours = B.LpMKLClassifier(C=2.0).fit([X0], yc)
    ref = SVC(kernel="precomputed", C=2.0).fit(K, yc)
    Xt = rng.standard_normal((15, 3))
    Kt = rbf_kernel(Xt, X0, gamma=_gamma(X0))
    # the same SVM problem (Gram matrices equal to ~1e-16, the kernel weight 1): libsvm
    # stops at tol=1e-3, and scikit-learn 1.6's libsvm, given our Gram array (same values
    # to 1e-16, another array), stops at another point within that tolerance (decision
    # values 1.5e-4 apart; given `ours.grams_` scaled by the weight, 1e-14); with later
    # versions the two agree to 1e-8
    np.testing.assert_allclose(
        ours.decision_function([Xt]), ref.decision_function(Kt), rtol=0, atol=1e-3
    )
    np.testing.assert_array_equal(ours.predict([Xt]), ref.predict(Kt))


@pytest.mark.parametrize("p", [1.0, 1.5, 2.0, 4.0])
def test_lpmkl_weights_unit_norm_and_objective_decreasing(rng, p):
    Xs, y = _views(rng, informative=(1,))
    Xs.append(rng.standard_normal((60, 4)))  # a third, pure-noise view
    est = B.LpMKLRegressor(alpha=0.1, p=p, max_iter=200, tol=1e-8).fit(Xs, y)
    beta = est.kernel_weights_
    assert np.all(beta >= 0)
    assert np.sum(beta**p) ** (1 / p) == pytest.approx(1.0, rel=1e-10)
    # exact block minimisation: the primal objective never increases
    assert np.all(np.diff(est.objective_) <= 1e-10 * est.objective_[0])
    # the informative view gets the largest weight
    assert np.argmax(beta) == 1


def test_lpmkl_weight_update_is_the_minimiser(rng):
    norms = rng.uniform(0.1, 2.0, size=4)
    for p in (1.0, 2.0, 3.0):
        beta = B.lpmkl_weight_update(norms, p)
        best = np.sum(norms / beta)
        for _ in range(200):  # random feasible weights on the unit lp sphere
            b = rng.uniform(0.01, 1, size=4)
            b /= np.sum(b**p) ** (1 / p)
            assert np.sum(norms / b) >= best * (1 - 1e-12)


def test_lpmkl_hinge_objective_decreases_to_solver_tolerance(rng):
    Xs, y = _views(rng)
    yc = (y > np.median(y)).astype(int)
    est = B.LpMKLClassifier(C=1.0, p=2.0).fit(Xs, yc)
    assert np.all(np.diff(est.objective_) <= 1e-3 * est.objective_[0])
    assert est.objective_[-1] < est.objective_[0]


# ------------------------------------------------------------------ fusion, single view
def test_late_fusion_is_mean_of_per_view_models(rng):
    Xs, y = _views(rng)
    Xt = [rng.standard_normal((8, 3)), rng.standard_normal((8, 2))]
    late = B.LateFusionRegressor(alpha=0.5).fit(Xs, y).predict(Xt)
    per_view = [B.SingleViewRegressor(alpha=0.5, view=l).fit(Xs, y).predict(Xt) for l in (0, 1)]
    np.testing.assert_allclose(late, np.mean(per_view, axis=0), rtol=1e-12)
    yc = (y > np.median(y)).astype(int)
    dec = B.LateFusionClassifier(C=1.0).fit(Xs, yc).decision_function(Xt)
    per_view = [
        B.SingleViewClassifier(C=1.0, view=l).fit(Xs, yc).decision_function(Xt) for l in (0, 1)
    ]
    np.testing.assert_allclose(dec, np.mean(per_view, axis=0), rtol=1e-10)


def test_single_view_picks_the_informative_view_on_training_data(rng):
    Xs, y = _views(rng, n=90, informative=(1,))
    reg = B.SingleViewRegressor(alpha=0.1).fit(Xs, y)
    assert reg.best_view_ == 1 and reg.view_cv_scores_[1] > reg.view_cv_scores_[0]
    clf = B.SingleViewClassifier(C=10.0).fit(Xs, (y > np.median(y)).astype(int))
    assert clf.best_view_ == 1


def test_early_fusion_is_one_kernel_on_concatenated_views(rng):
    Xs, y = _views(rng)
    Z = np.hstack(Xs)
    Xt = [rng.standard_normal((8, 3)), rng.standard_normal((8, 2))]
    ref = KernelRidge(alpha=0.2, kernel="rbf", gamma=_gamma(Z)).fit(Z, y)
    ours = B.EarlyFusionRegressor(alpha=0.2).fit(Xs, y)
    np.testing.assert_allclose(ours.predict(Xt), ref.predict(np.hstack(Xt)), rtol=1e-8)


def test_nystrom_with_all_landmarks_equals_full_kernels(rng):
    Xs, y = _views(rng, n=40)
    Xt = [rng.standard_normal((6, 3)), rng.standard_normal((6, 2))]
    full = B.LpMKLRegressor(alpha=0.5).fit(Xs, y).predict(Xt)
    nys = B.LpMKLRegressor(alpha=0.5, n_landmarks=1.0, random_state=0).fit(Xs, y).predict(Xt)
    np.testing.assert_allclose(nys, full, rtol=1e-6, atol=1e-8)
    small = B.LpMKLRegressor(alpha=0.5, n_landmarks=5, random_state=0).fit(Xs, y)
    assert small.grams_.nystrom.n_landmarks_ == 5
    assert np.linalg.matrix_rank(small.grams_.train[0]) <= 5


def test_single_array_with_views_equals_list(rng):
    Xs, y = _views(rng)
    a = B.LateFusionRegressor().fit(Xs, y).predict(Xs)
    b = B.LateFusionRegressor(views=[3, 2]).fit(np.hstack(Xs), y).predict(np.hstack(Xs))
    np.testing.assert_allclose(a, b)
    # and cross-validation works on the single-array form
    scores = cross_val_score(B.LpMKLRegressor(views=[3, 2]), np.hstack(Xs), y, cv=3)
    assert np.all(np.isfinite(scores))


# ------------------------------------------------------------------ OKL
def _multi_output(rng, n=50, T=4):
    X = rng.standard_normal((n, 3))
    base = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]])
    Y = base @ rng.standard_normal((2, T)) + 0.05 * rng.standard_normal((n, T))
    return [X[:, :2], X[:, 2:]], Y


def test_okl_output_kernel_psd_and_objective_decreasing(rng):
    Xs, Y = _multi_output(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = B.OKLRegressor(alpha=0.1, max_iter=200, tol=0.0).fit(Xs, Y)
    L = est.output_kernel_
    np.testing.assert_allclose(L, L.T)
    assert np.linalg.eigvalsh(L).min() >= -1e-10
    obj = est.objective_
    assert np.all(np.diff(obj) <= 1e-10 * obj[0])
    assert obj[-1] < obj[0]
    assert est.predict(Xs).shape == Y.shape


def test_okl_steps_are_exact_minimisers(rng):
    Xs, Y = _multi_output(rng, n=30, T=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = B.OKLRegressor(alpha=0.2, max_iter=5).fit(Xs, Y)
    K = sum(est.grams_.train) / 2
    C, L, lam = est.coef_, est.output_kernel_, 0.2
    # C-step: the Sylvester equation K C L + lambda C = Y holds for the final C
    np.testing.assert_allclose(K @ C @ L + lam * C, Y, atol=1e-8)
    # no symmetric perturbation of L or perturbation of C lowers the objective
    f0 = B.okl_objective(K, Y, C, L, lam)
    for _ in range(20):
        Cp = C + 1e-4 * rng.standard_normal(C.shape)
        assert B.okl_objective(K, Y, Cp, L, lam) >= f0 - 1e-12
    # L-step: the symmetric gradient vanishes and no symmetric perturbation helps
    L2 = B.okl_l_step(K, Y, C, lam)
    E = K @ C
    G = -(E.T @ (Y - E @ L2)) / lam + 0.5 * C.T @ E + L2
    assert np.linalg.norm(0.5 * (G + G.T)) < 1e-8 * np.linalg.norm(L2)
    f1 = B.okl_objective(K, Y, C, L2, lam)
    assert f1 <= f0 + 1e-12
    for _ in range(20):
        S = rng.standard_normal(L.shape)
        assert B.okl_objective(K, Y, C, L2 + 1e-4 * (S + S.T), lam) >= f1 - 1e-12


def test_okl_one_output_is_kernel_ridge_at_fixed_l(rng):
    Xs, Y = _multi_output(rng, T=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = B.OKLRegressor(alpha=0.3, max_iter=50).fit(Xs, Y)
    K = sum(est.grams_.train) / 2
    ell = est.output_kernel_[0, 0]
    # for T = 1: f = K c ell with c = (ell K + lambda I)^{-1} y, kernel ridge on ell K
    c = np.linalg.solve(ell * K + 0.3 * np.eye(K.shape[0]), Y)
    np.testing.assert_allclose(est.coef_, c, rtol=1e-8)


def test_okl_classifier_learns(rng):
    Xs, y = _views(rng, n=90)
    yc = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = B.OKLClassifier(alpha=0.1).fit(Xs, yc)
    assert clf.output_kernel_.shape == (3, 3)
    assert clf.score(Xs, yc) > 0.8


# ------------------------------------------------------------------ MLKR
def test_mlkr_gradient_matches_finite_differences(rng):
    X = rng.standard_normal((12, 4))
    Y = rng.standard_normal((12, 2))
    A = 0.5 * rng.standard_normal((3, 4))
    f, g = B.mlkr_loss_grad(A, X, Y)
    eps = 1e-6
    num = np.zeros_like(A)
    for idx in np.ndindex(*A.shape):
        Ap, Am = A.copy(), A.copy()
        Ap[idx] += eps
        Am[idx] -= eps
        num[idx] = (B.mlkr_loss_grad(Ap, X, Y)[0] - B.mlkr_loss_grad(Am, X, Y)[0]) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-7)
    # the loss is the leave-one-out Nadaraya-Watson error, computed directly
    Z = X @ A.T
    loss = 0.0
    for i in range(12):
        k = np.exp(-np.sum((Z - Z[i]) ** 2, axis=1))
        k[i] = 0
        loss += np.sum((k @ Y / k.sum() - Y[i]) ** 2)
    assert f == pytest.approx(loss, rel=1e-10)


def test_mlkr_learns_to_ignore_noise_columns(rng):
    n = 120
    X = rng.standard_normal((n, 4))
    y = np.sin(2 * X[:, 0])  # only column 0 matters
    est = B.MLKRRegressor(max_iter=50).fit([X[:, :2], X[:, 2:]], y)
    A = est.components_
    col = np.linalg.norm(A, axis=0)
    assert col[0] > 2 * col[1:].max()
    assert est.score([X[:, :2], X[:, 2:]], y) > 0.8
    clf = B.MLKRClassifier(max_iter=30, n_landmarks=0.5, random_state=0).fit(
        [X[:, :2], X[:, 2:]], (y > 0).astype(int)
    )
    assert clf.landmark_indices_.size == 60
    assert clf.score([X[:, :2], X[:, 2:]], (y > 0).astype(int)) > 0.85


# ------------------------------------------------------------------ errors
def test_bad_input_errors(rng):
    Xs, y = _views(rng)
    with pytest.raises(ValueError, match="view 1 has 59 samples, view 0 has 60"):
        B.LpMKLRegressor().fit([Xs[0], Xs[1][:59]], y)
    with pytest.raises(ValueError, match="y has 59 samples"):
        B.LateFusionRegressor().fit(Xs, y[:59])
    with pytest.raises(
        ValueError,
        match="'p' parameter of LpMKLRegressor must be a float in the range \\[1.0, inf\\)",
    ):
        B.LpMKLRegressor(p=0.5).fit(Xs, y)
    with pytest.raises(ValueError, match="alpha"):
        B.OKLRegressor(alpha=0).fit(Xs, y)
    with pytest.raises(ValueError, match="'loss' parameter"):
        B.LpMKLClassifier(loss="log").fit(Xs, y > 0)
    with pytest.raises(ValueError, match="'C' parameter"):
        B.SingleViewClassifier(C=-1).fit(Xs, y > 0)
    with pytest.raises(ValueError, match="view=5 but X has 2 view"):
        B.SingleViewRegressor(view=5).fit(Xs, y)
    with pytest.raises(TypeError, match="kernel_params must be one dict"):
        B.EarlyFusionRegressor(kernel_params=[{}, {}]).fit(Xs, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        B.LateFusionClassifier().fit(Xs, np.zeros(60))
    with pytest.raises(ValueError, match="n_components"):
        B.MLKRRegressor(n_components=9).fit(Xs, y)
    fitted = B.LpMKLRegressor().fit(Xs, y)
    with pytest.raises(ValueError, match="expected 2 view"):
        fitted.predict([Xs[0]])
    with pytest.raises(ValueError, match="view 1 has 3 features, but 2 were seen"):
        fitted.predict([Xs[0], Xs[0]])
    with pytest.raises(ValueError, match="view 0 contains NaN"):
        fitted.predict([np.full((2, 3), np.nan), Xs[1][:2]])
