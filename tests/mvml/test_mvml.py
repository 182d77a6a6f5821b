"""MVML estimators: agreement with the paper's direct formulas, modes, API, errors."""

import warnings

import numpy as np
import pytest
from scipy.linalg import block_diag
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, cross_val_score

from mvkernels import BlockNystrom, MVMLClassifier, MVMLRegressor
from mvkernels import mvml as M
from mvkernels.mvml import (
    FeatureRows,
    FullProblem,
    NystromProblem,
    NystromStatistics,
    PSDFactor,
    cov_metric_full,
    cov_metric_nystrom,
    dense_metric_update,
    group_norms,
    metric_step,
    prox_group_frobenius,
    rank_one_metric_minimiser,
    sparse_metric_update,
)


# ------------------------------------------------------------------ helpers
def views(rng, n=40, dims=(2, 3)):
    return [rng.standard_normal((n, d)) for d in dims]


def reg_data(rng, n=40, dims=(2, 3)):
    Xs = views(rng, n, dims)
    y = np.sin(2 * Xs[0][:, 0]) + 0.5 * Xs[1][:, 1] ** 2 + 0.1 * rng.standard_normal(n)
    return Xs, y


def random_spd(rng, d, cond=10.0):
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    s = np.geomspace(1.0, 1.0 / cond, d)
    return (Q * s) @ Q.T


def full_problem(Ks, y):
    n = Ks[0].shape[0]
    return FullProblem(n, len(Ks), n, np.asarray(y, float).reshape(n, -1), Ks=Ks)


def blockdiag(mats):
    return block_diag(*mats)


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn()


# ------------------------------------------------------------------ eq. 8, 9, 10, 12
def test_push_through_g_step_equals_eq8(rng):
    Xs, y = reg_data(rng, n=15)
    Ks = [rbf_kernel(X, gamma=0.5) for X in Xs]
    H = blockdiag(Ks)
    A = random_spd(rng, 30)
    w = np.array([0.3, 0.9])
    lam = 0.2
    Wm = np.kron(w[None, :], np.eye(15))  # W = w^T (x) I_n
    direct = np.linalg.solve(H @ Wm.T @ Wm @ H + lam * np.linalg.pinv(A), H @ Wm.T @ y)
    est = MVMLRegressor(alpha=lam)
    g = est._make_loss().g_step(full_problem(Ks, y), 0, PSDFactor(A), w, None)
    np.testing.assert_allclose(g, direct, rtol=1e-7, atol=1e-9)
    # the data loss is ||y - W H g||^2
    assert np.isclose(
        est._make_loss().data_loss(full_problem(Ks, y), 0, g, w), np.sum((y - Wm @ H @ g) ** 2)
    )


def test_dense_step_equals_eq9(rng):
    A = random_spd(rng, 8)
    g = rng.standard_normal(8)
    lam, eta, mu = 0.7, 0.3, 1e-3
    Ap = np.linalg.pinv(A)
    direct = (1 - 2 * mu * eta) * A + mu * lam * Ap @ np.outer(g, g) @ Ap
    np.testing.assert_allclose(dense_metric_update(A, Ap @ g, lam, eta, mu), direct, atol=1e-12)
    # inside the backtracked step, a small enough step is accepted unchanged
    A1, _, mu_used = metric_step(A, PSDFactor(A), g, lam, eta, "dense", 2, mu)
    assert mu_used == mu
    np.testing.assert_allclose(A1, direct, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("threshold", ["mu_eta", "eta"])
def test_sparse_step_equals_eq12(rng, threshold):
    v, b = 3, 4
    A = random_spd(rng, v * b)
    g = rng.standard_normal(v * b)
    lam, eta, mu = 0.5, 0.8, 0.1
    Ap = np.linalg.pinv(A)
    B = A - mu * (-lam * Ap @ np.outer(g, g) @ Ap)
    t = mu * eta if threshold == "mu_eta" else eta
    direct = np.zeros_like(B)
    for l in range(v):
        for m in range(v):
            blk = (slice(l * b, (l + 1) * b), slice(m * b, (m + 1) * b))
            tr = (slice(m * b, (m + 1) * b), slice(l * b, (l + 1) * b))
            nrm = np.sqrt(np.sum(B[blk] ** 2) + (np.sum(B[tr] ** 2) if l != m else 0.0))
            direct[blk] = max(0.0, 1 - t / nrm) * B[blk]
    got = sparse_metric_update(A, Ap @ g, lam, eta, mu, v, threshold)
    np.testing.assert_allclose(got, direct, atol=1e-12)


@pytest.mark.parametrize("eta, mu0", [(1.0, 0.1), (1e3, 1.0)])
def test_sparse_step_rejects_candidates_whose_range_misses_g(eta, mu0):
    """<g, A^+ g> is +inf when g is not in range(A): such a prox candidate must be rejected.

    With A = blockdiag(I, 0.01 I) and g = (1, 0, 0.01, 0), the threshold mu0 * eta zeroes
    view 1's block (first case) or every block (second case); the pseudo-inverse would
    give a finite, smaller h there and the step would be accepted.
    """
    A = block_diag(np.eye(2), 0.01 * np.eye(2))
    g = np.array([1.0, 0.0, 0.01, 0.0])
    lam = 1e-6
    zeroed = sparse_metric_update(A, np.linalg.solve(A, g), lam, eta, mu0, 2)
    assert np.all(zeroed[2:, 2:] == 0)  # the first candidate really misses g
    assert PSDFactor(zeroed).range_residual(g) > 1e-3
    A1, fac1, mu = metric_step(A, PSDFactor(A), g, lam, eta, "sparse", 2, mu0)
    assert 0 < mu < mu0
    assert np.abs(A1[2:, 2:]).max() > 0 and fac1.range_residual(g) < 1e-8
    # the accepted step decreases the true objective h + eta R (h finite)
    h = lambda M: lam * g @ np.linalg.solve(M, g)  # noqa: E731
    assert h(A1) + eta * M.metric_penalty(A1, "sparse", 2) < h(A) + eta * M.metric_penalty(
        A, "sparse", 2
    )


def test_prox_group_frobenius_is_the_proximal_operator(rng):
    v, b, t = 3, 3, 0.9
    B = rng.standard_normal((v * b, v * b))
    B = B + B.T
    B[:b, b : 2 * b] *= 0.05  # a small pair that is zeroed
    B[b : 2 * b, :b] *= 0.05
    X = prox_group_frobenius(B, t, v)
    assert np.all(X[:b, b : 2 * b] == 0)

    def obj(Z):
        return 0.5 * np.sum((Z - B) ** 2) + t * np.triu(group_norms(Z, v)).sum()

    # symmetric perturbations never decrease the objective (convex, X is the minimiser)
    f0 = obj(X)
    for _ in range(200):
        E = rng.standard_normal(B.shape) * 1e-3
        assert obj(X + E + E.T) >= f0 - 1e-12


def test_w_step_equals_eq10(rng):
    Xs, y = reg_data(rng, n=25)
    est = quiet(
        lambda: MVMLRegressor(
            alpha=0.1,
            eta=0.5,
            learn_weights=True,
            max_iter=3,
            joint_view=False,
            fit_intercept=False,
        ).fit(Xs, y)
    )
    Ks = [k(X, X) for k, X in zip(est.kernels_, Xs)]
    g = est.coef_
    Z = np.column_stack([Ks[0] @ g[:25], Ks[1] @ g[25:]])
    # eq. 10 (direct least squares) and its sum-to-one version used by the estimators
    ZtZ, Zty = full_problem(Ks, y).view_moments(g, 0)
    w_direct = np.linalg.lstsq(Z, y, rcond=None)[0]
    np.testing.assert_allclose(
        M.least_squares_weights(ZtZ, Zty, sum_to_one=False), w_direct, rtol=1e-6, atol=1e-9
    )
    # constrained: w = w0 + N z with 1^T w0 = 1, N spanning 1-perp
    w0, N = np.array([0.5, 0.5]), np.array([[1.0], [-1.0]])
    z = np.linalg.lstsq(Z @ N, y - Z @ w0, rcond=None)[0]
    w_hook = est._make_loss().w_step(full_problem(Ks, y), 0, g, est.weights_)
    np.testing.assert_allclose(w_hook, w0 + N @ z, rtol=1e-6, atol=1e-9)
    assert np.isclose(est.weights_.sum(), 1.0) and not np.allclose(est.weights_, 0.5)


def test_final_coef_is_the_g_step_for_the_returned_metric(rng):
    Xs, y = reg_data(rng, n=20)
    est = quiet(
        lambda: MVMLRegressor(
            alpha=0.3, eta=0.2, max_iter=4, n_landmarks=None, joint_view=False, fit_intercept=False
        ).fit(Xs, y)
    )
    Ks = [k(X, X) for k, X in zip(est.kernels_, Xs)]
    H = blockdiag(Ks)
    Wm = np.kron(est.weights_[None, :], np.eye(20))
    direct = np.linalg.solve(H @ Wm.T @ Wm @ H + 0.3 * np.linalg.pinv(est.metric_), H @ Wm.T @ y)
    np.testing.assert_allclose(est.coef_, direct, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(est.predict(Xs), Wm @ H @ est.coef_, atol=1e-10)


# ------------------------------------------------------------------ Nystrom forms
def test_sufficient_statistics_equal_direct_nystrom(rng):
    Xs, y = reg_data(rng, n=60, dims=(2, 3, 2))
    nys = BlockNystrom(n_landmarks=8, random_state=0).fit(Xs)
    U = nys.transform(Xs)
    mom = nys.moments(Xs, y)
    p, v, lam = 8, 3, 0.05
    prob = NystromProblem(
        60,
        v,
        p,
        y.reshape(-1, 1),
        statistics=NystromStatistics(
            mom.cross.reshape(-1, 1), mom.sum, np.array([y @ y]), gram=mom.gram
        ),
        feature_rows=FeatureRows(nys, Xs=Xs),
    )
    A = random_spd(rng, v * p)
    w = np.array([0.2, 0.5, 0.3])
    WU = U * np.repeat(w, p)  # (w^T (x) I_n) U
    direct = np.linalg.solve(WU.T @ WU + lam * np.linalg.pinv(A), WU.T @ y)  # eq. 15
    est = MVMLRegressor(alpha=lam)
    g = est._make_loss().g_step(prob, 0, PSDFactor(A), w, None)
    np.testing.assert_allclose(g, direct, rtol=1e-7, atol=1e-9)
    assert np.isclose(
        est._make_loss().data_loss(prob, 0, g, w), np.sum((y - WU @ g) ** 2), rtol=1e-9
    )
    Z = np.column_stack([U[:, l * p : (l + 1) * p] @ g[l * p : (l + 1) * p] for l in range(v)])
    ZtZ, Zty = prob.view_moments(g, 0)  # eq. 17 from C and c only
    np.testing.assert_allclose(ZtZ, Z.T @ Z, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(Zty, Z.T @ y, rtol=1e-9, atol=1e-10)


def test_nystrom_fit_uses_one_moments_pass(rng, monkeypatch):
    Xs, y = reg_data(rng, n=50)
    calls = []
    orig = BlockNystrom.moments

    def spy(self, X, Y=None):
        calls.append(np.shape(Y))
        return orig(self, X, Y)

    monkeypatch.setattr(BlockNystrom, "moments", spy)
    yc = np.repeat([0, 1, 2], [17, 17, 16])
    quiet(lambda: MVMLClassifier(n_landmarks=10, random_state=0).fit(Xs, yc))
    assert calls == [(50, 3)]  # one pass, all one-vs-all targets at once


def well_conditioned(rng, n=25):
    # Laplacian-kernel views of spread-out points: K_l well conditioned, so that
    # U U^T = K exactly with all landmarks (no eigenvalue under the floor)
    Xs = [rng.uniform(0, 10, (n, 2)), rng.uniform(0, 10, (n, 1))]
    y = np.sin(Xs[0][:, 0]) + Xs[1][:, 0] / 10 + 0.1 * rng.standard_normal(n)
    return Xs, y


def test_nystrom_all_landmarks_equals_full_cov(rng):
    Xs, y = well_conditioned(rng)
    T = [rng.uniform(0, 10, (7, 2)), rng.uniform(0, 10, (7, 1))]
    kw = dict(metric="cov", alpha=0.1, kernel="laplacian", random_state=0)
    full = MVMLRegressor(n_landmarks=None, **kw, joint_view=False, fit_intercept=False).fit(Xs, y)
    nys = MVMLRegressor(n_landmarks=1.0, **kw, joint_view=False, fit_intercept=False).fit(Xs, y)
    np.testing.assert_allclose(nys.predict(T), full.predict(T), rtol=1e-6, atol=1e-8)
    U = nys.nystrom_.transform(Xs)
    Ub = blockdiag([U[:, :25], U[:, 25:]])  # U = blockdiag(U_1, U_2)
    np.testing.assert_allclose(nys.metric_, Ub.T @ full.metric_ @ Ub, atol=1e-8)
    np.testing.assert_allclose(nys.objective_, full.objective_, rtol=1e-7)


def test_nystrom_all_landmarks_equals_full_for_mapped_metric(rng):
    Xs, y = well_conditioned(rng)
    n = 25
    nys = BlockNystrom(kernel="laplacian", n_landmarks=1.0, random_state=0).fit(Xs)
    Ks = [k(X, X) for k, X in zip(nys.kernels_, Xs)]
    U = nys.transform(Xs)
    np.testing.assert_allclose(U[:, :n] @ U[:, :n].T, Ks[0], atol=1e-9)
    Ub = blockdiag([U[:, :n], U[:, n:]])  # U = blockdiag(U_1, U_2)
    A = random_spd(rng, 2 * n)
    At = Ub.T @ A @ Ub  # A~ = U^T A U (eq. 13)
    w = np.array([0.4, 0.6])
    est = MVMLRegressor(alpha=0.05, joint_view=False, fit_intercept=False)
    g = est._make_loss().g_step(full_problem(Ks, y), 0, PSDFactor(A), w, None)
    mom = nys.moments(Xs, y)
    prob = NystromProblem(
        n,
        2,
        n,
        y.reshape(-1, 1),
        statistics=NystromStatistics(
            mom.cross.reshape(-1, 1), mom.sum, np.array([y @ y]), gram=mom.gram
        ),
    )
    gt = est._make_loss().g_step(prob, 0, PSDFactor(At), w, None)
    np.testing.assert_allclose(gt, Ub.T @ g, rtol=1e-6, atol=1e-8)  # g~ = U^T g
    assert np.isclose(PSDFactor(At).quad(gt), PSDFactor(A).quad(g), rtol=1e-6)
    # identity metric: Nystrom A~ = I is the full model with A = H^+ (kernel blockdiag(K_l))
    ident = MVMLRegressor(
        metric="identity",
        alpha=0.05,
        kernel="laplacian",
        n_landmarks=1.0,
        bandwidth_factor=1.0,
        random_state=0,
        joint_view=False,
        fit_intercept=False,
    ).fit(Xs, y)
    Hp = np.linalg.pinv(blockdiag(Ks))
    g_full = est._make_loss().g_step(
        full_problem(Ks, y), 0, PSDFactor(Hp), np.array([0.5, 0.5]), None
    )
    np.testing.assert_allclose(
        ident.predict(Xs), full_problem(Ks, y).design([0.5, 0.5]) @ g_full, rtol=1e-6, atol=1e-8
    )


# ------------------------------------------------------------------ metric properties
@pytest.mark.parametrize("metric", ["dense", "sparse"])
@pytest.mark.parametrize("n_landmarks", [None, 12])
def test_learned_metric_symmetric_positive_and_objective_decreases(rng, metric, n_landmarks):
    Xs, y = reg_data(rng, n=40)
    est = quiet(
        lambda: MVMLRegressor(
            metric=metric,
            alpha=0.1,
            eta=0.05,
            max_iter=15,
            tol=0,
            n_landmarks=n_landmarks,
            random_state=0,
            joint_view=False,
            fit_intercept=False,
        ).fit(Xs, y)
    )
    A = est.metric_
    d = 2 * (40 if n_landmarks is None else 12)
    assert A.shape == (d, d)
    np.testing.assert_array_equal(A, A.T)
    eig = np.linalg.eigvalsh(A)
    assert np.isclose(est.metric_min_eigenvalue_, eig[0], atol=1e-10)
    assert eig[0] > -1e-10 * eig[-1]
    if metric == "dense":
        assert eig[0] > 0
    obj = est.objective_
    assert len(obj) == est.n_iter_ + 1
    assert np.all(np.diff(obj) <= 1e-9 * obj[0]), obj
    assert obj[-1] < 0.9 * obj[0]  # the metric learning does something


def test_sparse_metric_zeroes_view_pair_blocks_as_eta_grows(rng):
    n, p = 80, 10
    Xs = [rng.standard_normal((n, 2)) for _ in range(3)]
    y = np.sin(2 * Xs[0][:, 0]) + 0.1 * rng.standard_normal(n)  # only view 0 matters
    zeros = []
    for eta in [1e-3, 1.0, 10.0, 100.0]:
        est = quiet(
            lambda eta=eta: MVMLRegressor(
                metric="sparse",
                alpha=0.1,
                eta=eta,
                max_iter=30,
                tol=1e-4,
                n_landmarks=p,
                random_state=0,
                joint_view=False,
                fit_intercept=False,
            ).fit(Xs, y)
        )
        N = group_norms(est.metric_, 3)
        zeros.append(int(np.sum(np.triu(N == 0))))
        assert est.metric_min_eigenvalue_ > -1e-10
    assert zeros[0] == 0
    assert zeros[-1] >= 2, zeros
    assert all(a <= b for a, b in zip(zeros, zeros[1:])), zeros
    # the paper's threshold (eta instead of mu * eta) is available and differs
    paper = quiet(
        lambda: MVMLRegressor(
            metric="sparse",
            alpha=0.1,
            eta=1.0,
            max_iter=5,
            sparse_threshold="eta",
            n_landmarks=p,
            random_state=0,
            joint_view=False,
            fit_intercept=False,
        ).fit(Xs, y)
    )
    ours = quiet(
        lambda: MVMLRegressor(
            metric="sparse",
            alpha=0.1,
            eta=1.0,
            max_iter=5,
            n_landmarks=p,
            random_state=0,
            joint_view=False,
            fit_intercept=False,
        ).fit(Xs, y)
    )
    assert not np.allclose(paper.metric_, ours.metric_)


def test_a_step_converges_to_rank_one_minimiser(rng):
    g = rng.standard_normal(6)
    lam, eta = 0.8, 0.3
    A = np.eye(6)
    fac = PSDFactor(A)
    mu = 1.0
    for _ in range(3000):
        A, fac, mu_used = metric_step(A, fac, g, lam, eta, "dense", 2, mu)
        mu = 2 * mu_used if mu_used > 0 else mu / 2
    Astar = rank_one_metric_minimiser(g, lam, eta)
    t = (lam * (g @ g) / (2 * eta)) ** (1 / 3)
    F = lam * fac.quad(g) + eta * np.sum(A * A)
    assert np.isclose(F, 3 * eta * t**2, rtol=1e-6)
    np.testing.assert_allclose(A, Astar, atol=1e-3)


def test_dense_scheme_converges_to_joint_minimum(rng):
    Xs, y = reg_data(rng, n=60)
    lam, eta, p = 0.5, 0.05, 8
    est = quiet(
        lambda: MVMLRegressor(
            alpha=lam,
            eta=eta,
            n_landmarks=p,
            max_iter=600,
            tol=0,
            random_state=0,
            joint_view=False,
            fit_intercept=False,
        ).fit(Xs, y)
    )
    P = est.nystrom_.transform(Xs) * 0.5
    c = 3 * eta ** (1 / 3) * (lam / 2) ** (2 / 3)

    def f(g):  # the joint problem with A at its closed-form minimiser
        r = y - P @ g
        return r @ r + c * (g @ g) ** (2 / 3)

    def grad(g):
        return -2 * P.T @ (y - P @ g) + c * (4 / 3) * (g @ g) ** (-1 / 3) * g

    best = minimize(f, est.coef_, jac=grad, method="BFGS", options=dict(gtol=1e-10, maxiter=5000))
    assert est.objective_[-1] >= best.fun - 1e-8 * best.fun
    assert est.objective_[-1] <= best.fun * (1 + 1e-6)
    s = np.linalg.eigvalsh(est.metric_)
    assert s[-2] < 1e-2 * s[-1]  # numerically rank one


def test_cov_metric_construction(rng):
    Xs, _ = reg_data(rng, n=12)
    Ks = [rbf_kernel(X, gamma=0.3) for X in Xs]
    A = cov_metric_full(Ks)
    Mc = np.eye(12) - 1 / 12
    np.testing.assert_allclose(A[:12, 12:] / A[0, 0] * Mc[0, 0], Mc, atol=1e-12)  # A_lm prop. to M
    H = blockdiag(Ks)
    assert np.isclose(np.trace(H @ A @ H), np.trace(H))
    U = rng.standard_normal((30, 6))  # 2 views x 3 features
    At = cov_metric_nystrom(U.T @ U, U.sum(0), 30, 2)
    cov = np.cov(U.T, bias=True)
    np.testing.assert_allclose(At / At[0, 0], cov / cov[0, 0], rtol=1e-10)
    Uc = U - U.mean(0)
    np.testing.assert_allclose(
        cov_metric_nystrom(U.T @ U, U.sum(0), 30, 2, scatter=Uc.T @ Uc), At, rtol=1e-10
    )  # stable scatter: same metric
    Ub = blockdiag([U[:, :3], U[:, 3:]])
    assert np.isclose(np.trace(Ub @ At @ Ub.T), np.trace(U.T @ U))


# ------------------------------------------------------------------ API
def test_classifier_binary_and_multiclass_api(rng):
    Xs = views(rng, n=60)
    yb = np.where(Xs[0][:, 0] + Xs[1][:, 0] > 0, "yes", "no")
    clf = quiet(
        lambda: MVMLClassifier(alpha=0.1, eta=0.5, max_iter=3, joint_view=False).fit(Xs, yb)
    )
    assert list(clf.classes_) == ["no", "yes"]
    assert clf.decision_function(Xs).shape == (60,)
    assert clf.metric_.shape == (120, 120) and clf.coef_.shape == (120,)
    assert clf.score(Xs, yb) > 0.9
    np.testing.assert_array_equal(
        clf.predict(Xs), np.where(clf.decision_function(Xs) > 0, "yes", "no")
    )
    y3 = np.digitize(Xs[0][:, 0], [-0.5, 0.5])
    clf3 = quiet(
        lambda: MVMLClassifier(
            alpha=0.1, eta=0.5, max_iter=3, n_landmarks=15, joint_view=False, random_state=0
        ).fit(Xs, y3)
    )
    D = clf3.decision_function(Xs)
    assert D.shape == (60, 3)
    assert clf3.metric_.shape == (3, 30, 30) and clf3.coef_.shape == (3, 30)
    assert clf3.weights_.shape == (3, 2) and clf3.n_iter_.shape == (3,)
    assert len(clf3.objective_) == 3 and clf3.metric_min_eigenvalue_.shape == (3,)
    np.testing.assert_array_equal(clf3.predict(Xs), clf3.classes_[D.argmax(1)])
    assert clf3.score(Xs, y3) > 0.85


@pytest.mark.parametrize("metric", ["dense", "sparse", "identity", "cov"])
def test_regressor_all_metrics_and_single_array_views(rng, metric):
    Xs, y = reg_data(rng, n=50)
    X = np.hstack(Xs)
    a = quiet(
        lambda: MVMLRegressor(
            metric=metric, alpha=0.05, eta=0.1, max_iter=3, n_landmarks=20, random_state=0
        ).fit(Xs, y)
    )
    b = quiet(
        lambda: MVMLRegressor(
            metric=metric,
            alpha=0.05,
            eta=0.1,
            max_iter=3,
            views=[2, 3],
            n_landmarks=20,
            random_state=0,
        ).fit(X, y)
    )
    np.testing.assert_allclose(a.predict(Xs), b.predict(X), rtol=1e-10)
    assert a.score(Xs, y) > 0.5
    if metric in ("identity", "cov"):
        assert a.n_iter_ == 1


def test_gridsearch_and_cross_val_on_single_array(rng):
    """One stacked array + ``views`` inside GridSearchCV / cross_val_score gives the scores
    of an independent model on the same folds: with A~ = I, fixed w = 1/v and every sample
    a landmark, MVML is kernel ridge with the kernel sum_l w_l^2 K_l (no intercept)."""
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import KFold

    Xs, y = reg_data(rng, n=60)
    X = np.hstack(Xs)
    K = sum(0.25 * rbf_kernel(V, gamma=0.5) for V in Xs)  # w_l = 1/2
    cv = KFold(3, shuffle=True, random_state=0)
    alphas = [1e-3, 1e-1, 10.0]

    def krr_scores(alpha):
        out = []
        for tr, te in cv.split(X):
            m = KernelRidge(alpha=alpha, kernel="precomputed").fit(K[np.ix_(tr, tr)], y[tr])
            out.append(m.score(K[np.ix_(te, tr)], y[te]))
        return np.array(out)

    ref = {a: krr_scores(a) for a in alphas}
    est = MVMLRegressor(
        views=[2, 3],
        metric="identity",
        n_landmarks=1.0,
        kernel_params={"gamma": 0.5},
        max_iter=2,
        tol=1e-4,
        random_state=0,
        joint_view=False,
        fit_intercept=False,
    )
    gs = GridSearchCV(est, {"alpha": alphas}, cv=cv).fit(X, y)
    np.testing.assert_allclose(
        gs.cv_results_["mean_test_score"], [ref[a].mean() for a in alphas], rtol=1e-7, atol=1e-9
    )
    assert gs.best_params_["alpha"] == max(alphas, key=lambda a: ref[a].mean())
    assert len({round(ref[a].mean(), 3) for a in alphas}) == 3  # the grid discriminates
    s = cross_val_score(est.set_params(alpha=1e-1), X, y, cv=cv)
    np.testing.assert_allclose(s, ref[1e-1], rtol=1e-7, atol=1e-9)


def test_precomputed_kernels_match_rbf(rng):
    Xs, y = reg_data(rng, n=30)
    T = views(rng, n=5)
    kw = dict(alpha=0.1, eta=0.2, max_iter=3)
    a = quiet(
        lambda: MVMLRegressor(
            kernel="rbf", kernel_params={"gamma": 0.5}, **kw, joint_view=False, fit_intercept=False
        ).fit(Xs, y)
    )
    Ks = [rbf_kernel(X, gamma=0.5) for X in Xs]
    b = quiet(
        lambda: MVMLRegressor(
            kernel="precomputed", **kw, joint_view=False, fit_intercept=False
        ).fit(Ks, y)
    )
    Kt = [rbf_kernel(t, X, gamma=0.5) for t, X in zip(T, Xs)]
    np.testing.assert_allclose(b.predict(Kt), a.predict(T), rtol=1e-8, atol=1e-10)


def test_learn_weights_and_convergence_warning(rng):
    Xs, y = reg_data(rng, n=40)
    with pytest.warns(ConvergenceWarning):
        MVMLRegressor(max_iter=2, tol=0).fit(Xs, y)
    est = MVMLRegressor(metric="identity", learn_weights=True, max_iter=200, tol=1e-6).fit(Xs, y)
    assert est.n_iter_ > 1 and np.all(np.diff(est.objective_) <= 1e-9 * est.objective_[0])
    assert np.isclose(est.weights_.sum(), 1.0)  # scale fixed: w does not run away


def test_dask_input_matches_numpy(rng):
    da = pytest.importorskip("dask.array")
    Xs, y = reg_data(rng, n=90)
    kw = dict(
        alpha=0.1, eta=0.2, max_iter=3, n_landmarks=12, random_state=0, kernel_params={"gamma": 0.5}
    )
    a = quiet(lambda: MVMLRegressor(**kw).fit(Xs, y))
    b = quiet(lambda: MVMLRegressor(**kw).fit([da.from_array(X, chunks=30) for X in Xs], y))
    np.testing.assert_allclose(b.metric_, a.metric_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(
        b.predict([da.from_array(X, chunks=40) for X in Xs]), a.predict(Xs), rtol=1e-8, atol=1e-10
    )


# ------------------------------------------------------------------ errors
def test_errors_name_the_problem(rng):
    Xs, y = reg_data(rng, n=30)
    yc = (y > np.median(y)).astype(int)
    with pytest.raises(ValueError, match="view 1 has 20 samples, view 0 has 30"):
        MVMLRegressor().fit([Xs[0], Xs[1][:20]], y)
    bad = Xs[1].copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="view 1 contains NaN"):
        MVMLClassifier().fit([Xs[0], bad], yc)
    with pytest.raises(ValueError, match="at least 2 classes"):
        MVMLClassifier().fit(Xs, np.zeros(30))
    with pytest.raises(ValueError, match="Unknown label type"):
        MVMLClassifier().fit(Xs, y)
    clf = MVMLClassifier(metric="identity").fit(Xs, yc)
    with pytest.raises(ValueError, match="expected 2 view"):
        clf.predict([Xs[0]])
    with pytest.raises(ValueError, match="view 1 has 4 features, but 3 were seen"):
        clf.predict([Xs[0], np.hstack([Xs[1], Xs[1][:, :1]])])
    nys = MVMLClassifier(metric="identity", n_landmarks=5).fit(Xs, yc)
    with pytest.raises(ValueError, match="expected 2 view"):
        nys.predict([Xs[0], Xs[1], Xs[1]])
    with pytest.raises(ValueError, match="y has 29 samples"):
        MVMLRegressor().fit(Xs, y[:29])
    K = rbf_kernel(Xs[0])
    K[0, 1] += 0.5
    with pytest.raises(ValueError, match="view 1: precomputed kernel is not symmetric"):
        MVMLRegressor(kernel="precomputed").fit([rbf_kernel(Xs[0]), K], y)
    for kw, msg in [
        ({"alpha": 0}, "alpha"),
        ({"eta": -1.0}, "eta"),
        ({"metric": "full"}, "metric"),
        ({"max_iter": 0}, "max_iter"),
        ({"sparse_threshold": "x"}, "sparse_threshold"),
    ]:
        with pytest.raises(ValueError, match=msg):
            MVMLRegressor(**kw).fit(Xs, y)


def test_default_bandwidth_follows_a_views_scale_not_its_columns_ranges():
    """As docs/mvml.md ("Scaling the views") says: a whole view multiplied by a constant
    gives the same model (the mean-distance bandwidth follows it); columns of very
    different ranges inside a view are not fixed by it, a scaler is. The additive model
    (``joint_view=False``): the joint view's kernel reads the views' relative scales."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.RandomState(0)
    X = rng.standard_normal((200, 6)) * [1.0, 100.0, 0.01, 5.0, 0.1, 1000.0]
    y = (X[:, 0] / 1.0 + X[:, 2] / 0.01 + X[:, 4] / 0.1 > 0).astype(int)
    tr, te = slice(0, 150), slice(150, None)
    kw = dict(views=[3, 3], joint_view=False, random_state=0)
    raw = MVMLClassifier(**kw).fit(X[tr], y[tr])
    Xs = np.hstack([X[:, :3] * 1000.0, X[:, 3:]])
    big = MVMLClassifier(**kw).fit(Xs[tr], y[tr])
    np.testing.assert_allclose(
        big.decision_function(Xs[te]), raw.decision_function(X[te]), rtol=1e-6, atol=1e-8
    )
    scaled = make_pipeline(StandardScaler(), MVMLClassifier(**kw))
    assert scaled.fit(X[tr], y[tr]).score(X[te], y[te]) >= raw.score(X[te], y[te]) + 0.3
