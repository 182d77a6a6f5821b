"""MVML-SVM: the g-step dual (constant, KKT, solvers) and the estimator MVMLSVC."""

import numpy as np
import pytest
from scipy.optimize import minimize

from mvkernels._linear_svm import (
    hinge_dual,
    hinge_gstep,
    hinge_primal,
    kernel_svm_dual_cd,
    linear_svm_dual_cd,
    psd_factor,
    svm_c_prime,
)


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

    res = minimize(f, np.full(n, C / 2), jac=jac, bounds=[(0.0, C)] * n, method="SLSQP",
                   options={"ftol": 1e-15, "maxiter": 2000})
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
    res = hinge_gstep(Phi, y, A, lam, C, tol=1e-10, max_epochs=100000, random_state=0)
    assert res.solver.converged
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
    res = hinge_gstep(Phi, y, A, lam, C, tol=1e-11, max_epochs=100000, random_state=0)
    alpha = res.alpha[:, 0]
    Qy = (y[:, None] * y[None, :]) * (Phi @ A @ Phi.T)
    g = res.coef[0]
    P = _primal(Phi, y, A, g, lam, C)
    D = hinge_dual(alpha, Qy, lam, constant=0.25)
    assert abs(P - D) <= 1e-8 * max(1.0, abs(P))
    # the primal optimum: no random perturbation of g does better
    rng = np.random.RandomState(0)
    for _ in range(50):
        assert _primal(Phi, y, A, g + 1e-3 * rng.randn(g.size) * np.abs(g).max(), lam, C) >= P - 1e-12
    # the printed constant: its maximiser mapped through eq. 8 is not the primal optimum,
    # and its dual value is not the primal optimum either
    alpha_p, _ = _qp_dual(Phi, y, A, lam, C, constant=0.5)
    g_p = A @ (Phi.T @ (alpha_p * y)) / (2 * lam)
    assert _primal(Phi, y, A, g_p, lam, C) > P + 1e-6 * abs(P)
    assert abs(hinge_dual(alpha_p, Qy, lam, constant=0.5) - P) > 1e-6 * abs(P)


def test_kkt_conditions_hold():
    Phi, y, A = _paper_problem(n=20, seed=2)
    lam, C = 0.02, 1.0 / 20
    res = hinge_gstep(Phi, y, A, lam, C, tol=1e-10, max_epochs=100000, random_state=0)
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
        ref = LinearSVC(C=C, loss="hinge", fit_intercept=False, tol=1e-12,
                        max_iter=1_000_000).fit(X, y)
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
    res = hinge_gstep(Z, y, A, lam, C, tol=1e-10, max_epochs=200000, random_state=0)
    S = np.real(sqrtm(A))
    ref = LinearSVC(C=svm_c_prime(C, lam), loss="hinge", fit_intercept=False, tol=1e-12,
                    max_iter=1_000_000).fit(Z @ S, y)
    np.testing.assert_allclose(res.coef[0], S @ ref.coef_[0], rtol=1e-4, atol=1e-5)


def test_kernel_variant_equals_linear_variant():
    Phi, y, A = _paper_problem(n=18, seed=5)
    lam, C = 0.05, 1.0 / 18
    lin = hinge_gstep(Phi, y, A, lam, C, tol=1e-11, max_epochs=100000, random_state=0)
    ker = hinge_gstep(Phi, y, A, lam, C, method="kernel", tol=1e-11, max_epochs=100000,
                      random_state=1)
    np.testing.assert_allclose(ker.coef, lin.coef, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ker.reg, lin.reg, rtol=1e-6)


def test_several_problems_equal_separate_runs_and_warm_start():
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
    joint = hinge_gstep(Z, Y, As, lam, C, tol=1e-11, max_epochs=100000, random_state=0)
    for k in range(K):
        one = hinge_gstep(Z, Y[:, k], As[k], lam, C, tol=1e-11, max_epochs=100000,
                          random_state=0, shrinking=False)
        np.testing.assert_allclose(joint.coef[k], one.coef[0], rtol=1e-6, atol=1e-9)
    warm = hinge_gstep(Z, Y, As, lam, C, tol=1e-11, max_epochs=100000, random_state=1,
                       alpha_init=joint.alpha)
    assert warm.solver.n_epochs <= 2
    np.testing.assert_allclose(warm.coef, joint.coef, rtol=1e-8, atol=1e-12)


def test_shrinking_does_not_change_the_solution():
    rng = np.random.RandomState(7)
    X = rng.randn(120, 4)
    y = np.where(X[:, 0] + 0.8 * rng.randn(120) > 0, 1.0, -1.0)
    a = linear_svm_dual_cd(X, y, 0.5, tol=1e-9, max_epochs=100000, shrinking=True, random_state=0)
    b = linear_svm_dual_cd(X, y, 0.5, tol=1e-9, max_epochs=100000, shrinking=False, random_state=0)
    assert a.converged and b.converged
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-5, atol=1e-7)
    k = kernel_svm_dual_cd(X @ X.T, y, 0.5, tol=1e-9, max_epochs=100000, random_state=0)
    np.testing.assert_allclose(k.dual_coef * y[:, None], a.dual_coef * y[:, None],
                               atol=1e-4)  # dual may be non-unique only within a face
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
        linear_svm_dual_cd(Z, np.array([0, 1, 1, -1]), 1.0)
    with pytest.raises(ValueError, match="C must be positive"):
        linear_svm_dual_cd(Z, np.array([1, 1, -1, -1]), 0.0)
    with pytest.raises(ValueError, match="lambda"):
        hinge_gstep(Z, np.array([1, 1, -1, -1]), np.eye(2), 0.0, 1.0)
    with pytest.raises(ValueError, match="method"):
        hinge_gstep(Z, np.array([1, 1, -1, -1]), np.eye(2), 1.0, 1.0, method="qp")
    with pytest.raises(ValueError, match="A must have shape"):
        hinge_gstep(Z, np.array([1, 1, -1, -1]), np.eye(3), 1.0, 1.0)
