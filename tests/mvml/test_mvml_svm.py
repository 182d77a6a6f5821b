"""MVML-SVM: the g-step dual (constant, KKT, solvers) and the estimator MVMLSVC."""

import numpy as np
import pytest
from scipy.optimize import minimize

from _reference_svm import (
    hinge_dual,
    hinge_gstep,
    hinge_primal,
    kernel_svm_dual_cd,
    linear_svm_dual_cd,
    psd_factor,
    reference_hinge_gstep,
)
from mvkernels.mvml._hinge import (
    dual_from_primal,
    linear_svm,
    svm_c_prime,
)
from mvkernels.mvml._hinge_loss import HingeLoss


# --------------------------------------------------------------------------------------
# small full-kernel problem of the paper's form: phi_i = H_{x_i}^T w, A (nv x nv) SPD
# --------------------------------------------------------------------------------------
def _rbf(X, gamma):
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * d2)


def _paper_problem(n=14, v=2, seed=0):
    rng = np.random.RandomState(seed)
    Xs = [rng.randn(n, 3) for _ in range(v)]
    y = np.where(Xs[0][:, 0] + Xs[1][:, 1] + 0.3 * rng.randn(n) > 0, 1.0, -1.0)
    Ks = [_rbf(X, 0.3) for X in Xs]
    w = np.array([0.6, 0.4])
    Phi = np.hstack([w[l] * Ks[l] for l in range(v)])  # row i = (H_{x_i}^T w)^T, length nv
    B = rng.randn(n * v, n * v)
    A = B @ B.T / (n * v) + 0.1 * np.eye(n * v)
    return Phi, y, A


def _qp_dual(Phi, y, A, lam, C, constant):
    """Maximise sum alpha - constant/lam alpha^T Qy alpha on [0, C]^n with SLSQP."""
    Qy = (y[:, None] * y[None, :]) * (Phi @ A @ Phi.T)
    n = y.size

    def f(a):
        return -(a.sum() - constant / lam * a @ Qy @ a)

    def jac(a):
        return -(1.0 - 2.0 * constant / lam * Qy @ a)

    res = minimize(
        f,
        np.full(n, C / 2),
        jac=jac,
        bounds=[(0.0, C)] * n,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    assert res.success, res.message
    return res.x, Qy


def _primal(Phi, y, A, g, lam, C):
    reg = g @ np.linalg.solve(A, g)  # test only: A is SPD here
    return hinge_primal(y * (Phi @ g), lam * reg, C)


@pytest.mark.parametrize("lam", [0.05, 0.5])
def test_gstep_matches_generic_qp_on_the_dual(lam):
    Phi, y, A = _paper_problem()
    n = y.size
    C = 1.0 / n  # the paper's choice
    alpha_qp, Qy = _qp_dual(Phi, y, A, lam, C, constant=0.25)
    res = hinge_gstep(Phi, y, A, lam, C, tol=1e-10, max_iter=100000, random_state=0)
    assert res.converged
    alpha = res.alpha[:, 0]
    np.testing.assert_allclose(alpha, alpha_qp, atol=1e-4 * C)
    # dual objective values agree; the CD one is at least as good
    d_cd = hinge_dual(alpha, Qy, lam)
    d_qp = hinge_dual(alpha_qp, Qy, lam)
    assert d_cd >= d_qp - 1e-10
    # eq. 8: g = 1/(2 lambda) A sum alpha_i y_i phi_i
    g8 = A @ (Phi.T @ (alpha * y)) / (2 * lam)
    np.testing.assert_allclose(res.coef[0], g8, rtol=1e-8, atol=1e-12)
    # <g, A^+ g> computed without a pseudo-inverse
    np.testing.assert_allclose(res.reg[0], g8 @ np.linalg.solve(A, g8), rtol=1e-8)


@pytest.mark.parametrize("lam", [0.05, 0.5])
def test_dual_constant_is_one_over_four_lambda(lam):
    """Strong duality holds with 1/(4 lambda); the printed 1/(2 lambda) leaves a gap."""
    Phi, y, A = _paper_problem(seed=1)
    n = y.size
    C = 1.0 / n
    res = hinge_gstep(Phi, y, A, lam, C, tol=1e-11, max_iter=100000, random_state=0)
    alpha = res.alpha[:, 0]
    Qy = (y[:, None] * y[None, :]) * (Phi @ A @ Phi.T)
    g = res.coef[0]
    P = _primal(Phi, y, A, g, lam, C)
    D = hinge_dual(alpha, Qy, lam, constant=0.25)
    assert abs(P - D) <= 1e-8 * max(1.0, abs(P))
    # the primal optimum: no random perturbation of g does better
    rng = np.random.RandomState(0)
    for _ in range(50):
        assert (
            _primal(Phi, y, A, g + 1e-3 * rng.randn(g.size) * np.abs(g).max(), lam, C) >= P - 1e-12
        )
    # the printed constant: its maximiser mapped through eq. 8 is not the primal optimum,
    # and its dual value is not the primal optimum either
    alpha_p, _ = _qp_dual(Phi, y, A, lam, C, constant=0.5)
    g_p = A @ (Phi.T @ (alpha_p * y)) / (2 * lam)
    assert _primal(Phi, y, A, g_p, lam, C) > P + 1e-6 * abs(P)
    assert abs(hinge_dual(alpha_p, Qy, lam, constant=0.5) - P) > 1e-6 * abs(P)


def test_kkt_conditions_hold():
    Phi, y, A = _paper_problem(n=20, seed=2)
    lam, C = 0.02, 1.0 / 20
    res = hinge_gstep(Phi, y, A, lam, C, tol=1e-10, max_iter=100000, random_state=0)
    alpha, g = res.alpha[:, 0], res.coef[0]
    m = y * (Phi @ g)
    tol = 1e-6
    assert np.all(alpha >= 0) and np.all(alpha <= C)
    zero = alpha <= tol * C
    upper = alpha >= (1 - tol) * C
    free = ~zero & ~upper
    assert np.all(m[zero] >= 1 - 1e-6)
    assert np.all(m[upper] <= 1 + 1e-6)
    np.testing.assert_allclose(m[free], 1.0, atol=1e-6)
    assert free.any() and (zero.any() or upper.any())
    # stationarity in g: 2 lambda A^+ g = sum alpha_i y_i phi_i (tested as A-products)
    np.testing.assert_allclose(2 * lam * g, A @ (Phi.T @ (alpha * y)), rtol=1e-9, atol=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_linear_cd_equals_liblinear():
    from sklearn.svm import LinearSVC

    rng = np.random.RandomState(3)
    n, d = 80, 6
    X = rng.randn(n, d)
    y = np.where(X @ rng.randn(d) + 0.5 * rng.randn(n) > 0, 1.0, -1.0)
    for C in (0.05, 1.0):
        res = linear_svm_dual_cd(X, y, C, tol=1e-10, max_epochs=200000, random_state=0)
        assert res.converged
        ref = LinearSVC(
            C=C, loss="hinge", fit_intercept=False, tol=1e-12, max_iter=1_000_000, random_state=0
        ).fit(X, y)
        np.testing.assert_allclose(res.coef[0], ref.coef_[0], rtol=1e-4, atol=1e-5)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_gstep_equals_liblinear_on_sqrt_metric_features():
    """g-step on z_i with metric A == LinearSVC on A^{1/2} z_i with C' = C / (2 lambda)."""
    from scipy.linalg import sqrtm
    from sklearn.svm import LinearSVC

    rng = np.random.RandomState(4)
    n, D = 60, 8
    Z = rng.randn(n, D)
    y = np.where(Z[:, 0] - Z[:, 3] + 0.3 * rng.randn(n) > 0, 1.0, -1.0)
    B = rng.randn(D, D)
    A = B @ B.T / D + 0.2 * np.eye(D)
    lam, C = 0.01, 1.0 / n
    res = hinge_gstep(Z, y, A, lam, C, tol=1e-10, max_iter=200000, random_state=0)
    S = np.real(sqrtm(A))
    ref = LinearSVC(
        C=svm_c_prime(C, lam),
        loss="hinge",
        fit_intercept=False,
        tol=1e-12,
        max_iter=1_000_000,
        random_state=0,
    ).fit(Z @ S, y)
    np.testing.assert_allclose(res.coef[0], S @ ref.coef_[0], rtol=1e-4, atol=1e-5)


def test_reference_kernel_variant_equals_linear_variant():
    Phi, y, A = _paper_problem(n=18, seed=5)
    lam, C = 0.05, 1.0 / 18
    lin = reference_hinge_gstep(Phi, y, A, lam, C, tol=1e-11, max_epochs=100000, random_state=0)
    ker = reference_hinge_gstep(
        Phi, y, A, lam, C, method="kernel", tol=1e-11, max_epochs=100000, random_state=1
    )
    np.testing.assert_allclose(ker.coef, lin.coef, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ker.reg, lin.reg, rtol=1e-6)


def test_several_problems_equal_separate_runs():
    rng = np.random.RandomState(6)
    n, D, K = 40, 5, 3
    Z = rng.randn(n, D)
    Y = np.where(Z @ rng.randn(D, K) > 0, 1.0, -1.0)
    As = []
    for _ in range(K):
        B = rng.randn(D, D)
        As.append(B @ B.T / D + 0.1 * np.eye(D))
    As = np.stack(As)
    lam, C = 0.1, 1.0 / n
    joint = hinge_gstep(Z, Y, As, lam, C, tol=1e-11, max_iter=100000, random_state=0)
    for k in range(K):
        one = hinge_gstep(Z, Y[:, k], As[k], lam, C, tol=1e-11, max_iter=100000, random_state=3)
        np.testing.assert_allclose(joint.coef[k], one.coef[0], rtol=1e-6, atol=1e-9)
    # the reference solver, warm-started from the new solution, stops at once
    warm = reference_hinge_gstep(
        Z, Y, As, lam, C, tol=1e-6, max_epochs=100000, random_state=1, alpha_init=joint.alpha
    )
    assert warm.solver.n_epochs <= 2
    np.testing.assert_allclose(warm.coef, joint.coef, rtol=1e-5, atol=1e-8)


def test_shrinking_does_not_change_the_solution():
    rng = np.random.RandomState(7)
    X = rng.randn(120, 4)
    y = np.where(X[:, 0] + 0.8 * rng.randn(120) > 0, 1.0, -1.0)
    a = linear_svm_dual_cd(X, y, 0.5, tol=1e-9, max_epochs=100000, shrinking=True, random_state=0)
    b = linear_svm_dual_cd(X, y, 0.5, tol=1e-9, max_epochs=100000, shrinking=False, random_state=0)
    assert a.converged and b.converged
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-5, atol=1e-7)
    k = kernel_svm_dual_cd(X @ X.T, y, 0.5, tol=1e-9, max_epochs=100000, random_state=0)
    np.testing.assert_allclose(
        k.dual_coef * y[:, None], a.dual_coef * y[:, None], atol=1e-4
    )  # dual may be non-unique only within a face
    np.testing.assert_allclose((k.dual_coef[:, 0] * y) @ X, a.coef[0], rtol=1e-5, atol=1e-7)


def test_psd_factor_clips_an_indefinite_metric():
    A = np.diag([2.0, 1.0, -0.5])
    F, m = psd_factor(A)
    assert m == pytest.approx(-0.5)
    np.testing.assert_allclose(F @ F.T, np.diag([2.0, 1.0, 0.0]), atol=1e-12)
    with pytest.raises(ValueError, match="no positive eigenvalue"):
        psd_factor(-np.eye(2))


def test_gstep_errors():
    Z = np.ones((4, 2))
    with pytest.raises(ValueError, match="-1 or \\+1"):
        linear_svm(Z, np.array([0, 1, 1, -1]), 1.0)
    with pytest.raises(ValueError, match="C must be positive"):
        linear_svm(Z, np.array([1, 1, -1, -1]), 0.0)
    with pytest.raises(ValueError, match="lambda"):
        hinge_gstep(Z, np.array([1, 1, -1, -1]), np.eye(2), 0.0, 1.0)
    with pytest.raises(ValueError, match="A must have shape"):
        hinge_gstep(Z, np.array([1, 1, -1, -1]), np.eye(3), 1.0, 1.0)


# --------------------------------------------------------------------------------------
# the estimator MVMLSVC
# --------------------------------------------------------------------------------------
import warnings  # noqa: E402

from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402

from mvkernels import MVMLSVC, MVMLClassifier  # noqa: E402
from mvkernels import mvml as M  # noqa: E402

#: MVMLSVC as the paper has it (one-vs-all, additive over the views), its defaults before
#: issue 32 (item 4) made them joint_view="auto", multi_class="auto": what these tests check
SVC_PAPER = dict(joint_view=False, multi_class="ovr")


def _views(n=40, seed=0, n_classes=2):
    rng = np.random.RandomState(seed)
    X1 = rng.randn(n, 3)
    X2 = np.column_stack([X1[:, 0] * X1[:, 1], rng.randn(n)]) + 0.1 * rng.randn(n, 2)
    score = X1[:, 0] + X2[:, 0] + 0.3 * rng.randn(n)
    if n_classes == 2:
        y = (score > np.median(score)).astype(int)
    else:
        y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return [X1, X2], y


def _primal_full(est, Xs, y):
    """Objective of eq. 6 recomputed from the fitted attributes (full mode, binary)."""
    Ks = [k(X, X) for k, X in zip(est.kernels_, Xs)]
    w = est.weights_
    P = np.hstack([wl * K for wl, K in zip(w, Ks)])
    s = np.where(y == est.classes_[1], 1.0, -1.0)
    g, A = est.coef_, est.metric_
    hinge = est.C_ * np.maximum(0.0, 1.0 - s * (P @ g)).sum()
    reg = est.alpha * g @ np.linalg.solve(A, g)
    pen = M.metric_penalty(A, est.metric, len(Xs)) if est.metric in ("dense", "sparse") else 0.0
    return hinge + reg + est.eta * pen


@pytest.mark.parametrize("mode", ["full", "nystrom"])
@pytest.mark.parametrize(
    "metric,learn_weights", [("dense", False), ("dense", True), ("sparse", False)]
)
def test_primal_objective_decreases_over_outer_iterations(mode, metric, learn_weights):
    Xs, y = _views(n=36, seed=1)
    est = MVMLSVC(
        **SVC_PAPER,
        alpha=1e-2,
        eta=0.5 if metric == "dense" else 0.02,
        metric=metric,
        learn_weights=learn_weights,
        n_landmarks=None if mode == "full" else 20,
        max_iter=15,
        tol=0.0,
        svm_tol=1e-4,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # no increase may be reported
        warnings.filterwarnings("ignore", "MVMLSVC stopped after max_iter", ConvergenceWarning)
        est.fit(Xs, y)
    h = np.asarray(est.objective_)
    # tol=0: max_iter iterations, or fewer where the objective stops moving (a decrease of
    # exactly 0 at the rounding floor, ~1e-14 relative, stops the loop)
    assert h.size == 16 or (h.size < 16 and np.any(np.diff(h) == 0))
    assert np.all(np.diff(h) <= 1e-10 * np.abs(h[:-1])), np.diff(h)
    assert h[-1] < h[0]
    assert est.objective_increase_ <= 1e-10  # rounding only
    if learn_weights:
        assert est.weights_.sum() == pytest.approx(1.0) and np.all(est.weights_ >= 0)
    if metric == "dense":
        assert est.metric_min_eigenvalue_ > 0
    if mode == "full":
        assert h[-1] == pytest.approx(_primal_full(est, Xs, y), rel=1e-9)


def test_final_coef_is_the_hinge_gstep_solution():
    """coef_ and dual_coef_ satisfy eq. 8 and the KKT conditions of the final g-step."""
    Xs, y = _views(n=30, seed=2)
    est = MVMLSVC(
        **SVC_PAPER,
        alpha=1e-2,
        eta=1.0,
        metric="dense",
        max_iter=4,
        svm_tol=1e-9,
        n_landmarks=None,
        random_state=0,
    ).fit(Xs, y)
    Ks = [k(X, X) for k, X in zip(est.kernels_, Xs)]
    P = np.hstack([0.5 * K for K in Ks])
    s = np.where(y == est.classes_[1], 1.0, -1.0)
    a = est.dual_coef_
    np.testing.assert_allclose(
        est.coef_, est.metric_ @ (P.T @ (a * s)) / (2 * est.alpha), rtol=1e-7, atol=1e-10
    )
    m = s * (P @ est.coef_)
    C = est.C_
    assert C == pytest.approx(1 / 30)
    free = (a > 1e-7 * C) & (a < (1 - 1e-7) * C)
    assert free.any()
    np.testing.assert_allclose(m[free], 1.0, atol=1e-6)
    assert np.all(m[a <= 1e-7 * C] >= 1 - 1e-6)
    assert np.all(m[a >= (1 - 1e-7) * C] <= 1 + 1e-6)
    # the objective is the primal one and is not the square loss of MVMLClassifier
    assert est.objective_[-1] == pytest.approx(_primal_full(est, Xs, y), rel=1e-9)


def test_nystrom_with_all_landmarks_equals_full_model_for_the_cov_metric():
    Xs, y = _views(n=30, seed=3)
    kw = dict(alpha=1e-2, metric="cov", svm_tol=1e-10, svm_max_epochs=100000, random_state=0)
    full = MVMLSVC(**SVC_PAPER, **kw).fit(Xs, y)
    nys = MVMLSVC(**SVC_PAPER, n_landmarks=30, **kw).fit(Xs, y)
    Xt, _ = _views(n=25, seed=4)
    np.testing.assert_allclose(
        nys.decision_function(Xt), full.decision_function(Xt), rtol=1e-5, atol=1e-6
    )
    assert nys.objective_[-1] == pytest.approx(full.objective_[-1], rel=1e-6)


def test_only_the_ratio_C_over_alpha_enters_the_gstep():
    Xs, y = _views(n=30, seed=5)
    kw = dict(
        metric="identity", n_landmarks=12, svm_tol=1e-10, svm_max_epochs=100000, random_state=0
    )
    a = MVMLSVC(**SVC_PAPER, alpha=1e-2, C=None, **kw).fit(Xs, y)
    b = MVMLSVC(**SVC_PAPER, alpha=1e-2, C=1 / 30, **kw).fit(Xs, y)
    c = MVMLSVC(**SVC_PAPER, alpha=3e-2, C=3 / 30, **kw).fit(Xs, y)
    np.testing.assert_allclose(a.coef_, b.coef_)
    np.testing.assert_allclose(c.coef_, a.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(c.dual_coef_, 3 * a.dual_coef_, rtol=1e-6, atol=1e-9)
    d = MVMLSVC(**SVC_PAPER, alpha=1e-2, C=10 / 30, **kw).fit(Xs, y)  # a different problem
    assert not np.allclose(d.coef_, a.coef_, rtol=1e-3)


def test_multiclass_one_vs_all_and_api():
    Xs, y = _views(n=60, seed=6, n_classes=3)
    labels = np.array(["a", "b", "c"])[y]
    est = MVMLSVC(
        **SVC_PAPER,
        alpha=1e-3,
        eta=0.1,
        n_landmarks=0.5,
        max_iter=3,
        svm_tol=1e-10,
        svm_max_epochs=100000,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(Xs, labels)
    assert isinstance(est, MVMLClassifier)
    assert list(est.classes_) == ["a", "b", "c"]
    D = est.decision_function(Xs)
    assert D.shape == (60, 3)
    assert est.coef_.shape == (3, 2 * 30) and est.metric_.shape == (3, 60, 60)
    assert est.dual_coef_.shape == (60, 3) and len(est.objective_) == 3
    np.testing.assert_array_equal(est.predict(Xs), est.classes_[D.argmax(1)])
    assert est.score(Xs, labels) > 0.8
    # one-vs-all: each column equals the binary problem of that class
    one = MVMLSVC(
        **SVC_PAPER,
        alpha=1e-3,
        eta=0.1,
        n_landmarks=0.5,
        max_iter=3,
        svm_tol=1e-10,
        svm_max_epochs=100000,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one.fit(Xs, np.where(labels == "c", "c", "rest"))
    # binary: +1 = classes_[1] = "rest", so the "c" column is minus the binary output
    np.testing.assert_allclose(D[:, 2], -one.decision_function(Xs), rtol=1e-6, atol=1e-8)


def test_single_array_with_views_works_in_grid_search():
    """One stacked array + ``views`` inside cross_val_score / GridSearchCV gives the
    accuracies of an independent solver on the same folds: with A~ = I, w = 1/v and every
    sample a landmark, the g-step is the paper's dual QP (constant 1/4, box [0, 1/n], no
    intercept) with the kernel sum_l w_l^2 K_l, solved here by scipy's SLSQP."""
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.model_selection import StratifiedKFold

    Xs, y = _views(n=48, seed=7)
    X = np.hstack(Xs)
    K = sum(0.25 * rbf_kernel(V, gamma=0.5) for V in Xs)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    alphas = [1e-3, 1e-1]

    def qp_accuracies(lam):
        out = []
        for tr, te in cv.split(X, y):
            s = np.where(y[tr] == 1, 1.0, -1.0)
            a, _ = _qp_dual(np.eye(tr.size), s, K[np.ix_(tr, tr)], lam, 1.0 / tr.size, 0.25)
            f = K[np.ix_(te, tr)] @ (a * s) / (2 * lam)
            out.append(np.mean(np.where(f > 0, 1, 0) == y[te]))
        return np.array(out)

    ref = {a: qp_accuracies(a) for a in alphas}
    est = MVMLSVC(
        **SVC_PAPER,
        views=[3, 2],
        metric="identity",
        n_landmarks=1.0,
        kernel_params={"gamma": 0.5},
        max_iter=1,
        tol=1e-4,
        C=None,
        svm_tol=1e-10,
        svm_max_epochs=100000,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        scores = cross_val_score(est.set_params(alpha=1e-1), X, y, cv=cv)
        gs = GridSearchCV(est, {"alpha": alphas}, cv=cv).fit(X, y)
    np.testing.assert_array_equal(scores, ref[1e-1])
    np.testing.assert_allclose(gs.cv_results_["mean_test_score"], [ref[a].mean() for a in alphas])
    assert gs.best_params_["alpha"] == alphas[int(np.argmax([ref[a].mean() for a in alphas]))]
    # decision values on the full single array equal the QP solution's
    s = np.where(y == 1, 1.0, -1.0)
    a, _ = _qp_dual(np.eye(y.size), s, K, 1e-1, 1.0 / y.size, 0.25)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        d = est.set_params(alpha=1e-1).fit(X, y).decision_function(X)
    np.testing.assert_allclose(d, K @ (a * s) / 0.2, rtol=0, atol=1e-6)
    np.testing.assert_allclose(
        MVMLSVC(**SVC_PAPER, views=[3, 2], metric="identity", n_landmarks=0.5, random_state=0)
        .fit(X, y)
        .decision_function(X),
        MVMLSVC(**SVC_PAPER, metric="identity", n_landmarks=0.5, random_state=0)
        .fit(Xs, y)
        .decision_function(Xs),
    )


def test_sparse_metric_shrinks_view_pair_blocks_and_never_collapses():
    """Larger eta shrinks the between-view group. A proximal A-step that would zero the
    whole metric (or any block g needs) has <g, A^+ g> = +inf and is rejected, so the
    metric does not collapse to 0 (it did before: g was then forced to 0 and the
    objective jumped up) and the objective keeps decreasing."""
    Xs, y = _views(n=40, seed=8)
    off = []
    for eta in (0.01, 0.03, 0.05):
        est = MVMLSVC(
            **SVC_PAPER,
            alpha=1e-2,
            eta=eta,
            metric="sparse",
            n_landmarks=10,
            max_iter=20,
            random_state=0,
        )
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "MVMLSVC stopped", ConvergenceWarning)
            warnings.simplefilter("error", RuntimeWarning)
            est.fit(Xs, y)
        off.append(M.group_norms(est.metric_, 2)[0, 1])
        assert est.metric_min_eigenvalue_ >= -1e-10 and est.objective_increase_ == 0.0
    assert off[0] > off[1] > off[2] > 0
    for eta in (0.2, 1.0):
        est = MVMLSVC(
            **SVC_PAPER,
            alpha=1e-2,
            eta=eta,
            metric="sparse",
            n_landmarks=10,
            max_iter=20,
            random_state=0,
        )
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "MVMLSVC stopped", ConvergenceWarning)
            warnings.simplefilter("error", RuntimeWarning)
            warnings.filterwarnings("error", "MVMLSVC: the primal", ConvergenceWarning)
            est.fit(Xs, y)
        assert np.abs(est.metric_).max() > 0 and np.abs(est.coef_).max() > 0
        assert est.objective_increase_ == 0.0
        assert M.PSDFactor(est.metric_).range_residual(est.coef_) < 1e-6
        off.append(M.group_norms(est.metric_, 2)[0, 1])
    assert off[2] > off[3] > off[4]


def test_reports_an_early_stopped_dual_solver():
    Xs, y = _views(n=40, seed=9)
    # a soft margin (large alpha: C' mean ||x||^2 below POLISH_MIN_BOX), where liblinear
    # runs (with a hard margin the exact active-set solution needs no liblinear run)
    with pytest.warns(ConvergenceWarning, match="svm_max_epochs=1"):
        MVMLSVC(**SVC_PAPER, alpha=1e-1, metric="identity", svm_max_epochs=1, svm_tol=1e-12).fit(
            Xs, y
        )


def test_reports_an_objective_increase(monkeypatch):
    """If a g-step made the objective worse, fit says so (forced by a bad hook here)."""
    Xs, y = _views(n=30, seed=10)

    class BadLoss(HingeLoss):
        def structured_applies(self, problem):
            return False

        def g_step(self, problem, t, factor, w, state):
            g = super().g_step(problem, t, factor, w, state)
            state.calls = getattr(state, "calls", 0) + 1
            return g * (-3.0 if state.calls == 5 else 1.0)

    class Bad(MVMLSVC):
        def _make_loss(self):
            return BadLoss(self)

    with pytest.warns(ConvergenceWarning, match="objective increased"):
        est = Bad(**SVC_PAPER, alpha=1e-2, eta=1.0, max_iter=5, tol=0.0).fit(Xs, y)
    assert est.objective_increase_ > 1e-6


def test_estimator_errors():
    Xs, y = _views(n=20, seed=11)
    for kw, msg in [
        ({"C": 0.0}, "C must be"),
        ({"C": -1}, "C must be"),
        ({"svm_tol": 0}, "svm_tol"),
        ({"svm_max_epochs": 0}, "svm_max_epochs"),
        ({"alpha": 0}, "alpha"),
        ({"metric": "full"}, "metric"),
    ]:
        with pytest.raises(ValueError, match=msg):
            MVMLSVC(**SVC_PAPER, **kw).fit(Xs, y)
    with pytest.raises(ValueError, match="one class"):
        MVMLSVC(**SVC_PAPER).fit(Xs, np.zeros(20))
    bad = [Xs[0], Xs[1].copy()]
    bad[1][3, 0] = np.nan
    with pytest.raises(ValueError, match="view 1 contains NaN"):
        MVMLSVC(**SVC_PAPER).fit(bad, y)
    with pytest.raises(ValueError, match="view 1 has 19 samples"):
        MVMLSVC(**SVC_PAPER).fit([Xs[0], Xs[1][:19]], y)
    est = MVMLSVC(**SVC_PAPER, metric="identity").fit(Xs, y)
    with pytest.raises(ValueError, match="expected 2 view"):
        est.predict([Xs[0]])


# --------------------------------------------------------------------------------------
# the compiled solver against the reference (Python dual coordinate descent)
# --------------------------------------------------------------------------------------
def _dual_objectives(est, Xs, y):
    from _reference_svm import final_dual_objectives

    return final_dual_objectives(est, Xs, y)


@pytest.mark.parametrize(
    "metric,n_landmarks,n_classes",
    [
        ("dense", 15, 2),
        ("dense", None, 3),
        ("sparse", 15, 3),
        ("sparse", None, 2),
        ("identity", 15, 3),
        ("cov", None, 2),
        ("cov", 15, 2),
    ],
)
def test_compiled_solver_agrees_with_reference(metric, n_landmarks, n_classes):
    """Same model as the reference (Python dual CD + dense A-step): the dual objective
    of the final g-step to 1e-6 relative and the same predictions, binary and
    multi-class, learned dense / block-sparse and fixed metrics, Nystrom and full."""
    from _reference_svm import ReferenceMVMLSVC

    Xs, y = _views(n=40, seed=12, n_classes=n_classes)
    Xt, _ = _views(n=50, seed=13, n_classes=n_classes)
    kw = dict(
        alpha=1e-2,
        eta=0.05,
        metric=metric,
        n_landmarks=n_landmarks,
        max_iter=4,
        svm_tol=1e-10,
        svm_max_epochs=100000,
        random_state=0,
    )
    new = MVMLSVC(**SVC_PAPER, **kw).fit(Xs, y)
    ref = ReferenceMVMLSVC(**SVC_PAPER, **kw).fit(Xs, y)
    assert new.solver_ == ("dense" if metric == "sparse" else "structured")
    assert ref.solver_ == "dense"
    np.testing.assert_allclose(
        _dual_objectives(new, Xs, y), _dual_objectives(ref, Xs, y), rtol=1e-6
    )
    np.testing.assert_allclose(
        np.ravel([h[-1] for h in new._histories]),
        np.ravel([h[-1] for h in ref._histories]),
        rtol=1e-6,
    )
    np.testing.assert_array_equal(new.predict(Xt), ref.predict(Xt))
    np.testing.assert_allclose(new.decision_function(Xt), ref.decision_function(Xt), atol=1e-5)


def test_structured_and_dense_paths_agree():
    """solver="auto" (low-rank A = s I + W W^T) and "dense" (factored metric) fit the
    same model with the same g-step solver."""
    Xs, y = _views(n=40, seed=14, n_classes=3)
    kw = dict(alpha=1e-2, eta=0.1, n_landmarks=12, max_iter=5, svm_tol=1e-10, random_state=0)
    a = MVMLSVC(**SVC_PAPER, **kw).fit(Xs, y)
    b = MVMLSVC(**SVC_PAPER, solver="dense", **kw).fit(Xs, y)
    assert (a.solver_, b.solver_) == ("structured", "dense")
    np.testing.assert_allclose(a.metric_, b.metric_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-5, atol=1e-8)
    for ha, hb in zip(a.objective_, b.objective_):
        np.testing.assert_allclose(ha, hb, rtol=1e-7)


@pytest.mark.parametrize("label", [-1.0, 1.0])
def test_single_label_problem_equals_reference(label):
    """A one-vs-all column with one label only (a class absent from a training fold)."""
    rng = np.random.RandomState(18)
    X = rng.randn(40, 3) + 0.5
    y = np.full(40, label)
    ref = linear_svm_dual_cd(X, y, 0.2, tol=1e-11, max_epochs=200000, random_state=0)
    new = linear_svm(X, y, 0.2, tol=1e-11, max_iter=200000, random_state=0)
    np.testing.assert_allclose(new.coef, ref.coef[0], rtol=1e-7, atol=1e-9)


def test_dual_from_primal_recovers_the_reference_multipliers():
    rng = np.random.RandomState(15)
    X = rng.randn(70, 5)
    y = np.where(X[:, 0] - X[:, 2] + 0.6 * rng.randn(70) > 0, 1.0, -1.0)
    ref = linear_svm_dual_cd(X, y, 0.3, tol=1e-11, max_epochs=200000, random_state=0)
    new = linear_svm(X, y, 0.3, tol=1e-11, max_iter=200000, random_state=0)
    a = dual_from_primal(X, y, new.coef, 0.3)
    np.testing.assert_allclose(new.coef, ref.coef[0], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(a, ref.dual_coef[:, 0], atol=1e-7)


def test_default_fit_does_not_warn():
    Xs, y = _views(n=80, seed=16, n_classes=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MVMLSVC(**SVC_PAPER, random_state=0).fit(Xs, y)


@pytest.mark.parametrize("slack", [0.0, 0.5])
def test_working_set_solution_is_the_full_solution(slack):
    """Rows chosen from stale margins (a perturbed solution); violators are added until
    the KKT conditions hold on every row: the same v as the full problem."""
    from mvkernels.mvml._hinge import linear_svm_working_set

    rng = np.random.RandomState(17)
    X = rng.randn(150, 6)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.4 * rng.randn(150) > 0, 1.0, -1.0)
    full = linear_svm(X, y, 0.7, tol=1e-10, max_iter=100000, random_state=0)
    stale = y * (X @ (full.coef + 0.3 * rng.randn(6)))
    ws, m = linear_svm_working_set(
        X, y, 0.7, stale, slack=slack, tol=1e-10, max_iter=100000, random_state=0
    )
    np.testing.assert_allclose(ws.coef, full.coef, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(m, y * (X @ ws.coef))
    # a hint with one label only still gives liblinear both labels
    one_sided = np.where(y > 0, 0.0, 10.0)
    ws2, _ = linear_svm_working_set(X, y, 0.7, one_sided, tol=1e-10, max_iter=100000)
    np.testing.assert_allclose(ws2.coef, full.coef, rtol=1e-7, atol=1e-9)


def test_documented_examples_do_not_warn(monkeypatch, tmp_path):
    """The python blocks of docs/mvml_svm.md and examples/plot_mvml_svm.py run with every
    warning turned into an error."""
    import runpy
    from pathlib import Path

    import mvkernels
    from test_docs import SETUP, python_blocks

    root = Path(__file__).resolve().parents[2]
    page = root / "docs" / "mvml_svm.md"
    ns: dict = {"np": np}
    ns.update({name: getattr(mvkernels, name) for name in mvkernels.__all__})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    blocks = python_blocks(page)
    assert len(blocks) >= 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec(SETUP["docs/mvml_svm.md"], ns)
        for line, code in blocks:
            exec(compile(code, f"docs/mvml_svm.md:{line}", "exec"), ns)
        import matplotlib

        matplotlib.use("Agg")
        runpy.run_path(str(root / "examples" / "plot_mvml_svm.py"), run_name="__main__")


# --------------------------------------------------------------------------------------
# the exact g-step: liblinear at a loose tolerance, then the active set solved exactly
# --------------------------------------------------------------------------------------
def _separable_ish(n=120, d=30, seed=19):
    """More features than free support vectors (as the Nystrom features of the g-step)."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = np.where(X[:, 0] - 0.7 * X[:, 1] + 0.4 * rng.randn(n) > 0, 1.0, -1.0)
    return X, y


def test_polish_gives_the_exact_solution_and_multipliers():
    """From liblinear's solution at tolerance 0.05, the active-set solve returns the
    minimiser (liblinear at 1e-11) and the multipliers of the reference dual CD, and
    the KKT conditions hold on every row."""
    from mvkernels.mvml._hinge_active import polish_active_set

    X, y = _separable_ish()
    C = 0.8
    loose = linear_svm(X, y, C, tol=0.05, random_state=0)
    out = polish_active_set(X, y, C, y * (X @ loose.coef), band=0.05)
    assert out is not None
    v, a, m = out
    tight = linear_svm(X, y, C, tol=1e-11, max_iter=200000, random_state=0)
    ref = linear_svm_dual_cd(X, y, C, tol=1e-11, max_epochs=200000, random_state=0)
    assert np.abs(loose.coef - tight.coef).max() > 1e-6  # the polish did something
    np.testing.assert_allclose(v, tight.coef, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(a, ref.dual_coef[:, 0], atol=1e-7)
    np.testing.assert_allclose(v, (a * y) @ X, atol=1e-10)
    np.testing.assert_allclose(m, y * (X @ v))
    free = (a > 1e-9) & (a < C - 1e-9)
    assert free.any()
    np.testing.assert_allclose(m[free], 1.0, atol=1e-9)
    assert np.all(m[a == 0] >= 1 - 1e-9) and np.all(m[a == C] <= 1 + 1e-9)


def test_polish_refuses_a_singular_active_set_and_the_solver_falls_back():
    """Five rows on the margin in one dimension: the active-set system is singular,
    polish_active_set returns None and linear_svm_polished returns liblinear's solution
    at its tolerance (no multipliers)."""
    from mvkernels.mvml._hinge import linear_svm_polished
    from mvkernels.mvml._hinge_active import polish_active_set

    X = np.array([[1.0], [1.0], [1.0], [-1.0], [-1.0]])
    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0])
    assert polish_active_set(X, y, 10.0, np.ones(5), band=0.01) is None
    res, m, dual = linear_svm_polished(X, y, 10.0, None, tol=1e-6, random_state=0)
    assert dual is None and res.converged
    np.testing.assert_allclose(res.coef, [1.0], atol=1e-5)
    np.testing.assert_allclose(m, y * (X @ res.coef))


def test_polished_solver_equals_the_working_set_solver():
    """linear_svm_polished at the default tolerance returns the minimiser that liblinear
    reaches at 1e-10 (stale margins as in a later g-step), with its multipliers."""
    from mvkernels.mvml._hinge import linear_svm_polished

    X, y = _separable_ish(n=120, d=20, seed=19)
    tight = linear_svm(X, y, 0.8, tol=1e-10, max_iter=200000, random_state=0)
    stale = y * (X @ (tight.coef + 0.2 * np.random.RandomState(0).randn(20)))
    for margins in (None, stale):
        res, m, dual = linear_svm_polished(X, y, 0.8, margins, tol=1e-3, random_state=0)
        assert dual is not None
        np.testing.assert_allclose(res.coef, tight.coef, rtol=1e-7, atol=1e-8)
        np.testing.assert_allclose(dual, dual_from_primal(X, y, tight.coef, 0.8), atol=1e-6)


@pytest.mark.parametrize("n_landmarks,n_classes", [(15, 2), (20, 3)])
def test_default_tolerance_fit_has_no_duality_gap(n_landmarks, n_classes):
    """At the default svm_tol=1e-3 the final g-step is exact (active-set solve): its
    primal (eq. 6 without R(A)) equals the dual (eq. 7) at dual_coef_ to 1e-9 relative;
    liblinear stopped at 1e-3 alone leaves a gap of about the tolerance."""
    Xs, y = _views(n=60, seed=21, n_classes=n_classes)
    est = MVMLSVC(**SVC_PAPER, n_landmarks=n_landmarks, random_state=0).fit(Xs, y)
    dual = _dual_objectives(est, Xs, y)
    U = est.nystrom_.transform(Xs)
    Y = MVMLSVC._encode_targets(np.searchsorted(est.classes_, y), len(est.classes_))
    metrics = est.metric_ if est.metric_.ndim == 3 else est.metric_[None]
    for t in range(Y.shape[1]):
        g = est._coefs[t]
        m = Y[:, t] * ((U * np.repeat(est._weights[t], est.n_landmarks_)) @ g)
        primal = hinge_primal(m, est.alpha * g @ np.linalg.solve(metrics[t], g), est.C_)
        assert abs(primal - dual[t]) <= 1e-9 * abs(primal)


@pytest.mark.parametrize("n_landmarks,n_classes,alpha", [(20, 2, 1e-5), (None, 3, 1e-2)])
def test_warm_start_is_taken_and_equals_cold_solves(monkeypatch, n_landmarks, n_classes, alpha):
    """From the second g-step on, the previous exact g-step's active set solved on the new
    features (no liblinear run) is taken, and the fit equals the one with every g-step
    solved cold (liblinear, then the active set): coefficients, multipliers and objective
    to 1e-9."""
    Xs, y = _views(n=80, seed=22, n_classes=n_classes)
    kw = dict(alpha=alpha, n_landmarks=n_landmarks, max_iter=3, random_state=0)
    warm = MVMLSVC(**SVC_PAPER, **kw).fit(Xs, y)
    monkeypatch.setattr(HingeLoss, "warm_start", False)
    cold = MVMLSVC(**SVC_PAPER, **kw).fit(Xs, y)
    n_warm = [s.warm_starts for s in warm._fit_states]
    # of the 3 g-steps after the first (outer iterations 2, 3 and the final one), at least
    # one per target warm-started (the others fell back to liblinear)
    assert min(n_warm) >= 1 and max(n_warm) <= 3
    assert all(s.warm_starts == 0 for s in cold._fit_states)
    assert all(s.exact for s in warm._fit_states + cold._fit_states)
    assert np.all(warm.svm_epochs_ < cold.svm_epochs_)  # fewer liblinear runs
    np.testing.assert_allclose(warm.coef_, cold.coef_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(warm.dual_coef_, cold.dual_coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.ravel(warm.objective_), np.ravel(cold.objective_), rtol=1e-9)
    np.testing.assert_array_equal(warm.predict(Xs), cold.predict(Xs))


def test_polish_checks_every_row_and_adds_those_outside_the_checked_set():
    """Stale margins that put support vectors far above 1 (outside the rows the
    corrections check): the final check on every row adds them, and the result is the
    minimiser with the reference multipliers; without a correction left, None."""
    from mvkernels.mvml._hinge_active import polish_active_set

    X, y = _separable_ish(d=60)
    C = 0.8
    tight = linear_svm(X, y, C, tol=1e-11, max_iter=200000, random_state=0)
    ref = linear_svm_dual_cd(X, y, C, tol=1e-11, max_epochs=200000, random_state=0)
    m = y * (X @ tight.coef)
    a_ref = ref.dual_coef[:, 0]
    stale = m.copy()
    hidden = np.flatnonzero((a_ref > 1e-6) & (a_ref < C - 1e-6))[:3]
    stale[hidden] = 3.0  # free support vectors guessed far inside Z
    out = polish_active_set(X, y, C, stale, band=1e-6, slack=0.5, rounds=10)
    assert out is not None
    v, a, mm = out
    np.testing.assert_allclose(v, tight.coef, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(a, a_ref, atol=1e-7)
    np.testing.assert_allclose(mm, y * (X @ v))
    assert polish_active_set(X, y, C, stale, band=1e-6, slack=0.5, rounds=0) is None
    # from the exact margins no correction is needed
    exact = polish_active_set(X, y, C, m, band=1e-6, rounds=0)
    assert exact is not None
    np.testing.assert_allclose(exact[0], tight.coef, rtol=1e-7, atol=1e-9)


def test_active_set_from_scratch_is_the_exact_solution_of_every_problem():
    """active_set_svm on three problems sharing X (no starting point): each is the
    minimiser (liblinear at 1e-11) with the reference dual CD's multipliers, the KKT
    conditions hold on every row, and the batch equals the problems solved one by one."""
    from mvkernels.mvml._hinge_active import active_set_svm

    X, y0 = _separable_ish(n=150, d=80, seed=31)
    rng = np.random.RandomState(31)
    Y = np.column_stack([y0, np.where(X[:, 2] + 0.3 * rng.randn(150) > 0, 1.0, -1.0), -y0])
    C = 5.0
    out = active_set_svm(X, Y, C)
    for k in range(3):
        assert out[k] is not None
        v, a, m = out[k]
        tight = linear_svm(X, Y[:, k], C, tol=1e-11, max_iter=200000, random_state=0)
        ref = linear_svm_dual_cd(X, Y[:, k], C, tol=1e-11, max_epochs=200000, random_state=0)
        np.testing.assert_allclose(v, tight.coef, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(a, ref.dual_coef[:, 0], atol=1e-7)
        np.testing.assert_allclose(v, (a * Y[:, k]) @ X, atol=1e-10)
        np.testing.assert_allclose(m, Y[:, k] * (X @ v))
        assert np.all(m[a == 0] >= 1 - 1e-9) and np.all(m[a == C] <= 1 + 1e-9)
        free = (a > 0) & (a < C)
        np.testing.assert_allclose(m[free], 1.0, atol=1e-9)
        [one] = active_set_svm(X, Y[:, [k]], C)
        np.testing.assert_allclose(one[0], v, rtol=1e-12, atol=1e-12)


def test_active_set_from_scratch_gives_up_and_the_fit_falls_back():
    """More support vectors on the margin than features (low dimension, noisy labels):
    the free set would be singular, active_set_svm returns None for that problem only,
    and linear_svm_polished still returns the minimiser (liblinear's path)."""
    from mvkernels.mvml._hinge import linear_svm_polished
    from mvkernels.mvml._hinge_active import active_set_svm

    rng = np.random.RandomState(32)
    X = rng.randn(200, 20)
    noisy = np.where(X[:, 0] + 0.3 * rng.randn(200) > 0, 1.0, -1.0)
    Xw = np.hstack([X, rng.randn(200, 180)])  # the same labels in 200 dimensions
    out = active_set_svm(Xw, np.column_stack([noisy, noisy]), 10.0)
    assert out[0] is not None
    assert active_set_svm(X, noisy[:, None], 1.0, rounds=40) == [None]
    res, m, _ = linear_svm_polished(X, noisy, 1.0, None, tol=1e-4, max_iter=10**5, random_state=0)
    tight = linear_svm(X, noisy, 1.0, tol=1e-11, max_iter=200000, random_state=0)
    assert res.converged

    def primal(v: np.ndarray) -> float:
        return 0.5 * v @ v + np.maximum(0.0, 1.0 - noisy * (X @ v)).sum()

    assert primal(res.coef) == pytest.approx(primal(tight.coef), rel=1e-5)


def test_default_fit_solves_the_first_g_step_without_liblinear():
    """A default multi-class fit on digits (2 views, hard margin at alpha=1e-5): every
    g-step is exact and no liblinear iteration runs (the first g-step by the active set
    from scratch for all targets at once, the later ones warm-started); the fit equals
    the reference solver's at a tight tolerance."""
    from sklearn.datasets import load_digits

    from _reference_svm import ReferenceMVMLSVC

    X, y = load_digits(return_X_y=True)
    Xs, y = [X[:200, :32], X[:200, 32:]], y[:200]
    est = MVMLSVC(**SVC_PAPER, n_landmarks=40, random_state=0).fit(Xs, y)
    assert all(s.exact for s in est._fit_states)
    assert np.all(est.svm_epochs_ == 0)
    ref = ReferenceMVMLSVC(**SVC_PAPER, n_landmarks=40, random_state=0, svm_tol=1e-9).fit(Xs, y)
    np.testing.assert_array_equal(est.predict(Xs), ref.predict(Xs))
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-5, atol=1e-6)


def test_active_set_from_scratch_below_the_polish_box():
    """A soft margin (``C' mean ||x||^2`` between COLD_MIN_BOX and POLISH_MIN_BOX, many
    rows at the bound): with nothing to start from, linear_svm_polished grows the exact
    active set from scratch (no liblinear iteration) and returns the minimiser; below
    COLD_MIN_BOX liblinear runs as before."""
    from mvkernels.mvml._hinge import COLD_MIN_BOX, POLISH_MIN_BOX, linear_svm_polished

    rng = np.random.RandomState(33)
    X = rng.randn(300, 200)
    y = np.where(X[:, 0] + 0.5 * rng.randn(300) > 0, 1.0, -1.0)
    box = float(np.vdot(X, X)) / X.shape[0]  # C mean ||x||^2 = C box
    C = 0.5 / box
    assert COLD_MIN_BOX <= C * box < POLISH_MIN_BOX
    res, m, a = linear_svm_polished(X, y, C, None, tol=1e-3, random_state=0)
    assert res.n_iter == 0 and a is not None
    assert np.sum(a == C) > 20  # a soft margin: many rows at the bound
    tight = linear_svm(X, y, C, tol=1e-11, max_iter=200000, random_state=0)
    np.testing.assert_allclose(res.coef, tight.coef, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(res.coef, (a * y) @ X, atol=1e-10)
    small = 0.5 * COLD_MIN_BOX / box
    res, _, _ = linear_svm_polished(X, y, small, None, tol=1e-3, random_state=0)
    assert res.n_iter > 0


def test_warm_starts_in_lockstep_equal_the_single_ones():
    """polish_active_sets (several problems on the same rows X, each with its own extra
    columns E_k and box C_k, as the warm starts of the g-steps of every target and eta)
    returns each problem's exact minimiser: the single problem's polish_active_set on
    [X, E_k] and liblinear at 1e-11; the KKT conditions hold on every row."""
    from mvkernels.mvml._hinge_active import polish_active_set, polish_active_sets

    X, y0 = _separable_ish(n=160, d=100, seed=41)
    rng = np.random.RandomState(41)
    Y = np.column_stack([y0, np.where(X[:, 3] + 0.3 * rng.randn(160) > 0, 1.0, -1.0), -y0])
    extras = [rng.randn(160, 2) * s for s in (0.5, 1.0, 2.0)]
    C = np.array([2.0, 5.0, 10.0])
    margins = []
    for k in range(3):
        XE = np.hstack([X, extras[k]])
        rough = linear_svm(XE, Y[:, k], C[k], tol=0.05, random_state=0)
        margins.append(Y[:, k] * (XE @ rough.coef))
    out = polish_active_sets(X, Y, C, np.array(margins), 0.05, extras=extras)
    for k in range(3):
        XE = np.hstack([X, extras[k]])
        assert out[k] is not None
        v, a, m = out[k]
        single = polish_active_set(XE, Y[:, k], C[k], margins[k], 0.05, rounds=40, max_add=16)
        assert single is not None
        np.testing.assert_allclose(v, single[0], rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(a, single[1], atol=1e-9)
        tight = linear_svm(XE, Y[:, k], C[k], tol=1e-11, max_iter=200000, random_state=0)
        np.testing.assert_allclose(v, tight.coef, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(v, (a * Y[:, k]) @ XE, atol=1e-10)
        np.testing.assert_allclose(m, Y[:, k] * (XE @ v))
        assert np.all(m[a == 0] >= 1 - 1e-9) and np.all(m[a == C[k]] <= 1 + 1e-9)
        free = (a > 0) & (a < C[k])
        np.testing.assert_allclose(m[free], 1.0, atol=1e-9)


def test_default_fit_warm_starts_every_later_g_step_in_lockstep():
    """A default multi-class fit (digits, 2 views, 300 rows): the later g-steps' warm
    starts are solved together (HingeLoss.warm_g_steps) for every target, none falls back to
    liblinear, and the fit equals the one whose warm starts are solved one target at a
    time."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    Xs, y = [X[:300, :32], X[:300, 32:]], y[:300]
    est = MVMLSVC(**SVC_PAPER, n_landmarks=40, random_state=0).fit(Xs, y)
    assert all(s.warm_starts == 2 for s in est._fit_states)
    assert np.all(est.svm_epochs_ == 0)

    class OneAtATimeLoss(HingeLoss):
        def warm_g_steps(self, *args, **kwargs):  # the single-problem warm starts only
            return None

    class OneAtATime(MVMLSVC):
        def _make_loss(self):
            return OneAtATimeLoss(self)

    one = OneAtATime(**SVC_PAPER, n_landmarks=40, random_state=0).fit(Xs, y)
    assert all(s.warm_starts == 2 for s in one._fit_states)
    np.testing.assert_allclose(est.coef_, one.coef_, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(est.dual_coef_, one.dual_coef_, rtol=1e-9, atol=1e-11)


def test_active_set_corrections_that_cycle_are_damped():
    """On the first lockstep warm start of a default fit on digits in 2 views, one
    target's corrections cycle (the sets return to earlier ones with period 8) when every
    row that breaks a condition moves at once: without the damping the problem gives up
    on the second cycle, well before the 40-round limit; with it (at most CYCLE_MOVES
    rows of each kind move once a cycle is seen) it settles on the exact minimiser
    (liblinear at 1e-11, KKT on every row)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    from mvkernels.mvml import _hinge_active
    from mvkernels.mvml import _hinge_loss as S

    X, y = load_digits(return_X_y=True)
    tr, _ = train_test_split(np.arange(len(y)), train_size=1347, random_state=0, stratify=y)
    Xs = [X[tr, :32], X[tr, 32:]]
    captured = []
    batch = S.polish_active_sets

    def capture(X, Y, C, M, band, **kw):
        extras = [e.copy() for e in kw["extras"]]
        captured.append((X, Y.copy(), np.array(C), M.copy(), band, extras))
        return batch(X, Y, C, M, band, **kw)

    S.polish_active_sets = capture
    try:
        MVMLSVC(**SVC_PAPER, random_state=0).fit(Xs, y[tr])
    finally:
        S.polish_active_sets = batch
    Xf, Y, C, M, band, E = captured[0]
    moves, correct = _hinge_active.CYCLE_MOVES, _hinge_active._correct_sets
    rounds_used = []

    def count(*args):
        rounds_used.append(1)
        return correct(*args)

    try:
        _hinge_active.CYCLE_MOVES = 10**6  # no damping: every violating row moves
        res = _hinge_active.polish_active_sets(Xf, Y, C, M, band, extras=E)
        cycling = [k for k, r in enumerate(res) if r is None]
        assert cycling
        _hinge_active._correct_sets = count
        for k in cycling:
            rounds_used.clear()
            [one] = _hinge_active.polish_active_sets(
                Xf, Y[:, [k]], C[[k]], M[[k]], band, extras=[E[k]]
            )
            assert one is None and len(rounds_used) < 40  # gave up on the second cycle
    finally:
        _hinge_active.CYCLE_MOVES, _hinge_active._correct_sets = moves, correct
    for k in cycling:
        [one] = _hinge_active.polish_active_sets(Xf, Y[:, [k]], C[[k]], M[[k]], band, extras=[E[k]])
        assert one is not None
        v, a, m = one
        XE = np.hstack([Xf, E[k]])
        tight = linear_svm(XE, Y[:, k], C[k], tol=1e-11, max_iter=10**6, random_state=0)
        np.testing.assert_allclose(v, tight.coef, rtol=1e-6, atol=1e-8)
        assert np.all(m[a == 0] >= 1 - 1e-9) and np.all(m[a == C[k]] <= 1 + 1e-9)
        free = (a > 0) & (a < C[k])
        np.testing.assert_allclose(m[free], 1.0, atol=1e-9)


def test_free_rows_gram_updated_from_the_previous_correction(monkeypatch):
    """_free_rows_gram reuses the previous solve's Gram matrix when most free rows are
    kept: the kept rows come first in their previous order, the new rows after them, and
    G is X_F X_F^T + E_F E_F^T for that order (to rounding); with few rows kept (or no
    previous solve) it is formed anew in increasing row order."""
    from mvkernels.mvml import _hinge_active
    from mvkernels.mvml._hinge_active import _free_rows_gram, _FreeGram

    monkeypatch.setattr(_hinge_active, "GRAM_REUSE_MIN_ROWS", 1)  # the small sets here too
    rng = np.random.RandomState(5)
    X, E = rng.randn(60, 12), rng.randn(60, 2)
    free = np.zeros(60, dtype=bool)
    free[[3, 7, 8, 20, 31, 40]] = True
    idx, XF, EF, G = _free_rows_gram(X, E, free, None)
    np.testing.assert_array_equal(idx, [3, 7, 8, 20, 31, 40])
    prev = _FreeGram(idx, free.copy(), G)
    free[7] = False  # a row leaves, two join
    free[[5, 50]] = True
    idx2, XF2, EF2, G2 = _free_rows_gram(X, E, free, prev)
    np.testing.assert_array_equal(idx2, [3, 8, 20, 31, 40, 5, 50])
    np.testing.assert_array_equal(XF2, X[idx2])
    np.testing.assert_array_equal(EF2, E[idx2])
    full = X[idx2] @ X[idx2].T + E[idx2] @ E[idx2].T
    np.testing.assert_allclose(G2, full, rtol=1e-13, atol=1e-12)
    np.testing.assert_array_equal(G2, G2.T)
    free[:] = False  # most rows new: formed anew
    free[[3, 9, 10, 11, 12]] = True
    idx3, _, _, G3 = _free_rows_gram(X, E, free, _FreeGram(idx2, np.isin(np.arange(60), idx2), G2))
    np.testing.assert_array_equal(idx3, [3, 9, 10, 11, 12])
    np.testing.assert_allclose(G3, X[idx3] @ X[idx3].T + E[idx3] @ E[idx3].T, rtol=1e-13)


def test_gram_reuse_gives_the_solutions_of_fresh_gram_matrices(monkeypatch):
    """The active set from scratch (one-vs-all, many corrections) with the free rows' Gram
    matrices updated from correction to correction returns the minimisers found with every
    Gram matrix formed anew, KKT-checked."""
    from mvkernels.mvml import _hinge_active

    rng = np.random.RandomState(8)
    X = rng.randn(400, 200)
    labels = np.argmax(X[:, :4] + 0.3 * rng.randn(400, 4), axis=1)
    Y = np.where(labels[:, None] == np.arange(4), 1.0, -1.0)
    calls = []
    form = _hinge_active._free_rows_gram

    def counted(X, E, free, prev, gram=None):
        assert gram is None  # (more rows than features: no X X^T)
        calls.append(
            prev is not None
            and prev.idx.size >= _hinge_active.GRAM_REUSE_MIN_ROWS
            and bool(free[prev.idx].mean() >= 0.5)
        )
        return form(X, E, free, prev, gram)

    monkeypatch.setattr(_hinge_active, "_free_rows_gram", counted)
    reused = _hinge_active.active_set_svm(X, Y, 5.0)
    assert sum(calls) > len(calls) / 2  # most solves updated the previous matrix
    monkeypatch.setattr(_hinge_active, "GRAM_REUSE_MIN_KEPT", 2.0)  # never reused
    fresh = _hinge_active.active_set_svm(X, Y, 5.0)
    for k, (r, f) in enumerate(zip(reused, fresh)):
        assert r is not None and f is not None
        np.testing.assert_allclose(r[0], f[0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(r[1], f[1], rtol=1e-9, atol=1e-11)
        m = Y[:, k] * (X @ r[0])
        free = (r[1] > 0) & (r[1] < 5.0)
        assert np.all(m[r[1] == 0] >= 1 - 1e-9) and np.all(m[r[1] == 5.0] <= 1 + 1e-9)
        np.testing.assert_allclose(m[free], 1.0, atol=1e-9)


def test_solve_sets_with_the_bound_part_given_equals_its_own():
    """_solve_sets with ``vb`` (B's part of v, as _settle_active_sets computes it for every
    live problem in one product) gives the solution it computes from the bound rows
    itself, with extra columns and row weights, and solves m_F = 1 on the free rows."""
    from mvkernels.mvml._hinge_active import _solve_sets

    rng = np.random.RandomState(5)
    n, d, r = 60, 40, 2
    X, E = rng.randn(n, d), rng.randn(n, r)
    y = np.where(rng.randn(n) > 0, 1.0, -1.0)
    w = rng.uniform(0.5, 2.0, n)
    at_c = np.zeros(n, dtype=bool)
    at_c[:12] = True
    free = np.zeros(n, dtype=bool)
    free[12:30] = True
    C = 0.7
    coef = np.where(at_c, C * y * w, 0.0)
    vb = np.concatenate([coef @ X, coef @ E])
    own = _solve_sets(X, y, C, at_c, free, E, weight=w)
    given = _solve_sets(X, y, C, at_c, free, E, weight=w, vb=vb)
    assert own is not None and given is not None
    np.testing.assert_allclose(given[0], own[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(given[1], own[1])
    np.testing.assert_allclose(given[2], own[2], rtol=1e-12, atol=1e-12)
    XE = np.hstack([X, E])
    np.testing.assert_allclose(y[free] * (XE[free] @ given[0]), 1.0, atol=1e-10)


def test_kkt_corrections_move_exactly_the_rows_that_break_a_condition():
    """One _correct_sets step (no cap on the rows joining F) against the KKT rule row by
    row: F rows with a < 0 go to Z, with a > C to B; B rows with margin > 1 go to F; Z
    rows with margin < 1 join F; status 1 where nothing moves, -1 where a free row misses
    margin 1 (weights: box C s_i, rows of weight 0 never move)."""
    from mvkernels.mvml._hinge_active import _correct_sets

    rng = np.random.RandomState(9)
    J, n, eps = 4, 50, 1e-9
    C = np.array([1.0, 2.0, 0.5, 1.5])
    w = rng.uniform(0.0, 2.0, n)
    w[:3] = 0.0
    m = rng.uniform(0.0, 2.0, (J, n))
    at_c = rng.rand(J, n) < 0.3
    free = ~at_c & (rng.rand(J, n) < 0.4)
    at_c[:, :3] = free[:, :3] = False
    m[free] = 1.0
    m[3, np.flatnonzero(free[3])[0]] = 1.5  # problem 3: a free row off its margin
    m[2] = np.where(at_c[2], 0.5, np.where(free[2], 1.0, 1.5))  # problem 2: settled
    a_rows = []
    for j in range(J):
        idx = np.flatnonzero(free[j])
        a = rng.uniform(-0.5, 1.5, idx.size) * C[j] * w[idx]
        if j == 2:
            a = np.clip(a, 0.1 * C[j] * w[idx], 0.9 * C[j] * w[idx])
        a_rows.append((idx, a))
    new_c, new_f = at_c.copy(), free.copy()
    status = _correct_sets(
        m, a_rows, new_c, new_f, C, eps, None, np.full(J, n), np.zeros(J, bool), w
    )
    for j in range(J):
        full = np.zeros(n)
        full[a_rows[j][0]] = a_rows[j][1]
        box = C[j] * w
        exp_c, exp_f = at_c[j].copy(), free[j].copy()
        for i in range(n):
            if free[j, i] and full[i] < -eps * box[i]:
                exp_f[i] = False
            elif free[j, i] and full[i] > box[i] * (1 + eps):
                exp_f[i], exp_c[i] = False, True
            elif at_c[j, i] and m[j, i] > 1 + eps:
                exp_c[i], exp_f[i] = False, True
            elif not (at_c[j, i] or free[j, i]) and m[j, i] < 1 - eps and w[i] > 0:
                exp_f[i] = True
        moved = not (np.array_equal(exp_c, at_c[j]) and np.array_equal(exp_f, free[j]))
        expected = -1 if j == 3 else (0 if moved else 1)
        assert status[j] == expected
        if expected == 0:
            np.testing.assert_array_equal(new_c[j], exp_c)
            np.testing.assert_array_equal(new_f[j], exp_f)
    assert status[2] == 1
